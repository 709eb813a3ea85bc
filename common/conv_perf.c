/*
 * conv_perf.c - "perf script" text to kp stacks, in one streaming pass.
 *
 * A sample is a header line, its frame lines (leaf first), and a blank
 * line.  A sample's frame lines together (a "block") are cached by their
 * text, and so is each frame line, so a repeated block or line costs one
 * hash and one memcmp; memory grows with the distinct blocks and lines,
 * not with the input.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "conv.h"
#include "internal.h"

/*
 * One distinct frame line (text after its indent) and what it means, in
 * one block: the frames (leaf first), then the text.  A cache hit reads
 * the slot and this block only.
 */
struct pline {
	struct pline *next; /* the line that followed it last (see predict) */
	uint32_t len;	    /* of the text */
	uint16_t n;	    /* frames (at most 64: struct pframe) */
	bool java : 1;	    /* parsed under comm "java" (Java tidy) */
	bool kernel : 1;    /* kernel code */
	bool skip : 1;	    /* "(process name)" frame: perf prints, peers drop */
	const struct kp_frame *fr[];
};
_Static_assert(sizeof(struct pline) == 16, "a cached line's header: 16 bytes");

#define PL_TEXT(pl) ((const char *)((pl)->fr + (pl)->n))

/* What parse_frame finds, before it is stored. */
struct pframe {
	const struct kp_frame *fr[64];
	uint32_t n;
	bool kernel, skip;
};

#define PROC_CACHE 256 /* a power of two */

struct perf {
	const struct kp_perf_opts *o;
	struct kp_perf_events *evs; /* the caller's: the events seen */
	struct kp_input *in;
	struct kp_conv cv;
	struct kp_slots lines; /* the line cache: struct pline */
	/* the current sample */
	bool in_sample, skip_sample, orphan, java;
	bool user_dropped; /* --kernel-only dropped user frames of it */
	bool headers; /* a sample header was seen (else -F ip,sym) */
	bool dsos;    /* a frame line ended in "(DSO)" */
	uint64_t weight;
	const struct kp_frame *proc;
	size_t nkernel; /* frames pushed that are kernel code */
	/* process frames by name, a direct-mapped cache: samples of a
	 * few processes interleave in a system-wide capture */
	const struct kp_frame *procs[PROC_CACHE];
	struct kp_agg *agg0; /* the caller's: the first event's */
	struct kp_perf_event *ev; /* the current sample's event */
	struct kp_agg_late late; /* the stacks ended, added two later */
	struct kp_slots blocks; /* the block cache (see "blocks" below) */
	struct kp_pool pool;	/* cached lines */
	struct kp_pool bpool;	/* cached blocks: freed with their table */
	unsigned long ended;	     /* samples ended: end_sample calls */
	unsigned long found, nofind; /* blocks whose end was found, not */
	unsigned long hits;	     /* blocks found in the cache */
	bool blocks_off;	     /* the cache did not pay: not used */
	bool in_block;		     /* reading a new block's lines */
	struct pline *last; /* the frame line just read (see predict) */
};

/* ---- module names ---- */

static bool
has_prefix(const char *s, size_t len, const char *pre)
{
	size_t n = strlen(pre);

	return len >= n && memcmp(s, pre, n) == 0;
}

/*
 * The dso in parentheses at the end of a frame line:
 *
 *	([kernel.kallsyms])			-> kernel
 *	([kernel.kallsyms].init.text)		-> kernel
 *	(/lib/modules/4.3.0-rc1-virtual/build/vmlinux) -> kernel
 *	(/usr/lib/debug/boot/vmlinux-4.15.0-1009)	-> kernel
 *	([nf_conntrack_ipv4])			-> nf_conntrack_ipv4 (kernel)
 *	([unknown])				-> no module
 *	([vdso]) ([vsyscall]) ([heap]) ([stack]) ([uprobes]) -> kept as is
 *	(/tmp/perf-19982.map)			-> the path (JIT)
 *	(/usr/lib/x86_64-linux-gnu/libc.so.6)	-> the path
 */
static const char *
map_module(const char *m, size_t len, bool *kernel)
{
	const char *base;
	size_t i;

	*kernel = false;
	if (len == 0 || (len == 9 && memcmp(m, "[unknown]", 9) == 0))
		return NULL;
	if (has_prefix(m, len, "[kernel.kallsyms]")) {
		*kernel = true;
		return kp_intern("kernel", 6);
	}
	if (m[0] == '[') {
		static const char *const user[] = {
			"[vdso", "[vsyscall", "[heap", "[stack", "[anon",
			"[uprobes", "[perf-", "[jit", NULL,
		};

		for (i = 0; user[i]; i++)
			if (has_prefix(m, len, user[i]))
				return kp_intern(m, len);
		if (len > 2 && m[len - 1] == ']') {
			*kernel = true;
			return kp_intern(m + 1, len - 2);
		}
		return kp_intern(m, len);
	}
	for (base = m + len; base > m && base[-1] != '/'; base--)
		;
	if (has_prefix(base, (size_t)(m + len - base), "vmlinux")) {
		*kernel = true;
		return kp_intern("kernel", 6);
	}
	return kp_intern(m, len);
}

/* ---- frame lines ---- */

/*
 * A frame line, after its indent (perf script -g, any -F selection
 * that prints ip):
 *
 *	ffffffff8103ce3b native_safe_halt ([kernel.kallsyms])
 *	ffffffff810a4b1c finish_task_switch+0x7c ([kernel.kallsyms])
 *	7f533952bc77 _dl_check_map_versions+0x597 (/usr/lib/ld-2.28.so)
 *	7f53389994d0 [unknown] ([unknown])
 *	7f1e2215d058 [unknown] (/lib/x86_64-linux-gnu/libc-2.15.so)
 *	7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)
 *	55d0e1c4b3a9 std::__invoke_impl<int, int (*&)(int, int)> (inlined)
 *	7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)
 *	7f89cc467bf0 Ljava/io/PrintStream;::println->Ljava/io/PrintStream;::print+0x0 (/tmp/perf-10487.map)
 *	ffffffff821f2c2b ([kernel.kallsyms])	(-F ...,ip,dso)
 *	ffffffff821f2c2b			(-F ...,ip)
 *	0 [unknown] ([unknown])
 *
 * A "->" chain is Java inlining: the first name is the outer function,
 * each later one is inlined into the one before (marked KP_F_INLINE).
 */
static int
parse_frame(struct perf *pf, const char *s, size_t len, struct pframe *pl,
	    const char **why)
{
	const char *e = s + len, *p, *sym, *se, *dso = NULL, *de = NULL;
	const char *module = NULL, *piece[64];
	size_t plen[64], np = 0, i, k;
	uint64_t addr, off = 0;
	bool has_off = false, inlined = false;
	unsigned flags;
	char *t;

	memset(pl, 0, sizeof(*pl));
	for (p = s; p < e && !kp_conv_blank(*p); p++)
		;
	if (!kp_conv_hex(s, p, &addr)) {
		*why = "not a frame line (expected 'ADDRESS SYMBOL (DSO)')";
		return -1;
	}
	while (p < e && kp_conv_blank(*p))
		p++;
	while (e > p && kp_conv_blank(e[-1]))
		e--;
	/* "(DSO)": the last blank-separated word, in parentheses */
	if (e > p && e[-1] == ')') {
		const char *w = e - 1;

		while (w > p && !kp_conv_blank(w[-1]))
			w--;
		if (*w == '(' && e - w >= 2) {
			dso = w + 1;
			de = e - 1;
			e = w;
			while (e > p && kp_conv_blank(e[-1]))
				e--;
		}
	}
	if (dso)
		pf->dsos = true;
	if (dso && de - dso == 7 && memcmp(dso, "inlined", 7) == 0) {
		inlined = true;
	} else if (dso) {
		module = map_module(dso, (size_t)(de - dso), &pl->kernel);
	}
	if (!dso && kp_addr_is_kernel(addr))
		pl->kernel = true;
	sym = p;
	se = e;
	/* "+0xOFF" */
	for (p = se; p > sym && kp_conv_xdigit(p[-1]); p--)
		;
	if (p - sym >= 3 && p < se && p[-1] == 'x' && p[-2] == '0' &&
	    p[-3] == '+' && kp_conv_hex(p, se, &off)) {
		has_off = true;
		se = p - 3;
	}
	if (se > sym && *sym == '(') {
		pl->skip = true; /* a process name, as the peers skip it */
		return 0;
	}
	if (se - sym == 9 && memcmp(sym, "[unknown]", 9) == 0)
		se = sym;
	/* split "a->b->c" */
	for (p = sym; p < se && np < 64;) {
		const char *arrow = NULL, *q;

		for (q = p; q + 1 < se; q++)
			if (q[0] == '-' && q[1] == '>') {
				arrow = q;
				break;
			}
		if (!arrow || np == 63) {
			piece[np] = p;
			plen[np++] = (size_t)(se - p);
			break;
		}
		piece[np] = p;
		plen[np++] = (size_t)(arrow - p);
		p = arrow + 2;
	}
	if (np == 0) {
		piece[0] = sym;
		plen[np++] = 0;
	}
	pl->n = (uint32_t)np;
	for (i = 0; i < np; i++) {
		struct kp_frame f;

		memset(&f, 0, sizeof(f));
		f.addr = addr;
		flags = KP_F_ADDR;
		k = plen[i];
		t = kp_conv_tmp(&pf->cv, k);
		memcpy(t, piece[i], k);
		if (!pf->o->raw_names && k) {
			k = kp_conv_tidy_generic(t, k);
			if (pf->java)
				k = kp_conv_tidy_java(t, k);
		}
		if (i == np - 1 && has_off && k) {
			f.off = off;
			flags |= KP_F_OFF;
		}
		if (i > 0 || (inlined && pf->o->inline_flag))
			flags |= KP_F_INLINE;
		f.flags = flags;
		f.module = module;
		if (k)
			f.sym = kp_intern(t, k);
		if (pf->o->functions)
			kp_conv_function_level(&f);
		/* leaf first: the last piece is the innermost */
		pl->fr[np - 1 - i] = kp_conv_intern(&f);
	}
	return 0;
}

/* The cached meaning of the frame line s[0..len), or NULL. */
static struct pline *
find_frame(struct perf *pf, const char *s, size_t len, uint64_t *hash)
{
	uint64_t h = kp_hash_line(s, len) ^ (pf->java ? 0x5bd1e995u : 0);
	size_t mask, i;
	struct pline *pl;

	*hash = h;
	if (!pf->lines.cap)
		return NULL;
	mask = pf->lines.cap - 1;
	for (i = h & mask; (pl = pf->lines.tab[i].p) != NULL;
	     i = (i + 1) & mask)
		if (pf->lines.tab[i].hash == h && pl->len == len &&
		    pl->java == pf->java && memcmp(PL_TEXT(pl), s, len) == 0)
			return pl;
	return NULL;
}

/* Parse a new frame line and cache it; NULL with *why if bad. */
static struct pline *
add_frame(struct perf *pf, const char *s, size_t len, uint64_t h,
	  const char **why)
{
	struct pline *pl;
	struct pframe tmp;

	if (parse_frame(pf, s, len, &tmp, why) < 0)
		return NULL;
	kp_slots_reserve(&pf->lines, 4096);
	pl = kp_pool_alloc(&pf->pool, sizeof(*pl) + tmp.n * sizeof(pl->fr[0]) + len);
	pl->len = (uint32_t)len;
	pl->n = (uint16_t)tmp.n;
	pl->java = pf->java;
	pl->kernel = tmp.kernel;
	pl->skip = tmp.skip;
	pl->next = NULL;
	memcpy(pl->fr, tmp.fr, tmp.n * sizeof(pl->fr[0]));
	memcpy((char *)(pl->fr + pl->n), s, len);
	kp_slots_put(&pf->lines, h, pl);
	return pl;
}

static void
push_frames(struct perf *pf, const struct pline *pl)
{
	uint32_t i;

	if (pl->skip)
		return;
	if (pf->o->space == KP_SPACE_KERNEL && !pl->kernel) {
		pf->user_dropped = true;
		return;
	}
	if (pf->o->space == KP_SPACE_USER && pl->kernel)
		return;
	for (i = 0; i < pl->n; i++)
		kp_conv_push(&pf->cv, pl->fr[i]);
}

/*
 * A -F+srcline line after a frame: the source of the frame before it.
 *
 *	  perf_stacks.cpp:12
 *	  /usr/include/c++/10/bits/std_function.h:622
 *	  ??:0
 *	  :0
 *	  FuzzerLoop.cpp.o:0
 *	  [kernel.kallsyms][ffffffff813600e2]	(no source known: DSO[ADDR])
 */
static bool
srcline(struct perf *pf, const char *s, size_t len)
{
	const char *colon = NULL, *p;
	struct kp_frame f;
	uint64_t line;

	if (len > 3 && s[len - 1] == ']') {
		for (p = s + len - 1; p > s && kp_conv_xdigit(p[-1]); p--)
			;
		if (p > s + 1 && p[-1] == '[' && p < s + len - 1)
			return true;
	}

	for (p = s + len; p > s && kp_conv_digit(p[-1]); p--)
		;
	if (p == s + len || p == s || p[-1] != ':' || memchr(s, ' ', len))
		return false;
	colon = p - 1;
	if (kp_parse_u64(p, (size_t)(s + len - p), 10, &line) < 0 ||
	    line > UINT32_MAX)
		return false;
	if (pf->cv.n == 0)
		return true; /* its frame was filtered out */
	f = *pf->cv.frames[pf->cv.n - 1];
	if (colon == s || line == 0 ||
	    (colon - s == 2 && memcmp(s, "??", 2) == 0))
		return true; /* no source known: "??:0", ":0", "x.o:0" */
	f.file = kp_intern(s, (size_t)(colon - s));
	f.line = (uint32_t)line;
	pf->cv.frames[pf->cv.n - 1] = kp_conv_intern(&f);
	return true;
}

/* ---- header lines ---- */

struct hdr {
	const char *comm, *comme, *pid, *pide, *tid, *tide, *ev, *eve;
	const char *rest, *reste;
	uint64_t period;
	bool has_period;
	bool period_bad; /* digits where the period goes, past 2^64 */
};

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
pid_tid(const char *s, const char *e, struct hdr *h)
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
parse_header_fast(const char *s, size_t len, struct hdr *h)
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

static bool
parse_header(const char *s, size_t len, struct hdr *h)
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
 * The event named [name, name + len): its entry, made on its first
 * sample.  Each event has an aggregation of its own (memory grows with
 * the distinct stacks of each), but with --event only the one named.
 */
static struct kp_perf_event *
event(struct perf *pf, const char *name, size_t len)
{
	const struct kp_perf_opts *o = pf->o;
	struct kp_perf_events *evs = pf->evs;
	struct kp_perf_event *ev = pf->ev;
	size_t i;

	if (ev && ev->len == len && memcmp(ev->name, name, len) == 0)
		return ev;
	for (i = 0; i < evs->n; i++) {
		ev = &evs->v[i];
		if (ev->len == len && memcmp(ev->name, name, len) == 0)
			return ev;
	}
	evs->v = kp_xrealloc(evs->v, (evs->n + 1) * sizeof(*evs->v));
	ev = &evs->v[evs->n];
	memset(ev, 0, sizeof(*ev));
	ev->name = kp_xstrndup(name, len);
	ev->len = len;
	if (o->event ? len == 0 || strcmp(ev->name, o->event) == 0
		     : !evs->n) {
		ev->agg = pf->agg0;
	} else if (!o->event) {
		ev->agg = kp_agg_new();
		ev->owned = true;
	}
	evs->n++;
	return ev;
}

/* The process frame: "comm", "comm-PID" or "comm-PID/TID". */
static const struct kp_frame *
proc_frame(struct perf *pf, const struct hdr *h)
{
	static const char unknown[] = "[unknown]";
	const char *comm = h->comm ? h->comm : unknown;
	size_t clen = h->comm ? (size_t)(h->comme - h->comm) : 9, n, i;
	size_t plen = h->pid ? (size_t)(h->pide - h->pid) : 1;
	size_t tlen = h->tid ? (size_t)(h->tide - h->tid) : 1;
	char *t = kp_conv_tmp(&pf->cv, clen + plen + tlen + 3);

	memcpy(t, comm, clen);
	for (i = 0; i < clen; i++)
		if (t[i] == ' ' || t[i] == '\t')
			t[i] = '_';
	n = clen;
	if (pf->o->proc >= KP_PROC_PID) {
		t[n++] = '-';
		if (h->pid) {
			memcpy(t + n, h->pid, plen);
			n += plen;
		} else {
			t[n++] = '?'; /* perf printed the tid only */
		}
	}
	if (pf->o->proc == KP_PROC_TID) {
		t[n++] = '/';
		if (h->tid)
			memcpy(t + n, h->tid, tlen);
		else
			t[n] = '?';
		n += tlen;
	}
	{
		const struct kp_frame **slot =
			&pf->procs[kp_hash(t, n) & (PROC_CACHE - 1)];
		const struct kp_frame *fr;
		struct kp_frame f;

		/* a cached frame's name is its key (names that
		 * kp_conv_intern changes are not cached) */
		if (*slot && kp_intern_is((*slot)->sym, t, n))
			return *slot;
		memset(&f, 0, sizeof(f));
		f.sym = kp_intern(t, n);
		fr = kp_conv_intern(&f);
		if (fr->sym == f.sym)
			*slot = fr;
		return fr;
	}
}

/*
 * The sample is complete: its stack goes into the aggregation.  With
 * entry, at once, and its entry is returned (NULL if it was not kept);
 * else two samples later (kp_agg_late_add: its slot and entry are
 * fetched from memory meanwhile), and NULL is returned.  memo: the
 * entry is already known (a cached block's), the frames were not
 * pushed.
 */
static struct kp_stack *
sample_done(struct perf *pf, struct kp_stack *memo, bool entry)
{
	struct kp_stack *st = NULL;

	pf->ended++;
	if (pf->in_sample && !pf->skip_sample) {
		if (memo) {
			kp_agg_add_again(pf->cv.agg, pf->in, memo, pf->weight);
		} else {
			/* user time, named as kp-sample names it */
			if (pf->cv.n == 0 && pf->user_dropped) {
				kp_conv_push(&pf->cv, kp_frame_make(0, 0,
								    KP_USER_FRAME,
								    NULL));
			}
			if (pf->proc)
				kp_conv_push(&pf->cv, pf->proc);
			if (pf->cv.n == 0) {
				kp_conv_push(&pf->cv,
					     kp_frame_make(0, 0, "[no stack]",
							   NULL));
			}
			if (entry) {
				kp_agg_late_end(&pf->late);
				st = kp_agg_add_entry(pf->cv.agg, pf->in,
						      pf->cv.frames, pf->cv.n,
						      pf->weight);
			} else {
				kp_agg_late_add(&pf->late, pf->cv.agg,
						pf->cv.frames, pf->cv.n,
						pf->weight);
			}
		}
		pf->ev->samples++;
	}
	pf->cv.n = 0;
	pf->in_sample = pf->skip_sample = pf->user_dropped = false;
	return st;
}

/* The sample is complete (sample_done, no entry wanted). */
static void
end_sample(struct perf *pf, struct kp_stack *memo)
{
	sample_done(pf, memo, false);
}

static void
start_sample(struct perf *pf, const struct hdr *h)
{
	size_t evlen = h->ev ? (size_t)(h->eve - h->ev) : 0;
	const struct pline *pl;

	pf->in_sample = true;
	pf->skip_sample = false;
	pf->cv.n = 0;
	/* no event printed (-F without it): the event "" */
	pf->ev = event(pf, h->ev ? h->ev : "", h->ev ? evlen : 0);
	if (!pf->ev->agg) {
		pf->ev->samples++; /* not kept (--event) */
		pf->skip_sample = true;
		return;
	}
	pf->cv.agg = pf->ev->agg;
	if (pf->o->period && h->period_bad) {
		kp_input_skip(pf->in, "the period does not fit in 64 bits; "
				      "sample skipped");
		pf->skip_sample = true;
		return;
	}
	pf->weight = pf->o->period && h->has_period ? h->period : 1;
	pf->java = h->comm && (size_t)(h->comme - h->comm) == 4 &&
		   memcmp(h->comm, "java", 4) == 0;
	if (pf->o->proc != KP_PROC_NONE) {
		pf->proc = proc_frame(pf, h);
	} else {
		pf->proc = NULL;
	}
	/* without -g: the frame is on the header line */
	if (h->rest < h->reste &&
	    !(*h->rest == '(' && h->reste[-1] == ')' &&
	      !memchr(h->rest, ' ', (size_t)(h->reste - h->rest)))) {
		size_t n = (size_t)(h->reste - h->rest);
		uint64_t hash;

		const char *why;

		pl = find_frame(pf, h->rest, n, &hash);
		if (!pl)
			pl = add_frame(pf, h->rest, n, hash, &why);
		if (pl)
			push_frames(pf, pl);
		else
			kp_input_skip(pf->in, "%s", why);
	}
}

/*
 * A frame line not in the cache (or a srcline line, or a bad line); its
 * cached meaning, or NULL.
 */
static struct pline *
frame_line(struct perf *pf, const char *s, size_t n, uint64_t hash)
{
	const char *why = "not a frame line (expected 'ADDRESS SYMBOL (DSO)')";
	struct pline *pl = NULL;

	if (kp_conv_xdigit(*s) && (pl = add_frame(pf, s, n, hash, &why)))
		push_frames(pf, pl);
	else if (!srcline(pf, s, n))
		kp_input_skip(pf->in, "%s", why);
	return pl;
}

/*
 * perf's side-band records (perf script --show-mmap-events, --show-task-
 * events ...): not samples, passed over.
 *
 *	bash     0 [000]     0.000000: PERF_RECORD_MMAP2 993/993: [0x55862a408000(0xc1000) @ 0x2f000 fe:00 247101 0]: r-xp /usr/bin/bash
 */
static bool
sideband(const char *s, size_t n)
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
static bool
loose_header(const char *s, size_t n, struct hdr *h)
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

/* ---- the input as a whole ---- */

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
	struct hdr h;

	return parse_header(s, n, &h) || sideband(s, n);
}

/* [s, e) is an indented frame line: blanks, then a hex address. */
static bool
frame_shape(const char *s, const char *e)
{
	const char *p = s;

	while (p < e && kp_conv_blank(*p))
		p++;
	if (p == s || p == e)
		return false;
	while (p < e && kp_conv_xdigit(*p))
		p++;
	return p > s && (p == e || kp_conv_blank(*p) || *p == '\r');
}

/*
 * Refuse a file of another kind within its first KiB: a perf.data
 * file (magic "PERFILE2", binary), DTrace or bpftrace output, kp,
 * folded stacks, text of any other kind.  The loose header shape
 * ("comm TID", from -F selections without time and event) counts only
 * with a frame line after it: "hello world 5" alone is not a sample.
 */
static int
check_kind(struct kp_input *in, const char **why)
{
	static const char expected[] =
		"expected 'perf script' output (a sample header such as "
		"'comm 1234 [000] 12.345: 1 cycles:')";
	const char *p, *e, *nl, *s, *le, *ls;
	size_t n = kp_input_peek(in, &p);
	struct hdr h;
	bool loose = false, more = n > 1024;

	e = p + (more ? 1024 : n);
	if (n >= 8 && memcmp(p, "PERFILE", 7) == 0) {
		*why = "this is a perf.data file, not text: run 'perf script' "
		       "on it and give perf2kp that output";
		return -1;
	}
	if (memchr(p, '\0', (size_t)(e - p))) {
		*why = "binary input: perf2kp reads the text of 'perf script'";
		return -1;
	}
	while (p < e) {
		nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl && more)
			return 0; /* no whole line in the first KiB */
		le = nl ? nl : e;
		s = ls = p;
		p = le + 1;
		if (le > s && le[-1] == '\r')
			le--;
		if (loose) /* the line after a loose header */
			return frame_shape(ls, le) ? 0 : (*why = expected, -1);
		while (s < le && kp_conv_blank(*s))
			s++;
		if (s == le || *s == '#')
			continue;
		if (kp_folded_line(s, (size_t)(le - s))) {
			*why = "these are folded stacks ('a;b;c COUNT'), not "
			       "'perf script' output: use fold2kp";
			return -1;
		}
		/* a header, side-band, or -F ip,sym's header-less frames */
		if (parse_header(s, (size_t)(le - s), &h) ||
		    sideband(s, (size_t)(le - s)) ||
		    (*ls == '\t' && kp_conv_xdigit(*s)))
			return 0;
		if (*ls != '\t' && loose_header(s, (size_t)(le - s), &h)) {
			loose = true;
			continue;
		}
		*why = expected;
		return -1;
	}
	if (loose && !more) {
		*why = expected; /* a loose header, and nothing after it */
		return -1;
	}
	return 0; /* only blank lines and comments */
}

/* ---- blocks: a sample's frame lines at once ---- */

/*
 * A sample's frame lines repeat far more than its header (which holds a
 * time stamp): the 589 samples of samples/perf-dd-a-g.txt hold 386
 * distinct blocks of frame lines, the 933 of perf-report-kernel.script
 * 564, the 79,785 of perf-build-a-g 53,641.  So after a header,
 * the bytes up to the blank line that ends the sample (the "block") are
 * looked up whole in a second cache: a hit costs one scan for the blank
 * line, one hash and one memcmp of the block, where the line cache costs
 * a line read, a hash and a memcmp per frame.  A block enters the cache
 * only when the lines of it, read one by one, made a plain sample: frame
 * (or srcline) lines, no skipped line, nothing that ended the sample
 * early; the same bytes under the same state (the java tidy, a sample
 * not filtered out, no frame from the header line) then give the same
 * frames.  Memory grows with the distinct blocks, as the stacks do.
 */
struct block {
	uint32_t len;	    /* of the text, through the empty line */
	uint32_t lines;	    /* lines in it, the empty one included */
	uint32_t n;	    /* frames */
	bool java, user_dropped;
	/* the aggregation's entries for these frames under process frames
	 * memo_proc[], once known: two, for two processes that take turns */
	struct kp_stack *memo[2];
	const struct kp_frame *memo_proc[2];
	const struct kp_agg *memo_agg[2]; /* the event's they count in */
	uint8_t memo_next; /* the one to replace */
	const struct kp_frame *fr[]; /* then the text */
};

#define BLOCK_TEXT(b) ((const char *)((b)->fr + (b)->n))
#define BLOCK_MAX (64u << 10) /* scanned for its end at most */
/*
 * Blocks looked up before the cache is judged: it stays if three in four
 * were in it.  A hit still hashes and compares the whole block, and each
 * block kept holds its text: on one real capture (samples/perf-real-a-g,
 * 299k samples, half of them hits) the cache cost 5% more time and 14 MB
 * more memory than the line cache alone; on a capture whose stacks
 * repeat (perf-dd-a-g replicated, 99.9% hits) it is 10x faster.  The
 * trial is short: a quarter of the blocks at the most are first seen in
 * it when a capture repeats (386 of perf-dd-a-g's 589), and on the real
 * capture, read in two halves, each half's trial of 16384 blocks took 5%
 * of its time more than one of 4096.
 */
#define BLOCK_TRIAL 4096

/*
 * The block table's slots hold a cached block, or SEEN: the hash of a
 * block seen once and not kept.  A block is cached when it comes a
 * second time: the blocks that come once only (in samples/perf-build-
 * a-g, a 40-second capture of kp's build, 48,153 of the 53,641 distinct
 * ones) then cost a slot, not a copy.
 */
static struct block seen_once;
#define SEEN (&seen_once)

/*
 * The length of the block at p: through the first empty line, the
 * line's "\n" included (p follows a "\n", so a "\n" at p[0] is an empty
 * line).  0 if there is none in [p, p + n).
 */
static size_t
block_end(const char *p, size_t n)
{
	size_t i = 0;
	bool prev = true; /* p[-1] is a "\n" */

#ifdef __SSE2__
	/* 64 bytes a round: a bit per "\n", and "\n" after "\n" */
	const __m128i lf = _mm_set1_epi8('\n');
#define LF_MASK(k)                                                        \
	((uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(            \
		 _mm_loadu_si128((const __m128i *)(p + i + 16 * (k))), lf)) \
	 << (16 * (k)))

	for (; i + 64 <= n; i += 64) {
		uint64_t m = LF_MASK(0) | LF_MASK(1) | LF_MASK(2) | LF_MASK(3);
		uint64_t two = m & (m << 1 | (uint64_t)prev);

		if (two)
			return i + (size_t)__builtin_ctzll(two) + 1;
		prev = m >> 63;
	}
#undef LF_MASK
#endif
	for (; i < n; i++) {
		if (p[i] != '\n') {
			prev = false;
			continue;
		}
		if (prev)
			return i + 1;
		prev = true;
	}
	return 0;
}

/*
 * The slot of the block [p, p + len) with hash h: its cached block, a
 * SEEN slot of that hash, or the empty slot where it would go.
 */
static struct kp_slot *
probe_block(struct perf *pf, const char *p, size_t len, uint64_t h)
{
	size_t mask = pf->blocks.cap - 1, i;
	struct kp_slot *sl;
	const struct block *b;

	for (i = h & mask;; i = (i + 1) & mask) {
		sl = &pf->blocks.tab[i];
		if ((b = sl->p) == NULL || (sl->hash == h && b == SEEN))
			return sl;
		if (sl->hash == h && b->len == len && b->java == pf->java &&
		    memcmp(BLOCK_TEXT(b), p, len) == 0)
			return sl;
	}
}

/* The block text[0..len) of `lines` lines made the frames in pf->cv. */
static struct block *
new_block(struct perf *pf, const char *text, size_t len, unsigned long lines)
{
	struct block *b;

	b = kp_pool_alloc(&pf->bpool,
			  sizeof(*b) + pf->cv.n * sizeof(b->fr[0]) + len);
	b->len = (uint32_t)len;
	b->lines = (uint32_t)lines;
	b->n = (uint32_t)pf->cv.n;
	b->java = pf->java;
	b->user_dropped = pf->user_dropped;
	b->memo[0] = b->memo[1] = NULL;
	b->memo_proc[0] = b->memo_proc[1] = NULL;
	b->memo_agg[0] = b->memo_agg[1] = NULL;
	b->memo_next = 0;
	memcpy(b->fr, pf->cv.frames, pf->cv.n * sizeof(b->fr[0]));
	memcpy((char *)(b->fr + b->n), text, len);
	return b;
}

static void perf_line(struct perf *pf, char *line, size_t len);
static bool predict(struct perf *pf);

/*
 * Right after a sample's header: its frame lines and the blank line, as
 * a block from the cache, or read line by line (and cached if seen
 * before).
 */
static void
block(struct perf *pf)
{
	struct kp_input *in = pf->in;
	struct kp_slot *sl;
	struct block *b;
	const char *p, *q, *last;
	char *line, *text = NULL;
	size_t avail, len, n, i, k;
	unsigned long ended0, skipped0, line0;
	uint64_t h;

	/* not inside a new block's lines; not where samples are not kept
	 * or have a frame on the header line (kept, or dropped by
	 * --kernel-only: the block's frames would not be its own); not on
	 * input where the most do not end in an empty line (CRLF) */
	if (pf->blocks_off || pf->in_block || pf->skip_sample ||
	    pf->cv.n != 0 || pf->user_dropped ||
	    (pf->nofind >= 16 && pf->nofind > pf->found))
		return;
	if (pf->found == BLOCK_TRIAL && pf->hits * 4 < pf->found * 3) {
		/* see "blocks" above: the lines on their own from now on */
		pf->blocks_off = true;
		kp_slots_free(&pf->blocks);
		kp_pool_free(&pf->bpool);
		return;
	}
	avail = kp_input_buffered(in, &p);
	len = block_end(p, avail < BLOCK_MAX ? avail : BLOCK_MAX);
	if (len == 0) {
		/* the buffer's end (the lines are read one by one) */
		pf->nofind++;
		return;
	}
	pf->found++;
	h = kp_hash(p, len) ^ (pf->java ? 0x5bd1e995u : 0);
	kp_slots_reserve(&pf->blocks, 1024);
	sl = probe_block(pf, p, len, h);
	b = sl->p;
	if (b && b != SEEN) {
		pf->hits++;
		kp_input_consume(in, len, b->lines);
		if (b->memo[0] && b->memo_proc[0] == pf->proc &&
		    b->memo_agg[0] == pf->cv.agg) {
			end_sample(pf, b->memo[0]);
		} else if (b->memo[1] && b->memo_proc[1] == pf->proc &&
			   b->memo_agg[1] == pf->cv.agg) {
			end_sample(pf, b->memo[1]);
		} else {
			for (i = 0; i < b->n; i++)
				kp_conv_push(&pf->cv, b->fr[i]);
			pf->user_dropped = b->user_dropped;
			k = b->memo_next;
			b->memo_proc[k] = pf->proc;
			b->memo_agg[k] = pf->cv.agg;
			b->memo[k] = sample_done(pf, NULL, true);
			b->memo_next = (uint8_t)!k;
		}
		pf->orphan = false;
		return;
	}
	if (!b) {
		/* the first time: remembered, read line by line */
		sl->hash = h;
		sl->p = SEEN;
		pf->blocks.n++;
	} else {
		/* the second: read line by line and cached (the reader
		 * ends each line with a NUL in the buffer: copy first) */
		text = kp_xmalloc(len);
		memcpy(text, p, len);
	}
	ended0 = pf->ended;
	skipped0 = kp_input_skips(in);
	line0 = kp_input_lineno(in);
	last = p + len - 1; /* the empty line */
	pf->in_block = true;
	while (kp_input_buffered(in, &q) && q < last) {
		if (predict(pf))
			continue;
		line = kp_input_getline(in, &n);
		perf_line(pf, line, n);
	}
	pf->in_block = false;
	if (text && pf->ended == ended0 && kp_input_skips(in) == skipped0 &&
	    pf->in_sample && !pf->skip_sample && !pf->orphan)
		sl->p = new_block(pf, text, len, kp_input_lineno(in) - line0 + 1);
	free(text);
	/* the empty line */
	line = kp_input_getline(in, &n);
	perf_line(pf, line, n);
}

/*
 * The last line of the input, without its newline, [s, s + n): cut
 * short?  A frame line is when it opens a "(DSO)" it does not close,
 * or has none where the capture's frame lines have one; a header is
 * when the capture's samples have frame lines (its own are missing).
 *
 *		fffffff
 *		ffffffff811e3b1e vfs_read+0x1 ([kern
 */
static bool
truncated(struct perf *pf, const char *line, const char *s, size_t n,
	  bool *header)
{
	struct hdr h;
	const char *p = s, *e = s + n;

	*header = *line != '\t' && parse_header(s, n, &h);
	if (*header) {
		if (h.rest == h.reste)
			return pf->dsos;
		p = h.rest;
		e = h.reste;
	} else if (!kp_conv_xdigit(*s)) {
		return false; /* not a frame line: skipped as such */
	}
	if (memchr(p, '(', (size_t)(e - p)))
		return e[-1] != ')';
	return pf->dsos;
}

/* ---- successor prediction: the frame line that came after this one ---- */

/*
 * Distinct stacks share most of their frame lines, in the same order: a
 * frame's caller is usually the one it had last time.  So each cached
 * line remembers the line that followed it last (its "next"), and the
 * bytes at the cursor are first compared with that line's text: on one
 * real capture (samples/perf-real-a-g, system-wide, 299k samples, 1.63M
 * frame lines after a sample's first) 79% of them were the line
 * predicted.  A hit costs one memcmp against a line that is likely in
 * the cache, where the line cache costs a scan for the newline, a hash,
 * a probe and a memcmp against text that usually is not.
 *
 * The prediction is taken only where perf_line would read the line as
 * that cached frame line: inside a sample not being skipped to its end,
 * the line starting with a tab (so it cannot be a header), its text
 * after the blanks exactly the cached text, under the same Java tidy,
 * then directly its "\n" (no trailing blank, no "\r", no NUL).  Any
 * other bytes are read by the line reader as before.
 */
static void
follow(struct perf *pf, struct pline *prev, struct pline *pl)
{
	if (!pl)
		return;
	if (prev)
		prev->next = pl;
	pf->last = pl;
}

/* The next line read as the line predicted, if it is: true. */
static bool
predict(struct perf *pf)
{
	struct pline *pl;
	const char *p;
	size_t avail, k;

	if (!pf->last || !(pl = pf->last->next) || !pf->in_sample ||
	    pf->orphan || pl->java != pf->java)
		return false;
	avail = kp_input_buffered(pf->in, &p);
	if (avail == 0 || *p != '\t')
		return false;
	for (k = 1; k < avail && kp_conv_blank(p[k]); k++)
		;
	if (avail - k <= pl->len || p[k + pl->len] != '\n' ||
	    memcmp(p + k, PL_TEXT(pl), pl->len) != 0)
		return false;
	kp_input_consume(pf->in, k + pl->len + 1, 1);
	if (!pf->skip_sample)
		push_frames(pf, pl);
	pf->last = pl;
	return true;
}

/* Comments; -F +srccode's source lines: "|42   code" (trimmed line). */
static bool
passed_over(const char *s, size_t n)
{
	return *s == '#' || (*s == '|' && n > 1 && kp_conv_digit(s[1]));
}

/*
 * One line of the input, after the line reader: the state machine of
 * samples (header, frame lines, blank line).
 */
static void
perf_line(struct perf *pf, char *line, size_t len)
{
	struct kp_input *in = pf->in;
	struct pline *pl, *prev = pf->last;
	struct hdr h;
	char *s = line;
	size_t n = len;
	uint64_t hash;
	bool header;

	pf->last = NULL;
	if (kp_conv_nul(in, line, len))
		return;
	while (n && kp_conv_blank(*s)) {
		s++;
		n--;
	}
	while (n && kp_conv_blank(s[n - 1]))
		n--;
	if (n == 0) {
		end_sample(pf, NULL);
		pf->orphan = false;
		return;
	}
	if (kp_input_partial(in) && !pf->orphan && *s != '#' &&
	    truncated(pf, line, s, n, &header)) {
		if (header)
			end_sample(pf, NULL); /* the sample before it */
		kp_input_skip(in, "the last line is cut short (no newline at "
				  "the end of the input); its sample skipped");
		pf->skip_sample = true;
		pf->orphan = true;
		return;
	}
	if (pf->orphan || passed_over(s, n))
		return;
	if (pf->in_sample) {
		/* a header with no blank line before it */
		if (*line != '\t' && parse_header(s, n, &h)) {
			end_sample(pf, NULL);
			pf->headers = true;
			start_sample(pf, &h);
			block(pf);
			return;
		}
		/* before the cache: a sideband record's text may have been
		 * a frame line's after a tab */
		if (*line != '\t' && sideband(s, n)) {
			end_sample(pf, NULL);
			return;
		}
		/* the fast path: a frame line seen before */
		pl = find_frame(pf, s, n, &hash);
		if (pl) {
			follow(pf, prev, pl);
			if (!pf->skip_sample)
				push_frames(pf, pl);
			return;
		}
		/* a new frame line */
		if (!pf->skip_sample)
			follow(pf, prev, frame_line(pf, s, n, hash));
		return;
	} else if (!parse_header(s, n, &h)) {
		if (sideband(s, n))
			return;
		if (*line == '\t' && kp_conv_xdigit(*s) && !pf->headers) {
			/* -F ip,sym: samples without a header */
			memset(&h, 0, sizeof(h));
			start_sample(pf, &h);
			pl = find_frame(pf, s, n, &hash);
			if (pl)
				push_frames(pf, pl);
			else
				frame_line(pf, s, n, hash);
			return;
		}
		if (*line == '\t' || !loose_header(s, n, &h)) {
			kp_input_skip(in, "not a sample header (expected "
					  "'comm pid [cpu] time: event:'); "
					  "skipping to the next blank line");
			pf->orphan = true;
			return;
		}
	}
	pf->headers = true;
	start_sample(pf, &h);
	block(pf);
}

/* ---- the samples, on one or two threads ---- */

static void
perf_init(struct perf *pf, const struct kp_perf_opts *o,
	  struct kp_perf_events *evs, struct kp_input *in, struct kp_agg *agg)
{
	memset(pf, 0, sizeof(*pf));
	pf->o = o;
	pf->evs = evs;
	pf->in = in;
	pf->agg0 = agg;
	kp_conv_init(&pf->cv, agg, in);
}

static void
perf_free(struct perf *pf)
{
	kp_conv_free(&pf->cv);
	kp_agg_late_free(&pf->late);
	kp_slots_free(&pf->lines);
	kp_slots_free(&pf->blocks);
	kp_pool_free(&pf->pool);
	kp_pool_free(&pf->bpool);
}

/* Every line of pf's input, to its end. */
static void
read_lines(struct perf *pf)
{
	char *line;
	size_t len;

	for (;;) {
		if (predict(pf))
			continue;
		if (!(line = kp_input_getline(pf->in, &len)))
			break;
		perf_line(pf, line, len);
	}
	end_sample(pf, NULL);
	kp_agg_late_end(&pf->late);
}

/*
 * Halves.  A big regular file is read by two threads at once: this one
 * reads up to a sample header near the middle, a second reads from there
 * with an input of its own (kp_input_split), into events and stacks of
 * its own; then its events and stacks are added after this one's, in
 * their order, which is the order of first sight in the whole file, and
 * its skipped lines are said after this one's, with their lines in the
 * whole file (kp_input_join).  The output is the same bytes as from one
 * thread (tests/perf2kp/halves.sh and fuzz_perf2kp compare them).
 *
 * Why the halves read the same alone: the split is at a header that
 * follows an empty line, where the reader is between samples as after
 * any empty line; what the second thread does not know of the first
 * half is only in caches (lines, blocks, predictions, process names),
 * which change no output, and in two flags: `headers' (set by the
 * header it starts at) and `dsos' (read only for a last line without a
 * newline: a file so cut is not split).  Both threads intern names and
 * frames in the shared tables, each table shard under its own lock
 * (kp_intern_shared: a hold is one probe, and two threads seldom want
 * the same shard of 64); everything else each has for itself (the arena
 * behind the aggregations is per thread).
 * On one real capture the second half had 84k distinct frame lines,
 * 16k of them also in the first: each half parses its own.
 */
struct half {
	struct perf pf;
	struct kp_perf_events evs;
	struct kp_agg *agg;
	pthread_t th;
	bool threaded;
};

#define SPLIT_WIN (64u << 10)

/*
 * A file offset to split at: the start of a sample header after an
 * empty line, found from the middle of [from, size) on, within a few
 * windows; 0 if there is none.
 */
static uint64_t
split_point(int fd, uint64_t from, uint64_t size)
{
	char *buf = kp_xmalloc(SPLIT_WIN);
	uint64_t at = from + (size - from) / 2, found = 0;
	const char *p, *e, *s, *le;
	struct hdr h;
	ssize_t got;
	size_t n;
	int tries;

	for (tries = 0; tries < 16 && !found && at < size; tries++) {
		got = pread(fd, buf, SPLIT_WIN, (off_t)at);
		if (got <= 0)
			break;
		e = buf + got;
		for (p = buf; !found && (p = memchr(p, '\n', (size_t)(e - p))) &&
			      p + 1 < e; p++) {
			if (p[1] != '\n')
				continue;
			s = p + 2;
			if (!(le = memchr(s, '\n', (size_t)(e - s))))
				break;
			n = (size_t)(le - s);
			if (n && s[n - 1] == '\r')
				n--;
			while (n && kp_conv_blank(s[n - 1]))
				n--;
			/* what perf_line reads as a header there */
			if (n && !kp_conv_blank(*s) && !passed_over(s, n) &&
			    !memchr(s, '\0', n) && parse_header(s, n, &h))
				found = at + (uint64_t)(s - buf);
		}
		at += SPLIT_WIN / 2;
	}
	free(buf);
	return found;
}

static void *
half_main(void *pf)
{
	read_lines(pf);
	return NULL;
}

/* Start the second half's thread, if pf's input is worth splitting. */
static bool
split(struct perf *pf, struct half *hf)
{
	struct kp_input *part;
	uint64_t cur, size, at;
	char last;

	if (!pf->o->split_min || !kp_input_unread(pf->in, &cur, &size) ||
	    size - cur < pf->o->split_min ||
	    (pf->o->split_min > 1 && kp_cpus() < 2) ||
	    pread(kp_input_fd(pf->in), &last, 1, (off_t)size - 1) != 1 ||
	    last != '\n')
		return false;
	at = split_point(kp_input_fd(pf->in), cur, size);
	if (!at || !(part = kp_input_split(pf->in, at)))
		return false;
	memset(hf, 0, sizeof(*hf));
	hf->agg = kp_agg_new();
	perf_init(&hf->pf, pf->o, &hf->evs, part, hf->agg);
	/* without a thread, the half is read after this one's */
	kp_intern_shared = true;
	hf->threaded = pthread_create(&hf->th, NULL, half_main, &hf->pf) == 0;
	if (!hf->threaded)
		kp_intern_shared = false; /* (set while one thread runs) */
	return true;
}

/* The second half read to its end, its caches freed. */
static void
wait_half(struct perf *pf, struct half *hf)
{
	if (hf->threaded)
		pthread_join(hf->th, NULL);
	else
		read_lines(&hf->pf);
	kp_intern_shared = false;
	kp_input_join(pf->in, hf->pf.in);
	perf_free(&hf->pf);
}

/* The second half's events and stacks after pf's; true if a total
 * overflowed in it. */
static bool
merge_half(struct perf *pf, struct half *hf)
{
	struct kp_perf_event *e2, *ev;
	bool over = false;
	size_t i;

	for (i = 0; i < hf->evs.n; i++) {
		e2 = &hf->evs.v[i];
		pf->ev = ev = event(pf, e2->name, e2->len);
		ev->samples += e2->samples;
		if (!ev->agg || !e2->agg)
			continue;
		over |= !kp_agg_total_ok(e2->agg);
		/* joined as it is written, owned by the first's */
		kp_agg_adopt(ev->agg, e2->agg);
		if (hf->agg == e2->agg)
			hf->agg = NULL;
		e2->agg = NULL;
	}
	kp_perf_events_free(&hf->evs);
	kp_agg_free(hf->agg);
	return over;
}

int
kp_perf_convert(struct kp_agg *agg, struct kp_input *in,
		const struct kp_perf_opts *o, struct kp_perf_events *evs,
		const char **why)
{
	struct perf pf;
	struct half hf;
	bool halves, over = false;
	size_t i;

	if (check_kind(in, why) < 0)
		return -1;
	perf_init(&pf, o, evs, in, agg);
	halves = split(&pf, &hf);
	read_lines(&pf);
	if (halves)
		wait_half(&pf, &hf);
	/* the caches before the stacks merge: a lower peak */
	perf_free(&pf);
	if (halves)
		over = merge_half(&pf, &hf);
	for (i = 0; i < evs->n; i++)
		if (evs->v[i].agg && !kp_agg_total_ok(evs->v[i].agg))
			over = true;
	if (over) {
		*why = "the total count overflows 64 bits";
		return -1;
	}
	return 0;
}

void
kp_perf_kept(struct kp_perf_events *evs, const char *name,
	     unsigned long samples, struct kp_agg *agg)
{
	struct kp_perf_event *ev = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < evs->n && !ev; i++)
		if (evs->v[i].len == len &&
		    memcmp(evs->v[i].name, name, len) == 0)
			ev = &evs->v[i];
	if (!ev) {
		evs->v = kp_xrealloc(evs->v, (evs->n + 1) * sizeof(*evs->v));
		ev = &evs->v[evs->n++];
		memset(ev, 0, sizeof(*ev));
		ev->name = kp_xstrdup(name);
		ev->len = len;
	}
	if (ev->owned)
		kp_die("kp_perf_kept: event %s has stacks of its own", name);
	ev->agg = agg;
	ev->samples += samples;
}

struct kp_agg *
kp_perf_pick(const struct kp_perf_opts *o, struct kp_perf_events *evs,
	     struct kp_agg *agg)
{
	struct kp_perf_event *keep = NULL, *ev;
	char *msg = NULL;
	size_t len = 0, i;
	FILE *m;

	for (i = 0; i < evs->n; i++) {
		ev = &evs->v[i];
		if (ev->agg && (o->event ? ev->agg == agg
					 : !keep || ev->samples > keep->samples))
			keep = ev;
	}
	if (evs->n > 1 || (evs->n && !keep)) {
		m = open_memstream(&msg, &len);
		if (!m)
			kp_die("out of memory");
		for (i = 0; i < evs->n; i++)
			fprintf(m, "%s%s %lu%s", i ? ", " : "",
				evs->v[i].len ? evs->v[i].name : "(none)",
				evs->v[i].samples, i ? "" : " samples");
		if (keep)
			fprintf(m, ": kept %s; %s",
				keep->len ? keep->name : "(none)",
				o->event ? "chosen with --event"
					 : "--event to choose");
		else
			fprintf(m, ": none is %s (--event)", o->event);
		if (fclose(m) != 0)
			kp_die("out of memory");
		kp_warn("%s", msg);
		free(msg);
	}
	if (keep && keep->len)
		kp_meta_set("event", "%s", keep->name);
	else if (o->event)
		kp_meta_set("event", "%s", o->event);
	if (keep && keep->agg != agg) {
		kp_agg_free(agg);
		agg = keep->agg;
	}
	for (i = 0; i < evs->n; i++) {
		ev = &evs->v[i];
		if (ev != keep && ev->owned)
			kp_agg_free(ev->agg);
		ev->agg = NULL;
		ev->owned = false;
	}
	return agg;
}

void
kp_perf_events_free(struct kp_perf_events *evs)
{
	size_t i;

	for (i = 0; i < evs->n; i++) {
		if (evs->v[i].owned)
			kp_agg_free(evs->v[i].agg);
		free(evs->v[i].name);
	}
	free(evs->v);
	evs->v = NULL;
	evs->n = 0;
}
