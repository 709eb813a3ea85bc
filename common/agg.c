/*
 * agg.c - stack aggregation.
 *
 * A stack is an array of interned frame pointers, so its key is that
 * array's bytes.  The index is open addressing on a 64-bit hash (linear
 * probing, at most three quarters full): one probe touches one slot
 * holding the hash and the entry, where uthash's chains cost a bucket,
 * an entry and a key, and on inputs of many records that difference was
 * a third of an analysis filter's time.  Stacks are kept in order of first
 * appearance (the order kp writers use unless a filter sorts them).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct agg_ent {
	struct kp_stack st; /* first: kp_agg_sort's comparators see it */
};

struct kp_agg {
	struct kp_slots index; /* of struct agg_ent */
	struct kp_pool pool;   /* the entries and their frames: an agg's
				* own, freed with it (and not shared with
				* another thread's, see conv_perf.c) */
	struct agg_ent **order;
	size_t len, ocap;
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

static void
add_total(struct kp_agg *agg, uint64_t count)
{
	if (agg->total > UINT64_MAX - count) {
		agg->total = UINT64_MAX;
		agg->total_ok = false;
	} else {
		agg->total += count;
	}
}

/* The entry of the stack, counted; NULL if its count would overflow. */
static struct agg_ent *
add(struct kp_agg *agg, const struct kp_frame *const *frames, size_t n,
    uint64_t count)
{
	size_t keylen = n * sizeof(*frames), j, mask;
	uint64_t h = kp_hash(frames, keylen);
	struct agg_ent *e;
	const struct kp_frame **copy;

	kp_slots_reserve(&agg->index, 1024);
	mask = agg->index.cap - 1;
	for (j = h & mask; (e = agg->index.tab[j].p) != NULL;
	     j = (j + 1) & mask)
		if (agg->index.tab[j].hash == h && e->st.n == n &&
		    memcmp(e->st.frames, frames, keylen) == 0)
			break;
	if (e) {
		if (e->st.count > UINT64_MAX - count) {
			/* the total, a sum of this and more, overflows too */
			agg->total = UINT64_MAX;
			agg->total_ok = false;
			return NULL;
		}
		e->st.count += count;
	} else {
		e = kp_pool_alloc(&agg->pool, sizeof(*e) + keylen);
		copy = (const struct kp_frame **)(void *)(e + 1);
		memcpy(copy, frames, keylen);
		e->st.frames = copy;
		e->st.n = n;
		e->st.count = count;
		agg->index.tab[j].hash = h;
		agg->index.tab[j].p = e;
		agg->index.n++;
		if (agg->len == agg->ocap) {
			agg->ocap = agg->ocap ? agg->ocap * 2 : 1024;
			agg->order = kp_xrealloc(agg->order,
						 agg->ocap * sizeof(*agg->order));
		}
		agg->order[agg->len++] = e;
	}
	add_total(agg, count);
	return e;
}

int
kp_agg_add(struct kp_agg *agg, const struct kp_frame *const *frames,
	   size_t n, uint64_t count)
{
	return add(agg, frames, n, count) ? 0 : -1;
}

/*
 * On overflow the record is not added and the total is marked as past
 * 2^64: the caller's kp_agg_check_total ends the program (kp(5)), so
 * the record is not named on its own.
 */
void
kp_agg_add_or_skip(struct kp_agg *agg, struct kp_input *in,
		   const struct kp_frame *const *frames, size_t n,
		   uint64_t count)
{
	(void)in;
	add(agg, frames, n, count);
}

struct kp_stack *
kp_agg_add_entry(struct kp_agg *agg, struct kp_input *in,
		 const struct kp_frame *const *frames, size_t n,
		 uint64_t count)
{
	struct agg_ent *e = add(agg, frames, n, count);

	(void)in;
	return e ? &e->st : NULL;
}

void
kp_agg_add_again(struct kp_agg *agg, struct kp_input *in,
		 struct kp_stack *st, uint64_t count)
{
	(void)in;
	if (st->count > UINT64_MAX - count) {
		agg->total = UINT64_MAX;
		agg->total_ok = false;
		return;
	}
	st->count += count;
	add_total(agg, count);
}

void
kp_agg_check_total(const struct kp_agg *agg, const char *name)
{
	if (!agg->total_ok)
		kp_die("%s: the total count overflows 64 bits",
		       strcmp(name, "-") ? name : "<stdin>");
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
	if (agg->len > 1)
		qsort(agg->order, agg->len, sizeof(*agg->order), cmp);
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

/* A frame's key, memoized by frame id (the keys are interned too). */
struct keyer {
	kp_frame_key_fn key;
	const struct kp_frame **memo;
	size_t cap;
	const struct kp_frame **tmp;
	size_t tmpcap;
};

static const struct kp_frame *
key_of(struct keyer *k, const struct kp_frame *f)
{
	k->memo = kp_grow_for(k->memo, &k->cap, sizeof(*k->memo), f->id);
	if (!k->memo[f->id])
		k->memo[f->id] = k->key(f);
	return k->memo[f->id];
}

static void
read_keyed(struct kp_agg *agg, const char *path, struct keyer *k)
{
	struct kp_reader *rd = kp_reader_open(path);
	const struct kp_stack *st;
	size_t i;

	while ((st = kp_reader_next(rd)) != NULL) {
		if (st->n > k->tmpcap) {
			k->tmpcap = st->n * 2;
			k->tmp = kp_xrealloc(k->tmp, k->tmpcap * sizeof(*k->tmp));
		}
		for (i = 0; i < st->n; i++)
			k->tmp[i] = key_of(k, st->frames[i]);
		kp_agg_add_or_skip(agg, kp_reader_input(rd), k->tmp, st->n,
				   st->count);
	}
	kp_reader_close(rd);
}

static struct kp_agg *
read_files(int nfiles, char **files, kp_frame_key_fn key)
{
	struct kp_agg *agg = kp_agg_new();
	struct keyer k = { .key = key };
	const char *path;
	int i;

	/* one rule for every filter, summed or not (kp(5)) */
	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		path = nfiles ? files[i] : "-";
		if (key)
			read_keyed(agg, path, &k);
		else
			kp_agg_read(agg, path);
		kp_agg_check_total(agg, path);
	}
	free(k.memo);
	free(k.tmp);
	return agg;
}

struct kp_agg *
kp_agg_read_keyed(int nfiles, char **files, kp_frame_key_fn key)
{
	return read_files(nfiles, files, key);
}

struct kp_agg *
kp_agg_read_files(int nfiles, char **files)
{
	return read_files(nfiles, files, NULL);
}

struct kp_agg *
kp_agg_read_summed(int nfiles, char **files)
{
	return read_files(nfiles, files, NULL);
}

void
kp_agg_free(struct kp_agg *agg)
{
	if (!agg)
		return;
	kp_slots_free(&agg->index);
	kp_pool_free(&agg->pool);
	free(agg->order);
	free(agg);
}
