/*
 * perf_lines.c - the lines of perf script text other than frame lines:
 * sample headers, side-band records and the header of -F selections
 * without time and event; and which text is perf script's at all (the
 * kind checks of perf2kp and the kp reader).  See perf_lines.h.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "perf_lines.h"
#include "util.h"

/* A pid or tid: digits, or -1 for an exiting task. */
static bool
id_digits(const char *s, const char *e)
{
	if (s < e && *s == '-')
		s++;
	return kp_conv_all_digits(s, e);
}

/* PID, PID/TID or -1 */
static bool
pid_tid(const char *s, const char *e, struct kp_perf_hdr *h)
{
	const char *sl = memchr(s, '/', (size_t)(e - s));

	if (sl) {
		if (!id_digits(s, sl) || !id_digits(sl + 1, e))
			return false;
		h->pid = s;
		h->pide = sl;
		h->tid = sl + 1;
		h->tide = e;
		return true;
	}
	if (!id_digits(s, e))
		return false;
	h->pid = h->pide = NULL;
	h->tid = s;
	h->tide = e;
	return true;
}

static bool
is_time(const char *s, const char *e)
{
	const char *dot;

	if (e - s < 4 || e[-1] != ':')
		return false;
	dot = memchr(s, '.', (size_t)(e - s));
	return dot && kp_conv_all_digits(s, dot) &&
	       kp_conv_all_digits(dot + 1, e - 1);
}

static bool
is_cpu(const char *s, const char *e)
{
	return e - s >= 3 && *s == '[' && e[-1] == ']' &&
	       kp_conv_all_digits(s + 1, e - 1);
}

#define MAXTOK 48

/*
 * A sample header: "comm [pid/]tid [cpu] [time:] [period] event[:mods]:"
 * then, without -g, the one frame of the sample:
 *
 *	java 25607 4794564.109216: cycles:
 *	java 12688 [002] 6544038.708352: 10309278 cpu-clock:
 *	V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:
 *	iperf 27409/28744 [000] 441995.133575: cpu-clock:
 *	func_ab 15294 cpu-clock:
 *	vote   913    72.176760:     257597 cycles:uppp:
 *	swapper     0 [001]  1333.768770: cpu-clock:
 *	:-1    -1 [003]  8800.165406:     250000 cpu-clock:uhH:
 *	abab 30112 [001] 90164.311411: probe_libc:malloc: (7fa9195fe260)
 *	false 39654 19115.489713:          1 cycles:u:  ffffffff9b201293 [unknown] ([unknown])
 *
 * The comm may hold blanks and digits, so the fields are found from
 * the time stamp (or the event) leftwards.
 */
/* Decimal [s, e) into *v; false if empty, not digits or past 2^64. */
static bool
dec(const char *s, const char *e, uint64_t *v)
{
	return kp_parse_u64(s, (size_t)(e - s), 10, v) == 0;
}

/*
 * The fast path for the usual header: find the time stamp's ':' (the
 * first ':' with "DIGITS.DIGITS" before it and a blank or the end after
 * it), read period and event to its right, then [cpu] and pid/tid to its
 * left.  Anything else goes to the general parser below.
 */
static bool
parse_header_fast(const char *s, size_t len, struct kp_perf_hdr *h)
{
	const char *e = s + len, *c, *p, *q, *t, *dot;
	uint64_t x;

	c = memchr(s, ':', len);
	if (!c || c - s < 6 || (c + 1 < e && !kp_conv_blank(c[1])))
		return false;
	/* DIGITS.DIGITS before the ':', a blank before them */
	for (t = c; t > s && kp_conv_digit(t[-1]); t--)
		;
	if (t == c || t - s < 4 || t[-1] != '.')
		return false;
	dot = t - 1;
	for (t = dot; t > s && kp_conv_digit(t[-1]); t--)
		;
	if (t == dot || t == s || !kp_conv_blank(t[-1]))
		return false;
	h->period = 0;
	h->has_period = h->period_bad = false;
	h->comm = h->pid = h->tid = NULL;
	/* right: [period] event: [rest] */
	for (p = c + 1; p < e && kp_conv_blank(*p); p++)
		;
	for (q = p; q < e && kp_conv_digit(*q); q++)
		;
	if (q > p && q < e && kp_conv_blank(*q)) {
		h->has_period = dec(p, q, &x);
		h->period_bad = !h->has_period;
		h->period = x ? x : 1;
		for (p = q; p < e && kp_conv_blank(*p); p++)
			;
	}
	for (q = p; q < e && !kp_conv_blank(*q); q++)
		;
	if (q - p < 2 || q[-1] != ':')
		return false;
	h->ev = p;
	h->eve = q - 1;
	for (p = q; p < e && kp_conv_blank(*p); p++)
		;
	h->rest = p;
	h->reste = e;
	/* left: [cpu] pid/tid, then the comm */
	for (q = t - 1; q > s && kp_conv_blank(q[-1]); q--)
		;
	if (q - s >= 4 && q[-1] == ']') {
		/* "[cpu]" */
		for (p = q - 1; p > s && kp_conv_digit(p[-1]); p--)
			;
		if (p == q - 1 || p == s || p[-1] != '[')
			return false;
		for (q = p - 1; q > s && kp_conv_blank(q[-1]); q--)
			;
	}
	/* PID, PID/TID, -1 */
	for (p = q; p > s && !kp_conv_blank(p[-1]); p--)
		;
	if (p == s || !pid_tid(p, q, h))
		return false;
	for (q = p; q > s && kp_conv_blank(q[-1]); q--)
		;
	if (q == s)
		return false;
	h->comm = s;
	h->comme = q;
	return true;
}

#ifdef __SSE2__
/* The bytes of s[0..64) that are blanks, digits, ':' and '/', a bit
 * each in four masks (SSE2, 16 bytes at a time). */
struct hdr_bits {
	uint64_t bl, dg, co, sl;
};

static inline uint64_t
bits16(__m128i v, int i)
{
	return (uint64_t)(unsigned)_mm_movemask_epi8(v) << (16 * i);
}

static inline void
hdr_bits(const char *s, struct hdr_bits *b)
{
	const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
	const __m128i lo = _mm_set1_epi8('0' - 1), hi = _mm_set1_epi8('9' + 1);
	const __m128i co = _mm_set1_epi8(':'), sl = _mm_set1_epi8('/');
	__m128i x;

#define HDR_BITS(i)                                                        \
	x = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * (i))); \
	b->bl |= bits16(_mm_or_si128(_mm_cmpeq_epi8(x, sp),                 \
				     _mm_cmpeq_epi8(x, tab)),                \
			(i));                                                \
	b->dg |= bits16(_mm_and_si128(_mm_cmpgt_epi8(x, lo),                 \
				      _mm_cmpgt_epi8(hi, x)),                \
			(i));                                                \
	b->co |= bits16(_mm_cmpeq_epi8(x, co), (i));                         \
	b->sl |= bits16(_mm_cmpeq_epi8(x, sl), (i))
	b->bl = b->dg = b->co = b->sl = 0;
	HDR_BITS(0);
	HDR_BITS(1);
	HDR_BITS(2);
	HDR_BITS(3);
#undef HDR_BITS
}

/* The lowest set bit of m at or above i, or n if none below n. */
static inline size_t
bit_from(uint64_t m, size_t i, size_t n)
{
	m = i < 64 ? m & ~((1ull << i) - 1) : 0;
	return m ? (size_t)__builtin_ctzll(m) : n;
}

/* One past the highest set bit of m below i, or 0 if none. */
static inline size_t
bit_before(uint64_t m, size_t i)
{
	m &= i < 64 ? (1ull << i) - 1 : ~0ull;
	return m ? 64 - (size_t)__builtin_clzll(m) : 0;
}

/* Decimal digits s[0..n) (1 to 19) as a number. */
static inline uint64_t
dec_short(const char *s, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	return v;
}

/*
 * parse_header_fast for a line of at most 64 bytes with 64 bytes after
 * s readable (a chunk's buffer): the same fields and the same answer,
 * its scans made bit masks of the line's blanks, digits and colons.
 */
static bool
parse_header_fast64(const char *s, size_t len, struct kp_perf_hdr *h)
{
	struct hdr_bits b;
	uint64_t bl, dg, valid, m;
	size_t c, t, dot, p, q, k;

	hdr_bits(s, &b);
	valid = len < 64 ? (1ull << len) - 1 : ~0ull;
	bl = b.bl & valid;
	dg = b.dg & valid;
	/* the first ':', a blank or the end after it */
	c = bit_from(b.co & valid, 0, len);
	if (c == len || c < 6 || (c + 1 < len && !(bl >> (c + 1) & 1)))
		return false;
	/* DIGITS.DIGITS before the ':', a blank before them */
	t = bit_before(~dg, c);
	if (t == c || t < 4 || s[t - 1] != '.')
		return false;
	dot = t - 1;
	t = bit_before(~dg, dot);
	if (t == dot || t == 0 || !(bl >> (t - 1) & 1))
		return false;
	h->period = 0;
	h->has_period = h->period_bad = false;
	h->comm = h->pid = h->tid = NULL;
	/* right: [period] event: [rest] */
	p = bit_from(~bl, c + 1, len);
	q = bit_from(~dg, p, len);
	if (q > p && q < len && (bl >> q & 1)) {
		if (q - p <= 19) {
			h->period = dec_short(s + p, q - p);
			h->has_period = true;
		} else {
			uint64_t v = 0;

			h->has_period = dec(s + p, s + q, &v);
			h->period = v;
		}
		h->period_bad = !h->has_period;
		if (!h->period)
			h->period = 1;
		p = bit_from(~bl, q, len);
	}
	q = bit_from(bl, p, len);
	if (q - p < 2 || s[q - 1] != ':')
		return false;
	h->ev = s + p;
	h->eve = s + q - 1;
	h->rest = s + bit_from(~bl, q, len);
	h->reste = s + len;
	/* left: [cpu] pid/tid, then the comm */
	q = bit_before(~bl, t - 1);
	if (q >= 4 && s[q - 1] == ']') {
		/* "[cpu]" */
		p = bit_before(~dg, q - 1);
		if (p == q - 1 || p == 0 || s[p - 1] != '[')
			return false;
		q = bit_before(~bl, p - 1);
	}
	/* PID, PID/TID, -1 */
	p = bit_before(bl, q);
	if (p == 0)
		return false;
	/* the word [p, q): digits, or -digits, and one '/' between two */
	m = b.sl & ((1ull << q) - 1) & ~((1ull << p) - 1);
	k = m ? (size_t)__builtin_ctzll(m) : q;
	if (!id_digits(s + p, s + k) ||
	    (k < q && !id_digits(s + k + 1, s + q)))
		return false;
	if (k < q) {
		h->pid = s + p;
		h->pide = s + k;
		h->tid = s + k + 1;
		h->tide = s + q;
	} else {
		h->pid = h->pide = NULL;
		h->tid = s + p;
		h->tide = s + q;
	}
	q = bit_before(~bl, p);
	if (q == 0)
		return false;
	h->comm = s;
	h->comme = s + q;
	return true;
}
#endif

bool
kp_perf_header(const char *s, size_t len, struct kp_perf_hdr *h)
{
	const char *e = s + len, *p, *ts[MAXTOK], *te[MAXTOK];
	size_t nt = 0, i, it = 0, iev = 0, j;
	bool found = false;

	if (parse_header_fast(s, len, h))
		return h->eve - h->ev < 12 || memcmp(h->ev, "PERF_RECORD_", 12);
	memset(h, 0, sizeof(*h));
	for (p = s; p < e && nt < MAXTOK;) {
		while (p < e && kp_conv_blank(*p))
			p++;
		if (p == e)
			break;
		ts[nt] = p;
		while (p < e && !kp_conv_blank(*p))
			p++;
		te[nt++] = p;
	}
	if (nt < 3)
		return false;
	for (i = 2; i < nt; i++)
		if (is_time(ts[i], te[i])) {
			it = i;
			found = true;
			break;
		}
	if (found) {
		j = it - 1;
		if (is_cpu(ts[j], te[j]))
			j--;
		if (j < 1 || !pid_tid(ts[j], te[j], h))
			return false;
		i = it + 1;
		if (i < nt && kp_conv_all_digits(ts[i], te[i]) && i + 1 < nt) {
			h->has_period = dec(ts[i], te[i], &h->period);
			h->period_bad = !h->has_period;
			i++;
		}
		if (i >= nt || te[i][-1] != ':' || te[i] - ts[i] < 2)
			return false;
		iev = i;
	} else {
		/* no time stamp: the first "word:" after a pid */
		for (i = 2; i < nt; i++)
			if (te[i][-1] == ':' && te[i] - ts[i] >= 2 &&
			    !kp_conv_digit(ts[i][0]))
				break;
		if (i == nt)
			return false;
		iev = i;
		j = i - 1;
		if (is_cpu(ts[j], te[j]))
			j--;
		if (j >= 2 && kp_conv_all_digits(ts[j], te[j]) &&
		    (is_cpu(ts[j - 1], te[j - 1]) ||
		     pid_tid(ts[j - 1], te[j - 1], h))) {
			h->has_period = dec(ts[j], te[j], &h->period);
			h->period_bad = !h->has_period;
			j--;
			if (is_cpu(ts[j], te[j]))
				j--;
		}
		if (j < 1 || !pid_tid(ts[j], te[j], h))
			return false;
	}
	h->comm = ts[0];
	h->comme = te[j - 1];
	h->ev = ts[iev];
	h->eve = te[iev] - 1;
	h->rest = te[iev];
	while (h->rest < e && kp_conv_blank(*h->rest))
		h->rest++;
	h->reste = e;
	if (h->has_period && h->period == 0)
		h->period = 1;
	/* side-band records are not samples */
	return h->eve - h->ev < 12 || memcmp(h->ev, "PERF_RECORD_", 12);
}

/*
 * kp_perf_header for a line in a chunk's buffer (64 bytes readable after
 * it): the same answer.
 */
bool
kp_perf_header_pad(const char *s, size_t len, struct kp_perf_hdr *h)
{
#ifdef __SSE2__
	bool fast = len <= 64 && parse_header_fast64(s, len, h);

#ifdef KP_FUZZ
	/* the fuzz targets' build: the two fast parsers agree */
	struct kp_perf_hdr g;

	if (len <= 64 &&
	    (fast != parse_header_fast(s, len, &g) ||
	     (fast && (g.comm != h->comm || g.comme != h->comme ||
		      g.pid != h->pid || g.pide != h->pide ||
		      g.tid != h->tid || g.tide != h->tide ||
		      g.ev != h->ev || g.eve != h->eve || g.rest != h->rest ||
		      g.reste != h->reste || g.has_period != h->has_period ||
		      g.period_bad != h->period_bad ||
		       (g.has_period && g.period != h->period)))))
		abort();
#endif
	if (fast)
		return h->eve - h->ev < 12 ||
		       memcmp(h->ev, "PERF_RECORD_", 12) != 0;
#endif
	return kp_perf_header(s, len, h);
}

/*
 * perf's side-band records (perf script --show-mmap-events, --show-task-
 * events ...): not samples, passed over.
 *
 *	bash     0 [000]     0.000000: PERF_RECORD_MMAP2 993/993: [0x55862a408000(0xc1000) @ 0x2f000 fe:00 247101 0]: r-xp /usr/bin/bash
 */
bool
kp_perf_sideband(const char *s, size_t n)
{
	return memmem(s, n, ": PERF_RECORD_", 14) != NULL;
}

/*
 * A header without time or event, from -F selections without them:
 *
 *	 3800			(-F tid,ip,sym,dso)
 *	dd 3800/3801		(-F comm,pid,tid,ip,sym)
 *
 * The fields are found from the right: [cpu], then pid/tid; the rest is
 * the comm.
 */
bool
kp_perf_loose_header(const char *s, size_t n, struct kp_perf_hdr *h)
{
	const char *e = s + n, *p, *q;

	memset(h, 0, sizeof(*h));
	for (q = e; q > s && kp_conv_blank(q[-1]); q--)
		;
	for (p = q; p > s && !kp_conv_blank(p[-1]); p--)
		;
	if (is_cpu(p, q)) {
		for (q = p; q > s && kp_conv_blank(q[-1]); q--)
			;
		for (p = q; p > s && !kp_conv_blank(p[-1]); p--)
			;
	}
	if (p == q || !pid_tid(p, q, h))
		return false;
	for (q = p; q > s && kp_conv_blank(q[-1]); q--)
		;
	if (q > s) {
		h->comm = s;
		h->comme = q;
	}
	h->rest = h->reste = e;
	return true;
}

/*
 * "root;...;leaf COUNT": a folded stack, not a perf sample header (which
 * the loose shape "comm TID" would otherwise take it for).
 */
bool
kp_folded_line(const char *s, size_t n)
{
	const char *e = s + n, *p = e;

	while (p > s && kp_conv_digit(p[-1]))
		p--;
	return p < e && p > s && kp_conv_blank(p[-1]) &&
	       memchr(s, ';', (size_t)(p - s));
}

bool
kp_perf_script_line(const char *s, size_t n)
{
	struct kp_perf_hdr h;

	return kp_perf_header(s, n, &h) || kp_perf_sideband(s, n);
}
