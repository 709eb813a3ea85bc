/*
 * stats.c - two-sample tests and the Benjamini-Hochberg adjustment
 * (stats.h).  Normal tails from erfc.
 */
#include <math.h>
#include <stdlib.h>

#include "kp.h"
#include "stats.h"

/* P(|Z| >= |z|) for a standard normal Z. */
static double
normal_two_sided(double z)
{
	return erfc(fabs(z) / sqrt(2.0));
}

double
kp_test_two_prop(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2)
{
	double p1, p2, pool, se;

	if (n1 == 0 || n2 == 0)
		return 1.0;
	p1 = (double)x1 / (double)n1;
	p2 = (double)x2 / (double)n2;
	pool = ((double)x1 + (double)x2) / ((double)n1 + (double)n2);
	se = sqrt(pool * (1.0 - pool) * (1.0 / (double)n1 + 1.0 / (double)n2));
	if (!(se > 0.0))
		return 1.0;
	return normal_two_sided((p2 - p1) / se);
}

double
kp_test_two_counts(uint64_t x1, uint64_t x2)
{
	double n = (double)x1 + (double)x2;

	if (n == 0.0)
		return 1.0;
	return normal_two_sided(((double)x2 - (double)x1) / sqrt(n));
}

static void
mean_var(const double *x, size_t n, double floor, double *mean, double *var)
{
	double m = 0.0, v = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	for (i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	v /= (double)(n - 1);
	*mean = m;
	*var = v > floor ? v : floor;
}

double
kp_test_runs(const double *x1, size_t n1, double floor1, const double *x2,
	     size_t n2, double floor2)
{
	double m1, v1, m2, v2, se2;

	if (n1 < 2 || n2 < 2)
		return 1.0;
	mean_var(x1, n1, floor1, &m1, &v1);
	mean_var(x2, n2, floor2, &m2, &v2);
	se2 = v1 / (double)n1 + v2 / (double)n2;
	if (!(se2 > 0.0))
		return m1 == m2 ? 1.0 : 0.0;
	return normal_two_sided((m2 - m1) / sqrt(se2));
}

double
kp_run_variance(const double *x, size_t n)
{
	double m, v;

	mean_var(x, n, 0.0, &m, &v);
	return v;
}

struct ranked {
	double p;
	size_t i;
};

static int
cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void
kp_adjust_bh(double *p, size_t n)
{
	struct ranked *r;
	double run = 1.0, q;
	size_t k;

	if (n == 0)
		return;
	r = kp_xmalloc(n * sizeof(*r));
	for (k = 0; k < n; k++)
		r[k] = (struct ranked){ p[k], k };
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* q(k) = min over j >= k of p(j) * n / j, ranks from 1 */
	for (k = n; k-- > 0;) {
		q = r[k].p * (double)n / (double)(k + 1);
		if (q < run)
			run = q;
		p[r[k].i] = run;
	}
	free(r);
}
