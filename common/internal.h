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

#include "shard.h"

/* kp_intern_release, and kp_frame_reread's lock let go too (frame.c):
 * what a thread that ends in the middle of naming frames holds. */
void kp_frame_release(void);

#endif
