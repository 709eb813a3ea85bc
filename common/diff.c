/*
 * diff.c - per-key differences between two sides of profiles, with a
 * p-value adjusted for the number of rows (diff.h has the rules).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "stats.h"

/* The rows being built: one per distinct (name, module). */
struct build {
	struct kp_diff *d;
	size_t cap, runs;
	uint64_t *counts; /* counts[row * runs + run] */
	struct kp_slots index;
};

static uint64_t
key_hash(const char *name, const char *module)
{
	const void *two[2] = { name, module };

	return kp_hash(two, sizeof(two));
}

static struct kp_drow *
find(const struct kp_diff *d, const struct kp_slots *t, const char *name,
     const char *module, struct kp_slot **free_slot)
{
	uint64_t h = key_hash(name, module);
	size_t j;
	struct kp_drow *r;

	if (!t->cap)
		return NULL;
	for (j = h & (t->cap - 1); t->tab[j].p; j = (j + 1) & (t->cap - 1)) {
		r = &d->rows[(uintptr_t)t->tab[j].p - 1];
		if (t->tab[j].hash == h && r->k->name == name &&
		    r->k->module == module)
			return r;
	}
	if (free_slot)
		*free_slot = &t->tab[j];
	return NULL;
}

static size_t
row_of(struct build *bd, const struct kp_pkey *k)
{
	struct kp_slot *s;
	struct kp_drow *r;
	size_t i;

	kp_slots_reserve(&bd->index, 256);
	r = find(bd->d, &bd->index, k->name, k->module, &s);
	if (r)
		return (size_t)(r - bd->d->rows);
	if (bd->d->n == bd->cap) {
		bd->cap = bd->cap ? bd->cap * 2 : 256;
		bd->d->rows = kp_xrealloc(bd->d->rows,
					  bd->cap * sizeof(*bd->d->rows));
		bd->counts = kp_xrealloc(bd->counts, bd->cap * bd->runs *
							     sizeof(*bd->counts));
	}
	i = bd->d->n++;
	memset(&bd->d->rows[i], 0, sizeof(bd->d->rows[i]));
	bd->d->rows[i].k = k;
	memset(&bd->counts[i * bd->runs], 0, bd->runs * sizeof(*bd->counts));
	s->hash = key_hash(k->name, k->module);
	s->p = (void *)(uintptr_t)(i + 1);
	bd->index.n++;
	return i;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* One run's values of row i: shares (percent) or counts. */
static void
run_values(const struct build *bd, struct kp_profile *const *ps, size_t first,
	   size_t n, size_t i, bool absolute, double *x, double *floor)
{
	double var = 0.0, v;
	size_t j;

	for (j = 0; j < n; j++) {
		uint64_t c = bd->counts[i * bd->runs + first + j];
		uint64_t t = kp_profile_total(ps[j]);

		if (absolute) {
			x[j] = (double)c;
			var += (double)c; /* Poisson */
		} else {
			v = t ? (double)c / (double)t : 0.0;
			x[j] = 100.0 * v;
			if (t)
				var += 1e4 * v * (1.0 - v) / (double)t;
		}
	}
	*floor = var / (double)n; /* a run's sampling variance, on average */
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/*
 * The dispersion of the runs: the median over rows and sides of the
 * variance between runs against the sampling variance, at least 1.
 */
static double
dispersion(const struct build *bd, struct kp_profile *const *a, size_t na,
	   struct kp_profile *const *b, size_t nb, bool absolute, double *xa,
	   double *xb)
{
	double *ratio = kp_xmalloc((2 * bd->d->n + 1) * sizeof(*ratio));
	double fa, fb, phi = 1.0;
	size_t i, n = 0;

	for (i = 0; i < bd->d->n; i++) {
		run_values(bd, a, 0, na, i, absolute, xa, &fa);
		run_values(bd, b, na, nb, i, absolute, xb, &fb);
		if (fa > 0.0)
			ratio[n++] = kp_run_variance(xa, na) / fa;
		if (fb > 0.0)
			ratio[n++] = kp_run_variance(xb, nb) / fb;
	}
	if (n) {
		qsort(ratio, n, sizeof(*ratio), cmp_double);
		phi = n % 2 ? ratio[n / 2]
			    : (ratio[n / 2 - 1] + ratio[n / 2]) / 2.0;
	}
	free(ratio);
	return phi > 1.0 ? phi : 1.0;
}

struct kp_diff *
kp_diff_new(struct kp_profile *const *a, size_t na,
	    struct kp_profile *const *b, size_t nb, bool excl, bool absolute)
{
	struct build bd = { .d = kp_xcalloc(1, sizeof(*bd.d)),
			    .runs = na + nb };
	struct kp_diff *d = bd.d;
	double *p, *xa, *xb, fa, fb, phi = 1.0;
	size_t r, i, row;
	bool runs = na >= 2 && nb >= 2;

	for (r = 0; r < na + nb; r++) {
		struct kp_profile *pr = r < na ? a[r] : b[r - na];

		if (r < na)
			d->ta = sat_add(d->ta, kp_profile_total(pr));
		else
			d->tb = sat_add(d->tb, kp_profile_total(pr));
		for (i = 0; i < kp_profile_len(pr); i++) {
			const struct kp_pkey *k = kp_profile_get(pr, (uint32_t)i);

			row = row_of(&bd, k);
			bd.counts[row * bd.runs + r] = excl ? k->excl : k->incl;
		}
	}
	p = kp_xmalloc((d->n ? d->n : 1) * sizeof(*p));
	xa = kp_xmalloc(na * sizeof(*xa));
	xb = kp_xmalloc(nb * sizeof(*xb));
	if (runs)
		phi = dispersion(&bd, a, na, b, nb, absolute, xa, xb);
	for (i = 0; i < d->n; i++) {
		struct kp_drow *w = &d->rows[i];

		for (r = 0; r < bd.runs; r++) {
			if (r < na)
				w->a = sat_add(w->a, bd.counts[i * bd.runs + r]);
			else
				w->b = sat_add(w->b, bd.counts[i * bd.runs + r]);
		}
		w->pa = d->ta ? 100.0 * (double)w->a / (double)d->ta : 0.0;
		w->pb = d->tb ? 100.0 * (double)w->b / (double)d->tb : 0.0;
		w->d = absolute ? (double)w->b - (double)w->a : w->pb - w->pa;
		if (runs) {
			run_values(&bd, a, 0, na, i, absolute, xa, &fa);
			run_values(&bd, b, na, nb, i, absolute, xb, &fb);
			p[i] = kp_test_runs(xa, na, phi * fa, xb, nb, phi * fb);
		} else if (absolute) {
			p[i] = kp_test_two_counts(w->a, w->b);
		} else {
			p[i] = kp_test_two_prop(w->a, d->ta, w->b, d->tb);
		}
	}
	kp_adjust_bh(p, d->n);
	for (i = 0; i < d->n; i++)
		d->rows[i].p_value = p[i];
	free(p);
	free(xa);
	free(xb);
	free(bd.counts);
	d->index = bd.index; /* kept for kp_diff_find */
	return d;
}

const struct kp_drow *
kp_diff_find(const struct kp_diff *d, const char *name, const char *module)
{
	return find(d, &d->index, name, module, NULL);
}

void
kp_diff_free(struct kp_diff *d)
{
	if (!d)
		return;
	free(d->rows);
	kp_slots_free(&d->index);
	free(d);
}
