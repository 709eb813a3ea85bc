/*
 * scan.h - the character classes that kp's parsers of text share: the
 * converters (conv.h), the kp reader and perf script's header lines
 * (perf_lines.c).  Named for the converters, where they began.
 */
#ifndef KP_SCAN_H
#define KP_SCAN_H

#include <stdbool.h>

#include "util.h"

static inline bool
kp_conv_blank(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool
kp_conv_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool
kp_conv_xdigit(char c)
{
	return kp_digit_value[(unsigned char)c] >= 0;
}

/* [s, e) is one or more characters of class is (inlined: a constant). */
static inline bool
kp_conv_all(const char *s, const char *e, bool (*is)(char))
{
	if (s == e)
		return false;
	for (; s < e; s++)
		if (!is(*s))
			return false;
	return true;
}

/* [s, e) is one or more decimal digits. */
static inline bool
kp_conv_all_digits(const char *s, const char *e)
{
	return kp_conv_all(s, e, kp_conv_digit);
}

/* [s, e) is one or more hex digits. */
static inline bool
kp_conv_all_hex(const char *s, const char *e)
{
	return kp_conv_all(s, e, kp_conv_xdigit);
}

#endif
