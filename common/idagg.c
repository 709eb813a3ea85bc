/* idagg.c - stacks of frame ids that several threads fill at once
 * (idagg.h) */
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

#include "idagg.h"
#include "radix.h"
#include "internal.h"

#define FUN_BITS 22 /* a function's or kp_frame's index in its lane */
#define LATE 6	    /* stacks given, the oldest added when one more is */
#define HINT 2	    /* its entry fetched when it was given that many ago */
#define HINT_IDS 4  /* its ids (read from the entry) when that many */
#define RUN_BLOCK (64u << 10) /* stack ids a block of runs holds */

/* A stack: its count, where it was first seen (its event in the top 8
 * bits), its ids (ids[-1] is how many). */
struct stk {
	uint64_t count;
	uint64_t first;
	const uint32_t *ids;
};
#define FIRST_POS(v) ((v) & ((1ull << 52) - 1))
#define FIRST_EV(v) ((unsigned)((v) >> 52))

/* A stack given, not yet added. */
struct pend {
	uint64_t h, weight, pos;
	unsigned ev;
	uint32_t *ids;
	size_t n, cap;
	const struct stk *hint; /* the entry fetched (stk_hint), or NULL */
};

struct block {
	struct block *next;
	uint32_t ids[];
};

/* One thread's: where it adds, what it has given. */
struct lane {
	struct block *blocks; /* runs of stack ids */
	size_t left;	      /* ids free in the first */
	struct pend q[LATE];
	size_t given, added;
	uint64_t total[KP_ID_EVENTS]; /* of each event, added here */
	bool over[KP_ID_EVENTS];      /* a count or the total passed 2^64 */
} __attribute__((aligned(64)));


struct kp_idagg {
	struct kp_idagg_recs r; /* first: kp_id_rec reads it */
	int nlanes;
	bool shared;
	struct kp_ctab recs, funs, stks;
	/* the elements, by lane */
	struct kp_lane funl[KP_CTAB_THREADS];
	struct kp_lane extl[KP_CTAB_THREADS], stkl[KP_CTAB_THREADS];
	struct lane lane[KP_CTAB_THREADS];
	/* kp_id_write's: what a function's lines hold of it, by lane */
	struct kp_line_parts *text[KP_CTAB_THREADS];
};

struct kp_idagg *
kp_idagg_new(int lanes)
{
	struct kp_idagg *a = kp_xcalloc(1, sizeof(*a));
	int i;

	if (lanes < 1 || lanes > KP_CTAB_THREADS)
		kp_die("kp_idagg_new: %d lanes", lanes);
	a->nlanes = lanes;
	kp_ctab_init(&a->recs, false);
	kp_ctab_init(&a->funs, false);
	kp_ctab_init(&a->stks, false);
	for (i = 0; i < KP_CTAB_THREADS; i++) {
		kp_lane_init(&a->r.recl[i], (uint32_t)i, sizeof(struct kp_idrec));
		kp_lane_init(&a->funl[i], (uint32_t)i, sizeof(struct kp_idfun));
		kp_lane_init(&a->extl[i], (uint32_t)i,
			     sizeof(const struct kp_frame *));
		kp_lane_init(&a->stkl[i], (uint32_t)i, sizeof(struct stk));
	}
	return a;
}

/* The tables: no look-up after this (writing needs none). */
static void
tables_free(struct kp_idagg *a)
{
	kp_ctab_free(&a->recs);
	kp_ctab_free(&a->funs);
	kp_ctab_free(&a->stks);
	kp_ctab_reclaim();
}

void
kp_idagg_free(struct kp_idagg *a)
{
	struct block *b;
	int i;
	size_t k;

	if (!a)
		return;
	tables_free(a);
	for (i = 0; i < KP_CTAB_THREADS; i++) {
		struct lane *l = &a->lane[i];

		kp_lane_free(&a->r.recl[i]);
		if (a->text[i])
			for (k = 0; k < a->funl[i].n; k++)
				free(a->text[i][k].head);
		free(a->text[i]);
		kp_lane_free(&a->funl[i]);
		kp_lane_free(&a->extl[i]);
		kp_lane_free(&a->stkl[i]);
		while ((b = l->blocks) != NULL) {
			l->blocks = b->next;
			free(b);
		}
		for (k = 0; k < LATE; k++)
			free(l->q[k].ids);
	}
	free(a);
}

void
kp_idagg_shared(struct kp_idagg *a, bool shared)
{
	a->shared = shared;
	a->recs.shared = a->funs.shared = a->stks.shared = shared;
}

struct kp_ctab *
kp_id_table(struct kp_idagg *a)
{
	return &a->recs;
}

/* A lane id of a function or kp_frame, in 24 bits, and back. */
static uint32_t
short_id(uint32_t id)
{
	if ((id & ((1u << 30) - 1)) >> FUN_BITS)
		kp_die("more than %u distinct functions", 1u << FUN_BITS);
	return (id >> 30) << FUN_BITS | (id & ((1u << FUN_BITS) - 1));
}

static uint32_t
lane_id(uint32_t fun)
{
	fun &= KP_ID_FUN_MASK;
	return (fun >> FUN_BITS) << 30 | (fun & ((1u << FUN_BITS) - 1));
}

const struct kp_idfun *
kp_id_fun(const struct kp_idagg *a, uint32_t fun)
{
	return kp_lane_at(a->funl, lane_id(fun));
}

const struct kp_frame *
kp_id_ext(const struct kp_idagg *a, uint32_t fun)
{
	return *(const struct kp_frame *const *)kp_lane_at(a->extl,
							   lane_id(fun));
}

/* kp_mix of a and b, each first xored with a constant of its own */
static inline uint64_t
mix(uint64_t a, uint64_t b)
{
	return kp_mix(a ^ 0xe7037ed1a0b428dbull, b ^ 0x8ebc6af09c88c6e3ull);
}

uint32_t
kp_id_fun_of(struct kp_idagg *a, int lane, const char *sym, const char *module)
{
	uint64_t h = mix((uintptr_t)sym, (uintptr_t)module * 31 + 7);
	struct kp_ctab_it it;
	const struct kp_idfun *f;
	struct kp_idfun *nf;
	uint32_t id;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass)
			kp_ctab_lock(&a->funs, h);
		kp_ctab_first(&a->funs, h, &it);
		while (kp_ctab_next(&it, &id)) {
			f = kp_lane_at(a->funl, id);
			if (f->sym == sym && f->module == module) {
				if (pass)
					kp_ctab_unlock(&a->funs, h);
				return short_id(id);
			}
		}
	}
	nf = kp_lane_add(&a->funl[lane], &id);
	nf->sym = sym;
	nf->module = module;
	id = short_id(id);
	kp_ctab_add(&a->funs, h, lane_id(id));
	kp_ctab_unlock(&a->funs, h);
	return id;
}

/* ---- frames ---- */

#define REC_FLAGS (KP_F_ADDR | KP_F_OFF | KP_F_INLINE)

bool
kp_id_make(struct kp_idagg *a, int lane, const struct kp_frame *f,
	   struct kp_idrec *r)
{
	if (f->file || f->line || (f->flags & ~(uint32_t)REC_FLAGS) ||
	    ((f->flags & KP_F_OFF) && f->off > UINT32_MAX))
		return false;
	memset(r, 0, sizeof(*r));
	if (f->flags & KP_F_ADDR) {
		r->addr = f->addr;
		r->fun |= KP_IDF_ADDR;
	}
	if (f->flags & KP_F_OFF) {
		r->off = (uint32_t)f->off;
		r->fun |= KP_IDF_OFF;
	}
	if (f->flags & KP_F_INLINE)
		r->fun |= KP_IDF_INLINE;
	r->fun |= kp_id_fun_of(a, lane, f->sym, f->module);
	r->key = r->frame = KP_ID_NONE;
	return true;
}

uint64_t
kp_id_hash(const struct kp_idrec *r)
{
	if ((r->fun & (KP_IDF_ADDR | KP_IDF_EXT)) == KP_IDF_ADDR)
		return kp_id_addr_hash(r->addr);
	return mix((uint64_t)(r->fun & KP_ID_IDENT) << 32 | r->off,
		   r->addr ^ 0x2545f4914f6cdd1dull);
}

/* r and the frame record q are the same frame. */
static bool
same(const struct kp_idagg *a, const struct kp_idrec *r,
     const struct kp_idrec *q)
{
	if (!(q->fun & KP_IDF_FRAME) ||
	    ((r->fun ^ q->fun) & (KP_IDF_ADDR | KP_IDF_OFF | KP_IDF_INLINE |
				  KP_IDF_EXT)))
		return false;
	if (r->fun & KP_IDF_EXT)
		return kp_id_ext(a, r->fun) == kp_id_ext(a, q->fun);
	return (r->fun & KP_ID_FUN_MASK) == (q->fun & KP_ID_FUN_MASK) &&
	       r->addr == q->addr && r->off == q->off;
}

uint32_t
kp_id_find(struct kp_idagg *a, uint64_t h, const struct kp_idrec *r)
{
	struct kp_ctab_it it;
	uint32_t id;

	kp_ctab_first(&a->recs, h, &it);
	while (kp_ctab_next(&it, &id))
		if (same(a, r, kp_lane_at(a->r.recl, id)))
			return id;
	return KP_ID_NONE;
}

uint32_t
kp_id_add(struct kp_idagg *a, int lane, uint64_t h, const struct kp_idrec *r)
{
	struct kp_idrec *n;
	uint32_t id;

	n = kp_lane_add(&a->r.recl[lane], &id);
	*n = *r;
	kp_ctab_add(&a->recs, h, id);
	return id;
}

/* The record of r (a frame), made under h's lock if new. */
static uint32_t
frame_rec(struct kp_idagg *a, int lane, uint64_t h, struct kp_idrec *r)
{
	uint32_t id = kp_id_find(a, h, r);

	if (id != KP_ID_NONE)
		return id;
	kp_ctab_lock(&a->recs, h);
	id = kp_id_find(a, h, r);
	if (id == KP_ID_NONE) {
		r->fun |= KP_IDF_FRAME;
		r->frame = KP_ID_SELF;
		id = kp_id_add(a, lane, h, r);
	}
	kp_ctab_unlock(&a->recs, h);
	return id;
}

uint32_t
kp_id_frame_rec(struct kp_idagg *a, int lane, struct kp_idrec *r)
{
	return frame_rec(a, lane, kp_id_hash(r), r);
}

uint32_t
kp_id_frame(struct kp_idagg *a, int lane, const struct kp_frame *f)
{
	struct kp_idrec r;
	const struct kp_frame *p, **slot;
	uint32_t id;
	uint64_t h;

	if (kp_id_make(a, lane, f, &r))
		return frame_rec(a, lane, kp_id_hash(&r), &r);
	/* a kp_frame of its own, found by its interned pointer */
	p = kp_frame_intern(f);
	h = mix((uintptr_t)p, 0x9e3779b97f4a7c15ull);
	memset(&r, 0, sizeof(r));
	r.key = KP_ID_NONE;
	{
		struct kp_ctab_it it;
		const struct kp_idrec *q;
		int pass;

		for (pass = 0; pass < 2; pass++) {
			if (pass)
				kp_ctab_lock(&a->recs, h);
			kp_ctab_first(&a->recs, h, &it);
			while (kp_ctab_next(&it, &id)) {
				q = kp_lane_at(a->r.recl, id);
				if ((q->fun & KP_IDF_EXT) &&
				    kp_id_ext(a, q->fun) == p) {
					if (pass)
						kp_ctab_unlock(&a->recs, h);
					return id;
				}
			}
		}
	}
	slot = kp_lane_add(&a->extl[lane], &id);
	*slot = p;
	r.fun = short_id(id) | KP_IDF_EXT | KP_IDF_FRAME;
	r.frame = KP_ID_SELF;
	id = kp_id_add(a, lane, h, &r);
	kp_ctab_unlock(&a->recs, h);
	return id;
}

const struct kp_frame *
kp_id_kpframe(struct kp_idagg *a, uint32_t id)
{
	const struct kp_idrec *r = kp_id_rec(a, id);
	const struct kp_idfun *fn;
	struct kp_frame f;

	if (r->fun & KP_IDF_EXT)
		return kp_id_ext(a, r->fun);
	fn = kp_id_fun(a, r->fun);
	memset(&f, 0, sizeof(f));
	f.addr = r->addr;
	f.off = r->off;
	f.sym = fn->sym;
	f.module = fn->module;
	f.flags = ((r->fun & KP_IDF_ADDR) ? KP_F_ADDR : 0) |
		  ((r->fun & KP_IDF_OFF) ? KP_F_OFF : 0) |
		  ((r->fun & KP_IDF_INLINE) ? KP_F_INLINE : 0);
	return kp_frame_intern(&f);
}

/* ---- stacks ---- */

static struct stk *
stk_at(const struct kp_idagg *a, uint32_t id)
{
	return kp_lane_at(a->stkl, id);
}

/* The stack of p in the table, or NULL. */
static struct stk *
stk_find(struct kp_idagg *a, const struct pend *p)
{
	struct kp_ctab_it it;
	struct stk *s;
	uint32_t id;

	kp_ctab_first(&a->stks, p->h, &it);
	while (kp_ctab_next(&it, &id)) {
		s = stk_at(a, id);
		/* (its event bits never change; counted() lowers the
		 * rest at once in another lane) */
		if (s->ids[-1] == p->n &&
		    FIRST_EV(__atomic_load_n(&s->first, __ATOMIC_RELAXED)) ==
			    p->ev &&
		    memcmp(s->ids, p->ids, p->n * sizeof(*p->ids)) == 0)
			return s;
	}
	return NULL;
}

/* Room for a run of n ids after its count, in the lane's blocks. */
static uint32_t *
run_alloc(struct lane *l, size_t n)
{
	struct block *b;
	size_t want = n + 1;

	if (want > l->left) {
		size_t cap = want > RUN_BLOCK ? want : RUN_BLOCK;

		b = kp_xmalloc(sizeof(*b) + cap * sizeof(b->ids[0]));
		b->next = l->blocks;
		l->blocks = b;
		l->left = cap;
	}
	l->left -= want;
	return l->blocks->ids + l->left;
}

static void
counted(struct kp_idagg *a, struct stk *s, const struct pend *p,
	struct lane *l)
{
	uint64_t old, pos = (uint64_t)p->ev << 52 | p->pos, cur;

	if (a->shared)
		old = __atomic_fetch_add(&s->count, p->weight, __ATOMIC_RELAXED);
	else
		old = s->count, s->count = old + p->weight;
	if (old > UINT64_MAX - p->weight)
		l->over[p->ev] = true;
	cur = __atomic_load_n(&s->first, __ATOMIC_RELAXED);
	while (pos < cur &&
	       !__atomic_compare_exchange_n(&s->first, &cur, pos, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static struct stk *
stk_add(struct kp_idagg *a, int lane, const struct pend *p)
{
	struct lane *l = &a->lane[lane];
	struct stk *s;
	uint32_t id, *run;

	if (l->total[p->ev] > UINT64_MAX - p->weight)
		l->over[p->ev] = true;
	l->total[p->ev] += p->weight;
	if ((s = stk_find(a, p)) != NULL) {
		counted(a, s, p, l);
		return s;
	}
	kp_ctab_lock(&a->stks, p->h);
	if ((s = stk_find(a, p)) != NULL) {
		kp_ctab_unlock(&a->stks, p->h);
		counted(a, s, p, l);
		return s;
	}
	if (p->n > UINT32_MAX)
		kp_die("a stack of more than %u frames", UINT32_MAX);
	run = run_alloc(l, p->n);
	run[0] = (uint32_t)p->n;
	memcpy(run + 1, p->ids, p->n * sizeof(*run));
	s = kp_lane_add(&a->stkl[lane], &id);
	s->count = p->weight;
	s->first = (uint64_t)p->ev << 52 | p->pos;
	s->ids = run + 1;
	kp_ctab_add(&a->stks, p->h, id);
	kp_ctab_unlock(&a->stks, p->h);
	return s;
}

/*
 * The entry a stack given will be counted in, fetched into the cache
 * (its slot is by now): its ids are fetched later (stk_hint_ids), when
 * the entry that says where they are is in the cache in turn.
 */
static void
stk_hint(struct kp_idagg *a, struct pend *p)
{
	struct kp_ctab_it it;
	uint32_t id;

	p->hint = NULL;
	kp_ctab_first(&a->stks, p->h, &it);
	if (kp_ctab_next(&it, &id)) {
		p->hint = stk_at(a, id);
		__builtin_prefetch(p->hint);
	}
}

static void
stk_hint_ids(const struct pend *p)
{
	if (p->hint)
		__builtin_prefetch(p->hint->ids);
}

void
kp_id_stack(struct kp_idagg *a, int lane, unsigned ev, const uint32_t *ids,
	    size_t n, uint64_t weight, uint64_t pos)
{
	struct lane *l = &a->lane[lane];
	struct pend *p = &l->q[l->given % LATE];

	if (l->given - l->added == LATE) {
		/* the oldest: its slot and entry are in the cache now */
		stk_add(a, lane, p);
		l->added++;
	}
	if (p->cap < n) {
		p->cap = n + 64;
		free(p->ids);
		p->ids = kp_xmalloc(p->cap * sizeof(*p->ids));
	}
	memcpy(p->ids, ids, n * sizeof(*ids));
	p->n = n;
	p->ev = ev;
	p->weight = weight;
	p->pos = pos;
	p->h = kp_hash(ids, n * sizeof(*ids)) ^ ((uint64_t)ev << 40);
	p->hint = NULL;
	kp_ctab_prefetch(&a->stks, p->h);
	if (l->given - l->added >= HINT)
		stk_hint(a, &l->q[(l->given - HINT) % LATE]);
	if (l->given - l->added >= HINT_IDS)
		stk_hint_ids(&l->q[(l->given - HINT_IDS) % LATE]);
	l->given++;
}

void
kp_id_stacks_flush(struct kp_idagg *a, int lane)
{
	struct lane *l = &a->lane[lane];

	while (l->added < l->given) {
		stk_add(a, lane, &l->q[l->added % LATE]);
		l->added++;
	}
}

const struct kp_idstk *
kp_id_stack_now(struct kp_idagg *a, int lane, unsigned ev,
		const uint32_t *ids, size_t n, uint64_t weight, uint64_t pos)
{
	struct pend p;

	p.ids = (uint32_t *)(uintptr_t)ids; /* read only */
	p.n = n;
	p.ev = ev;
	p.weight = weight;
	p.pos = pos;
	p.h = kp_hash(ids, n * sizeof(*ids)) ^ ((uint64_t)ev << 40);
	return (const struct kp_idstk *)stk_add(a, lane, &p);
}

void
kp_id_stack_again(struct kp_idagg *a, int lane, const struct kp_idstk *st,
		  uint64_t weight, uint64_t pos)
{
	struct stk *s = (struct stk *)(uintptr_t)st;
	struct lane *l = &a->lane[lane];
	struct pend p;

	p.ev = FIRST_EV(__atomic_load_n(&s->first, __ATOMIC_RELAXED));
	p.weight = weight;
	p.pos = pos;
	if (l->total[p.ev] > UINT64_MAX - weight)
		l->over[p.ev] = true;
	l->total[p.ev] += weight;
	counted(a, s, &p, l);
}

bool
kp_id_overflowed(const struct kp_idagg *a, unsigned ev)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < KP_CTAB_THREADS; i++) {
		if (a->lane[i].over[ev] || sum > UINT64_MAX - a->lane[i].total[ev])
			return true;
		sum += a->lane[i].total[ev];
	}
	return false;
}

bool
kp_id_has(const struct kp_idagg *a, unsigned ev)
{
	int i;

	for (i = 0; i < KP_CTAB_THREADS; i++)
		if (a->lane[i].total[ev] || a->lane[i].over[ev])
			return true;
	return false;
}

/* ---- the stacks in order ---- */

struct ord {
	uint64_t pos;
	const struct stk *s;
};

/* v sorted by pos; tmp, room for n. */
static void
sort_ord(struct ord *v, size_t n, struct ord *tmp)
{
	kp_radix_sort(v, n, sizeof(*v), offsetof(struct ord, pos), tmp);
}

/* v[0 .. n) sorted by pos, n small: an insertion sort (as stable). */
static void
sort_few(struct ord *v, size_t n)
{
	struct ord x;
	size_t i, k;

	for (i = 1; i < n; i++) {
		x = v[i];
		for (k = i; k > 0 && x.pos < v[k - 1].pos; k--)
			v[k] = v[k - 1];
		v[k] = x;
	}
}

/*
 * v[0 .. run[nrun - 1]) sorted by pos, where it is nearly so: the
 * lanes' runs (run[r]: where run r ends), each in the order its thread
 * met its stacks, with a few out of place (a stack another thread then
 * saw before: its first sight moved earlier).  In each run, the entries
 * below one before them are set aside (in tmp), sorted, and merged back
 * from the end; then the runs are merged in turn, an earlier run's
 * entry first where two are even (as the radix sort keeps them).  The
 * sorted entries: in v or in tmp; NULL, v unchanged, where more than
 * one entry in 8 is out of place (then sort_ord).  On perf2kp's real
 * capture 225 of 118,433 are: 1 ms where the radix sort took 3, on the
 * way from the input's end to the output's first byte.
 */
static struct ord *
merge_runs(struct ord *v, const size_t *run, int nrun, struct ord *tmp)
{
	struct ord *src = v, *dst = tmp, *x;
	size_t r0, r1, i, j, k, nm, na;
	uint64_t last;
	int r;

	for (r = 0; r < nrun; r++) {
		r0 = r ? run[r - 1] : 0;
		for (na = 0, last = 0, i = r0; i < run[r]; i++)
			if (i > r0 && v[i].pos < last)
				na++;
			else
				last = v[i].pos;
		if (na > (run[r] - r0) / 8)
			return NULL;
	}
	for (r = 0; r < nrun; r++) {
		r0 = r ? run[r - 1] : 0;
		r1 = run[r];
		for (nm = na = 0, i = r0; i < r1; i++)
			if (nm && v[i].pos < v[r0 + nm - 1].pos)
				tmp[na++] = v[i];
			else
				v[r0 + nm++] = v[i];
		if (na <= 256)
			sort_few(tmp, na);
		else /* (na <= len / 8: the rest of tmp has room) */
			sort_ord(tmp, na, tmp + na);
		/* from the end: the place written is never below the
		 * entries of the run still to be read */
		for (k = r1, i = nm, j = na; j;)
			if (i && v[r0 + i - 1].pos > tmp[j - 1].pos)
				v[--k] = v[r0 + --i];
			else
				v[--k] = tmp[--j];
	}
	for (r = 1; r < nrun; r++) {
		r0 = run[r - 1];
		r1 = run[r];
		for (i = 0, j = r0, k = 0; i < r0 && j < r1;)
			dst[k++] = src[j].pos < src[i].pos ? src[j++] : src[i++];
		memcpy(dst + k, src + i, (r0 - i) * sizeof(*dst));
		k += r0 - i;
		memcpy(dst + k, src + j, (r1 - j) * sizeof(*dst));
		x = src;
		src = dst;
		dst = x;
	}
	return src;
}

/* The stacks of event ev in order of first sight: *n of them. */
static struct ord *
ordered(struct kp_idagg *a, unsigned ev, size_t *n)
{
	struct ord *v, *tmp, *got;
	size_t len = 0, cap = 0, k, run[KP_CTAB_THREADS];
	bool sorted = true;
	int i, nrun = 0;

	for (i = 0; i < KP_CTAB_THREADS; i++)
		cap += a->stkl[i].n;
	v = kp_xmalloc((cap ? cap : 1) * sizeof(*v));
	kp_populate(v, cap * sizeof(*v));
	for (i = 0; i < KP_CTAB_THREADS; i++) {
		for (k = 0; k < a->stkl[i].n; k++) {
			const struct stk *s = stk_at(a, (uint32_t)i << 30 |
							    (uint32_t)k);

			if (FIRST_EV(s->first) != ev)
				continue;
			v[len].pos = FIRST_POS(s->first);
			v[len].s = s;
			if (len && v[len].pos < v[len - 1].pos)
				sorted = false;
			len++;
		}
		if (len && (!nrun || run[nrun - 1] < len))
			run[nrun++] = len;
	}
	if (!sorted) {
		tmp = kp_xmalloc(len * sizeof(*tmp));
		kp_populate(tmp, len * sizeof(*tmp));
		if (!(got = merge_runs(v, run, nrun, tmp)))
			sort_ord(v, len, tmp);
		else if (got == tmp)
			tmp = v, v = got;
		free(tmp);
	}
	*n = len;
	return v;
}

void
kp_id_each(struct kp_idagg *a, unsigned ev,
	   void (*fn)(void *arg, const uint32_t *ids, size_t n,
		      uint64_t count),
	   void *arg)
{
	size_t n, i;
	struct ord *v = ordered(a, ev, &n);

	for (i = 0; i < n; i++)
		fn(arg, v[i].s->ids, v[i].s->ids[-1], v[i].s->count);
	free(v);
}

struct to_agg {
	struct kp_idagg *a;
	struct kp_agg *agg;
	const struct kp_frame **frames;
	size_t cap;
};

static void
add_to_agg(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct to_agg *t = arg;
	size_t i;

	if (t->cap < n) {
		t->cap = n + 64;
		t->frames = kp_xrealloc(t->frames,
					t->cap * sizeof(*t->frames));
	}
	for (i = 0; i < n; i++)
		t->frames[i] = kp_id_kpframe(t->a, ids[i]);
	kp_agg_add_or_skip(t->agg, NULL, t->frames, n, count);
}

void
kp_id_to_agg(struct kp_idagg *a, unsigned ev, struct kp_agg *agg)
{
	struct to_agg t = { a, agg, NULL, 0 };

	kp_id_each(a, ev, add_to_agg, &t);
	free(t.frames);
}

/* ---- writing ---- */

#define OUT_BUF (256u << 10)

struct out {
	FILE *fp;
	char *buf, *p, *end;
};

static void
out_flush(struct out *o)
{
	fwrite_unlocked(o->buf, 1, (size_t)(o->p - o->buf), o->fp);
	o->p = o->buf;
}

/* Room for n more bytes. */
static inline char *
out_room(struct out *o, size_t n)
{
	if ((size_t)(o->end - o->p) < n) {
		out_flush(o);
		if ((size_t)(o->end - o->buf) < n) {
			free(o->buf);
			o->buf = o->p = kp_xmalloc(n);
			o->end = o->buf + n;
		}
	}
	return o->p;
}

/* What a line of function fun holds of it (made the first time). */
static inline const struct kp_line_parts *
fun_text(struct kp_idagg *a, uint32_t fun)
{
	uint32_t id = lane_id(fun), lane = id >> 30, i = id & ((1u << 30) - 1);
	struct kp_line_parts *t;
	const struct kp_idfun *f;

	if (!a->text[lane])
		a->text[lane] = kp_xcalloc(a->funl[lane].n ? a->funl[lane].n : 1,
					   sizeof(*a->text[lane]));
	t = &a->text[lane][i];
	if (!t->head) {
		f = kp_lane_at(a->funl, id);
		kp_line_parts(t, f->sym, f->module);
	}
	return t;
}

/* The line of frame record id. */
static inline void
put_line(struct out *o, struct kp_idagg *a, uint32_t id)
{
	const struct kp_idrec *r = kp_id_rec(a, id);
	const struct kp_line_parts *t;
	unsigned flags;

	if (!(r->fun & KP_IDF_EXT)) {
		t = fun_text(a, r->fun);
		flags = ((r->fun & KP_IDF_ADDR) ? KP_F_ADDR : 0) |
			((r->fun & KP_IDF_OFF) ? KP_F_OFF : 0) |
			((r->fun & KP_IDF_INLINE) ? KP_F_INLINE : 0);
		if (t->sym || !(flags & KP_F_OFF)) {
			o->p = kp_line_put(out_room(o, 64 + t->nhead + t->ntail),
					   r->addr, r->off, flags, t);
			return;
		}
	}
	/* a kp_frame's own, or an offset in the module's brackets */
	{
		const struct kp_frame *x = kp_id_kpframe(a, id);

		o->p = kp_line_frame(out_room(o, kp_line_room(x)), x);
	}
}

void
kp_id_write(FILE *out, struct kp_idagg *a, unsigned ev)
{
	struct out o = { out, NULL, NULL, NULL };
	struct ord *v;
	size_t n, i, k;
	char dec[24], *p, *q;

	kp_write_meta(out);
	tables_free(a);
#ifdef __GLIBC__
	/* the tables' memory back to the system before the order's is
	 * taken, so that writing does not raise the peak */
	malloc_trim(0);
#endif
	v = ordered(a, ev, &n);
	o.buf = o.p = kp_xmalloc(OUT_BUF);
	o.end = o.buf + OUT_BUF;
	for (i = 0; i < n; i++) {
		const struct stk *s = v[i].s;
		uint64_t c = s->count;

		/* what the stacks after this one read, fetched meanwhile:
		 * their entries, their ids, the next one's records */
		if (i + 4 < n)
			__builtin_prefetch(v[i + 4].s);
		if (i + 2 < n)
			__builtin_prefetch(v[i + 2].s->ids);
		if (i + 1 < n)
			for (k = 0; k < v[i + 1].s->ids[-1]; k++)
				__builtin_prefetch(kp_id_rec(a,
							     v[i + 1].s->ids[k]));

		p = out_room(&o, 2);
		*p++ = '!';
		*p++ = '\n';
		o.p = p;
		for (k = 0; k < s->ids[-1]; k++)
			put_line(&o, a, s->ids[k]);
		q = dec + sizeof(dec);
		do {
			*--q = (char)('0' + c % 10);
			c /= 10;
		} while (c);
		p = out_room(&o, 24);
		*p++ = '\t';
		memcpy(p, q, (size_t)(dec + sizeof(dec) - q));
		p += dec + sizeof(dec) - q;
		*p++ = '\n';
		o.p = p;
	}
	p = out_room(&o, 2);
	*p++ = '!';
	*p++ = '\n';
	o.p = p;
	out_flush(&o);
	free(o.buf);
	free(v);
}
