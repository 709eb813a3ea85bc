/* utf8.c - well-formed UTF-8 (see utf8.h) */
#include "utf8.h"

size_t
kp_utf8_decode(const unsigned char *p, uint32_t *cp)
{
	unsigned char c = p[0];
	unsigned lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	*cp = n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
	for (i = 1; i < n; i++)
		*cp = *cp << 6 | (p[i] & 0x3fu);
	return n;
}
