/* test_folded.c - unit tests of common/folded.c: the lines it writes are
 * those of making each stack's text, sorting the texts bytewise (a text
 * before any longer one it begins) and merging equal ones, whatever the
 * names (prefixes of each other followed by bytes below and above ';',
 * empty names, bytes past 0x7f, empty stacks); and the same where its
 * sort gives up early to qsort (FOLD_DEPTH below). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "util.h"

#include "check.h"

/* the sort's fallback to qsort taken at once (up to 8,191 stacks), or
 * after a few partitions (20,000) */
#define FOLD_DEPTH (-26)
#define kp_folded_write folded_write_qsort
#include "../../common/folded.c"
#undef kp_folded_write
#undef FOLD_DEPTH

static const char *const pool[] = {
	"f", "f ", "f.cold", "f:1", "f<", "f~", "", "g", "fg", "f\xc3\xa9",
	"a", "a b", "[kernel]", "main", "f\x01",
};
#define NPOOL (sizeof(pool) / sizeof(pool[0]))

struct text {
	char *s;
	size_t len;
	uint64_t count;
};

static int
cmp_text(const void *pa, const void *pb)
{
	const struct text *x = pa, *y = pb;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, m);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* The lines as text made first, sorted and merged: the reference. */
static char *
reference(const struct kp_fold_name *names, const uint32_t *ids,
	  const size_t *start, const uint64_t *counts, size_t n)
{
	struct text *t = calloc(n ? n : 1, sizeof(*t));
	char *out;
	size_t i, k, len, outlen, m = 0;
	FILE *fp = open_memstream(&out, &outlen);

	for (i = 0; i < n; i++) {
		for (len = 0, k = start[i]; k < start[i + 1]; k++)
			len += names[ids[k]].len + 1;
		t[i].s = malloc(len + 1);
		for (len = 0, k = start[i]; k < start[i + 1]; k++) {
			if (k > start[i])
				t[i].s[len++] = ';';
			memcpy(t[i].s + len, names[ids[k]].s, names[ids[k]].len);
			len += names[ids[k]].len;
		}
		t[i].len = len;
		t[i].count = counts[i];
	}
	qsort(t, n, sizeof(*t), cmp_text);
	for (i = 0; i < n; i++) {
		if (m && cmp_text(&t[m - 1], &t[i]) == 0) {
			t[m - 1].count += t[i].count;
			free(t[i].s);
			continue;
		}
		t[m++] = t[i];
	}
	for (i = 0; i < m; i++) {
		fwrite(t[i].s, 1, t[i].len, fp);
		fprintf(fp, " %llu\n", (unsigned long long)t[i].count);
		free(t[i].s);
	}
	fclose(fp);
	free(t);
	return out;
}

static char *
written(int (*fn)(FILE *, const struct kp_fold_name *, size_t,
		  const uint32_t *, const size_t *, const uint64_t *, size_t),
	const struct kp_fold_name *names, size_t nnames, const uint32_t *ids,
	const size_t *start, const uint64_t *counts, size_t n, int *status)
{
	char *out;
	size_t outlen;
	FILE *fp = open_memstream(&out, &outlen);

	*status = fn(fp, names, nnames, ids, start, counts, n);
	fclose(fp);
	return out;
}

/* n random stacks of up to maxlen frames from the first npool names of
 * the pool (names listed twice: two ids of one text), checked. */
static void
random_case(unsigned seed, size_t n, size_t maxlen, size_t npool)
{
	struct kp_fold_name names[2 * NPOOL];
	uint32_t *ids = malloc((n * maxlen + 1) * sizeof(*ids));
	size_t *start = malloc((n + 1) * sizeof(*start));
	uint64_t *counts = malloc((n ? n : 1) * sizeof(*counts));
	size_t i, k, len, nf = 0;
	char *want, *got, *got2;
	int st, st2;

	srand(seed);
	for (i = 0; i < 2 * NPOOL; i++) {
		names[i].s = pool[i % NPOOL];
		names[i].len = strlen(pool[i % NPOOL]);
	}
	for (i = 0; i < n; i++) {
		start[i] = nf;
		len = (size_t)rand() % (maxlen + 1);
		for (k = 0; k < len; k++) {
			uint32_t id = (uint32_t)((size_t)rand() % npool);

			/* mostly a shared root, as in a capture */
			if (k < len / 2 && rand() % 4)
				id = (uint32_t)(k % npool);
			ids[nf++] = id + (rand() % 2 ? (uint32_t)NPOOL : 0);
		}
		counts[i] = 1 + (uint64_t)(rand() % 1000);
	}
	start[n] = nf;
	want = reference(names, ids, start, counts, n);
	got = written(kp_folded_write, names, 2 * NPOOL, ids, start, counts,
		      n, &st);
	got2 = written(folded_write_qsort, names, 2 * NPOOL, ids, start,
		       counts, n, &st2);
	CHECK(st == KP_EXIT_OK && st2 == KP_EXIT_OK);
	CHECK(strcmp(got, want) == 0);
	CHECK(strcmp(got2, want) == 0);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "seed %u:\n--- want\n%s--- got\n%s", seed, want,
			got);
	free(want);
	free(got);
	free(got2);
	free(ids);
	free(start);
	free(counts);
}

int
main(void)
{
	unsigned seed;

	/* by hand: "f" ends before "f " and "f;x" sorts after "f:1" */
	{
		struct kp_fold_name names[] = {
			{"f", 1}, {"f:1", 3}, {"x", 1}, {"f ", 2}, {"", 0},
		};
		uint32_t ids[] = {0, 2, 1, 0, 3};
		size_t start[] = {0, 2, 3, 4, 5, 5};
		uint64_t counts[] = {1, 2, 3, 4, 5};
		char *got;
		int st;

		got = written(kp_folded_write, names, 5, ids, start, counts, 5,
			      &st);
		CHECK(st == KP_EXIT_OK);
		CHECK(strcmp(got, " 5\nf 3\nf  4\nf:1 2\nf;x 1\n") == 0 ||
		      !fprintf(stderr, "got:\n%s", got));
		free(got);
	}
	/* lines of one text whose counts sum past 2^64 - 1: nothing */
	{
		struct kp_fold_name names[] = {{"a", 1}, {"a", 1}};
		uint32_t ids[] = {0, 1};
		size_t start[] = {0, 1, 2};
		uint64_t counts[] = {UINT64_MAX - 1, 2};
		char *got;
		int st;

		got = written(kp_folded_write, names, 2, ids, start, counts, 2,
			      &st);
		CHECK(st == KP_EXIT_FATAL);
		CHECK(strcmp(got, "") == 0);
		free(got);
	}
	/* nothing at all */
	{
		size_t start[] = {0};
		char *got;
		int st;

		got = written(kp_folded_write, NULL, 0, NULL, start, NULL, 0,
			      &st);
		CHECK(st == KP_EXIT_OK && strcmp(got, "") == 0);
		free(got);
	}
	for (seed = 1; seed <= 300; seed++)
		random_case(seed, 1 + seed % 97, 1 + seed % 9,
			    2 + seed % (NPOOL - 1));
	random_case(7, 20000, 14, NPOOL);
	random_case(8, 5000, 40, 3);
	return CHECK_DONE();
}
