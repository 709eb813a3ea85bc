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
 * The stacks of an event in order of first sight, one at a time.  A
 * lane holds its stacks in the order its thread met them, save a few
 * that another thread then saw before (their first sight moved
 * earlier): those, each below one before it in the lane, are set aside
 * and sorted; the rest of the lane is in order as it lies.  The next
 * stack is the least of each lane's next in place and next set aside;
 * of two at one position, the lower lane's first, and in a lane the
 * one in place (as a stable sort of the lanes one after the other
 * leaves them).  No array of all the stacks is made: on perf2kp's real
 * capture (118,433 stacks, 225 set aside) making one, merging it and
 * the fresh memory for both took 2.2 ms between the input's end and
 * the output's first byte.
 */
struct order {
	const struct kp_idagg *a;
	unsigned ev;
	struct order_lane {
		size_t k, n;	   /* the next of its stacks looked at; all */
		uint64_t last;	   /* the position of the last in place */
		bool any;	   /* one is */
		struct ord head;   /* the next in place (s NULL: none) */
		struct ord *aside; /* those set aside, sorted */
		size_t naside, iaside;
	} l[KP_CTAB_THREADS];
};

/* Lane i's next stack of the event (NULL at its end), at *pos; *out,
 * whether it is set aside. */
static const struct stk *
order_lane_next(struct order *o, int i, uint64_t *pos, bool *out)
{
	struct order_lane *l = &o->l[i];
	const struct stk *s;

	while (l->k < l->n) {
		s = stk_at(o->a, (uint32_t)i << 30 | (uint32_t)l->k++);
		if (FIRST_EV(s->first) != o->ev)
			continue;
		*pos = FIRST_POS(s->first);
		*out = l->any && *pos < l->last;
		if (!*out) {
			l->any = true;
			l->last = *pos;
		}
		return s;
	}
	return NULL;
}

/* Lane i's next stack in place, its head. */
static void
order_step(struct order *o, int i)
{
	struct order_lane *l = &o->l[i];
	const struct stk *s;
	uint64_t pos = 0;
	bool out = true;

	while ((s = order_lane_next(o, i, &pos, &out)) != NULL && out)
		;
	l->head.pos = pos;
	l->head.s = s;
}

static void
order_start(struct order *o, const struct kp_idagg *a, unsigned ev)
{
	struct order_lane *l;
	const struct stk *s;
	struct ord *tmp;
	size_t cap;
	uint64_t pos;
	bool out;
	int i;

	memset(o, 0, sizeof(*o));
	o->a = a;
	o->ev = ev;
	for (i = 0; i < KP_CTAB_THREADS; i++) {
		l = &o->l[i];
		l->n = a->stkl[i].n;
		for (cap = 0; (s = order_lane_next(o, i, &pos, &out)) != NULL;) {
			if (!out)
				continue;
			if (l->naside == cap) {
				cap = cap ? 2 * cap : 256;
				l->aside = kp_xrealloc(l->aside,
						       cap * sizeof(*l->aside));
			}
			l->aside[l->naside].pos = pos;
			l->aside[l->naside++].s = s;
		}
		if (l->naside <= 256) {
			sort_few(l->aside, l->naside);
		} else {
			tmp = kp_xmalloc(l->naside * sizeof(*tmp));
			sort_ord(l->aside, l->naside, tmp);
			free(tmp);
		}
		/* walked again as it is taken */
		l->k = 0;
		l->any = false;
		order_step(o, i);
	}
}

/* The next stack in order, or NULL. */
static const struct stk *
order_next(struct order *o)
{
	const struct ord *best = NULL, *c;
	const struct stk *s;
	bool aside = false;
	int i, at = 0;

	for (i = 0; i < KP_CTAB_THREADS; i++) {
		c = &o->l[i].head;
		if (c->s && (!best || c->pos < best->pos)) {
			best = c;
			at = i;
			aside = false;
		}
		if (o->l[i].iaside == o->l[i].naside)
			continue;
		c = &o->l[i].aside[o->l[i].iaside];
		if (!best || c->pos < best->pos) {
			best = c;
			at = i;
			aside = true;
		}
	}
	if (!best)
		return NULL;
	s = best->s;
	if (aside)
		o->l[at].iaside++;
	else
		order_step(o, at); /* (best, its head, is replaced) */
	return s;
}

static void
order_end(struct order *o)
{
	int i;

	for (i = 0; i < KP_CTAB_THREADS; i++)
		free(o->l[i].aside);
}

void
kp_id_each(struct kp_idagg *a, unsigned ev,
	   void (*fn)(void *arg, const uint32_t *ids, size_t n,
		      uint64_t count),
	   void *arg)
{
	struct order o;
	const struct stk *s;

	order_start(&o, a, ev);
	while ((s = order_next(&o)) != NULL)
		fn(arg, s->ids, s->ids[-1], s->count);
	order_end(&o);
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
	const struct stk *ring[4], *s, *x; /* this stack and the next 3 */
	struct order ord;
	size_t n, i, k;
	char dec[24], *p, *q;

	kp_write_meta(out);
	tables_free(a);
#ifdef __GLIBC__
	/* the tables' memory back to the system before the output's is
	 * taken, so that writing does not raise the peak */
	malloc_trim(0);
#endif
	order_start(&ord, a, ev);
	o.buf = o.p = kp_xmalloc(OUT_BUF);
	o.end = o.buf + OUT_BUF;
	for (n = 0; n < 3 && (ring[n] = order_next(&ord)) != NULL; n++)
		;
	for (i = 0; i < n; i++) {
		uint64_t c;

		s = ring[i & 3];
		c = s->count;
		if (n == i + 3 && (x = order_next(&ord)) != NULL)
			ring[n++ & 3] = x;
		/* what the stacks after this one read, fetched meanwhile:
		 * their ids, the next one's records */
		if (i + 2 < n)
			__builtin_prefetch(ring[(i + 2) & 3]->ids);
		if (i + 1 < n)
			for (x = ring[(i + 1) & 3], k = 0; k < x->ids[-1]; k++)
				__builtin_prefetch(kp_id_rec(a, x->ids[k]));

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
	order_end(&ord);
}
