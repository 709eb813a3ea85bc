/*
 * ctab.h - what several threads fill at once (ctab.c): hash tables that
 * only grow, looked up without a lock, and arrays that grow in chunks
 * that never move, each thread appending to its own.
 *
 * A table maps a 64-bit hash to 32-bit ids; what an id names, and
 * whether it is the key looked for, is its owner's (a probe gives the
 * ids stored under the same 32 bits of hash, in turn).  The table is 64
 * shards picked by the hash's top bits, each an open-addressing array
 * (linear probing, at most three quarters full).  A look-up takes no
 * lock: it reads the shard's array and its slots with acquire loads.  An
 * insertion takes the shard's lock, probes again (another thread may
 * have put the key there meanwhile), and stores the slot with a release
 * store once the id's data is written.  A shard that grows gets a new
 * array; the old one is kept until every thread has been between two
 * pieces of work since (kp_ctab_quiet), for a look-up may still read
 * it (and, missing there what the new one holds, it then inserts
 * under the lock and finds it).
 */
#ifndef KP_CTAB_H
#define KP_CTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KP_CTAB_SHARDS 64
#define KP_CTAB_THREADS 4 /* the lanes: an id's top two bits */

struct kp_ctab_arr {
	size_t mask;
	uint64_t slot[]; /* 0: empty; else tag << 32 | id */
};

/* A shard: what look-ups read on a cache line, what insertions write
 * on the next (so that one thread's insertions do not take the line
 * from under the other's look-ups). */
struct kp_ctab_shard {
	struct kp_ctab_arr *arr;
	int lock __attribute__((aligned(64))); /* 1: held */
	size_t n; /* ids stored */
} __attribute__((aligned(64)));

struct kp_ctab {
	struct kp_ctab_shard sh[KP_CTAB_SHARDS];
	bool shared; /* several threads: take the locks */
};

/* The shard's 32 bits of h that a slot keeps (never 0); their low bits
 * are its place in the shard's array. */
static inline uint32_t
kp_ctab_tag(uint64_t h)
{
	return (uint32_t)(h >> 26) | 0x80000000u;
}

static inline struct kp_ctab_shard *
kp_ctab_shard_of(struct kp_ctab *t, uint64_t h)
{
	return &t->sh[h >> 58];
}

/* A probe: the ids stored under hash h, from its first slot on. */
struct kp_ctab_it {
	const uint64_t *slot;
	size_t mask, i;
	uint32_t tag;
};

static inline void
kp_ctab_first(struct kp_ctab *t, uint64_t h, struct kp_ctab_it *it)
{
	const struct kp_ctab_arr *a =
		__atomic_load_n(&kp_ctab_shard_of(t, h)->arr, __ATOMIC_ACQUIRE);

	it->tag = kp_ctab_tag(h);
	if (!a) {
		it->slot = NULL;
		it->mask = it->i = 0;
		return;
	}
	it->slot = a->slot;
	it->mask = a->mask;
	it->i = it->tag & a->mask;
}

/* Fetch the first slot of hash h into the cache. */
static inline void
kp_ctab_prefetch(struct kp_ctab *t, uint64_t h)
{
	/* (acquire: the array's mask is read) */
	const struct kp_ctab_arr *a =
		__atomic_load_n(&kp_ctab_shard_of(t, h)->arr, __ATOMIC_ACQUIRE);

	if (a)
		__builtin_prefetch(&a->slot[kp_ctab_tag(h) & a->mask]);
}

/* The next id stored under the probe's tag: true and *id, or false at
 * the empty slot that ends the probe. */
static inline bool
kp_ctab_next(struct kp_ctab_it *it, uint32_t *id)
{
	uint64_t v;

	if (!it->slot)
		return false;
	for (;;) {
		v = __atomic_load_n(&it->slot[it->i], __ATOMIC_ACQUIRE);
		if (!v)
			return false;
		it->i = (it->i + 1) & it->mask;
		if ((uint32_t)(v >> 32) == it->tag) {
			*id = (uint32_t)v;
			return true;
		}
	}
}

void kp_ctab_init(struct kp_ctab *t, bool shared);
/* The arrays freed (no thread uses the table any more). */
void kp_ctab_free(struct kp_ctab *t);
/* The shard of h locked, for an insertion; unlocked. */
void kp_ctab_lock(struct kp_ctab *t, uint64_t h);
void kp_ctab_unlock(struct kp_ctab *t, uint64_t h);
/* Under the lock of h's shard, after a probe under it found no equal
 * key: id stored under h (the shard grown first if it must). */
void kp_ctab_add(struct kp_ctab *t, uint64_t h, uint32_t id);
/* The slots of every shard (a table's memory is 8 bytes each). */
size_t kp_ctab_slots(const struct kp_ctab *t);

/*
 * The threads that use tables: each calls kp_ctab_busy when it starts a
 * piece of work (from then on it may hold a shard's array) and
 * kp_ctab_quiet when it ends one (it holds none); the arrays retired
 * before every thread was quiet once since are freed then.  Thread t is
 * 0 .. KP_CTAB_THREADS - 1.  kp_ctab_reclaim frees them all (no thread
 * is busy).
 */
void kp_ctab_busy(int t);
void kp_ctab_quiet(int t);
void kp_ctab_reclaim(void);

/*
 * A lane: an array that one thread appends to and any reads, in a
 * mapping of its own reserved for KP_LANE_MAX elements, whose pages are
 * the system's as they are written (nothing ever moves).  An element's
 * id is its lane in the top two bits and its index in the others.
 * Zero-initialise it, then kp_lane_init.
 */
#define KP_LANE_MAX (1u << 26)
struct kp_lane {
	/* what every thread reads, on a cache line of its own */
	char *base;
	size_t elem; /* bytes an element */
	/* what its thread writes, on the next */
	uint32_t n __attribute__((aligned(64))); /* elements */
	uint32_t lane; /* its number, 0 .. KP_CTAB_THREADS - 1 */
	size_t made; /* bytes of pages made ahead (kp_populate) */
} __attribute__((aligned(64)));

void kp_lane_init(struct kp_lane *l, uint32_t lane, size_t elem);
void kp_lane_free(struct kp_lane *l);
/* A new element, zeroed: its id in *id. */
void *kp_lane_add(struct kp_lane *l, uint32_t *id);

/* Element id of the lanes l[0 .. KP_CTAB_THREADS). */
static inline void *
kp_lane_at(const struct kp_lane *l, uint32_t id)
{
	const struct kp_lane *ln = &l[id >> 30];

	return ln->base + (size_t)(id & (KP_LANE_MAX - 1)) * ln->elem;
}

#endif /* KP_CTAB_H */
