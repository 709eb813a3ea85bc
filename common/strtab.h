/*
 * strtab.h - the string interner (strtab.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_STRTAB_H
#define KP_STRTAB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/*
 * Each distinct string is stored once; equal strings get the same
 * pointer, so interned strings compare with ==.  The strings live until
 * the process ends.
 */
const char *kp_intern(const char *s, size_t len);
const char *kp_intern_str(const char *s);
size_t kp_intern_count(void);
/*
 * Is the interned string c the text s[0..len)?  Its stored length is
 * compared first, so no byte past c's end is read (a memcmp of len bytes
 * of a shorter c reads past it, and at an arena chunk's end past the
 * chunk).  c must come from kp_intern.
 */
bool kp_intern_is(const char *c, const char *s, size_t len);

#endif /* KP_STRTAB_H */
