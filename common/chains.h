/*
 * chains.h - perf callchains to kp stacks: samples are aggregated as
 * they come with their frames still raw addresses, and named once, at
 * the end, when every mmap record has been read (kp-sample; the
 * perf.data reader can feed it the same way).
 *
 *	struct kp_chains *c = kp_chains_new(procs, KP_CHAINS_USER);
 *	... for each sample:
 *	kp_chains_add(c, &sample, 1);
 *	... at the end:
 *	struct kp_agg *agg = kp_chains_resolve(c, resolver);
 *
 * A callchain is perf's: u64 addresses, leaf first, with PERF_CONTEXT_*
 * markers before the kernel and the user part.  The first address of
 * each part is where the CPU was (the sampled ip, or the user pc the
 * kernel was entered from); every other one is a return address and is
 * named by its call, pc - 1 (KP_SYMTAB_RETADDR), as kp-addr2sym names
 * it.  Without KP_CHAINS_USER a sample taken in user mode counts under
 * one KP_USER_FRAME frame and user addresses are dropped.
 */
#ifndef KP_CHAINS_H
#define KP_CHAINS_H

#include <stdint.h>

#include "kp.h"
#include "perfev.h"
#include "procs.h"
#include "resolve.h"

struct kp_chains;

enum {
	KP_CHAINS_USER = 1 << 0, /* user frames, named by procs' mappings */
	KP_CHAINS_COMM = 1 << 1, /* the process name as the outermost frame */
	KP_CHAINS_PID = 1 << 2,  /* the same as "comm-pid" */
};

/* procs: the process model the samples' pids are looked up in (needed
 * with any flag; NULL without). */
struct kp_chains *kp_chains_new(struct kp_procs *procs, unsigned flags);
void kp_chains_free(struct kp_chains *c);

/* Add count of the sample's callchain (a sample without one: its ip).
 * Returns -1 if the stack's count would overflow 64 bits. */
int kp_chains_add(struct kp_chains *c, const struct kp_perfev_sample *s,
		  uint64_t count);

/*
 * The same with named frames outside it (kp-sample --data's mapping,
 * --off-cpu's task state): outer[0] outermost, after the process name.
 */
int kp_chains_add_outer(struct kp_chains *c, const struct kp_perfev_sample *s,
			uint64_t count, const struct kp_frame *const *outer,
			size_t nouter);

/*
 * The stacks with their frames named by r, the most frequent first: a
 * new aggregate the caller frees (kp_agg_free).  Exits 2 if two stacks
 * that name the same frames add up past 2^64.
 */
struct kp_agg *kp_chains_resolve(struct kp_chains *c, struct kp_resolver *r);

#endif /* KP_CHAINS_H */
