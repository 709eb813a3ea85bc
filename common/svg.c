/* svg.c - text for SVG/XML documents (see svg.h) */
#include <stdbool.h>
#include <stdint.h>

#include "svg.h"
#include "utf8.h"

/*
 * The length in bytes of the character at p (p[0] is not NUL), and
 * whether it is well-formed UTF-8 that XML allows (else it is one
 * byte, written as '?').
 */
static size_t
utf8_char(const unsigned char *p, bool *ok)
{
	uint32_t cp;
	size_t n;

	*ok = false;
	if (p[0] < 0x80) {
		*ok = p[0] >= 0x20 ? p[0] != 0x7f : p[0] == '\t';
		return 1;
	}
	n = kp_utf8_decode(p, &cp);
	/* XML also refuses U+FFFE, U+FFFF and the C1 controls */
	if (n == 0 || cp == 0xfffe || cp == 0xffff ||
	    (cp >= 0x80 && cp <= 0x9f))
		return 1;
	*ok = true;
	return n;
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
