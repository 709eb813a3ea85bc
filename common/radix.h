/*
 * radix.h - records sorted by a 64-bit number each holds: perf2kp's
 * write order (idagg.c), kp-fold's tokens (folded.c), the report keys
 * (profile.c); and the number that sorts texts by their first bytes.
 * Inline, so that each use copies records of its own size.
 */
#ifndef KP_RADIX_H
#define KP_RADIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * base[0 .. n), records of `size' bytes, in the order of the uint64_t
 * at `off' in each: a radix sort, a byte a pass, the bytes that all
 * share left out; stable (equal numbers keep their order), so that
 * sorting by one number and then by a weightier one orders by both.
 * tmp: room for n records.
 */
static inline void
kp_radix_sort(void *base, size_t n, size_t size, size_t off, void *tmp)
{
	unsigned char *src = base, *dst = tmp, *x;
	uint64_t all_or = 0, all_and = ~0ull, k;
	size_t count[256], i, sum, c;
	int shift;

	for (i = 0; i < n; i++) {
		memcpy(&k, src + i * size + off, sizeof(k));
		all_or |= k;
		all_and &= k;
	}
	for (shift = 0; shift < 64; shift += 8) {
		if ((((all_or ^ all_and) >> shift) & 0xff) == 0)
			continue;
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++) {
			memcpy(&k, src + i * size + off, sizeof(k));
			count[(k >> shift) & 0xff]++;
		}
		for (i = 0, sum = 0; i < 256; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++) {
			memcpy(&k, src + i * size + off, sizeof(k));
			memcpy(dst + count[(k >> shift) & 0xff]++ * size,
			       src + i * size, size);
		}
		x = src;
		src = dst;
		dst = x;
	}
	if (src != (unsigned char *)base)
		memcpy(base, src, n * size);
}

/*
 * The sort number of a text: its first 8 bytes, the first the highest,
 * s[0 .. len) then the byte `end' (0: the text's end, below any byte of
 * a text with no NUL), then 0s.  Two texts whose numbers differ are in
 * their bytewise order; equal, the texts decide.
 */
static inline uint64_t
kp_prefix8(const char *s, size_t len, unsigned char end)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		v = v << 8 | (i < len	     ? (unsigned char)s[i]
			      : i == len ? end
					 : 0);
	return v;
}

#endif /* KP_RADIX_H */
