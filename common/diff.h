/*
 * diff.h - the difference between two sides of profiles, per key, and
 * whether it is more than sampling noise (kp-inclusive A B, kp-flame's
 * differential colours).
 *
 * A side is one profile or several runs of the same workload.  Each key
 * (name and module) of either side is a row: its samples on each side
 * (inclusive, or exclusive), as shares of the side's total and as
 * counts, the difference in points of share (normalized, the default)
 * or in samples (absolute), and a p-value:
 *  - one run a side, normalized: the two-proportion z-test of the
 *    key's samples out of each side's total (a sample holds the key or
 *    not, so each side is a binomial draw);
 *  - one run a side, absolute: the two counts as Poisson of equal
 *    exposure (kp_test_two_counts);
 *  - several runs a side (at least two each): the difference of the
 *    mean shares (or counts) of the runs over its standard error from
 *    the variance between the runs (kp_test_runs), each side's taken
 *    as at least the binomial (Poisson) sampling variance of a run times
 *    the dispersion: the median over all rows of the variance between
 *    runs against the sampling variance, at least 1.  So the noise
 *    between runs counts, not only the noise inside one, and a function
 *    that varies more than the others is judged by its own variance.
 * The p-values are then adjusted for the number of rows compared
 * (Benjamini-Hochberg, kp_adjust_bh): a row is significant when its
 * adjusted p-value is under alpha.
 */
#ifndef KP_DIFF_H
#define KP_DIFF_H

#include "profile.h"

struct kp_drow {
	const struct kp_pkey *k; /* a key with the row's name and module */
	uint64_t a, b;		 /* samples before and after (all runs) */
	double pa, pb;		 /* their percentages of the sides' totals */
	double d;		 /* pb - pa, or b - a when absolute */
	double p_value;		 /* adjusted for the number of rows */
};

struct kp_diff {
	struct kp_drow *rows;
	size_t n;
	uint64_t ta, tb; /* the sides' totals (all runs) */
	struct kp_slots index; /* (name, module) -> row + 1 */
};

/*
 * The rows of a[0..na) against b[0..nb) (profiles of one key choice),
 * counting exclusive samples if excl, else inclusive; differences in
 * samples if absolute.  Rows in order of first appearance.  The sum of a
 * key's samples over runs saturates.
 */
struct kp_diff *kp_diff_new(struct kp_profile *const *a, size_t na,
			    struct kp_profile *const *b, size_t nb, bool excl,
			    bool absolute);
/* The row of key (name, module), both interned; NULL if neither side
 * has it. */
const struct kp_drow *kp_diff_find(const struct kp_diff *d, const char *name,
				   const char *module);
void kp_diff_free(struct kp_diff *d);

#endif /* KP_DIFF_H */
