/* ctab.c - tables and lanes that several threads fill at once (ctab.h) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ctab.h"
#include "util.h"

#define FIRST_SLOTS 64 /* a shard's first array */
#define LANE_AHEAD (16u << 10) /* a lane's pages made at once */

void
kp_ctab_init(struct kp_ctab *t, bool shared)
{
	memset(t, 0, sizeof(*t));
	t->shared = shared;
}

void
kp_ctab_lock(struct kp_ctab *t, uint64_t h)
{
	struct kp_ctab_shard *sh = kp_ctab_shard_of(t, h);

	if (!t->shared)
		return;
	while (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE))
		kp_spin_wait(&sh->lock);
}

void
kp_ctab_unlock(struct kp_ctab *t, uint64_t h)
{
	if (t->shared)
		__atomic_store_n(&kp_ctab_shard_of(t, h)->lock, 0,
				 __ATOMIC_RELEASE);
}

/* ---- arrays retired while a look-up may read them ---- */

/*
 * Each thread's count of the pieces of work it started and ended: odd
 * while it is in one.  An array retired when the counts were c can go
 * once each thread's count is even in c or has moved on from c.
 */
static unsigned long work[KP_CTAB_THREADS];

struct retired {
	struct retired *next;
	struct kp_ctab_arr *arr;
	unsigned long seen[KP_CTAB_THREADS];
};
static struct retired *retired;
static pthread_mutex_t retired_mu = PTHREAD_MUTEX_INITIALIZER;

/*
 * Retirements so far, for their order.  A retiring thread publishes the
 * new array (a release store), then takes the counts; a thread starting
 * work counts itself, then loads the arrays.  That is two stores each
 * followed by a load of the other's: alone they may pass each other
 * (a store waits in its CPU's buffer while the load goes on), so that
 * each thread sees the other's old value, and an array retired while
 * the other thread looks would be freed under it.  Each side therefore
 * also acts on `retiring' between its store and its load (an
 * increment, a load), which orders them: either the new thread's load
 * follows the increment and sees the new array, or its count came
 * before and the retiring thread sees it busy.
 */
static unsigned long retiring;

void
kp_ctab_busy(int t)
{
	__atomic_fetch_add(&work[t], 1, __ATOMIC_SEQ_CST);
	(void)__atomic_load_n(&retiring, __ATOMIC_SEQ_CST);
}

/* No thread can still read r's array. */
static bool
unused(const struct retired *r)
{
	int i;

	for (i = 0; i < KP_CTAB_THREADS; i++)
		if ((r->seen[i] & 1) &&
		    __atomic_load_n(&work[i], __ATOMIC_SEQ_CST) == r->seen[i])
			return false;
	return true;
}

void
kp_ctab_quiet(int t)
{
	struct retired **p, *r;

	__atomic_fetch_add(&work[t], 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&retired, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&retired_mu);
	for (p = &retired; (r = *p) != NULL;)
		if (unused(r)) {
			__atomic_store_n(p, r->next, __ATOMIC_RELAXED);
			free(r->arr);
			free(r);
		} else {
			p = &r->next;
		}
	pthread_mutex_unlock(&retired_mu);
}

void
kp_ctab_reclaim(void)
{
	struct retired *r;

	pthread_mutex_lock(&retired_mu);
	while ((r = retired) != NULL) {
		__atomic_store_n(&retired, r->next, __ATOMIC_RELAXED);
		free(r->arr);
		free(r);
	}
	pthread_mutex_unlock(&retired_mu);
}

static void
retire(struct kp_ctab *t, struct kp_ctab_arr *a)
{
	struct retired *r;
	int i;

	if (!t->shared) {
		free(a); /* no other thread reads it */
		return;
	}
	r = kp_xmalloc(sizeof(*r));
	r->arr = a;
	__atomic_fetch_add(&retiring, 1, __ATOMIC_SEQ_CST); /* see above */
	for (i = 0; i < KP_CTAB_THREADS; i++)
		r->seen[i] = __atomic_load_n(&work[i], __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&retired_mu);
	r->next = retired;
	__atomic_store_n(&retired, r, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&retired_mu);
}

/* ---- insertion ---- */

static void
put(struct kp_ctab_arr *a, uint64_t v)
{
	size_t i;

	for (i = (uint32_t)(v >> 32) & a->mask; a->slot[i];
	     i = (i + 1) & a->mask)
		;
	__atomic_store_n(&a->slot[i], v, __ATOMIC_RELEASE);
}

/* The shard's array twice as large (or its first), published. */
static struct kp_ctab_arr *
grow(struct kp_ctab *t, struct kp_ctab_shard *sh, struct kp_ctab_arr *a)
{
	size_t cap = a ? 2 * (a->mask + 1) : FIRST_SLOTS, i;
	struct kp_ctab_arr *b;

	/* made and written through, not calloc's: a page read before its
	 * first write maps the zero page, and that write then copies it
	 * and stops the other thread to flush its TLB */
	b = kp_xmalloc(sizeof(*b) + cap * sizeof(b->slot[0]));
	kp_populate(b, sizeof(*b) + cap * sizeof(b->slot[0]));
	memset(b, 0, sizeof(*b) + cap * sizeof(b->slot[0]));
	b->mask = cap - 1;
	if (a)
		for (i = 0; i <= a->mask; i++)
			if (a->slot[i])
				put(b, a->slot[i]);
	__atomic_store_n(&sh->arr, b, __ATOMIC_RELEASE);
	if (a)
		retire(t, a);
	return b;
}

void
kp_ctab_add(struct kp_ctab *t, uint64_t h, uint32_t id)
{
	struct kp_ctab_shard *sh = kp_ctab_shard_of(t, h);
	struct kp_ctab_arr *a = sh->arr;

	if (!a || (sh->n + 1) * 4 > (a->mask + 1) * 3)
		a = grow(t, sh, a);
	put(a, (uint64_t)kp_ctab_tag(h) << 32 | id);
	sh->n++;
}

size_t
kp_ctab_slots(const struct kp_ctab *t)
{
	size_t i, n = 0;

	for (i = 0; i < KP_CTAB_SHARDS; i++)
		if (t->sh[i].arr)
			n += t->sh[i].arr->mask + 1;
	return n;
}

void
kp_ctab_free(struct kp_ctab *t)
{
	size_t i;

	for (i = 0; i < KP_CTAB_SHARDS; i++) {
		free(t->sh[i].arr);
		t->sh[i].arr = NULL;
		t->sh[i].n = 0;
	}
}

/* ---- lanes ---- */

void
kp_lane_init(struct kp_lane *l, uint32_t lane, size_t elem)
{
	memset(l, 0, sizeof(*l));
	l->lane = lane;
	l->elem = elem;
}

void
kp_lane_free(struct kp_lane *l)
{
	if (l->base)
		munmap(l->base, (size_t)KP_LANE_MAX * l->elem);
	l->base = NULL;
	l->n = 0;
	l->made = 0;
}

void *
kp_lane_add(struct kp_lane *l, uint32_t *id)
{
	uint32_t i = l->n;
	char *e;

	if (i == KP_LANE_MAX)
		kp_die("more than %u entries in a table", KP_LANE_MAX);
	if (!l->base) {
		/* reserved, not used: zero pages until written, 4 KiB at a
		 * time (no huge pages: the memory is what is used) */
		l->base = mmap(NULL, (size_t)KP_LANE_MAX * l->elem,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);
		if (l->base == MAP_FAILED) {
			l->base = NULL;
			kp_die("out of memory");
		}
		(void)madvise(l->base, (size_t)KP_LANE_MAX * l->elem,
			      MADV_NOHUGEPAGE);
	}
	e = l->base + (size_t)i * l->elem;
	if ((size_t)i * l->elem + l->elem > l->made) {
		/* the next pages at once, not a fault each */
		size_t ahead = (size_t)KP_LANE_MAX * l->elem - l->made;

		if (ahead > LANE_AHEAD)
			ahead = LANE_AHEAD;
		kp_populate(l->base + l->made, ahead);
		l->made += ahead;
	}
	l->n = i + 1;
	*id = l->lane << 30 | i;
	return e; /* zero: never written before */
}
