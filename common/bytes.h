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
#include <stdint.h>
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

/* s[0..n) copied to d, 16 bytes at a time: up to 15 bytes past either
 * end are read and written (both have them); d + n returned.  (For
 * short texts of varying length, where a memcpy call costs more than
 * the copy.) */
static inline char *
kp_copy16(char *d, const char *s, size_t n)
{
	size_t j;

	for (j = 0; j < n; j += 16)
		memcpy(d + j, s + j, 16);
	return d + n;
}

/* The first byte in [p, e) that is c1 or c2 (in), or that is neither
 * (!in): where it is, or NULL; up to 15 bytes past e readable. */
static inline const char *
kp_bytes_find(const char *p, const char *e, char c1, char c2, bool in)
{
#ifdef __SSE2__
	unsigned m;

	for (; p < e; p += 16) {
		const __m128i x =
			_mm_loadu_si128((const __m128i *)(const void *)p);

		m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(c1)),
				     _mm_cmpeq_epi8(x, _mm_set1_epi8(c2))));
		if (!in)
			m = ~m & 0xffff;
		if (m)
			return p + __builtin_ctz(m) < e ? p + __builtin_ctz(m)
							 : NULL;
	}
	return NULL;
#else
	for (; p < e; p++)
		if ((*p == c1 || *p == c2) == in)
			return p;
	return NULL;
#endif
}

#ifdef __SSE2__
/* The bytes of x that are hex digits (0-9, a-f, A-F), a bit each;
 * *alpha: those that are letters, as 0xff bytes (for kp_hex_value16). */
static inline unsigned
kp_hex_bits16(__m128i x, __m128i *alpha)
{
	const __m128i lc = _mm_or_si128(x, _mm_set1_epi8(0x20));
	const __m128i digit = _mm_and_si128(
		_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
		_mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), x));

	*alpha = _mm_and_si128(_mm_cmpgt_epi8(lc, _mm_set1_epi8('a' - 1)),
			       _mm_cmpgt_epi8(_mm_set1_epi8('f' + 1), lc));
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(digit, *alpha));
}

/* The 16 bytes of x read as 16 hex digits, the first the highest (a
 * byte that is no digit reads as its low 4 bits; a space as 0). */
static inline uint64_t
kp_hex_value16(__m128i x, __m128i alpha)
{
	/* each digit's value, then two a byte, the first the high one */
	const __m128i d = _mm_add_epi8(_mm_and_si128(x, _mm_set1_epi8(0x0f)),
				       _mm_and_si128(alpha, _mm_set1_epi8(9)));
	const __m128i pairs = _mm_and_si128(
		_mm_or_si128(_mm_slli_epi16(d, 4), _mm_srli_epi16(d, 8)),
		_mm_set1_epi16(0xff));

	return __builtin_bswap64(
		(uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
}
#endif

/* How many of p[0..16) are hex digits (0-9, a-f, A-F) before the
 * first that is not: 16 if all are. */
static inline size_t
kp_hex_len16(const char *p)
{
#ifdef __SSE2__
	__m128i alpha;
	unsigned m = kp_hex_bits16(
		_mm_loadu_si128((const __m128i *)(const void *)p), &alpha);

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
