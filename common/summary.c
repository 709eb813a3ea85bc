/*
 * summary.c - the numbers kp-stat reports (summary.h).
 */
#include <stdlib.h>
#include <string.h>

#include "summary.h"

void
kp_summary_bucket(size_t i, size_t *lo, size_t *hi)
{
	*lo = (size_t)1 << i;
	*hi = i + 1 < KP_DEPTH_BUCKETS ? ((size_t)1 << (i + 1)) - 1 : SIZE_MAX;
}

static size_t
bucket_of(size_t depth)
{
	size_t i = 0;

	while (i + 1 < KP_DEPTH_BUCKETS && depth >= ((size_t)2 << i))
		i++;
	return i;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

struct depth {
	size_t n;
	uint64_t count;
};

static int
cmp_depth(const void *a, const void *b)
{
	const struct depth *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

/* The depth below which a share q of the samples lies. */
static size_t
quantile(const struct depth *d, size_t n, uint64_t total, double q)
{
	double want = q * (double)total, cum = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		cum += (double)d[i].count;
		if (cum >= want)
			return d[i].n;
	}
	return n ? d[n - 1].n : 0;
}

static void
depths(struct kp_summary *s, struct depth *d, size_t n)
{
	double sum = 0.0;
	size_t i;

	qsort(d, n, sizeof(*d), cmp_depth);
	for (i = 0; i < n; i++)
		sum += (double)d[i].n * (double)d[i].count;
	if (!n || !s->samples)
		return;
	s->depth_min = d[0].n;
	s->depth_max = d[n - 1].n;
	s->depth_mean = sum / (double)s->samples;
	s->depth_median = quantile(d, n, s->samples, 0.5);
	s->depth_p90 = quantile(d, n, s->samples, 0.9);
	s->depth_p99 = quantile(d, n, s->samples, 0.99);
}

void
kp_summary_make(struct kp_summary *s, const struct kp_agg *agg,
		uint64_t records, size_t max_stack)
{
	size_t i, j, n = kp_agg_len(agg);
	struct depth *d = kp_xmalloc((n ? n : 1) * sizeof(*d));
	const struct kp_stack *st;
	const struct kp_frame *root;
	bool kernel, user;
	uint64_t c;

	memset(s, 0, sizeof(*s));
	s->records = records;
	s->stacks = n;
	s->max_stack = max_stack;
	for (i = 0; i < n; i++) {
		st = kp_agg_get(agg, i);
		c = st->count;
		s->samples = sat_add(s->samples, c);
		d[i] = (struct depth){ st->n, c };
		s->depth_hist[bucket_of(st->n ? st->n : 1)] += c;
		kernel = user = false;
		for (j = 0; j < st->n; j++) {
			if (kp_frame_is_kernel(st->frames[j]))
				kernel = true;
			else
				user = true;
			if (!st->frames[j]->sym)
				s->unknown_frames = sat_add(s->unknown_frames, c);
		}
		s->frames = sat_add(s->frames, (uint64_t)st->n * c);
		if (st->n == 0) {
			s->empty += c;
			continue;
		}
		if (st->n + kernel + user >= max_stack)
			s->truncated += c;
		root = st->frames[st->n - 1];
		if (!root->sym && (root->flags & KP_F_ADDR))
			s->root_address += c;
		else if (!root->sym)
			s->root_unknown += c;
		if (kernel && user)
			s->mixed += c;
		else if (kernel)
			s->kernel_only += c;
		else
			s->user_only += c;
		s->context[kp_context_of(st->frames, st->n)] += c;
	}
	depths(s, d, n);
	free(d);
}
