/*
 * bytes.h - byte tests 16 at a time (SSE2, else plainly), for the
 * parsers' fast paths: each may read up to 16 bytes past what it looks
 * at, so its caller keeps that much readable after the text (a padded
 * buffer, a margin before the buffer's end).
 */
#ifndef KP_BYTES_H
#define KP_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* a[0..n) is b[0..n); both readable 16 bytes on. */
static inline bool
kp_bytes_eq(const char *a, const char *b, size_t n)
{
#ifdef __SSE2__
	unsigned m;

	for (; n >= 16; a += 16, b += 16, n -= 16)
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(
			    _mm_loadu_si128((const __m128i *)(const void *)a),
			    _mm_loadu_si128((const __m128i *)(const void *)b))) !=
		    0xffff)
			return false;
	if (!n)
		return true;
	m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		_mm_loadu_si128((const __m128i *)(const void *)a),
		_mm_loadu_si128((const __m128i *)(const void *)b)));
	return (~m & ((1u << n) - 1)) == 0;
#else
	return memcmp(a, b, n) == 0;
#endif
}

/* How many of p[0..16) are hex digits (0-9, a-f, A-F) before the
 * first that is not: 16 if all are. */
static inline size_t
kp_hex_len16(const char *p)
{
#ifdef __SSE2__
	const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	const __m128i lc = _mm_or_si128(x, _mm_set1_epi8(0x20));
	const __m128i digit = _mm_and_si128(
		_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
		_mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), x));
	const __m128i alpha = _mm_and_si128(
		_mm_cmpgt_epi8(lc, _mm_set1_epi8('a' - 1)),
		_mm_cmpgt_epi8(_mm_set1_epi8('f' + 1), lc));
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(digit, alpha));

	return (size_t)__builtin_ctz(~m | 0x10000u);
#else
	size_t n;

	for (n = 0; n < 16; n++) {
		char c = p[n];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F')))
			break;
	}
	return n;
#endif
}

#endif /* KP_BYTES_H */
