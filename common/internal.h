/* internal.h - what common/ shares inside itself: the arena, uthash setup */
#ifndef KP_INTERNAL_H
#define KP_INTERNAL_H

#include <pthread.h>

#include "kp.h"

/* uthash with kp's faster hash, and a fatal error on out of memory. */
#define HASH_FUNCTION(keyptr, keylen, hashv) \
	((hashv) = (unsigned)kp_hash((keyptr), (keylen)))
#define uthash_fatal(msg) kp_die("out of memory")
#include <uthash.h>

/* Would the bare symbol s read back as something else?  Then quote it. */
bool kp_sym_needs_quote(const char *s);

/* A bump allocator: memory that lives until the process ends. */
void *kp_arena_alloc(size_t n);

/*
 * The interned strings and frames, each in tables (shards) picked by
 * their hash's top bits.  While kp_intern_shared is set (set and
 * cleared with one thread running: the halves of perfdata_conv.c and
 * conv_perf.c), two
 * threads intern at once, each shard under its own lock; a thread that
 * ends in the middle of it (a kp_die trap) lets go of the one it holds
 * (and of kp_frame_reread's) with kp_intern_release.
 */
#define KP_SHARDS 64
#define KP_SHARD_OF(h) ((h) >> 58)
struct kp_shard {
	struct kp_slots t;
	pthread_mutex_t mu;
};
#define KP_SHARDS_INIT                                                  \
	{                                                               \
		[0 ... KP_SHARDS - 1] = {                               \
			.mu = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP     \
		}                                                       \
	}
extern bool kp_intern_shared;
void kp_shard_lock(struct kp_shard *sh);
void kp_shard_unlock(struct kp_shard *sh);
void kp_intern_release(void);
/* kp_intern_release's part for kp_frame_reread's lock (frame.c). */
void kp_frame_reread_release(void);

#endif
