/*
 * utf8.h - well-formed UTF-8 (RFC 3629), for the writers that must not
 * pass a malformed name through: JSON and tsv tables (report.c), SVG
 * (svg.c).
 */
#ifndef KP_UTF8_H
#define KP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The length (1 to 4) of the well-formed UTF-8 sequence at p, with its
 * code point in *cp; 0 when the bytes there are not one: a stray
 * continuation byte, a truncated sequence (a NUL stops it), an overlong
 * form, a surrogate or a code point past U+10FFFF.  p[0] is not NUL.
 */
size_t kp_utf8_decode(const unsigned char *p, uint32_t *cp);

#endif /* KP_UTF8_H */
