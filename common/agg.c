/*
 * agg.c - stack aggregation on uthash.
 *
 * A stack is an array of interned frame pointers, so the key is that
 * array's bytes.  Stacks are kept in order of first appearance (the
 * order kp writers use unless a filter sorts them).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct agg_ent {
	struct kp_stack st;
	UT_hash_handle hh;
};

struct kp_agg {
	struct agg_ent *hash;
	struct agg_ent **order;
	size_t len, cap;
	uint64_t total;
	bool total_ok;
};

struct kp_agg *
kp_agg_new(void)
{
	struct kp_agg *agg = kp_xcalloc(1, sizeof(*agg));

	agg->total_ok = true;
	return agg;
}

int
kp_agg_add(struct kp_agg *agg, const struct kp_frame *const *frames,
	   size_t n, uint64_t count)
{
	size_t keylen = n * sizeof(*frames);
	struct agg_ent *e;
	const struct kp_frame **copy;

	HASH_FIND(hh, agg->hash, frames, keylen, e);
	if (e) {
		if (e->st.count > UINT64_MAX - count)
			return -1;
		e->st.count += count;
	} else {
		e = kp_arena_alloc(sizeof(*e));
		memset(e, 0, sizeof(*e));
		copy = kp_arena_alloc(keylen ? keylen : 1);
		memcpy(copy, frames, keylen);
		e->st.frames = copy;
		e->st.n = n;
		e->st.count = count;
		HASH_ADD_KEYPTR(hh, agg->hash, copy, keylen, e);
		if (agg->len == agg->cap) {
			agg->cap = agg->cap ? agg->cap * 2 : 1024;
			agg->order = kp_xrealloc(agg->order,
						 agg->cap * sizeof(*agg->order));
		}
		agg->order[agg->len++] = e;
	}
	if (agg->total > UINT64_MAX - count) {
		agg->total = UINT64_MAX;
		agg->total_ok = false;
	} else {
		agg->total += count;
	}
	return 0;
}

size_t
kp_agg_len(const struct kp_agg *agg)
{
	return agg->len;
}

const struct kp_stack *
kp_agg_get(const struct kp_agg *agg, size_t i)
{
	return &agg->order[i]->st;
}

uint64_t
kp_agg_total(const struct kp_agg *agg)
{
	return agg->total;
}

bool
kp_agg_total_ok(const struct kp_agg *agg)
{
	return agg->total_ok;
}

void
kp_agg_sort(struct kp_agg *agg, int (*cmp)(const void *, const void *))
{
	/* struct kp_stack is the first member, so the pointers convert */
	if (agg->len > 1) /* qsort(NULL, 0) is undefined */
		qsort(agg->order, agg->len, sizeof(*agg->order), cmp);
}

void
kp_agg_add_or_skip(struct kp_agg *agg, struct kp_input *in,
		   const struct kp_frame *const *frames, size_t n,
		   uint64_t count)
{
	if (kp_agg_add(agg, frames, n, count) < 0)
		kp_input_skip(in, "count overflows 64 bits when added to an "
				  "identical stack; record dropped");
}

void
kp_agg_read(struct kp_agg *agg, const char *path)
{
	struct kp_reader *rd = kp_reader_open(path);
	const struct kp_stack *st;

	while ((st = kp_reader_next(rd)) != NULL)
		kp_agg_add_or_skip(agg, kp_reader_input(rd), st->frames, st->n,
				   st->count);
	kp_reader_close(rd);
}

void
kp_agg_free(struct kp_agg *agg)
{
	if (!agg)
		return;
	HASH_CLEAR(hh, agg->hash);
	free(agg->order);
	free(agg);
}
