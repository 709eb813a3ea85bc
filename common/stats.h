/*
 * stats.h - the tests that tell a change in a profile from sampling
 * noise (used by the differential reports, diff.c).
 *
 * Every function returns a two-sided p-value in [0, 1]: the probability
 * of a difference at least as large as the one seen if both sides were
 * drawn from the same profile.
 */
#ifndef KP_STATS_H
#define KP_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Two proportions: x1 of n1 samples against x2 of n2 (a function's
 * inclusive samples of each side's total), the pooled two-proportion
 * z-test.  1 when both proportions are 0 or both 1 (nothing can differ).
 */
double kp_test_two_prop(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2);

/*
 * Two counts from equal exposures (two runs of the same length): the
 * counts as Poisson, tested as x1 of x1 + x2 against one half (the
 * normal approximation of the conditional binomial test).  1 when both
 * are 0.
 */
double kp_test_two_counts(uint64_t x1, uint64_t x2);

/*
 * Two groups of runs (n1, n2 >= 2): the difference of the means of
 * their values x1, x2 (each run's share, or count), over a standard
 * error from each group's variance between runs, taken as at least
 * floor1 (floor2): the sampling variance of one run scaled by the
 * dispersion seen over all rows (diff.c), so that runs that happen to
 * agree do not make the noise smaller than sampling alone makes it, and
 * a row that varies more than the rest is judged by its own variance.
 * The ratio is taken as normal.  1 when the standard error is 0 and the
 * means are equal.
 */
double kp_test_runs(const double *x1, size_t n1, double floor1,
		    const double *x2, size_t n2, double floor2);
/* The sample variance of x[0..n), n >= 2. */
double kp_run_variance(const double *x, size_t n);

/*
 * Benjamini-Hochberg: replace p[0..n) by their adjusted values (the
 * false discovery rate at which each would be significant among n
 * tests), in place.
 */
void kp_adjust_bh(double *p, size_t n);

#endif /* KP_STATS_H */
