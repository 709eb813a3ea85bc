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
	/* aggs whose entries kp_agg_append_all put in the order: kept
	 * until this one is freed (a list, through their own kept) */
	struct kp_agg *kept;
	bool stale; /* the index lacks entries (kp_agg_append) */
};

static void settle(struct kp_agg *agg);
static void add_agg(struct kp_agg *agg, const struct kp_agg *src);

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

/*
 * agg's entry of the stack frames[0..n) of hash h (kp_hash of its
 * frames), or NULL; *slot (if given) is then the empty slot that ended
 * the probe, where it would go.
 */
static struct agg_ent *
find(const struct kp_agg *agg, const struct kp_frame *const *frames,
     size_t n, uint64_t h, size_t *slot)
{
	size_t mask = agg->index.cap - 1, j;
	struct agg_ent *e;

	if (!agg->index.cap)
		return NULL;
	for (j = h & mask; (e = agg->index.tab[j].p) != NULL;
	     j = (j + 1) & mask)
		if (agg->index.tab[j].hash == h && e->st.n == n &&
		    memcmp(e->st.frames, frames, n * sizeof(*frames)) == 0)
			return e;
	if (slot)
		*slot = j;
	return NULL;
}

/*
 * The entry of the stack, of hash h (kp_hash of its frames), counted;
 * NULL if its count would overflow.
 */
static struct agg_ent *
add_hashed(struct kp_agg *agg, const struct kp_frame *const *frames,
	   size_t n, uint64_t count, uint64_t h)
{
	size_t keylen = n * sizeof(*frames), j = 0;
	struct agg_ent *e;
	const struct kp_frame **copy;

	kp_slots_reserve(&agg->index, 1024);
	e = find(agg, frames, n, h, &j);
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

static struct agg_ent *
add(struct kp_agg *agg, const struct kp_frame *const *frames, size_t n,
    uint64_t count)
{
	return add_hashed(agg, frames, n, count,
			  kp_hash(frames, n * sizeof(*frames)));
}

int
kp_agg_add(struct kp_agg *agg, const struct kp_frame *const *frames,
	   size_t n, uint64_t count)
{
	settle(agg);
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
	settle(agg);
	add(agg, frames, n, count);
}

/* Fetch the index slot of a stack of hash h. */
static void
hint_slot(const struct kp_agg *agg, uint64_t h)
{
	if (agg->index.tab)
		__builtin_prefetch(&agg->index.tab[h & (agg->index.cap - 1)]);
}

/* Fetch the entry the index holds under hash h, if any (hint_slot's). */
static void
hint_entry(const struct kp_agg *agg, uint64_t h)
{
	size_t mask = agg->index.cap - 1, j;

	if (!agg->index.tab)
		return;
	for (j = h & mask; agg->index.tab[j].p; j = (j + 1) & mask)
		if (agg->index.tab[j].hash == h) {
			__builtin_prefetch(agg->index.tab[j].p);
			__builtin_prefetch((char *)agg->index.tab[j].p + 64);
			return;
		}
}

/*
 * src's stacks added to agg, in src's order (a converter's two halves
 * joined: on the real capture's text, 60,207 stacks into 67,568).  The
 * index and the order are grown for all of them first, and each stack
 * is added two after its slot is fetched, one after its entry is, as
 * read_into adds records: one stack at a time, the merge took 7.5-8 ms
 * of perf2kp's 140 there, this way 6.3-7.
 */
void
kp_agg_add_agg(struct kp_agg *agg, const struct kp_agg *src)
{
	settle(agg);
	settle((struct kp_agg *)src); /* its stacks made whole first */
	add_agg(agg, src);
}

static void
add_agg(struct kp_agg *agg, const struct kp_agg *src)
{
	const struct kp_stack *st;
	uint64_t h[3];
	size_t i, n = src->len;

	kp_slots_reserve_n(&agg->index, n, 1024);
	if (agg->len + n > agg->ocap) {
		agg->ocap = agg->len + n;
		agg->order = kp_xrealloc(agg->order,
					 agg->ocap * sizeof(*agg->order));
	}
	for (i = 0; i < n + 2; i++) {
		if (i < n) {
			st = &src->order[i]->st;
			h[i % 3] = kp_hash(st->frames, st->n * sizeof(*st->frames));
			hint_slot(agg, h[i % 3]);
		}
		if (i >= 1 && i - 1 < n)
			hint_entry(agg, h[(i - 1) % 3]);
		if (i >= 2) {
			st = &src->order[i - 2]->st;
			add_hashed(agg, st->frames, st->n, st->count,
				   h[(i - 2) % 3]);
		}
	}
}

void
kp_agg_append(struct kp_agg *agg, const struct kp_frame *const *frames,
	      size_t n, uint64_t count)
{
	size_t keylen = n * sizeof(*frames);
	struct agg_ent *e = kp_pool_alloc(&agg->pool, sizeof(*e) + keylen);
	const struct kp_frame **copy;

	/* (not the index: it is made when next needed) */
	copy = (const struct kp_frame **)(void *)(e + 1);
	memcpy(copy, frames, keylen);
	e->st.frames = copy;
	e->st.n = n;
	e->st.count = count;
	if (agg->len == agg->ocap) {
		agg->ocap = agg->ocap ? agg->ocap * 2 : 1024;
		agg->order = kp_xrealloc(agg->order,
					 agg->ocap * sizeof(*agg->order));
	}
	agg->order[agg->len++] = e;
	add_total(agg, count);
	agg->stale = true;
}

void
kp_agg_append_all(struct kp_agg *agg, struct kp_agg *src)
{
	if (agg->len + src->len > agg->ocap) {
		agg->ocap = agg->len + src->len;
		agg->order = kp_xrealloc(agg->order,
					 agg->ocap * sizeof(*agg->order));
	}
	if (src->len)
		memcpy(agg->order + agg->len, src->order,
		       src->len * sizeof(*src->order));
	agg->len += src->len;
	add_total(agg, src->total);
	if (!src->total_ok)
		kp_agg_overflowed(agg);
	/* src's entries are agg's now: its pool is kept, the rest freed */
	kp_slots_free(&src->index);
	free(src->order);
	src->order = NULL;
	src->len = src->ocap = 0;
	src->kept = agg->kept;
	agg->kept = src;
	agg->stale = true;
}

void
kp_agg_overflowed(struct kp_agg *agg)
{
	agg->total = UINT64_MAX;
	agg->total_ok = false;
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
	settle(agg);
	/* struct kp_stack is the first member, so the pointers convert */
	if (agg->len > 1)
		qsort(agg->order, agg->len, sizeof(*agg->order), cmp);
}

void
kp_agg_late_add(struct kp_agg_late *l, struct kp_agg *agg,
		const struct kp_frame *const *frames, size_t n, uint64_t count)
{
	struct kp_agg_behind *b = &l->q[l->given % 3];

	settle(agg);
	if (b->cap < n) {
		b->cap = n * 2;
		b->frames = kp_xrealloc(b->frames, b->cap * sizeof(*b->frames));
	}
	memcpy(b->frames, frames, n * sizeof(*frames));
	b->agg = agg;
	b->n = n;
	b->count = count;
	b->h = kp_hash(b->frames, n * sizeof(*b->frames));
	hint_slot(agg, b->h);
	if (l->given > l->added) {
		b = &l->q[(l->given - 1) % 3];
		hint_entry(b->agg, b->h);
	}
	if (++l->given - l->added == 3) {
		b = &l->q[l->added++ % 3];
		add_hashed(b->agg, b->frames, b->n, b->count, b->h);
	}
}

void
kp_agg_late_end(struct kp_agg_late *l)
{
	struct kp_agg_behind *b;

	while (l->added < l->given) {
		b = &l->q[l->added++ % 3];
		settle(b->agg);
		add_hashed(b->agg, b->frames, b->n, b->count, b->h);
	}
}

void
kp_agg_late_free(struct kp_agg_late *l)
{
	size_t i;

	for (i = 0; i < 3; i++)
		free(l->q[i].frames);
	memset(l, 0, sizeof(*l));
}

/* The records of rd into agg, each added late (kp_agg_late_add); with
 * ignores, what the key ignores is asked again after new metadata. */
static void
read_into(struct kp_agg *agg, struct kp_reader *rd, unsigned (*ignores)(void))
{
	struct kp_agg_late late;
	const struct kp_stack *st;
	size_t meta = kp_meta_count();

	memset(&late, 0, sizeof(late));
	if (ignores)
		kp_reader_key_ignores(rd, ignores());
	while ((st = kp_reader_next(rd)) != NULL) {
		kp_agg_late_add(&late, agg, st->frames, st->n, st->count);
		if (ignores && kp_meta_count() != meta) {
			meta = kp_meta_count();
			kp_reader_key_ignores(rd, ignores());
		}
	}
	kp_agg_late_end(&late);
	kp_agg_late_free(&late);
}

void
kp_agg_read(struct kp_agg *agg, const char *path)
{
	struct kp_reader *rd = kp_reader_open(path);

	read_into(agg, rd, NULL);
	kp_reader_close(rd);
}

static void
read_keyed(struct kp_agg *agg, const char *path, kp_frame_key_fn key,
	   unsigned (*ignores)(void))
{
	struct kp_reader *rd = kp_reader_open(path);

	kp_reader_set_key(rd, key);
	read_into(agg, rd, ignores);
	kp_reader_close(rd);
}

static struct kp_agg *
read_files(int nfiles, char **files, kp_frame_key_fn key,
	   unsigned (*ignores)(void))
{
	struct kp_agg *agg = kp_agg_new();
	const char *path;
	int i;

	/* one rule for every filter, summed or not (kp(5)) */
	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		path = nfiles ? files[i] : "-";
		if (key)
			read_keyed(agg, path, key, ignores);
		else
			kp_agg_read(agg, path);
		kp_agg_check_total(agg, path);
	}
	return agg;
}

struct kp_agg *
kp_agg_read_keyed(int nfiles, char **files, kp_frame_key_fn key,
		  unsigned (*ignores)(void))
{
	return read_files(nfiles, files, key, ignores);
}

struct kp_agg *
kp_agg_read_files(int nfiles, char **files)
{
	return read_files(nfiles, files, NULL, NULL);
}

struct kp_agg *
kp_agg_read_summed(int nfiles, char **files)
{
	return read_files(nfiles, files, NULL, NULL);
}

void
kp_agg_free(struct kp_agg *agg)
{
	if (!agg)
		return;
	kp_agg_free(agg->kept);
	kp_slots_free(&agg->index);
	kp_pool_free(&agg->pool);
	free(agg->order);
	free(agg);
}

/* The index of agg's order rebuilt (kp_agg_append left it stale). */
static void
reindex(struct kp_agg *agg)
{
	const struct kp_stack *st;
	size_t i;

	kp_slots_free(&agg->index);
	kp_slots_reserve_n(&agg->index, agg->len, 1024);
	for (i = 0; i < agg->len; i++) {
		st = &agg->order[i]->st;
		kp_slots_put(&agg->index, kp_hash(st->frames,
						  st->n * sizeof(*st->frames)),
			     agg->order[i]);
	}
	agg->stale = false;
}

static void
settle(struct kp_agg *agg)
{
	if (agg->stale)
		reindex(agg);
}

void
kp_agg_each(struct kp_agg *agg,
	    void (*fn)(void *arg, const struct kp_stack *st), void *arg)
{
	size_t i;

	for (i = 0; i < agg->len; i++)
		fn(arg, &agg->order[i]->st);
}
