/*
 * summary.h - what a profile holds and whether to trust it (kp-stat):
 * its samples, records and distinct stacks, the depth of its stacks,
 * the stacks cut at the kernel's maximum depth, the stacks that do not
 * unwind to a known root, kernel and user shares, execution contexts.
 * Modules come from a kp_profile by module (profile.h).
 */
#ifndef KP_SUMMARY_H
#define KP_SUMMARY_H

#include "context.h"
#include "kp.h"

/* Depth buckets: 1, 2-3, 4-7, ..., 64-127, 128 and up. */
#define KP_DEPTH_BUCKETS 8

struct kp_summary {
	uint64_t samples;      /* the total of the counts */
	uint64_t records;      /* records read (before identical ones merge) */
	uint64_t stacks;       /* distinct stacks */
	uint64_t frames;       /* frames, each weighted by its samples */
	uint64_t unknown_frames; /* of them without a symbol (weighted) */
	/* depth in frames, weighted by samples */
	size_t depth_min, depth_max, depth_median, depth_p90, depth_p99;
	double depth_mean;
	uint64_t depth_hist[KP_DEPTH_BUCKETS];
	size_t max_stack;      /* perf_event_max_stack assumed */
	uint64_t truncated;    /* samples of stacks cut at max_stack */
	uint64_t root_unknown; /* outermost frame: no symbol, no address */
	uint64_t root_address; /* outermost frame: a bare address */
	uint64_t kernel_only, user_only, mixed, empty;
	uint64_t context[KP_CTX_COUNT];
};

/*
 * Summarize the stacks of agg (records: how many records were read into
 * it), with max_stack the kernel's perf_event_max_stack: a stack is
 * truncated when its frames and the callchain's context markers (one for
 * the kernel part, one for the user part) reach it.
 */
void kp_summary_make(struct kp_summary *s, const struct kp_agg *agg,
		     uint64_t records, size_t max_stack);
/* The first and last depth of bucket i. */
void kp_summary_bucket(size_t i, size_t *lo, size_t *hi);

#endif /* KP_SUMMARY_H */
