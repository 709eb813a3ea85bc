/*
 * svg.h - text for SVG/XML documents (kp-flame).
 *
 * kp_svg_text writes a string as XML character data or an attribute
 * value: & < > " are escaped, control characters and bytes that are not
 * well-formed UTF-8 (overlong forms, surrogates, values past U+10FFFF,
 * truncated sequences, U+FFFE and U+FFFF) become '?', so that any input
 * gives a well-formed document and a name such as "<script>" stays
 * text.  Nothing here allocates or fails; output errors show in ferror.
 */
#ifndef KP_SVG_H
#define KP_SVG_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write s escaped.  With maxch > 0, at most maxch characters: a longer
 * string is cut to maxch - 2 characters and ".." (a label that has to
 * fit a box).  Returns the number of characters written.
 */
size_t kp_svg_text(FILE *out, const char *s, size_t maxch);

#endif /* KP_SVG_H */
