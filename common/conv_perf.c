/*
 * conv_perf.c - "perf script" text to kp stacks, in one streaming pass
 * on one or two threads.
 *
 * A sample is a header line, its frame lines (leaf first), and a blank
 * line.  The input is read in chunks of whole samples, each ending where
 * a sample header follows an empty line (a chunk with no such place ends
 * at a line's end, and the thread that read it reads the next one too,
 * where it left off); the threads take the next chunk in turn, and each
 * sample is numbered by its chunk and its place in it, so that what they
 * make is the same, in the same order, as one thread reading the whole
 * input would make: the stacks in order of first sight (idagg.h), the
 * events too, the skipped lines said in order with their lines in the
 * whole input (kp_input_mem's parts, joined in order).
 *
 * Each distinct frame line is read once: it becomes a record of the
 * aggregation (idagg.h), found again by its address, that remembers the
 * text after the address (a template: the symbol and the DSO as perf
 * printed them), the offset, and how many blanks stood where; a line is
 * that record's when the same bytes stand in the same places, and is
 * then the same frames.  Most records are the frame they name, so a
 * distinct line costs 24 bytes and a table slot, and its text is not
 * kept (the symbol and DSO are, once).  The frame lines after a sample's
 * header are looked up together: their table slots are fetched first,
 * then their records, then each is compared, so that the waits for
 * memory overlap.  The other lines (sample headers, side-band records)
 * are read by perf_lines.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "bytes.h"
#include "conv.h"
#include "idagg.h"
#include "internal.h"
#include "chunks.h"
#include "perf_lines.h"

#define MAX_EVENTS KP_ID_EVENTS /* distinct events in the input */
#define CHUNK (512u << 10)  /* the bytes a chunk aims at */
#define RING 128	    /* frame lines read ahead: a power of two */
#ifndef SLOT_AHEAD
#define SLOT_AHEAD 32	    /* their table slots fetched that many ahead */
#endif
#ifndef REC_AHEAD
#define REC_AHEAD 16	    /* their first records that many ahead */
#endif
#define PROC_CACHE 256	    /* process frames by name: a power of two */

/* A record's key word: its template's id, then these flags. */
#define L_OFF 0x01000000u    /* "+0xOFF" after the symbol */
#define L_KERNEL 0x02000000u /* kernel code (--kernel-only, --user-only) */
#define L_SKIP 0x04000000u   /* "(process name)": perf prints, peers drop */
#define L_MULTI 0x08000000u  /* frames: a list ("a->b->c", Java) */
#define L_TMPL 0x00ffffffu

/*
 * The text of frame lines after their address, as perf printed it: the
 * head (the blanks and the symbol, its bytes here) and the tail (what
 * follows the symbol and its offset: blanks and "(DSO)", or nothing),
 * read under the Java tidy or not; and, when every line of it is one
 * frame of one function whose names read back as they are (T_ONE),
 * that function: a line's frame is then the function at the line's
 * address and offset, its text not parsed again.  Templates lie in an
 * arena of their lane, 8-byte aligned, so that a template's id is its
 * lane and its place there in 24 bits; a tail is kept once a lane.
 */
struct tmpl {
	const char *tail; /* in the arena (lane_tail) */
	uint32_t nhead;
	uint16_t ntail;
	bool java;
	uint8_t how;  /* T_* */
	uint32_t fun; /* T_ONE: the frame's function, KP_IDF_INLINE */
	char head[];
};
#define T_ONE 0x01    /* one frame of function fun, names as they are */
#define T_SYM 0x02    /* T_ONE: the frame has a symbol (so an offset) */
#define T_KERNEL 0x04 /* kernel code, by its DSO */
#define T_SKIP 0x08   /* a process name: no frame */
#define TMPL_ARENA (32u << 20) /* a lane's templates: 2^22 * 8 bytes */

/* The run of perf script text: the stacks, the templates, the events. */
struct kp_perf_text {
	struct kp_idagg *ids;
	struct kp_ctab tmpls;
	struct {
		char *base; /* read by every thread */
		size_t used __attribute__((aligned(64))); /* by its own */
	} __attribute__((aligned(64))) tarena[KP_CTAB_THREADS];
	struct kp_slots tails[KP_CTAB_THREADS]; /* each lane's tails */
	struct kp_lane lists[KP_CTAB_THREADS]; /* L_MULTI's frames */
	/* the events, by number: added under mu, read without it */
	struct event {
		char *name;
		size_t len;
		bool kept; /* its samples' stacks are kept */
		uint64_t first; /* its first sample's position */
		unsigned long samples, synced;
	} *ev[MAX_EVENTS];
	unsigned nev;
	pthread_mutex_t mu;
	uint32_t user, nostack; /* the frames "[user]", "[no stack]" */
	uint64_t seq; /* the chunks read: the next one's number */
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


/* One thread's reading: was one pass's whole state (struct perf). */
struct worker {
	struct kp_perf_text *T;
	const struct kp_perf_opts *o;
	struct kp_chunks *chunks;
	struct worker *peer; /* the other lane's */
	int lane;
	struct kp_input *in; /* the chunk being read */
	/* the stack being built: frame records, leaf first */
	uint32_t *ids;
	size_t n, cap;
	/* the current sample */
	bool in_sample, skip_sample, orphan, java;
	bool user_dropped; /* --kernel-only dropped user frames of it */
	bool headers; /* a sample header was seen (else -F ip,sym) */
	bool dsos;    /* a frame line ended in "(DSO)" */
	uint64_t weight;
	uint32_t proc; /* the process frame, or KP_ID_NONE */
	unsigned ev;   /* the current sample's event */
	uint64_t pos;  /* the current sample's position: chunk << 24 | n */
	uint64_t seq;  /* the chunk's number */
	uint32_t nsample; /* samples begun in the chunk */
	/* the events this thread saw: samples, first position */
	unsigned long *samples;
	uint64_t *first;
	/* process frames by name, a direct-mapped cache: samples of a
	 * few processes interleave in a system-wide capture */
	struct {
		const char *name; /* interned */
		uint32_t id;
	} procs[PROC_CACHE];
	struct kp_chunk chunk; /* the chunk being read (in its buffer) */
	/* the frame lines read ahead of the line reader (see ahead) */
	struct ahead {
		const char *line, *p, *e; /* its start, address's end, end */
		uint64_t addr, h;
		uint32_t rec; /* the first record under h, or KP_ID_NONE */
	} ring[RING];
	unsigned head, tail, recd; /* entries; those with records fetched */
	const char *scan, *cend;   /* where reading ahead goes on; the end */
	/* the cache of a sample's frame lines at once (see blocks) */
	struct kp_slots blocks;
	char *barena; /* the cached blocks: a mapping of BLOCK_ARENA */
	size_t bused;
	unsigned long found, hits; /* blocks looked up, found */
	unsigned long ended;	   /* samples ended (end_sample) */
	bool blocks_off, in_block;
	bool last; /* the chunk is the input's last */
	pthread_t th;
	bool started;
} __attribute__((aligned(64)));

/* ---- the record table: templates, records, lists ---- */

static inline const struct tmpl *
tmpl_at(const struct kp_perf_text *T, uint32_t key)
{
	uint32_t t = key & L_TMPL;

	return (const struct tmpl *)(const void *)(T->tarena[t >> 22].base +
						   (size_t)(t & 0x3fffff) * 8);
}

/* A template's text, as a frame line's after its address gives it. */
struct ttext {
	const char *head, *tail;
	size_t nhead, ntail;
	bool java;
	uint64_t h;
};

static void
ttext_hash(struct ttext *x)
{
	x->h = kp_mix((kp_hash(x->head, x->nhead) + x->java) ^
			      0x9e3779b97f4a7c15ull,
		      kp_hash(x->tail, x->ntail) ^ 0xd6e8feb86659fd93ull);
}

static bool
ttext_is(const struct tmpl *t, const struct ttext *x)
{
	return t->nhead == x->nhead && t->ntail == x->ntail &&
	       t->java == x->java &&
	       memcmp(t->head, x->head, x->nhead) == 0 &&
	       memcmp(t->tail, x->tail, x->ntail) == 0;
}

/* The template of text x, or L_TMPL + 1 if there is none. */
static uint32_t
tmpl_find(struct kp_perf_text *T, const struct ttext *x)
{
	struct kp_ctab_it it;
	uint32_t id;

	kp_ctab_first(&T->tmpls, x->h, &it);
	while (kp_ctab_next(&it, &id))
		if (ttext_is(tmpl_at(T, id), x))
			return id;
	return L_TMPL + 1;
}

/* n bytes of lane's template arena, 8-byte aligned, and 16 bytes after
 * them readable and never written: kp_bytes_eq reads past a text, in
 * another thread too while this lane's makes its next one (on the real
 * capture of bench/: 9,159 texts, 146 KB more). */
static char *
tarena_alloc(struct kp_perf_text *T, int lane, size_t n)
{
	char *p;

	n = (n + 7) & ~(size_t)7;
	if (!T->tarena[lane].base) {
		T->tarena[lane].base = mmap(NULL, TMPL_ARENA,
					    PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS |
						    MAP_NORESERVE,
					    -1, 0);
		if (T->tarena[lane].base == MAP_FAILED)
			kp_die("out of memory");
		(void)madvise(T->tarena[lane].base, TMPL_ARENA,
			      MADV_NOHUGEPAGE);
	}
	if (T->tarena[lane].used + n + 16 > TMPL_ARENA)
		kp_die("more than %u MiB of distinct frame line texts",
		       TMPL_ARENA >> 20);
	p = T->tarena[lane].base + T->tarena[lane].used;
	T->tarena[lane].used += n + 16;
	return p;
}

/* The tail tail[0..n) in lane's arena, once a lane (a table of the
 * lane's own: no other thread writes it). */
static const char *
lane_tail(struct kp_perf_text *T, int lane, const char *tail, size_t n)
{
	struct kp_slots *t = &T->tails[lane];
	uint64_t h = kp_hash(tail, n);
	size_t mask, i;
	char *c;

	kp_slots_reserve(t, 64);
	mask = t->cap - 1;
	for (i = h & mask; t->tab[i].p; i = (i + 1) & mask)
		if (t->tab[i].hash == h &&
		    *(const uint16_t *)t->tab[i].p == n &&
		    memcmp((const char *)t->tab[i].p + 2, tail, n) == 0)
			return (const char *)t->tab[i].p + 2;
	/* its length, then its text */
	c = tarena_alloc(T, lane, n + 2);
	*(uint16_t *)(void *)c = (uint16_t)n;
	memcpy(c + 2, tail, n);
	kp_slots_put(t, h, c);
	return c + 2;
}

/* The template of text x, made in lane if new with how and fun. */
static uint32_t
tmpl_add(struct kp_perf_text *T, int lane, const struct ttext *x,
	 unsigned how, uint32_t fun)
{
	const char *tail = lane_tail(T, lane, x->tail, x->ntail);
	struct tmpl *t;
	uint32_t id;

	kp_ctab_lock(&T->tmpls, x->h);
	if ((id = tmpl_find(T, x)) <= L_TMPL) {
		kp_ctab_unlock(&T->tmpls, x->h);
		return id;
	}
	t = (struct tmpl *)(void *)tarena_alloc(
		T, lane, offsetof(struct tmpl, head) + x->nhead);
	id = (uint32_t)lane << 22 |
	     (uint32_t)(((char *)t - T->tarena[lane].base) >> 3);
	t->tail = tail;
	t->nhead = (uint32_t)x->nhead;
	t->ntail = (uint16_t)x->ntail;
	t->java = x->java;
	t->how = (uint8_t)how;
	t->fun = fun;
	memcpy(t->head, x->head, x->nhead);
	kp_ctab_add(&T->tmpls, x->h, id);
	kp_ctab_unlock(&T->tmpls, x->h);
	return id;
}

/*
 * Hex digits at p (before e), at most 16: their value in *v and their
 * end, or NULL if there are none or more.  p is in a chunk's buffer,
 * which has 16 bytes to read past any of its lines (KP_CHUNK_PAD).
 */
static inline const char *
hex_at(const char *p, const char *e, uint64_t *v)
{
#ifdef __SSE2__
	const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i alpha;
	unsigned m = kp_hex_bits16(x, &alpha);
	size_t n = (size_t)__builtin_ctz(~m | 0x10000u);
	uint64_t u;

	if (n > (size_t)(e - p))
		n = (size_t)(e - p);
	if (n == 0 || (n == 16 && p + 16 < e &&
		       kp_digit_value[(unsigned char)p[16]] >= 0))
		return NULL;
	u = kp_hex_value16(x, alpha);
	*v = n == 16 ? u : u >> (4 * (16 - n));
	return p + n;
#else
	const char *s = p;
	uint64_t x = 0;
	int d;

	while (p < e && (d = kp_digit_value[(unsigned char)*p]) >= 0) {
		x = x << 4 | (uint64_t)d;
		p++;
	}
	if (p == s || p - s > 16)
		return NULL;
	*v = x;
	return p;
#endif
}

/* The first "\n" in [p, e), or NULL; p as hex_at's. */
static inline const char *
nl_at(const char *p, const char *e)
{
	return kp_bytes_find(p, e, '\n', '\n', true);
}

/*
 * The text of a frame line after its address, from p to its end e, is
 * template t's with offset off (under key: L_OFF): the same bytes
 * before and after the offset.  (The offset may be written with other
 * digits, as the parse reads them: the same value.)
 */
static inline __attribute__((always_inline)) bool
text_is(const struct tmpl *t, uint32_t key, uint32_t off, const char *p,
	const char *e)
{
	uint64_t v;

	if ((size_t)(e - p) < (size_t)t->nhead + t->ntail ||
	    !kp_bytes_eq(p, t->head, t->nhead))
		return false;
	p += t->nhead;
	if (key & L_OFF) {
		if (e - p < 4 || p[0] != '+' || p[1] != '0' || p[2] != 'x' ||
		    !(p = hex_at(p + 3, e, &v)) || v != off)
			return false;
	}
	return (size_t)(e - p) == t->ntail && kp_bytes_eq(p, t->tail, t->ntail);
}

/* The frame line of address addr, its text after it [p, e), read under
 * the Java tidy or not, is the line record r was read from. */
static inline bool
line_is(const struct kp_perf_text *T, const struct kp_idrec *r,
	uint64_t addr, const char *p, const char *e, bool java)
{
	const struct tmpl *t;

	if (r->key == KP_ID_NONE || r->addr != addr)
		return false;
	t = tmpl_at(T, r->key);
	return t->java == java && text_is(t, r->key, r->off, p, e);
}

/* The record of the frame line whose address addr (of hash h) ends at p,
 * its text at e, or KP_ID_NONE. */
static inline uint32_t
find_line(struct worker *w, uint64_t addr, uint64_t h, const char *p,
	  const char *e)
{
	struct kp_ctab_it it;
	uint32_t id;

	kp_ctab_first(kp_id_table(w->T->ids), h, &it);
	while (kp_ctab_next(&it, &id))
		if (line_is(w->T, kp_id_rec(w->T->ids, id), addr, p, e,
			    w->java))
			return id;
	return KP_ID_NONE;
}

static void
grow_ids(struct worker *w)
{
	w->cap = w->cap ? 2 * w->cap : 256;
	w->ids = kp_xrealloc(w->ids, w->cap * sizeof(*w->ids));
}

static inline void
push(struct worker *w, uint32_t id)
{
	if (w->n == w->cap)
		grow_ids(w);
	w->ids[w->n++] = id;
}

/* The frames of the frame line of record r (of id), to the stack (as
 * the options filter them). */
static inline __attribute__((always_inline)) void
push_rec(struct worker *w, const struct kp_idrec *r, uint32_t id)
{
	uint32_t key = r->key, i;
	const uint32_t *list;

	if (!w->dsos && tmpl_at(w->T, key)->ntail) /* a "(DSO)" */
		w->dsos = true;
	if (key & L_SKIP)
		return;
	if (w->o->space == KP_SPACE_KERNEL && !(key & L_KERNEL)) {
		w->user_dropped = true;
		return;
	}
	if (w->o->space == KP_SPACE_USER && (key & L_KERNEL))
		return;
	if (key & L_MULTI) {
		list = *(const uint32_t *const *)kp_lane_at(w->T->lists,
							    r->frame);
		for (i = 0; i < list[0]; i++)
			push(w, list[1 + i]);
	} else {
		push(w, r->frame == KP_ID_SELF ? id : r->frame);
	}
}

static void
push_line(struct worker *w, uint32_t id)
{
	push_rec(w, kp_id_rec(w->T->ids, id), id);
}

/* ---- frame lines ---- */

/* What split_frame and frame_pieces find in a frame line. */
struct parts {
	uint64_t addr, off;
	bool has_off, skip, unknown;
	const char *addr_end;	/* where the address's digits end */
	const char *sym, *se;	/* the symbol as printed (before "+0x") */
	const char *sym_end;	/* the end of the symbol and offset */
	const char *dso, *de;	/* inside "(DSO)", or NULL */
	/* frame_pieces' */
	bool kernel, plain; /* plain: kp_conv_normal kept the names */
	uint32_t np;
	struct kp_frame fr[64]; /* as kp_conv_normal leaves them, leaf first */
};

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
 * split_frame finds its parts: the address, the symbol, "+0xOFF", the
 * DSO (the last blank-separated word, in parentheses).
 */
static int
split_frame(const char *s, size_t len, struct parts *pl, const char **why)
{
	const char *e = s + len, *p, *sym, *se;
	uint64_t off = 0;

	for (p = s; p < e && !kp_conv_blank(*p); p++)
		;
	if (!kp_conv_hex(s, p, &pl->addr)) {
		*why = "not a frame line (expected 'ADDRESS SYMBOL (DSO)')";
		return -1;
	}
	pl->addr_end = p;
	while (p < e && kp_conv_blank(*p))
		p++;
	while (e > p && kp_conv_blank(e[-1]))
		e--;
	pl->dso = pl->de = NULL;
	/* "(DSO)": the last blank-separated word, in parentheses */
	if (e > p && e[-1] == ')') {
		const char *wd = e - 1;

		while (wd > p && !kp_conv_blank(wd[-1]))
			wd--;
		if (*wd == '(' && e - wd >= 2) {
			pl->dso = wd + 1;
			pl->de = e - 1;
			e = wd;
			while (e > p && kp_conv_blank(e[-1]))
				e--;
		}
	}
	pl->sym_end = e;
	sym = p;
	se = e;
	/* "+0xOFF" */
	for (p = se; p > sym && kp_conv_xdigit(p[-1]); p--)
		;
	pl->has_off = false;
	if (p - sym >= 3 && p < se && p[-1] == 'x' && p[-2] == '0' &&
	    p[-3] == '+' && kp_conv_hex(p, se, &off)) {
		pl->has_off = true;
		se = p - 3;
	}
	pl->off = off;
	pl->sym = sym;
	pl->se = se;
	/* a process name, as the peers skip it */
	pl->skip = se > sym && *sym == '(';
	pl->unknown = se - sym == 9 && memcmp(sym, "[unknown]", 9) == 0;
	return 0;
}

/*
 * The frames of a split line: the module its DSO names, the symbol
 * tidied as stackcollapse-perf.pl tidies it, and a "->" chain (Java
 * inlining: the first name is the outer function, each later one is
 * inlined into the one before, marked KP_F_INLINE) made a frame each.
 */
static void
frame_pieces(struct worker *w, struct parts *pl)
{
	const char *module = NULL, *piece[64], *p, *sym = pl->sym;
	const char *se = pl->unknown ? pl->sym : pl->se;
	size_t plen[64], np = 0, i, k;
	bool inlined = false;
	unsigned flags;
	char *t;

	pl->kernel = false;
	pl->plain = true;
	pl->np = 0;
	if (pl->dso && pl->de - pl->dso == 7 &&
	    memcmp(pl->dso, "inlined", 7) == 0)
		inlined = true;
	else if (pl->dso)
		module = map_module(pl->dso, (size_t)(pl->de - pl->dso),
				    &pl->kernel);
	if (!pl->dso && kp_addr_is_kernel(pl->addr))
		pl->kernel = true;
	if (pl->skip)
		return;
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
	pl->np = (uint32_t)np;
	for (i = 0; i < np; i++) {
		struct kp_frame f;
		char tmp[256], *big = NULL;

		memset(&f, 0, sizeof(f));
		f.addr = pl->addr;
		flags = KP_F_ADDR;
		k = plen[i];
		t = k < sizeof(tmp) ? tmp : (big = kp_xmalloc(k + 1));
		memcpy(t, piece[i], k);
		if (!w->o->raw_names && k) {
			k = kp_conv_tidy_generic(t, k);
			if (w->java)
				k = kp_conv_tidy_java(t, k);
		}
		if (i == np - 1 && pl->has_off && k) {
			f.off = pl->off;
			flags |= KP_F_OFF;
		}
		if (i > 0 || (inlined && w->o->inline_flag))
			flags |= KP_F_INLINE;
		f.flags = flags;
		f.module = module;
		if (k)
			f.sym = kp_intern(t, k);
		free(big);
		if (!kp_conv_plain(&f))
			pl->plain = false;
		if (w->o->functions)
			kp_conv_function_level(&f);
		/* leaf first: the last piece is the innermost */
		kp_conv_normal(&f, &pl->fr[np - 1 - i]);
	}
}

/* The frames of a line that is no record's, to the stack. */
static void
push_parts(struct worker *w, const struct parts *pl, bool kernel,
	   const uint32_t *ids, uint32_t n)
{
	uint32_t i;

	if (pl->dso)
		w->dsos = true;
	if (pl->skip)
		return;
	if (w->o->space == KP_SPACE_KERNEL && !kernel) {
		w->user_dropped = true;
		return;
	}
	if (w->o->space == KP_SPACE_USER && kernel)
		return;
	for (i = 0; i < n; i++)
		push(w, ids[i]);
}

/*
 * The frame a line of template t is, at address addr with its offset:
 * the record it would be (r, key and frame words KP_ID_NONE).  False
 * where the record cannot hold it (an offset past 32 bits).
 */
static bool
tmpl_frame(const struct worker *w, const struct tmpl *t,
	   const struct parts *pl, struct kp_idrec *r)
{
	memset(r, 0, sizeof(*r));
	r->key = r->frame = KP_ID_NONE;
	r->fun = t->fun;
	if (w->o->functions && (t->how & T_SYM))
		return true; /* one frame per function */
	r->fun |= KP_IDF_ADDR;
	r->addr = pl->addr;
	/* kp_conv_normal: an offset equal to the address is none */
	if (pl->has_off && (t->how & T_SYM) &&
	    !(pl->addr && pl->off == pl->addr)) {
		if (pl->off > UINT32_MAX)
			return false;
		r->fun |= KP_IDF_OFF;
		r->off = (uint32_t)pl->off;
	}
	return true;
}

/*
 * A frame line [s, s + n) (its blanks trimmed) that is no record's yet:
 * its frames made records (from its template when it has one, else
 * parsed), the line made a record too when line_is can tell its text
 * again, and its frames pushed.  False with *why when it is not a frame
 * line.
 */
static bool
new_line(struct worker *w, const char *s, size_t n, const char **why)
{
	struct kp_perf_text *T = w->T;
	struct kp_idagg *A = T->ids;
	const struct tmpl *t;
	struct parts pl;
	struct ttext x;
	struct kp_idrec line, fr;
	uint32_t ids[64], nids = 0, id, i, tid;
	bool kernel, one, merge, canon, parsed = false;
	uint64_t h;

	if (split_frame(s, n, &pl, why) < 0)
		return false;
	/* its text: before the offset (blanks, symbol), after it */
	x.head = pl.addr_end;
	x.nhead = (size_t)(pl.se - pl.addr_end);
	x.tail = pl.sym_end;
	x.ntail = (size_t)(s + n - pl.sym_end);
	x.java = w->java;
	ttext_hash(&x);
	if (x.ntail > UINT16_MAX) {
		tid = L_TMPL + 1; /* no template holds it */
	} else if ((tid = tmpl_find(T, &x)) > L_TMPL) {
		/* a new text: parsed, and its template made */
		unsigned how = 0;
		uint32_t fun = 0;

		frame_pieces(w, &pl);
		parsed = true;
		if (pl.skip) {
			how = T_SKIP;
		} else if (pl.np == 1 && pl.plain) {
			how = T_ONE | (pl.fr[0].sym ? T_SYM : 0);
			fun = kp_id_fun_of(A, w->lane, pl.fr[0].sym,
					   pl.fr[0].module) |
			      ((pl.fr[0].flags & KP_F_INLINE) ? KP_IDF_INLINE
							      : 0);
		}
		if (pl.kernel && pl.dso)
			how |= T_KERNEL;
		tid = tmpl_add(T, w->lane, &x, how, fun);
	}
	t = tid <= L_TMPL ? tmpl_at(T, tid) : NULL;
	kernel = t && t->ntail ? (t->how & T_KERNEL) != 0
			       : !pl.dso && kp_addr_is_kernel(pl.addr);
	if (!t && !parsed) {
		frame_pieces(w, &pl);
		parsed = true;
	}
	if (parsed)
		kernel = pl.kernel;
	one = t && (t->how & T_ONE) && tmpl_frame(w, t, &pl, &fr);
	if (!one && !(t && (t->how & T_SKIP)) && !parsed) {
		frame_pieces(w, &pl);
		parsed = true;
	}
	/* the line's one frame may be its record (no record of that frame
	 * yet): the frame's address and offset are the line's */
	merge = one && (fr.fun & KP_IDF_ADDR) &&
		((fr.fun & KP_IDF_OFF) ? pl.has_off && fr.off == pl.off
				       : !pl.has_off);
	if (one && !merge) {
		ids[nids++] = kp_id_frame_rec(A, w->lane, &fr);
	} else if (!one && parsed && !pl.skip) {
		for (i = 0; i < pl.np; i++)
			ids[nids++] = kp_id_frame(A, w->lane, &pl.fr[i]);
	}
	/* the line's record, if it can hold it: line_is reads it then */
	canon = t && (!pl.has_off || pl.off <= UINT32_MAX);
	memset(&line, 0, sizeof(line));
	if (canon) {
		line.addr = pl.addr;
		line.off = (uint32_t)pl.off;
		line.key = (pl.has_off ? L_OFF : 0) | (kernel ? L_KERNEL : 0) |
			   (pl.skip ? L_SKIP : 0) | tid;
		canon = text_is(t, line.key, line.off, pl.addr_end, s + n);
	}
	if (!canon) {
		/* no record: its frames each time it is read */
		if (merge)
			ids[nids++] = kp_id_frame_rec(A, w->lane, &fr);
		push_parts(w, &pl, kernel, ids, nids);
		return true;
	}
	h = kp_id_addr_hash(pl.addr);
	kp_ctab_lock(kp_id_table(A), h);
	id = find_line(w, pl.addr, h, pl.addr_end, s + n);
	if (id == KP_ID_NONE) {
		if (merge) {
			id = kp_id_find(A, h, &fr);
			line.fun = id == KP_ID_NONE ? fr.fun | KP_IDF_FRAME : 0;
			line.frame = id == KP_ID_NONE ? KP_ID_SELF : id;
		} else if (nids <= 1) {
			line.frame = nids ? ids[0] : KP_ID_NONE;
		} else {
			uint32_t *list = kp_xmalloc((nids + 1) * sizeof(*list));
			const uint32_t **slot;

			list[0] = nids;
			memcpy(list + 1, ids, nids * sizeof(*ids));
			slot = kp_lane_add(&T->lists[w->lane], &line.frame);
			*slot = list;
			line.key |= L_MULTI;
		}
		id = kp_id_add(A, w->lane, h, &line);
	}
	kp_ctab_unlock(kp_id_table(A), h);
	push_line(w, id);
	return true;
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
srcline(struct worker *w, const char *s, size_t len)
{
	const char *colon = NULL, *p;
	struct kp_frame f, g;
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
	if (w->n == 0)
		return true; /* its frame was filtered out */
	if (colon == s || line == 0 ||
	    (colon - s == 2 && memcmp(s, "??", 2) == 0))
		return true; /* no source known: "??:0", ":0", "x.o:0" */
	f = *kp_id_kpframe(w->T->ids, w->ids[w->n - 1]);
	f.file = kp_intern(s, (size_t)(colon - s));
	f.line = (uint32_t)line;
	kp_conv_normal(&f, &g);
	w->ids[w->n - 1] = kp_id_frame(w->T->ids, w->lane, &g);
	return true;
}

/*
 * The event named [name, name + len): its number, given on its first
 * sample.  Each kept event's stacks are counted apart (memory grows with
 * the distinct stacks of each), but with --event only the one named.
 */
static unsigned
event(struct worker *w, const char *name, size_t len)
{
	struct kp_perf_text *T = w->T;
	const struct kp_perf_opts *o = w->o;
	struct event *ev;
	unsigned i, n;

	/* (T->ev[i]: stored once, with release, after the event is made) */
	ev = __atomic_load_n(&T->ev[w->ev], __ATOMIC_ACQUIRE);
	if (ev && ev->len == len && memcmp(ev->name, name, len) == 0)
		return w->ev;
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			pthread_mutex_lock(&T->mu);
		n = __atomic_load_n(&T->nev, __ATOMIC_ACQUIRE);
		for (i = 0; i < n; i++) {
			ev = __atomic_load_n(&T->ev[i], __ATOMIC_ACQUIRE);
			if (ev->len == len && memcmp(ev->name, name, len) == 0) {
				if (pass)
					pthread_mutex_unlock(&T->mu);
				return i;
			}
		}
	}
	if (n == MAX_EVENTS)
		kp_die("more than %u events", MAX_EVENTS);
	ev = kp_xcalloc(1, sizeof(*ev));
	ev->name = kp_xstrndup(name, len);
	ev->len = len;
	ev->kept = o->event ? len == 0 || strcmp(ev->name, o->event) == 0
			    : true;
	ev->first = UINT64_MAX;
	__atomic_store_n(&T->ev[n], ev, __ATOMIC_RELEASE);
	__atomic_store_n(&T->nev, n + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&T->mu);
	return n;
}

/* The process frame: "comm", "comm-PID" or "comm-PID/TID". */
static uint32_t
proc_frame(struct worker *w, const struct kp_perf_hdr *h, char *t)
{
	static const char unknown[] = "[unknown]";
	const char *comm = h->comm ? h->comm : unknown;
	size_t clen = h->comm ? (size_t)(h->comme - h->comm) : 9, n, i;
	size_t plen = h->pid ? (size_t)(h->pide - h->pid) : 1;
	size_t tlen = h->tid ? (size_t)(h->tide - h->tid) : 1;
	struct kp_frame f, g;
	uint32_t id;

	memcpy(t, comm, clen);
	for (i = 0; i < clen; i++)
		if (t[i] == ' ' || t[i] == '\t')
			t[i] = '_';
	n = clen;
	if (w->o->proc >= KP_PROC_PID) {
		t[n++] = '-';
		if (h->pid) {
			memcpy(t + n, h->pid, plen);
			n += plen;
		} else {
			t[n++] = '?'; /* perf printed the tid only */
		}
	}
	if (w->o->proc == KP_PROC_TID) {
		t[n++] = '/';
		if (h->tid)
			memcpy(t + n, h->tid, tlen);
		else
			t[n] = '?';
		n += tlen;
	}
	{
		uint64_t hh = kp_hash(t, n);
		size_t k = hh & (PROC_CACHE - 1);

		if (w->procs[k].name && kp_intern_is(w->procs[k].name, t, n))
			return w->procs[k].id;
		memset(&f, 0, sizeof(f));
		f.sym = kp_intern(t, n);
		kp_conv_normal(&f, &g);
		id = kp_id_frame(w->T->ids, w->lane, &g);
		w->procs[k].name = f.sym;
		w->procs[k].id = id;
		return id;
	}
}

/* ---- samples ---- */

/*
 * The sample is complete: its stack goes into the aggregation, late
 * (kp_id_stack); with now, at once, and its entry is returned (NULL if
 * it was not kept).
 */
static const struct kp_idstk *
sample_done(struct worker *w, bool now)
{
	struct kp_perf_text *T = w->T;
	const struct kp_idstk *st = NULL;

	if (w->in_sample && !w->skip_sample) {
		/* user time, named as kp-sample names it */
		if (w->n == 0 && w->user_dropped)
			push(w, T->user);
		if (w->proc != KP_ID_NONE)
			push(w, w->proc);
		if (w->n == 0)
			push(w, T->nostack);
		if (now)
			st = kp_id_stack_now(T->ids, w->lane, w->ev, w->ids,
					     w->n, w->weight, w->pos);
		else
			kp_id_stack(T->ids, w->lane, w->ev, w->ids, w->n,
				    w->weight, w->pos);
		w->samples[w->ev]++;
	}
	w->n = 0;
	w->in_sample = w->skip_sample = w->user_dropped = false;
	w->ended++;
	return st;
}

static void
end_sample(struct worker *w)
{
	sample_done(w, false);
}

static void frame_text(struct worker *w, const char *s, size_t n);

static void
start_sample(struct worker *w, const struct kp_perf_hdr *h)
{
	size_t evlen = h->ev ? (size_t)(h->eve - h->ev) : 0;

	w->in_sample = true;
	w->skip_sample = false;
	w->n = 0;
	w->pos = w->seq << 24 | w->nsample++;
	/* no event printed (-F without it): the event "" */
	w->ev = event(w, h->ev ? h->ev : "", h->ev ? evlen : 0);
	if (w->pos < w->first[w->ev])
		w->first[w->ev] = w->pos;
	if (!__atomic_load_n(&w->T->ev[w->ev], __ATOMIC_ACQUIRE)->kept) {
		w->samples[w->ev]++; /* not kept (--event) */
		w->skip_sample = true;
		return;
	}
	if (w->o->period && h->period_bad) {
		kp_input_skip(w->in, "the period does not fit in 64 bits; "
				     "sample skipped");
		w->skip_sample = true;
		return;
	}
	w->weight = w->o->period && h->has_period ? h->period : 1;
	w->java = h->comm && (size_t)(h->comme - h->comm) == 4 &&
		  memcmp(h->comm, "java", 4) == 0;
	w->proc = KP_ID_NONE;
	if (w->o->proc != KP_PROC_NONE) {
		size_t room = (h->comm ? (size_t)(h->comme - h->comm) : 9) +
			      (h->pid ? (size_t)(h->pide - h->pid) : 1) +
			      (h->tid ? (size_t)(h->tide - h->tid) : 1) + 3;
		char small[256], *t = room <= sizeof(small) ? small
							     : kp_xmalloc(room);

		w->proc = proc_frame(w, h, t);
		if (t != small)
			free(t);
	}
	/* without -g: the frame is on the header line */
	if (h->rest < h->reste &&
	    !(*h->rest == '(' && h->reste[-1] == ')' &&
	      !memchr(h->rest, ' ', (size_t)(h->reste - h->rest))))
		frame_text(w, h->rest, (size_t)(h->reste - h->rest));
}

/*
 * A frame line's text [s, s + n), its blanks trimmed: its record's
 * frames, or a new record's; false if it is no frame line (not a hex
 * address first), with *why.
 */
static bool
frame_line(struct worker *w, const char *s, size_t n, const char **why)
{
	const char *e = s + n, *p;
	uint64_t addr;
	uint32_t id;

	if ((p = hex_at(s, e, &addr)) != NULL && (p == e || *p == ' ')) {
		id = find_line(w, addr, kp_id_addr_hash(addr), p, e);
		if (id != KP_ID_NONE) {
			push_line(w, id);
			return true;
		}
	}
	return new_line(w, s, n, why);
}

/* The frame on a header line (perf script without -g). */
static void
frame_text(struct worker *w, const char *s, size_t n)
{
	const char *why = "not a frame line (expected 'ADDRESS SYMBOL (DSO)')";

	if (!frame_line(w, s, n, &why))
		kp_input_skip(w->in, "%s", why);
}

/*
 * A frame line in a sample that the look-ahead did not take (or a
 * srcline line, or a bad line).
 */
static void
sample_line(struct worker *w, const char *s, size_t n)
{
	const char *why = "not a frame line (expected 'ADDRESS SYMBOL (DSO)')";

	if (kp_conv_xdigit(*s) && frame_line(w, s, n, &why))
		return;
	if (!srcline(w, s, n))
		kp_input_skip(w->in, "%s", why);
}

/* ---- the input as a whole ---- */

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
	struct kp_perf_hdr h;
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
		if (kp_perf_header(s, (size_t)(le - s), &h) ||
		    kp_perf_sideband(s, (size_t)(le - s)) ||
		    (*ls == '\t' && kp_conv_xdigit(*s)))
			return 0;
		if (*ls != '\t' && kp_perf_loose_header(s, (size_t)(le - s), &h)) {
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
truncated(struct worker *w, const char *line, const char *s, size_t n,
	  bool *header)
{
	struct kp_perf_hdr h;
	const char *p = s, *e = s + n;

	*header = *line != '\t' && kp_perf_header(s, n, &h);
	if (*header) {
		if (h.rest == h.reste)
			return w->dsos;
		p = h.rest;
		e = h.reste;
	} else if (!kp_conv_xdigit(*s)) {
		return false; /* not a frame line: skipped as such */
	}
	if (memchr(p, '(', (size_t)(e - p)))
		return e[-1] != ')';
	return w->dsos;
}


static void feed_last_line(struct worker *w);

/* ---- blocks: a sample's frame lines at once ---- */

/*
 * A sample's frame lines repeat far more than its header (which holds a
 * time stamp): the 589 samples of samples/perf-dd-a-g.txt hold 386
 * distinct blocks of frame lines.  So after a header, the bytes up to
 * the blank line that ends the sample (the "block") are looked up whole
 * in a cache of the thread's: a hit costs one scan for the blank line,
 * one hash and one memcmp of the block, and gives the frames the block
 * made.  A block enters the cache on its second sighting, and only when
 * its lines, read one by one, made a plain sample: frame (or srcline)
 * lines, no skipped line, nothing that ended the sample early; the same
 * bytes under the same state (the Java tidy, a sample not filtered out,
 * no frame from the header line) then give the same frames.  The cache
 * is tried on the first BLOCK_TRIAL blocks and kept only where three in
 * four were found: a capture whose stacks are mostly distinct
 * (samples/perf-real-a-g: half of them) would hold every block's text
 * for little, and its memory (a mapping of its own) goes back.
 */
struct block {
	uint32_t len;	/* of the text, through the empty line */
	uint32_t lines; /* lines in it, the empty one included */
	uint32_t n;	/* frames */
	bool java, user_dropped, dsos;
	/* the stacks these frames made under process frames memo_proc[]
	 * of events memo_ev[], once known: two, for two processes that
	 * take turns */
	uint8_t memo_next; /* the one to replace */
	const struct kp_idstk *memo[2];
	uint32_t memo_proc[2];
	unsigned memo_ev[2];
	uint32_t fr[]; /* then the text */
};

#define BLOCK_TEXT(b) ((const char *)((b)->fr + (b)->n))
#define BLOCK_MAX (64u << 10)	 /* scanned for its end at most */
#define BLOCK_TRIAL 4096	 /* blocks looked up before the cache is
				  * judged */
#define BLOCK_ARENA (256u << 20) /* a thread's cached blocks at most */

/* A slot of a block seen once and not kept: its hash only. */
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
probe_block(struct worker *w, const char *p, size_t len, uint64_t h)
{
	size_t mask = w->blocks.cap - 1, i;
	struct kp_slot *sl;
	const struct block *b;

	for (i = h & mask;; i = (i + 1) & mask) {
		sl = &w->blocks.tab[i];
		if ((b = sl->p) == NULL || (sl->hash == h && b == SEEN))
			return sl;
		if (sl->hash == h && b->len == len && b->java == w->java &&
		    memcmp(BLOCK_TEXT(b), p, len) == 0)
			return sl;
	}
}

static void
blocks_free(struct worker *w)
{
	kp_slots_free(&w->blocks);
	if (w->barena)
		munmap(w->barena, BLOCK_ARENA);
	w->barena = NULL;
	w->bused = 0;
}

/* The block text[0..len) of `lines` lines made the frames in w->ids. */
static struct block *
new_block(struct worker *w, const char *text, size_t len,
	  unsigned long lines)
{
	size_t need = (sizeof(struct block) + w->n * sizeof(uint32_t) + len +
		       7) & ~(size_t)7;
	struct block *b;

	if (!w->barena) {
		w->barena = mmap(NULL, BLOCK_ARENA, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (w->barena == MAP_FAILED) {
			w->barena = NULL;
			return NULL;
		}
	}
	if (w->bused + need > BLOCK_ARENA)
		return NULL; /* full: that block is read line by line */
	b = (struct block *)(void *)(w->barena + w->bused);
	w->bused += need;
	b->len = (uint32_t)len;
	b->lines = (uint32_t)lines;
	b->n = (uint32_t)w->n;
	b->java = w->java;
	b->user_dropped = w->user_dropped;
	b->dsos = w->dsos;
	b->memo[0] = b->memo[1] = NULL;
	b->memo_next = 0;
	memcpy(b->fr, w->ids, w->n * sizeof(b->fr[0]));
	memcpy((char *)(b->fr + b->n), text, len);
	return b;
}

static void perf_line(struct worker *w, char *line, size_t len);
static void ahead(struct worker *w);

/*
 * Right after a sample's header: its frame lines and the blank line, as
 * a block from the cache, or read line by line (and cached if seen
 * before).  False when the lines are left to the caller.
 */
static bool
block(struct worker *w)
{
	struct kp_input *in = w->in;
	struct kp_slot *sl;
	struct block *b;
	const char *p, *q, *last;
	char *line, *text = NULL;
	size_t avail, len, n;
	unsigned long skipped0, line0, ended0;
	uint64_t h;
	bool dsos0;

	/* not inside a new block's lines; not where samples are not kept
	 * or have a frame on the header line (kept, or dropped by
	 * --kernel-only: the block's frames would not be its own) */
	if (w->blocks_off || w->in_block || w->skip_sample || w->n != 0 ||
	    w->user_dropped)
		return false;
	if (w->found == BLOCK_TRIAL && w->hits * 4 < w->found * 3) {
		/* see "blocks" above: the lines on their own from now on */
		w->blocks_off = true;
		blocks_free(w);
		return false;
	}
	avail = kp_input_buffered(in, &p);
	len = block_end(p, avail < BLOCK_MAX ? avail : BLOCK_MAX);
	if (len == 0)
		return false; /* the chunk's end, or too long */
	w->found++;
	h = kp_hash(p, len) ^ (w->java ? 0x5bd1e995u : 0);
	kp_slots_reserve(&w->blocks, 1024);
	sl = probe_block(w, p, len, h);
	b = sl->p;
	if (b && b != SEEN) {
		int k;

		w->hits++;
		kp_input_consume(in, len, b->lines);
		w->dsos |= b->dsos;
		w->orphan = false; /* the empty line */
		for (k = 0; k < 2; k++)
			if (b->memo[k] && b->memo_proc[k] == w->proc &&
			    b->memo_ev[k] == w->ev) {
				kp_id_stack_again(w->T->ids, w->lane,
						  b->memo[k], w->weight,
						  w->pos);
				w->samples[w->ev]++;
				w->in_sample = false;
				w->ended++;
				return true;
			}
		for (n = 0; n < b->n; n++)
			push(w, b->fr[n]);
		w->user_dropped = b->user_dropped;
		k = b->memo_next;
		b->memo_proc[k] = w->proc;
		b->memo_ev[k] = w->ev;
		b->memo[k] = sample_done(w, true);
		b->memo_next = (uint8_t)!k;
		return true;
	}
	if (!b) {
		/* the first time: remembered, read line by line */
		sl->hash = h;
		sl->p = SEEN;
		w->blocks.n++;
		return false;
	}
	/* the second: read line by line and cached (the reader ends each
	 * line with a NUL in the buffer: copy first) */
	text = kp_xmalloc(len);
	memcpy(text, p, len);
	skipped0 = kp_input_skips(in);
	line0 = kp_input_lineno(in);
	ended0 = w->ended;
	dsos0 = w->dsos;
	w->dsos = false;
	last = p + len - 1; /* the empty line */
	w->in_block = true;
	ahead(w);
	while (kp_input_buffered(in, &q) && q < last && w->in_sample) {
		line = kp_input_getline(in, &n);
		perf_line(w, line, n);
	}
	w->in_block = false;
	kp_input_buffered(in, &q);
	if (q == last && kp_input_skips(in) == skipped0 && w->in_sample &&
	    w->ended == ended0 &&
	    !w->skip_sample && !w->orphan &&
	    (b = new_block(w, text, len, kp_input_lineno(in) - line0 + 1)))
		sl->p = b;
	w->dsos |= dsos0;
	free(text);
	return false;
}

/* ---- the lines of a chunk ---- */

/* The first byte at p that is not a blank (before e); p as hex_at's. */
static inline const char *
skip_blanks(const char *p, const char *e)
{
	const char *q = kp_bytes_find(p, e, ' ', '\t', false);

	return q ? q : e;
}

/*
 * The address of a frame line as perf script pads it: 16 characters at
 * s, spaces then hex digits, then a blank or the line's end (nl): its
 * value and end; else (another width, tabs among the blanks) as the
 * parse reads it, after the blanks.  s as hex_at's.
 */
static inline const char *
addr_at(const char *s, const char *nl, uint64_t *v)
{
#ifdef __SSE2__
	if (nl - s >= 16 && (s[16] == ' ' || s + 16 == nl)) {
		const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
		__m128i alpha;
		unsigned hx = kp_hex_bits16(x, &alpha);
		unsigned sp = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));

		/* spaces, then digits to the end: a space is a 0 digit */
		if (hx && (sp | hx) == 0xffff &&
		    sp == (1u << __builtin_ctz(hx)) - 1) {
			*v = kp_hex_value16(x, alpha);
			return s + 16;
		}
	}
#endif
	return hex_at(skip_blanks(s, nl), nl, v);
}

/*
 * Reading ahead: the frame lines some way after the line reader's,
 * their addresses read and their slots in the record table fetched into
 * the cache up to SLOT_AHEAD frame lines before they are looked up, and
 * the first record under each up to REC_AHEAD lines before, so that the
 * waits for memory overlap; each topped up when half is used, in a
 * batch.  Only what is not yet read is read ahead (the reader ends each
 * line it returns with a NUL).
 */
static void
scan_ahead(struct worker *w, unsigned upto)
{
	struct kp_ctab *tab = kp_id_table(w->T->ids);
	const char *p = w->scan, *end = w->cend, *nl;
	unsigned tail = w->tail;
	struct ahead *a;

	while (tail < upto && p < end) {
		if (!(nl = nl_at(p, end))) {
			p = end;
			break;
		}
		a = &w->ring[tail % RING];
		if (*p == '\t' && (a->p = addr_at(p + 1, nl, &a->addr)) &&
		    (a->p == nl || *a->p == ' ')) {
			a->line = p;
			a->e = nl;
			a->h = kp_id_addr_hash(a->addr);
			kp_ctab_prefetch(tab, a->h);
			tail++;
		}
		p = nl + 1;
	}
	w->scan = p;
	w->tail = tail;
}

static void
rec_ahead(struct worker *w, unsigned upto)
{
	struct kp_ctab *tab = kp_id_table(w->T->ids);
	unsigned r = w->recd, lim = upto < w->tail ? upto : w->tail;
	struct kp_ctab_it it;
	struct ahead *a;
	uint32_t id;

	for (; r < lim; r++) {
		a = &w->ring[r % RING];
		kp_ctab_first(tab, a->h, &it);
		a->rec = kp_ctab_next(&it, &id) ? id : KP_ID_NONE;
		if (a->rec != KP_ID_NONE)
			__builtin_prefetch(kp_id_rec(w->T->ids, id));
	}
	w->recd = r;
}

/* The first "\n" or NUL in [p, e), or NULL; p as hex_at's. */
static inline const char *
nl_or_nul_at(const char *p, const char *e)
{
	return kp_bytes_find(p, e, '\n', '\0', true);
}

/*
 * At the end of a sample's frame lines: the empty line that ends it and
 * the header of the next, read here when they are as perf prints them
 * ("\n" alone; a header with its newline, no NUL, no blank first, no
 * "\r" last), as perf_line would read them; true when a new sample's
 * frame lines follow.  Else false, the rest to perf_line.
 */
static bool
sample_edge(struct worker *w)
{
	const char *p, *nl;
	struct kp_perf_hdr h;
	size_t avail, n;

	avail = kp_input_buffered(w->in, &p);
	if (!avail || *p != '\n')
		return false;
	kp_input_consume(w->in, 1, 1);
	end_sample(w);
	w->orphan = false;
	for (;;) {
		avail = kp_input_buffered(w->in, &p);
		if (!(nl = nl_or_nul_at(p, p + avail)) || *nl != '\n' ||
		    kp_conv_blank(*p) || *p == '#' || *p == '|' ||
		    *p == '\n')
			return false;
		for (n = (size_t)(nl - p); n && kp_conv_blank(p[n - 1]); n--)
			;
		if (p[n - 1] == '\r' || !kp_perf_header_pad(p, n, &h))
			return false;
		kp_input_consume(w->in, (size_t)(nl + 1 - p), 1);
		w->headers = true;
		start_sample(w, &h);
		if (!block(w))
			return w->in_sample && !w->orphan;
	}
}

/*
 * A frame line read ahead that is no record's, read here as perf_line
 * would read it (its frames pushed, a new record made) where that is
 * what perf_line would do with it: its text has no NUL and no blank or
 * "\r" last (nothing to trim), and it reads as a frame line (new_line
 * makes nothing before it knows that).  True if it was read (in a
 * sample skipped, it is only passed over); else false, the line left
 * to perf_line.
 */
static bool
fresh_line(struct worker *w, const struct ahead *a, bool skip)
{
	const char *s = a->line + 1, *why;

	while (kp_conv_blank(*s))
		s++;
	if (kp_conv_blank(a->e[-1]) || a->e[-1] == '\r' ||
	    memchr(a->line, '\0', (size_t)(a->e - a->line)))
		return false;
	return skip || new_line(w, s, (size_t)(a->e - s), &why);
}

/*
 * The frame lines that follow, while they are lines of records: a line
 * is taken only where perf_line would read it as that record's line:
 * inside a sample read to its end, the line starting with a tab (so it
 * cannot be a header), then blanks, then the record's text exactly up
 * to its "\n" (no trailing blank, no "\r", no NUL).  The first line that
 * is not taken is left to perf_line.
 */
static void
ahead(struct worker *w)
{
	const struct kp_perf_text *T = w->T;
	const struct kp_idrec *r;
	const struct ahead *a;
	const char *cur, *start;
	unsigned head, lines;
	bool skip, java;
	uint32_t id;

	if (!w->in_sample || w->orphan)
		return;
next_sample:
	skip = w->skip_sample;
	java = w->java;
	lines = 0;
	kp_input_buffered(w->in, &start);
	cur = start;
	/* what the line reader read meanwhile is behind */
	head = w->head;
	while (head < w->tail && w->ring[head % RING].line < cur)
		head++;
	if (head == w->tail && w->scan < cur)
		w->scan = cur;
	if (w->recd < head)
		w->recd = head;
	/* (taking a line changes neither the sample nor its state) */
	for (;; head++) {
		if (w->tail - head < SLOT_AHEAD / 2) {
			w->head = head;
			scan_ahead(w, head + SLOT_AHEAD);
		}
		if (w->recd - head < REC_AHEAD / 2)
			rec_ahead(w, head + REC_AHEAD);
		if (head == w->tail)
			break;
		a = &w->ring[head % RING];
		if (a->line != cur)
			break;
		/* the record read ahead, or the others under its hash */
		id = a->rec;
		r = id != KP_ID_NONE ? kp_id_rec(T->ids, id) : NULL;
		if (!r || !line_is(T, r, a->addr, a->p, a->e, java)) {
			id = find_line(w, a->addr, a->h, a->p, a->e);
			if (id == KP_ID_NONE) {
				/* no record's: a new one here, or the line
				 * is left to perf_line */
				if (!fresh_line(w, a, skip))
					break;
				cur = a->e + 1;
				lines++;
				continue;
			}
			r = kp_id_rec(T->ids, id);
		}
		cur = a->e + 1;
		lines++;
		if (!skip)
			push_rec(w, r, id);
	}
	w->head = head;
	kp_input_consume(w->in, (size_t)(cur - start), lines);
	/* (not in a block read line by line: block() reads its end) */
	if (!w->in_block && sample_edge(w))
		goto next_sample;
}

/*
 * One line of the input, after the line reader: the state machine of
 * samples (header, frame lines, blank line).
 */
static void
perf_line(struct worker *w, char *line, size_t len)
{
	struct kp_input *in = w->in;
	struct kp_perf_hdr h;
	char *s = line;
	size_t n = len;
	bool header;

	if (kp_conv_nul(in, line, len))
		return;
	while (n && kp_conv_blank(*s)) {
		s++;
		n--;
	}
	while (n && kp_conv_blank(s[n - 1]))
		n--;
	if (n == 0) {
		end_sample(w);
		w->orphan = false;
		return;
	}
	if (kp_input_partial(in) && !w->orphan && *s != '#') {
		feed_last_line(w);
		if (truncated(w, line, s, n, &header)) {
			if (header)
				end_sample(w); /* the sample before it */
			kp_input_skip(in, "the last line is cut short (no "
					  "newline at the end of the input); "
					  "its sample skipped");
			w->skip_sample = true;
			w->orphan = true;
			return;
		}
	}
	if (w->orphan || kp_perf_passed_over(s, n))
		return;
	if (w->in_sample) {
		/* a header with no blank line before it */
		if (*line != '\t' && kp_perf_header_pad(s, n, &h)) {
			end_sample(w);
			w->headers = true;
			start_sample(w, &h);
			if (!block(w))
				ahead(w);
			return;
		}
		/* a sideband record's text may be a frame line's after a
		 * tab */
		if (*line != '\t' && kp_perf_sideband(s, n)) {
			end_sample(w);
			return;
		}
		if (!w->skip_sample)
			sample_line(w, s, n);
		ahead(w);
		return;
	} else if (!kp_perf_header_pad(s, n, &h)) {
		if (kp_perf_sideband(s, n))
			return;
		if (*line == '\t' && kp_conv_xdigit(*s) && !w->headers) {
			/* -F ip,sym: samples without a header */
			memset(&h, 0, sizeof(h));
			start_sample(w, &h);
			sample_line(w, s, n);
			return;
		}
		if (*line == '\t' || !kp_perf_loose_header(s, n, &h)) {
			kp_input_skip(in, "not a sample header (expected "
					  "'comm pid [cpu] time: event:'); "
					  "skipping to the next blank line");
			w->orphan = true;
			return;
		}
	}
	w->headers = true;
	start_sample(w, &h);
	if (!block(w))
		ahead(w);
}

/* Every line of w's chunk. */
static void
read_lines(struct worker *w)
{
	char *line;
	size_t len;

	while ((line = kp_input_getline(w->in, &len)) != NULL)
		perf_line(w, line, len);
}

/* ---- chunks, on one or two threads ---- */

/*
 * The input is read in chunks (chunks.h), each cut where a sample header
 * follows an empty line.  Why a chunk reads alone what one pass would
 * read: it starts where the reader is between samples as after any
 * empty line (the header itself sets `headers'); a chunk that ends at
 * no such place (a sample longer than a chunk, input with no empty
 * lines) ends at a line's end and its thread reads the next chunk too,
 * as one pass.  What a thread does not know of the chunks before its
 * own is only in caches (records, templates, process frames, which
 * change no output) and in `dsos', read only for a last line without a
 * newline: its thread waits for the other chunks and takes theirs.
 */

/* [s, e) is a line perf_line reads as a sample header. */
static bool
header_line(const char *s, const char *e)
{
	size_t n = (size_t)(e - s);
	struct kp_perf_hdr h;

	if (n && s[n - 1] == '\r')
		n--;
	while (n && kp_conv_blank(s[n - 1]))
		n--;
	return n && !kp_conv_blank(*s) && !kp_perf_passed_over(s, n) &&
	       !memchr(s, '\0', n) && kp_perf_header(s, n, &h);
}

/*
 * Where buf[0 .. len) may be cut: the start of its last whole line that
 * is a sample header after an empty line; 0 if there is none.
 */
static size_t
last_boundary(const char *buf, size_t len)
{
	const char *end = memrchr(buf, '\n', len), *x;

	if (!end)
		return 0;
	for (x = memrchr(buf, '\n', (size_t)(end - buf)); x && x > buf;
	     x = memrchr(buf, '\n', (size_t)(x - buf)))
		if (x[-1] == '\n' &&
		    header_line(x + 1, memchr(x + 1, '\n',
					      (size_t)(end + 1 - (x + 1)))))
			return (size_t)(x + 1 - buf);
	return 0;
}

static void *worker_main(void *arg);

/* The chunks after the first are read by a second thread too, on its
 * lane: what the threads fill at once is made shared first. */
static bool
start_second(void *arg)
{
	struct worker *w = arg; /* the first of two */

	kp_intern_shared = true;
	kp_idagg_shared(w->T->ids, true);
	w->T->tmpls.shared = true;
	w->peer->started =
		pthread_create(&w->peer->th, NULL, worker_main, w->peer) == 0;
	if (!w->peer->started) {
		kp_intern_shared = false;
		kp_idagg_shared(w->T->ids, false);
		w->T->tmpls.shared = false;
	}
	return w->peer->started;
}

/* w's next chunk, read as w->in: false at the end of the input. */
static bool
next_chunk(struct worker *w)
{
	if (!kp_chunks_next(w->chunks, w->lane, &w->chunk))
		return false;
	w->in = w->chunk.in;
	w->seq = w->chunk.seq;
	w->head = w->tail = w->recd = 0;
	w->scan = w->chunk.buf;
	w->cend = w->chunk.buf + w->chunk.len;
	w->nsample = 0;
	w->last = w->chunk.last;
	if (w->chunk.fresh) {
		w->in_sample = w->skip_sample = w->orphan = false;
		w->user_dropped = false;
		w->n = 0;
	}
	return true;
}

static void
take_dsos(void *arg)
{
	struct worker *w = arg;

	w->dsos |= w->peer->dsos;
}

/* The last line has no newline: the chunks before it read, their
 * frame lines' DSOs known. */
static void
feed_last_line(struct worker *w)
{
	kp_chunks_alone(w->chunks, take_dsos, w);
}

/* A thread's reading: the chunks it is given, to the end. */
static void
work(struct worker *w)
{
	while (next_chunk(w)) {
		kp_ctab_busy(w->lane);
		read_lines(w);
		if (w->last)
			end_sample(w);
		kp_ctab_quiet(w->lane);
		kp_chunks_done(w->chunks, &w->chunk);
		w->in = NULL;
	}
	kp_ctab_busy(w->lane);
	kp_id_stacks_flush(w->T->ids, w->lane);
	kp_ctab_quiet(w->lane);
}

static void *
worker_main(void *arg)
{
	work(arg);
	return NULL;
}

/* ---- the run ---- */

static struct kp_perf_text *
text_new(void)
{
	struct kp_perf_text *T = kp_xcalloc(1, sizeof(*T));
	struct kp_frame f;
	int i;

	T->ids = kp_idagg_new(2);
	kp_ctab_init(&T->tmpls, false);
	for (i = 0; i < KP_CTAB_THREADS; i++)
		kp_lane_init(&T->lists[i], (uint32_t)i, sizeof(uint32_t *));
	pthread_mutex_init(&T->mu, NULL);
	f = *kp_frame_make(0, 0, KP_USER_FRAME, NULL);
	T->user = kp_id_frame(T->ids, 0, &f);
	f = *kp_frame_make(0, 0, "[no stack]", NULL);
	T->nostack = kp_id_frame(T->ids, 0, &f);
	return T;
}

static void
text_free(struct kp_perf_text *T)
{
	uint32_t i, k;

	if (!T)
		return;
	kp_idagg_free(T->ids);
	kp_ctab_free(&T->tmpls);
	kp_ctab_reclaim();
	for (i = 0; i < KP_CTAB_THREADS; i++) {
		if (T->tarena[i].base)
			munmap(T->tarena[i].base, TMPL_ARENA);
		kp_slots_free(&T->tails[i]);
		for (k = 0; k < T->lists[i].n; k++)
			free(*(uint32_t **)kp_lane_at(T->lists, i << 30 | k));
		kp_lane_free(&T->lists[i]);
	}
	for (i = 0; i < T->nev; i++) {
		free(T->ev[i]->name);
		free(T->ev[i]);
	}
	pthread_mutex_destroy(&T->mu);
	free(T);
}

/* The caller's entry of the event named name: made on its first sight
 * (in order of first sight), with the aggregation its stacks go to. */
static struct kp_perf_event *
events_entry(struct kp_perf_events *evs, const struct kp_perf_opts *o,
	     struct kp_agg *agg0, const char *name, size_t len)
{
	struct kp_perf_event *ev;
	size_t i;

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
	ev->text_ev = -1;
	if (o->event ? len == 0 || strcmp(ev->name, o->event) == 0
		     : !evs->n) {
		ev->agg = agg0;
	} else if (!o->event) {
		ev->agg = kp_agg_new();
		ev->owned = true;
	}
	evs->n++;
	return ev;
}

/* The events the workers saw, to the run's and the caller's, in order
 * of first sight. */
static void
sync_events(struct kp_perf_text *T, struct worker *w, int nw,
	    struct kp_perf_events *evs, const struct kp_perf_opts *o,
	    struct kp_agg *agg)
{
	unsigned *v = kp_xmalloc((T->nev ? T->nev : 1) * sizeof(*v)), i, j, t;
	struct kp_perf_event *pe;
	struct event *ev;
	int k;

	for (i = 0; i < T->nev; i++) {
		ev = T->ev[i];
		for (k = 0; k < nw; k++) {
			ev->samples += w[k].samples[i];
			if (w[k].first[i] < ev->first)
				ev->first = w[k].first[i];
		}
		/* in order of first sight: an insertion (events are few) */
		for (j = i; j > 0 && T->ev[v[j - 1]]->first > ev->first; j--)
			v[j] = v[j - 1];
		v[j] = i;
	}
	for (i = 0; i < T->nev; i++) {
		ev = T->ev[t = v[i]];
		if (ev->samples == ev->synced)
			continue;
		pe = events_entry(evs, o, agg, ev->name, ev->len);
		pe->samples += ev->samples - ev->synced;
		ev->synced = ev->samples;
		pe->text_ev = (int)t;
	}
	free(v);
}

int
kp_perf_convert(struct kp_agg *agg, struct kp_input *in,
		const struct kp_perf_opts *o, struct kp_perf_events *evs,
		const char **why)
{
	struct kp_perf_text *T;
	struct worker w[2];
	struct kp_chunks *F;
	unsigned i;
	int k;

	if (check_kind(in, why) < 0)
		return -1;
	if (!evs->text)
		evs->text = text_new();
	T = evs->text;
	F = kp_chunks_new(in, o->chunk ? o->chunk : CHUNK,
			  o->split_min && (o->split_min == 1 || kp_cpus() > 1)
				  ? 2
				  : 1,
			  T->seq, last_boundary, start_second, &w[0]);
	memset(w, 0, sizeof(w));
	for (k = 0; k < 2; k++) {
		w[k].T = T;
		w[k].o = o;
		w[k].chunks = F;
		w[k].peer = &w[1 - k];
		w[k].lane = k;
		w[k].proc = KP_ID_NONE;
		w[k].samples = kp_xcalloc(MAX_EVENTS, sizeof(*w[k].samples));
		w[k].first = kp_xmalloc(MAX_EVENTS * sizeof(*w[k].first));
		for (i = 0; i < MAX_EVENTS; i++)
			w[k].first[i] = UINT64_MAX;
	}
	work(&w[0]);
	if (w[1].started)
		pthread_join(w[1].th, NULL);
	if (kp_chunks_shared(F)) {
		kp_intern_shared = false;
		kp_idagg_shared(T->ids, false);
		T->tmpls.shared = false;
	}
	kp_ctab_reclaim();
	sync_events(T, w, 2, evs, o, agg);
	for (k = 0; k < 2; k++) {
		blocks_free(&w[k]);
		free(w[k].ids);
		free(w[k].chunk.buf);
		free(w[k].samples);
		free(w[k].first);
	}
	T->seq = kp_chunks_free(F);
	for (i = 0; i < T->nev; i++)
		if (T->ev[i]->kept && kp_id_overflowed(T->ids, i)) {
			*why = "the total count overflows 64 bits";
			return -1;
		}
	return 0;
}

void
kp_perf_flush(struct kp_perf_events *evs)
{
	struct kp_perf_text *T = evs->text;
	size_t i;

	if (!T)
		return;
	for (i = 0; i < evs->n; i++) {
		struct kp_perf_event *ev = &evs->v[i];

		if (ev->text_ev >= 0 && ev->agg &&
		    kp_id_has(T->ids, (unsigned)ev->text_ev))
			kp_id_to_agg(T->ids, (unsigned)ev->text_ev, ev->agg);
		ev->text_ev = -1;
	}
	text_free(T);
	evs->text = NULL;
}

void
kp_perf_write(FILE *out, struct kp_perf_events *evs, struct kp_agg *agg)
{
	struct kp_perf_text *T = evs->text;
	int e = evs->kept_text;

	if (T && e >= 0 && kp_id_has(T->ids, (unsigned)e)) {
		if (kp_agg_len(agg) == 0) {
			kp_id_write(out, T->ids, (unsigned)e);
			return;
		}
		kp_id_to_agg(T->ids, (unsigned)e, agg);
		if (!kp_agg_total_ok(agg))
			kp_die("the total count overflows 64 bits");
	}
	kp_write_agg(out, agg);
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
		ev->text_ev = -1;
	}
	if (ev->owned)
		kp_die("kp_perf_kept: event %s has stacks of its own", name);
	ev->agg = agg;
	ev->samples += samples;
}

/* An event's name in perf2kp's note: samples without one are "(none)". */
static const char *
event_label(const struct kp_perf_event *ev)
{
	return ev->len ? ev->name : "(none)";
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
				event_label(&evs->v[i]),
				evs->v[i].samples, i ? "" : " samples");
		if (keep)
			fprintf(m, ": kept %s; %s", event_label(keep),
				o->event ? "chosen with --event"
					 : "--event to choose");
		else
			fprintf(m, ": none is %s (--event)", o->event);
		if (fclose(m) != 0)
			kp_die("out of memory");
		kp_warn("%s", msg);
		free(msg);
	}
	evs->kept_text = keep ? keep->text_ev : -1;
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
	text_free(evs->text);
	evs->text = NULL;
}
