/*
 * fuzz_profile.c - libFuzzer target for common/profile.c.
 *
 * The input is read as kp (through the reader, as kp-inclusive reads
 * it) under each key (--by) with and without modules, and the counting
 * rules are checked against their definitions:
 *  - exclusive counts add up to the total, and each inclusive count is
 *    at least the exclusive one and at most the total;
 *  - a key's inclusive count is the sum of the stacks it occurs in,
 *    recounted here the slow way;
 *  - the callee tree of a key has the key's inclusive count at its
 *    root, and every node's total is its self plus its children's;
 *    the caller tree too; the whole top-down tree holds the total;
 *  - each call edge's count is at most its caller's and its callee's
 *    inclusive count;
 *  - the keys in report order (kp_profile_sorted), by its definition:
 *    counts from the greatest, then names and modules bytewise.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_tree(const struct kp_tree *t)
{
	size_t i;
	uint64_t sum;
	uint32_t c;

	for (i = 0; i < kp_tree_len(t); i++) {
		const struct kp_tnode *nd = kp_tree_node(t, (uint32_t)i);

		sum = nd->self;
		for (c = nd->child; c != KP_KEY_NONE;
		     c = kp_tree_node(t, c)->next)
			sum += kp_tree_node(t, c)->total;
		if (sum != nd->total)
			abort();
	}
}

/* a and b compared as bytes (unsigned), NULL before any text */
static int
cmp_text(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a,
			    *y = (const unsigned char *)b;

	if (!x || !y)
		return (x != NULL) - (y != NULL);
	for (; *x && *x == *y; x++, y++)
		;
	return (*x > *y) - (*x < *y);
}

/*
 * kp_profile_sorted's order, by its definition: one count (inclusive,
 * or exclusive with by_excl) from the greatest, then the other, then
 * the name and the module bytewise; each key once.
 */
static void
check_sorted(const struct kp_profile *p, bool by_excl)
{
	size_t n = kp_profile_len(p), i;
	uint32_t *ids = kp_profile_sorted(p, by_excl);
	unsigned char *seen = calloc(n ? n : 1, 1);
	const struct kp_pkey *x, *y;
	uint64_t x1, x2, y1, y2;
	int c;

	if (!seen)
		abort();
	for (i = 0; i < n; i++) {
		if (ids[i] >= n || seen[ids[i]])
			abort(); /* not a permutation */
		seen[ids[i]] = 1;
	}
	for (i = 0; i + 1 < n; i++) {
		x = kp_profile_get(p, ids[i]);
		y = kp_profile_get(p, ids[i + 1]);
		x1 = by_excl ? x->excl : x->incl;
		x2 = by_excl ? x->incl : x->excl;
		y1 = by_excl ? y->excl : y->incl;
		y2 = by_excl ? y->incl : y->excl;
		if (x1 != y1) {
			if (x1 < y1)
				abort();
			continue;
		}
		if (x2 != y2) {
			if (x2 < y2)
				abort();
			continue;
		}
		c = cmp_text(x->name, y->name);
		if (!c)
			c = cmp_text(x->module, y->module);
		if (c > 0)
			abort();
	}
	free(seen);
	free(ids);
}

static void
check(struct kp_agg *agg, enum kp_by by, bool mods)
{
	struct kp_profile *p = kp_profile_new(by, mods);
	uint64_t total = kp_agg_total(agg), excl = 0, slow;
	size_t i, j, k, n, ne;
	struct kp_tree *t;
	struct kp_pedge *e;

	kp_profile_add_agg(p, agg);
	if (kp_profile_total(p) != total)
		abort();
	n = kp_profile_len(p);
	for (i = 0; i < n; i++) {
		const struct kp_pkey *key = kp_profile_get(p, (uint32_t)i);

		if (key->excl > key->incl || key->incl > total || !key->name)
			abort();
		excl += key->excl;
		slow = 0;
		for (j = 0; j < kp_agg_len(agg); j++) {
			const struct kp_stack *st = kp_agg_get(agg, j);

			for (k = 0; k < st->n; k++)
				if (kp_profile_key(p, st->frames[k]) == i)
					break;
			if (k < st->n)
				slow += st->count;
		}
		if (slow != key->incl)
			abort();
		if (i < 8) {
			t = kp_profile_tree(p, agg, KP_TREE_CALLEES, (uint32_t)i, 0);
			kp_tree_sort(t, p);
			if (kp_tree_node(t, 0)->total != key->incl)
				abort();
			check_tree(t);
			kp_tree_free(t);
			t = kp_profile_tree(p, agg, KP_TREE_CALLERS, (uint32_t)i, 2);
			if (kp_tree_node(t, 0)->total != key->incl)
				abort();
			kp_tree_free(t);
		}
	}
	if (excl != total)
		abort();
	t = kp_profile_tree(p, agg, KP_TREE_CALLEES, KP_KEY_NONE, 0);
	if (kp_tree_node(t, 0)->total != total)
		abort();
	check_tree(t);
	kp_tree_free(t);
	e = kp_profile_edges(p, agg, &ne);
	for (i = 0; i < ne; i++)
		if (e[i].count > kp_profile_get(p, e[i].caller)->incl ||
		    e[i].count > kp_profile_get(p, e[i].callee)->incl)
			abort();
	free(e);
	check_sorted(p, false);
	check_sorted(p, true);
	kp_profile_free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/kp-fuzz-profile-XXXXXX";
	struct kp_agg *agg = kp_agg_new();
	struct kp_reader *rd;
	const struct kp_stack *st;
	uint64_t sum = 0;
	bool sum_ok = true;
	size_t i, j;
	int fd = mkstemp(path), by;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	kp_progname = "fuzz_profile";
	kp_quiet = true;
	kp_refuse_foreign = false; /* any bytes: read on */
	kp_agg_read(agg, path);
	/* an independent recount of the records: the same total */
	rd = kp_reader_open(path);
	while ((st = kp_reader_next(rd)) != NULL) {
		if (sum > UINT64_MAX - st->count)
			sum_ok = false;
		sum += st->count;
	}
	kp_reader_close(rd);
	unlink(path);
	if (sum_ok && kp_agg_total_ok(agg) && sum != kp_agg_total(agg))
		abort();
	/* identical stacks merged: no two entries are equal */
	if (kp_agg_len(agg) < 500)
		for (i = 0; i < kp_agg_len(agg); i++)
			for (j = i + 1; j < kp_agg_len(agg); j++) {
				const struct kp_stack *x = kp_agg_get(agg, i);
				const struct kp_stack *y = kp_agg_get(agg, j);

				if (x->n == y->n &&
				    memcmp(x->frames, y->frames,
					   x->n * sizeof(*x->frames)) == 0)
					abort();
			}
	/* keep the slow recount cheap: totals must not overflow either */
	if (kp_agg_total_ok(agg) && kp_agg_len(agg) < 2000)
		for (by = KP_BY_FUNCTION; by <= KP_BY_OFFSET; by++) {
			check(agg, (enum kp_by)by, false);
			check(agg, (enum kp_by)by, true);
		}
	kp_agg_free(agg);
	return 0;
}
