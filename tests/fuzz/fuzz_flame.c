/*
 * fuzz_flame.c - libFuzzer target for kp-flame's text escaping
 * (common/svg.c), the one place where names from the input reach the
 * SVG.  The input is a name (NUL bytes end it, as in interned strings)
 * and a width limit taken from its first byte.  Whatever the bytes, the
 * output must be safe XML text:
 *  - no '<', '>' or '"', and every '&' starts &amp; &lt; &gt; or &quot;;
 *  - well-formed UTF-8, without control characters;
 *  - at most maxch characters when there is a limit, and exactly the
 *    count kp_svg_text returns.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t
check_utf8(const unsigned char *p, size_t n)
{
	size_t i = 0, nch = 0, len, k;
	uint32_t cp;

	while (i < n) {
		unsigned c = p[i];

		if (c < 0x80) {
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				abort(); /* a control character */
			len = 1;
		} else {
			len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
			if (!len || c > 0xf4 || i + len > n)
				abort(); /* not UTF-8 */
			cp = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f)
							     : (c & 0x07);
			for (k = 1; k < len; k++) {
				if ((p[i + k] & 0xc0) != 0x80)
					abort();
				cp = cp << 6 | (p[i + k] & 0x3f);
			}
			if ((len == 3 && cp < 0x800) ||
			    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
			    cp == 0xffff)
				abort();
		}
		i += len;
		nch++;
	}
	return nch;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name, *out = NULL;
	size_t maxch, outlen = 0, nch, i, chars;
	FILE *mem;

	if (size < 1)
		return 0;
	maxch = data[0] < 128 ? data[0] % 16 : 0; /* 0: no limit */
	name = malloc(size);
	if (!name)
		abort();
	memcpy(name, data + 1, size - 1);
	name[size - 1] = '\0';
	mem = open_memstream(&out, &outlen);
	if (!mem)
		abort();
	nch = kp_svg_text(mem, name, maxch);
	fclose(mem);

	for (i = 0; i < outlen; i++) {
		if (out[i] == '<' || out[i] == '>' || out[i] == '"')
			abort();
		if (out[i] == '&' && strncmp(out + i, "&amp;", 5) != 0 &&
		    strncmp(out + i, "&lt;", 4) != 0 &&
		    strncmp(out + i, "&gt;", 4) != 0 &&
		    strncmp(out + i, "&quot;", 6) != 0)
			abort();
	}
	/* the characters written: entities count as one */
	chars = check_utf8((const unsigned char *)out, outlen);
	for (i = 0; i < outlen; i++)
		if (out[i] == '&')
			chars -= out[i + 1] == 'q' ? 5 : out[i + 1] == 'a' ? 4
									  : 3;
	if (chars != nch)
		abort();
	if (maxch && nch > maxch)
		abort();
	if (!maxch && strlen(name) && !nch)
		abort();
	free(out);
	free(name);
	return 0;
}
