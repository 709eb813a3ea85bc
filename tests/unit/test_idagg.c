/*
 * test_idagg.c - unit tests of the tables two threads fill at once
 * (common/ctab.c) and the aggregation of stacks of frame ids on them
 * (common/idagg.c): each key is stored once whatever the threads do at
 * once, look-ups made while a shard grows find what is there, the
 * retired arrays are freed only when no thread may read them; a frame
 * is one record however it is asked for, counts add across threads, and
 * the stacks come out in order of their least position, written as
 * kp_write_agg writes the same stacks.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "idagg.h"
#include "internal.h"

#include "check.h"

#define NKEYS 60000

/* ---- a table two threads fill ---- */

struct ctab_run {
	struct kp_ctab *t;
	struct kp_lane *lanes; /* [KP_CTAB_THREADS], of uint64_t keys */
	int lane;
	uint32_t id[NKEYS]; /* the id each key was found or put under */
	unsigned bad;	    /* look-ups that found another key */
};

static uint64_t
key_hash(uint64_t k)
{
	/* few distinct hashes: long probes, keys sharing tags */
	return kp_hash(&k, sizeof(k)) & 0xfc000003ffffffffull;
}

/* key k's id: found, or put under the shard's lock */
static uint32_t
key_id(struct ctab_run *r, uint64_t k)
{
	uint64_t h = key_hash(k);
	struct kp_ctab_it it;
	uint32_t id;
	uint64_t *slot;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass)
			kp_ctab_lock(r->t, h);
		kp_ctab_first(r->t, h, &it);
		while (kp_ctab_next(&it, &id))
			if (*(const uint64_t *)kp_lane_at(r->lanes, id) == k) {
				if (pass)
					kp_ctab_unlock(r->t, h);
				return id;
			}
	}
	slot = kp_lane_add(&r->lanes[r->lane], &id);
	*slot = k;
	kp_ctab_add(r->t, h, id);
	kp_ctab_unlock(r->t, h);
	return id;
}

static void *
ctab_thread(void *arg)
{
	struct ctab_run *r = arg;
	uint64_t k;
	size_t i;

	/* the two threads take the keys in opposite orders, in pieces,
	 * quiet between them (the retired arrays may go then) */
	for (i = 0; i < NKEYS; i++) {
		if (i % 1000 == 0)
			kp_ctab_busy(r->lane);
		k = r->lane ? NKEYS - 1 - i : i;
		r->id[k] = key_id(r, k * 7919);
		if (*(const uint64_t *)kp_lane_at(r->lanes, r->id[k]) !=
		    k * 7919)
			r->bad++;
		if (i % 1000 == 999 || i + 1 == NKEYS)
			kp_ctab_quiet(r->lane);
	}
	/* (each busy has its quiet: one more would leave this lane's count
	 * odd, "busy", to the tests after, and its busy then read quiet) */
	return NULL;
}

static void
test_ctab(void)
{
	static struct ctab_run a, b;
	struct kp_lane lanes[KP_CTAB_THREADS];
	struct kp_ctab t;
	pthread_t th;
	size_t i, n = 0;
	int l;

	kp_ctab_init(&t, true);
	for (l = 0; l < KP_CTAB_THREADS; l++)
		kp_lane_init(&lanes[l], (uint32_t)l, sizeof(uint64_t));
	a.t = b.t = &t;
	a.lanes = b.lanes = lanes;
	a.lane = 0;
	b.lane = 1;
	CHECK(pthread_create(&th, NULL, ctab_thread, &b) == 0);
	ctab_thread(&a);
	pthread_join(th, NULL);
	CHECK(a.bad == 0 && b.bad == 0);
	/* one id a key, whichever thread put it */
	for (i = 0; i < NKEYS; i++)
		if (a.id[i] != b.id[i])
			n++;
	CHECK(n == 0);
	CHECK(lanes[0].n + lanes[1].n == NKEYS);
	/* each id names its key; none under two ids */
	for (i = 0, n = 0; i < NKEYS; i++)
		if (*(const uint64_t *)kp_lane_at(lanes, a.id[i]) != i * 7919)
			n++;
	CHECK(n == 0);
	CHECK(kp_ctab_slots(&t) >= NKEYS * 4 / 3);
	kp_ctab_reclaim();
	kp_ctab_free(&t);
	for (l = 0; l < KP_CTAB_THREADS; l++)
		kp_lane_free(&lanes[l]);
}

/* ---- stacks ---- */

#define NFRAMES 300
#define NSTACKS 2000

struct agg_run {
	struct kp_idagg *a;
	int lane;
	uint32_t frame[NFRAMES]; /* the record of frame i */
};

/* Frame i: 300 addresses of 30 functions, some inline, some without a
 * symbol, some with an offset past 32 bits (a kp_frame of its own).
 * The names are made at the first call: make it before any thread. */
static void
frame_of(int i, struct kp_frame *f)
{
	static const char *syms[30], *mods[3];
	char name[32];

	if (!syms[0]) {
		for (int k = 0; k < 30; k++) {
			snprintf(name, sizeof(name), "fn%d", k);
			syms[k] = kp_intern_str(name);
		}
		mods[0] = kp_intern_str("kernel");
		mods[1] = kp_intern_str("/usr/lib/libc.so.6");
		mods[2] = NULL;
	}
	memset(f, 0, sizeof(*f));
	f->addr = 0xffffffff81000000ull + (uint64_t)i * 0x40;
	f->flags = KP_F_ADDR;
	if (i % 7) {
		f->sym = syms[i % 30];
		f->off = (uint64_t)i;
		f->flags |= KP_F_OFF;
	}
	f->module = mods[i % 3];
	if (i % 11 == 0)
		f->flags |= KP_F_INLINE;
	if (i % 53 == 1 && (f->flags & KP_F_OFF))
		f->off = 1ull << 40; /* no record holds it */
}

/* Stack s: a few of the frames, the first two s's own. */
static size_t
stack_of(int s, const struct agg_run *r, uint32_t *ids)
{
	size_t n = 2 + (size_t)(s % 9), i;

	ids[0] = r->frame[s % NFRAMES];
	ids[1] = r->frame[s / NFRAMES];
	for (i = 2; i < n; i++)
		ids[i] = r->frame[(s * 31 + (int)i * 17) % NFRAMES];
	return n;
}

static void *
agg_thread(void *arg)
{
	struct agg_run *r = arg;
	struct kp_frame f;
	uint32_t ids[16];
	size_t n;
	int i, s;

	kp_ctab_busy(r->lane);
	for (i = 0; i < NFRAMES; i++) {
		frame_of(r->lane ? NFRAMES - 1 - i : i, &f);
		r->frame[r->lane ? NFRAMES - 1 - i : i] =
			kp_id_frame(r->a, r->lane, &f);
	}
	/* lane 0 gives the stacks at even positions, lane 1 at odd ones,
	 * each stack s at 3 positions: 3s .. 3s + 2 (event s % 2) */
	for (i = 0; i < 3 * NSTACKS; i++) {
		if (i % 2 != r->lane)
			continue;
		s = i / 3;
		n = stack_of(s, r, ids);
		kp_id_stack(r->a, r->lane, (unsigned)(s % 2), ids, n,
			    (uint64_t)s + 1, (uint64_t)i);
	}
	kp_id_stacks_flush(r->a, r->lane);
	kp_ctab_quiet(r->lane);
	return NULL;
}

struct collect {
	struct kp_idagg *a;
	int n, bad;
	uint64_t last_count;
};

static void
collect(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct collect *c = arg;

	(void)ids;
	(void)n;
	/* stack s (event 0: s even) first at 3s, counted 3 times s + 1 */
	if (count != 3 * (uint64_t)(2 * c->n + 1))
		c->bad++;
	c->n++;
}

static char *
written(void (*write)(FILE *, void *), void *arg, size_t *len)
{
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, len);

	if (!mem)
		abort();
	write(mem, arg);
	fclose(mem);
	return buf;
}

struct write_arg {
	struct kp_idagg *a;
	struct kp_agg *agg;
};

static void
write_ids(FILE *out, void *arg)
{
	struct write_arg *w = arg;

	kp_id_write(out, w->a, 0);
}

static void
write_agg(FILE *out, void *arg)
{
	struct write_arg *w = arg;

	kp_write_agg(out, w->agg);
}

static void
test_stacks(void)
{
	static struct agg_run a, b;
	struct kp_idagg *ag = kp_idagg_new(2);
	struct collect c = { ag, 0, 0, 0 };
	struct kp_agg *seq = kp_agg_new(), *made = kp_agg_new();
	const struct kp_frame *frames[16];
	struct write_arg wa;
	struct kp_frame f;
	uint32_t ids[16];
	char *x, *y;
	size_t n, nx, ny;
	pthread_t th;
	int i, s;

	/* frame_of's names made here, before the threads: made by both at
	 * once, one thread could read a name the other had not yet set */
	frame_of(0, &f);
	kp_idagg_shared(ag, true);
	kp_intern_shared = true;
	a.a = b.a = ag;
	a.lane = 0;
	b.lane = 1;
	CHECK(pthread_create(&th, NULL, agg_thread, &b) == 0);
	agg_thread(&a);
	pthread_join(th, NULL);
	kp_intern_shared = false;
	kp_idagg_shared(ag, false);
	/* one record a frame, whichever thread asked */
	for (i = 0, n = 0; i < NFRAMES; i++)
		n += a.frame[i] != b.frame[i];
	CHECK(n == 0);
	for (i = 0, n = 0; i < NFRAMES; i++) {
		frame_of(i, &f);
		n += kp_id_kpframe(ag, a.frame[i]) != kp_frame_intern(&f);
	}
	CHECK(n == 0);
	CHECK(kp_id_has(ag, 0) && kp_id_has(ag, 1) && !kp_id_has(ag, 2));
	CHECK(!kp_id_overflowed(ag, 0));
	/* in order of first sight, counts from both threads */
	kp_id_each(ag, 0, collect, &c);
	CHECK(c.n == NSTACKS / 2 && c.bad == 0);
	/* written as kp_write_agg writes the same stacks given in turn */
	for (s = 0; s < NSTACKS; s += 2) {
		n = stack_of(s, &a, ids);
		for (i = 0; i < (int)n; i++)
			frames[i] = kp_id_kpframe(ag, ids[i]);
		kp_agg_add(seq, frames, n, 3 * ((uint64_t)s + 1));
	}
	kp_id_to_agg(ag, 0, made);
	wa.a = ag;
	wa.agg = seq;
	x = written(write_agg, &wa, &nx);
	wa.agg = made;
	y = written(write_agg, &wa, &ny);
	CHECK(nx == ny && memcmp(x, y, nx) == 0);
	free(y);
	y = written(write_ids, &wa, &ny);
	CHECK(nx == ny && memcmp(x, y, nx) == 0);
	free(x);
	free(y);
	kp_agg_free(seq);
	kp_agg_free(made);
	kp_idagg_free(ag);
}

/* The order of first sight: lane 1 makes stacks 0 .. 99 at positions
 * 1000 + s, lane 0 sees them again 99 .. 0 at positions 99 - s, before
 * (so 99 is first); as written, with counts of both. */
struct order {
	int n, bad;
	uint32_t first_id[100];
};

static void
in_order(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct order *o = arg;
	int s = 99 - o->n;

	if (n != 1 || ids[0] != o->first_id[s] || count != 2 * (uint64_t)(s + 1))
		o->bad++;
	o->n++;
}

static void
test_order(void)
{
	struct kp_idagg *ag = kp_idagg_new(2);
	struct order o = { 0, 0, { 0 } };
	struct kp_frame f;
	int s;

	for (s = 0; s < 100; s++) {
		frame_of(s, &f);
		o.first_id[s] = kp_id_frame(ag, 1, &f);
		kp_id_stack(ag, 1, 0, &o.first_id[s], 1, (uint64_t)s + 1,
			    1000 + (uint64_t)s);
	}
	kp_id_stacks_flush(ag, 1);
	for (s = 99; s >= 0; s--)
		kp_id_stack(ag, 0, 0, &o.first_id[s], 1, (uint64_t)s + 1,
			    99 - (uint64_t)s);
	kp_id_stacks_flush(ag, 0);
	kp_id_each(ag, 0, in_order, &o);
	CHECK(o.n == 100 && o.bad == 0);
	kp_idagg_free(ag);
}

/* The order of first sight as perf2kp's threads leave it: lane 0 makes
 * the even stacks, lane 1 the odd ones, each in order of position; then
 * some are seen again earlier by the other lane (the one that made them
 * keeps them, out of place in its run): seven by hand, and 300 of lane
 * 1's (more than the 256 set aside that an insertion sort orders).
 * Each comes out at its least position, whether few of a lane's stacks
 * are out of place (so here) or all but its first (test_order). */
#define NRUN 6000

struct order_runs {
	int n, bad;
	uint32_t id[NRUN][2];
	uint64_t least[NRUN];
	int want[NRUN]; /* the stacks by least position */
};

static const struct order_runs *by_least;

static int
cmp_least(const void *x, const void *y)
{
	uint64_t a = by_least->least[*(const int *)x],
		 b = by_least->least[*(const int *)y];

	return a < b ? -1 : a > b;
}

static void
in_runs_order(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct order_runs *o = arg;
	int s = o->n < NRUN ? o->want[o->n] : 0;

	if (o->n >= NRUN || n != 2 || ids[0] != o->id[s][0] ||
	    ids[1] != o->id[s][1] || count != 1 + (o->least[s] % 10 != 1))
		o->bad++;
	o->n++;
}

static void
seen_again(struct kp_idagg *ag, struct order_runs *o, int s, uint64_t pos)
{
	kp_id_stack(ag, !(s % 2), 0, o->id[s], 2, 1, pos);
	kp_id_stacks_flush(ag, !(s % 2));
	if (pos < o->least[s])
		o->least[s] = pos;
}

static void
test_order_runs(void)
{
	static struct order_runs o;
	struct kp_idagg *ag = kp_idagg_new(2);
	struct kp_frame f;
	uint32_t frame[NFRAMES];
	int s, k, lane;

	memset(&o, 0, sizeof(o));
	for (k = 0; k < NFRAMES; k++) {
		frame_of(k, &f);
		frame[k] = kp_id_frame(ag, 0, &f);
	}
	for (s = 0; s < NRUN; s++) {
		o.id[s][0] = frame[s % NFRAMES];
		o.id[s][1] = frame[s / NFRAMES];
		o.least[s] = 10 * (uint64_t)s + 1;
	}
	for (lane = 0; lane < 2; lane++) {
		for (s = lane; s < NRUN; s += 2)
			kp_id_stack(ag, lane, 0, o.id[s], 2, 1, o.least[s]);
		kp_id_stacks_flush(ag, lane);
	}
	seen_again(ag, &o, 51, 10 * 51 - 25);
	seen_again(ag, &o, 77, 10 * 77 - 25);
	seen_again(ag, &o, 133, 3);
	seen_again(ag, &o, 100, 10 * 100 - 25);
	seen_again(ag, &o, 198, 10 * 60 + 5);
	seen_again(ag, &o, 300, 10 * 50 + 5);
	seen_again(ag, &o, 9, 0);
	for (k = 1; k <= 300; k++) { /* before the odd stack before it */
		s = 2 * (7 * k % (NRUN / 2)) + 1;
		seen_again(ag, &o, s, 10 * (uint64_t)s - 25);
	}
	for (s = 0; s < NRUN; s++)
		o.want[s] = s;
	by_least = &o;
	qsort(o.want, NRUN, sizeof(o.want[0]), cmp_least);
	CHECK(o.want[0] == 9 && o.want[1] == 0 && o.want[2] == 133);
	kp_id_each(ag, 0, in_runs_order, &o);
	CHECK(o.n == NRUN && o.bad == 0);
	kp_idagg_free(ag);
}

/* Counts past 2^64: the event's total overflows, the other's does not. */
static void
test_overflow(void)
{
	struct kp_idagg *ag = kp_idagg_new(1);
	struct kp_frame f;
	uint32_t id;

	frame_of(1, &f);
	id = kp_id_frame(ag, 0, &f);
	kp_id_stack(ag, 0, 3, &id, 1, UINT64_MAX - 1, 0);
	kp_id_stack(ag, 0, 4, &id, 1, 5, 1);
	kp_id_stack(ag, 0, 3, &id, 1, 2, 2);
	kp_id_stacks_flush(ag, 0);
	CHECK(kp_id_overflowed(ag, 3));
	CHECK(!kp_id_overflowed(ag, 4));
	kp_idagg_free(ag);
}

int
main(void)
{
	test_ctab();
	test_stacks();
	test_order();
	test_order_runs();
	test_overflow();
	return CHECK_DONE();
}
