/*
 * idagg.h - an aggregation of stacks of frame ids that several threads
 * fill at once (idagg.c): perf2kp's stacks of perf script text.
 *
 * A frame is a record of 24 bytes: its address, its offset (32 bits),
 * its function (a symbol and a module, interned once as a function id)
 * and flags; a frame the record cannot hold (a source file, a size, an
 * offset past 32 bits) is a kp_frame of its own, which the record names
 * (KP_IDF_EXT).  Each distinct frame is one record, found by what it is
 * (kp_id_frame), so a stack is an array of 32-bit record ids that hashes
 * and compares as plain memory.  A record also has two words for its
 * maker (key and frame): perf2kp's records are the frame lines of its
 * input too, found by the line's address, each naming its frame.
 *
 * Each thread adds records and stacks in a lane of its own (0, 1, ...),
 * and finds the others' through tables that take no lock to read
 * (ctab.h).  A stack's count is added to atomically, and the stack
 * keeps the least "position" it was added at (the caller's order of its
 * input: each thread reads parts of it), so that the stacks are written
 * in order of their first sight in the input whatever the threads did.
 * Memory grows with the distinct frames and stacks: 24 bytes a frame and
 * a stack, 4 a stack's frame, 8 a table slot.
 */
#ifndef KP_IDAGG_H
#define KP_IDAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctab.h"
#include "frame.h"
#include "util.h"

struct kp_agg;

/* A record's fun word: the function's id (or, with KP_IDF_EXT, the
 * kp_frame's), then flags. */
#define KP_IDF_ADDR 0x01000000u	  /* addr is known (KP_F_ADDR) */
#define KP_IDF_OFF 0x02000000u	  /* off is known (KP_F_OFF) */
#define KP_IDF_INLINE 0x04000000u /* KP_F_INLINE */
#define KP_IDF_EXT 0x08000000u	  /* a kp_frame the record cannot hold */
#define KP_IDF_FRAME 0x10000000u  /* the record is a frame (not only its
				   * maker's key for one) */
#define KP_ID_FUN_MASK 0x00ffffffu
#define KP_ID_IDENT (KP_ID_FUN_MASK | KP_IDF_ADDR | KP_IDF_OFF | \
		     KP_IDF_INLINE | KP_IDF_EXT)
#define KP_ID_NONE 0xffffffffu /* no record */
#define KP_ID_EVENTS 4096      /* events a stack can be of */
#define KP_ID_SELF 0xfffffffeu /* frame word: the record itself */

struct kp_idrec {
	uint64_t addr;
	uint32_t off;
	uint32_t fun;
	uint32_t key;	/* the maker's */
	uint32_t frame; /* the maker's (KP_ID_SELF: this record) */
};

/* A function: a symbol and a module, interned (either may be NULL). */
struct kp_idfun {
	const char *sym, *module;
};

/* What of an aggregation its readers see (the first member of its
 * struct, idagg.c): the records, by lane. */
struct kp_idagg_recs {
	struct kp_lane recl[KP_CTAB_THREADS];
};
struct kp_idagg;

/* An empty aggregation for `lanes` threads (1 .. KP_CTAB_THREADS). */
struct kp_idagg *kp_idagg_new(int lanes);
void kp_idagg_free(struct kp_idagg *a);
/* Several threads from now on (true) or one (false): the locks. */
void kp_idagg_shared(struct kp_idagg *a, bool shared);

/* The record of id, its function. */
static inline const struct kp_idrec *
kp_id_rec(const struct kp_idagg *a, uint32_t id)
{
	return kp_lane_at(((const struct kp_idagg_recs *)(const void *)a)->recl,
			  id);
}
const struct kp_idfun *kp_id_fun(const struct kp_idagg *a, uint32_t fun);
/* The kp_frame of an EXT record. */
const struct kp_frame *kp_id_ext(const struct kp_idagg *a, uint32_t fun);

/*
 * The record of frame f (its strings interned, as kp_conv_intern leaves
 * a frame), made in lane `lane` if it is new.  It takes the lock of its
 * hash in the record table: the caller holds none.
 */
uint32_t kp_id_frame(struct kp_idagg *a, int lane, const struct kp_frame *f);
/* The record of the frame r is (kp_id_make's), made if new. */
uint32_t kp_id_frame_rec(struct kp_idagg *a, int lane, struct kp_idrec *r);
/* The function of sym and module (interned strings, or NULL). */
uint32_t kp_id_fun_of(struct kp_idagg *a, int lane, const char *sym,
		      const char *module);
/* The record f would be (not EXT): false if it needs a kp_frame.  Its
 * key and frame words are KP_ID_NONE. */
bool kp_id_make(struct kp_idagg *a, int lane, const struct kp_frame *f,
		struct kp_idrec *r);
/* The frame an id names, as a kp_frame (interned). */
const struct kp_frame *kp_id_kpframe(struct kp_idagg *a, uint32_t id);

/*
 * The record table, for a maker that finds its own keys in it: a frame
 * with an address is under kp_id_addr_hash of it (the maker's keys of
 * one address go there too), any other under kp_id_hash.
 */
struct kp_ctab *kp_id_table(struct kp_idagg *a);
static inline uint64_t
kp_id_addr_hash(uint64_t addr)
{
	return kp_mix(addr ^ 0x9e3779b97f4a7c15ull, 0xa0761d6478bd642full);
}
uint64_t kp_id_hash(const struct kp_idrec *r);
/* The frame record of r's identity under hash h, or KP_ID_NONE; with
 * h's lock held (or to look without one). */
uint32_t kp_id_find(struct kp_idagg *a, uint64_t h, const struct kp_idrec *r);
/* Under h's lock: r stored as a new record under h, its id returned. */
uint32_t kp_id_add(struct kp_idagg *a, int lane, uint64_t h,
		   const struct kp_idrec *r);

/*
 * Stacks.  A stack is ids[0 .. n) (leaf first) of event ev (the
 * caller's number, < KP_ID_EVENTS), counted weight times, first seen
 * at pos (< 2^52).
 * They go in late, each when a few more are given (its slot and entry
 * are fetched from memory meanwhile): kp_id_stacks_flush adds the rest.
 */
void kp_id_stack(struct kp_idagg *a, int lane, unsigned ev,
		 const uint32_t *ids, size_t n, uint64_t weight, uint64_t pos);
void kp_id_stacks_flush(struct kp_idagg *a, int lane);
/*
 * The same at once: the stack's entry returned, for a caller that knows
 * the same stack comes again (a cached block of lines under the same
 * process frame) to count it with kp_id_stack_again, without hashing
 * its frames.  The entry stays valid as long as a does.
 */
struct kp_idstk;
const struct kp_idstk *kp_id_stack_now(struct kp_idagg *a, int lane,
				       unsigned ev, const uint32_t *ids,
				       size_t n, uint64_t weight,
				       uint64_t pos);
void kp_id_stack_again(struct kp_idagg *a, int lane,
		       const struct kp_idstk *st, uint64_t weight,
		       uint64_t pos);
/* A count or total of event ev passed 2^64. */
bool kp_id_overflowed(const struct kp_idagg *a, unsigned ev);
/* Event ev has stacks. */
bool kp_id_has(const struct kp_idagg *a, unsigned ev);

/* Each stack of event ev in order of first sight, to fn (the frames as
 * records' ids). */
void kp_id_each(struct kp_idagg *a, unsigned ev,
		void (*fn)(void *arg, const uint32_t *ids, size_t n,
			   uint64_t count),
		void *arg);
/* The stacks of event ev written as kp (the metadata, the records, the
 * final "!"), as kp_write_agg writes the same stacks. */
void kp_id_write(FILE *out, struct kp_idagg *a, unsigned ev);
/* The stacks of event ev added to agg, in order. */
void kp_id_to_agg(struct kp_idagg *a, unsigned ev, struct kp_agg *agg);

#endif /* KP_IDAGG_H */
