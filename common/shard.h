/*
 * shard.h - the tables that two threads fill at once, in shards, each
 * shard under a lock word (shard.c): the interned strings (strtab.c)
 * and frames (frame.c).
 */
#ifndef KP_SHARD_H
#define KP_SHARD_H

#include <stdbool.h>

#include "util.h"

/*
 * The interned strings and frames, each in tables (shards) picked by
 * their hash's top bits.  While kp_intern_shared is set (set and
 * cleared with one thread running: conv_perf.c's halves,
 * perfdata_conv.c's naming thread), two threads intern at once, each
 * shard under its own lock; a thread that ends in the middle of it (a
 * kp_die trap) lets go of the one it holds with kp_intern_release (and
 * of kp_frame_reread's too with kp_frame_release).
 */
#define KP_SHARDS 64
#define KP_SHARD_OF(h) ((h) >> 58)
/*
 * A shard's lock is a word taken with one atomic exchange and let go
 * with a store: its hold is a probe of one table, and a pthread mutex
 * (two atomic operations and two calls for each of the 578,000 strings
 * and frames perf2kp interns on the check capture) took 7% of its time.
 * Each shard on its own cache line: the two threads take neighbours.
 * A thread that finds it held spins, then yields (kp_shard_wait).
 */
struct kp_shard {
	struct kp_slots t;
	int lock; /* 1: held */
} __attribute__((aligned(64)));
extern bool kp_intern_shared;
extern _Thread_local struct kp_shard *kp_shard_held;
void kp_shard_wait(struct kp_shard *sh);
static inline void
kp_shard_lock(struct kp_shard *sh)
{
	if (kp_intern_shared) {
		if (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE))
			kp_shard_wait(sh);
		kp_shard_held = sh;
	}
}
static inline void
kp_shard_unlock(struct kp_shard *sh)
{
	if (kp_intern_shared) {
		kp_shard_held = NULL;
		__atomic_store_n(&sh->lock, 0, __ATOMIC_RELEASE);
	}
}

void kp_intern_release(void);

#endif
