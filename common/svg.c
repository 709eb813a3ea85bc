/* svg.c - text for SVG/XML documents (see svg.h) */
#include <stdbool.h>
#include <stdint.h>

#include "svg.h"

/*
 * The length in bytes of the character at p (p[0] is not NUL), and
 * whether it is well-formed UTF-8 that XML allows (else it is one
 * byte, written as '?').
 */
static size_t
utf8_char(const unsigned char *p, bool *ok)
{
	unsigned c = p[0];
	size_t want, i;
	uint32_t cp;

	*ok = false;
	if (c < 0x80) {
		*ok = c >= 0x20 ? c != 0x7f : c == '\t';
		return 1;
	}
	want = c >= 0xf0 && c <= 0xf4	? 4
	       : c >= 0xe0 && c <= 0xef ? 3
	       : c >= 0xc2 && c <= 0xdf ? 2
					: 0;
	if (!want)
		return 1;
	for (i = 1; i < want; i++)
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 1;
	cp = want == 2 ? (c & 0x1f) : want == 3 ? (c & 0x0f) : (c & 0x07);
	for (i = 1; i < want; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	if ((want == 3 && cp < 0x800) ||
	    (want == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff ||
	    (cp >= 0x80 && cp <= 0x9f))
		return 1;
	*ok = true;
	return want;
}

size_t
kp_svg_text(FILE *out, const char *s, size_t maxch)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t nch = 0, total = 0, n, limit = 0;
	bool ok;

	if (maxch) {
		/* count the characters first: is ".." due? */
		for (; *p; p += utf8_char(p, &ok))
			total++;
		p = (const unsigned char *)s;
		if (total > maxch) {
			if (maxch < 3) {
				fputs(maxch == 1 ? "." : "..", out);
				return maxch;
			}
			limit = maxch - 2;
		}
	}
	for (; *p; p += n, nch++) {
		if (limit && nch == limit) {
			fputs("..", out);
			return nch + 2;
		}
		n = utf8_char(p, &ok);
		if (!ok) {
			putc('?', out);
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fwrite(p, 1, n, out);
		}
	}
	return nch;
}
