/*
 * pprof.c - stacks in, a gzip-compressed profile.proto out (pprof.h), for
 * pprof (`pprof -top`, `pprof -http`, `go tool pprof`) and the tools that
 * read Go's profile format.
 *
 * The profile (github.com/google/pprof proto/profile.proto):
 *  - string_table[0] is "";
 *  - sample_type samples/count; with "# weight: period" on a clock
 *    event (cpu-clock, task-clock: the period is in ns) the counts are
 *    nanoseconds and the type is cpu/nanoseconds; with "# weight:
 *    samples" and a fixed "# period: N" on a clock event, cpu/nanoseconds
 *    (count * N) follows samples/count;
 *  - one Location per distinct address (and mapping), with one Line per
 *    function: an inline chain (frames marked "(inline)" at their
 *    caller's address) is one Location with several Lines, innermost
 *    first as profile.proto wants; frames without an address get a
 *    Location without one;
 *  - Functions named as kp-inclusive names them (common/profile.h), with
 *    their source file when kp has one ("(at FILE:LINE)");
 *  - a Mapping per module, the kernel image named [kernel.kallsyms],
 *    each with has_functions set so that pprof does not try to
 *    re-symbolize it;
 *  - labels "process" and (numeric) "pid", "tid" from the outermost
 *    frame when it is a process frame as perf2kp --pid/--tid and
 *    kp-sample --pid write it ("NAME-PID", "NAME-PID/TID", no address,
 *    no module), or any outermost frame without address and module with
 *    --process (perf2kp --comm); the frame stays in the stack;
 *  - the metadata lines as comments, "# duration: S s" as
 *    duration_nanos.  No time stamp: same input, same bytes.
 *
 * The encoder is common/pb.c (profile.proto needs only varints and
 * length-delimited fields; a protobuf library would be a dependency
 * larger than all of kp) and the compression zlib's deflate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pb.h"
#include "pprof.h"
#include "profile.h"

struct strent;
struct mapping;
struct location;

struct kp_pprof {
	bool process;		/* --process: label by the outermost frame */
	bool values_ns;		/* the counts are nanoseconds */
	uint64_t clock_period;	/* fixed period in ns, or 0 */
	struct kp_profile *prof; /* functions: their ids and names */
	struct strent *strs;	/* string_table */
	const char **strv;
	size_t nstr, strcap;
	struct mapping *maps, **mapv;
	size_t nmaps;
	const char **func_file; /* by function id - 1 */
	size_t func_cap;
	struct location *locs, **locv;
	size_t nlocs, loccap;
	struct kp_slots floc;	/* frame -> struct floc */
	struct kp_pool pool;
	struct kp_pb samples, tmp, tmp2;
	uint64_t *ids, *keybuf;
	size_t idcap, keycap;
};

static uint64_t str_id(struct kp_pprof *pp, const char *s);

struct kp_pprof *
kp_pprof_new(bool process)
{
	struct kp_pprof *pp = kp_xcalloc(1, sizeof(*pp));

	pp->process = process;
	pp->values_ns = kp_meta_counts_ns();
	if (!pp->values_ns)
		pp->clock_period = kp_meta_clock_period();
	pp->prof = kp_profile_new(KP_BY_FUNCTION, false);
	str_id(pp, ""); /* string_table[0], before any other string */
	return pp;
}

/* ---- the string table ---- */

struct strent {
	const char *s; /* interned */
	uint64_t id;
	UT_hash_handle hh;
};

static uint64_t
str_id(struct kp_pprof *pp, const char *s)
{
	struct strent *e;

	s = kp_intern_str(s ? s : "");
	HASH_FIND_PTR(pp->strs, &s, e);
	if (e)
		return e->id;
	e = kp_xcalloc(1, sizeof(*e));
	e->s = s;
	e->id = pp->nstr;
	HASH_ADD_PTR(pp->strs, s, e);
	if (pp->nstr == pp->strcap) {
		pp->strcap = pp->strcap ? pp->strcap * 2 : 256;
		pp->strv = kp_xrealloc(pp->strv, pp->strcap * sizeof(*pp->strv));
	}
	pp->strv[pp->nstr++] = s;
	return e->id;
}

/* ---- mappings, functions, locations ---- */

struct mapping {
	const char *module; /* kp_module_norm'ed, interned */
	uint64_t start, limit;
	bool has_files, has_lines, has_inline;
	UT_hash_handle hh;
	uint64_t id;
};

static struct mapping *
mapping_of(struct kp_pprof *pp, const char *module)
{
	struct mapping *m;

	module = kp_module_norm(module);
	HASH_FIND_PTR(pp->maps, &module, m);
	if (m)
		return m;
	m = kp_xcalloc(1, sizeof(*m));
	m->module = module;
	m->start = UINT64_MAX;
	m->id = ++pp->nmaps;
	HASH_ADD_PTR(pp->maps, module, m);
	pp->mapv = kp_xrealloc(pp->mapv, pp->nmaps * sizeof(*pp->mapv));
	pp->mapv[pp->nmaps - 1] = m;
	return m;
}

struct location {
	uint64_t *key; /* mapping, has address, address, (function, line)* */
	size_t keylen;
	uint64_t id;
	UT_hash_handle hh;
};

static uint64_t
location_id(struct kp_pprof *pp, const uint64_t *key, size_t n)
{
	struct location *l;

	HASH_FIND(hh, pp->locs, key, n * sizeof(*key), l);
	if (l)
		return l->id;
	l = kp_xcalloc(1, sizeof(*l));
	l->key = kp_xmalloc(n * sizeof(*key));
	memcpy(l->key, key, n * sizeof(*key));
	l->keylen = n;
	l->id = ++pp->nlocs;
	HASH_ADD_KEYPTR(hh, pp->locs, l->key, n * sizeof(*key), l);
	if (pp->nlocs > pp->loccap) {
		pp->loccap = pp->loccap ? pp->loccap * 2 : 1024;
		pp->locv = kp_xrealloc(pp->locv, pp->loccap * sizeof(*pp->locv));
	}
	pp->locv[pp->nlocs - 1] = l;
	return l->id;
}

/* frame -> its Location id when it is not part of an inline chain */
struct floc {
	const struct kp_frame *f;
	uint64_t id; /* 0: not known yet */
};

static uint64_t *
frame_loc(struct kp_pprof *pp, const struct kp_frame *f)
{
	uint64_t h = kp_hash(&f, sizeof(f));
	struct kp_slots *t = &pp->floc;
	struct floc *e;
	size_t j, mask;

	if (t->cap) {
		mask = t->cap - 1;
		for (j = h & mask; t->tab[j].p; j = (j + 1) & mask) {
			e = t->tab[j].p;
			if (e->f == f)
				return &e->id;
		}
	}
	e = kp_pool_alloc(&pp->pool, sizeof(*e));
	e->f = f;
	e->id = 0;
	kp_slots_reserve(t, 4096);
	kp_slots_put(t, h, e);
	return &e->id;
}

/* ---- samples ---- */

/* function id = profile key id + 1; its file name, if any frame had one */
static uint64_t
function_id(struct kp_pprof *pp, const struct kp_frame *f)
{
	uint32_t k = kp_profile_key(pp->prof, f);

	pp->func_file = kp_grow_for(pp->func_file, &pp->func_cap,
				    sizeof(*pp->func_file), k);
	if (!pp->func_file[k] && f->file)
		pp->func_file[k] = f->file;
	return (uint64_t)k + 1;
}

/*
 * "NAME-PID", "NAME-PID/TID", or "NAME-?" and "NAME-?/TID" (perf printed
 * no pid): 0 and the parts (0 when unknown), else -1.
 */
static int
parse_proc(const char *s, size_t *namelen, uint64_t *pid, uint64_t *tid)
{
	const char *dash = strrchr(s, '-'), *slash;
	size_t n;

	if (!dash || dash == s)
		return -1;
	slash = strchr(dash, '/');
	n = slash ? (size_t)(slash - dash - 1) : strlen(dash + 1);
	*pid = 0;
	if (!(n == 1 && dash[1] == '?') &&
	    kp_parse_u64(dash + 1, n, 10, pid) < 0)
		return -1;
	*tid = 0;
	if (slash && kp_parse_u64(slash + 1, strlen(slash + 1), 10, tid) < 0)
		return -1;
	*namelen = (size_t)(dash - s);
	return 0;
}

static void
label(struct kp_pprof *pp, const char *key, const char *str, uint64_t num)
{
	kp_pb_reset(&pp->tmp2);
	kp_pb_uint(&pp->tmp2, 1, str_id(pp, key));
	if (str)
		kp_pb_uint(&pp->tmp2, 2, str_id(pp, str));
	else
		kp_pb_int(&pp->tmp2, 3, (int64_t)num);
	kp_pb_msg(&pp->tmp, 3, &pp->tmp2);
}

void
kp_pprof_add(struct kp_pprof *pp, const struct kp_stack *st)
{
	size_t i = 0, j, n = 0, kn;
	uint64_t v[2];

	if (st->n > pp->idcap) {
		pp->idcap = st->n * 2;
		pp->ids = kp_xrealloc(pp->ids, pp->idcap * sizeof(*pp->ids));
	}
	while (i < st->n) {
		const struct kp_frame *f = st->frames[i];
		struct mapping *m;
		uint64_t *cached = NULL;

		/* an inline chain: frames i..j-1 share the caller's address */
		j = i + 1;
		while (j < st->n && (st->frames[j - 1]->flags & KP_F_INLINE) &&
		       (st->frames[j]->flags & KP_F_ADDR) &&
		       (f->flags & KP_F_ADDR) &&
		       st->frames[j]->addr == f->addr)
			j++;
		if (j == i + 1) {
			/* a frame alone is always the same location */
			cached = frame_loc(pp, f);
			if (*cached) {
				pp->ids[n++] = *cached;
				i++;
				continue;
			}
		}
		m = f->module ? mapping_of(pp, f->module) : NULL;
		kn = 3 + 2 * (j - i);
		if (kn > pp->keycap) {
			pp->keycap = kn * 2;
			pp->keybuf = kp_xrealloc(pp->keybuf, pp->keycap * sizeof(*pp->keybuf));
		}
		pp->keybuf[0] = m ? m->id : 0;
		pp->keybuf[1] = (f->flags & KP_F_ADDR) != 0;
		pp->keybuf[2] = (f->flags & KP_F_ADDR) ? f->addr : 0;
		for (kn = 3; i < j; i++) {
			const struct kp_frame *g = st->frames[i];

			pp->keybuf[kn++] = function_id(pp, g);
			pp->keybuf[kn++] = g->line;
			if (m) {
				m->has_files |= g->file != NULL;
				m->has_lines |= g->line != 0;
				m->has_inline |= j - i > 1;
			}
		}
		if (m && (f->flags & KP_F_ADDR)) {
			if (f->addr < m->start)
				m->start = f->addr;
			if (f->addr >= m->limit)
				m->limit = f->addr == UINT64_MAX ? f->addr
								 : f->addr + 1;
		}
		pp->ids[n++] = location_id(pp, pp->keybuf, kn);
		if (cached)
			*cached = pp->ids[n - 1];
	}
	kp_pb_reset(&pp->tmp);
	kp_pb_packed(&pp->tmp, 1, pp->ids, n);
	n = 0;
	v[n++] = st->count;
	if (!pp->values_ns && pp->clock_period)
		v[n++] = st->count * pp->clock_period;
	kp_pb_packed(&pp->tmp, 2, v, n);
	if (st->n) {
		const struct kp_frame *p = st->frames[st->n - 1];
		size_t nl;
		uint64_t pid, tid;

		if (!(p->flags & KP_F_ADDR) && !p->module && p->sym) {
			if (parse_proc(p->sym, &nl, &pid, &tid) == 0) {
				char *name = kp_xstrndup(p->sym, nl);

				label(pp, "process", name, 0);
				free(name);
				if (pid)
					label(pp, "pid", NULL, pid);
				if (tid)
					label(pp, "tid", NULL, tid);
			} else if (pp->process) {
				label(pp, "process", p->sym, 0);
			}
		}
	}
	kp_pb_msg(&pp->samples, 2, &pp->tmp);
}

static void
value_type(struct kp_pprof *pp, struct kp_pb *out, unsigned field,
	   const char *type, const char *unit)
{
	kp_pb_reset(&pp->tmp);
	kp_pb_uint(&pp->tmp, 1, str_id(pp, type));
	kp_pb_uint(&pp->tmp, 2, str_id(pp, unit));
	kp_pb_msg(out, field, &pp->tmp);
}

/* The whole Profile message. */
static void
build(struct kp_pprof *pp, struct kp_pb *out)
{
	struct kp_pb sec;
	const char *d = kp_meta_get("duration");
	size_t i, j;

	kp_pb_init(&sec);
	if (pp->values_ns) {
		value_type(pp, out, 1, "cpu", "nanoseconds");
	} else {
		value_type(pp, out, 1, "samples", "count");
		if (pp->clock_period)
			value_type(pp, out, 1, "cpu", "nanoseconds");
	}
	kp_pb_raw(out, pp->samples.p, pp->samples.len);
	for (i = 0; i < pp->nmaps; i++) {
		struct mapping *m = pp->mapv[i];

		kp_pb_reset(&sec);
		kp_pb_uint(&sec, 1, m->id);
		if (m->start != UINT64_MAX) {
			kp_pb_uint(&sec, 2, m->start);
			kp_pb_uint(&sec, 3, m->limit);
		}
		kp_pb_uint(&sec, 5,
			   str_id(pp, strcmp(m->module, KP_MODULE_KERNEL) == 0
					  ? "[kernel.kallsyms]"
					  : m->module));
		kp_pb_uint(&sec, 7, 1); /* has_functions */
		kp_pb_uint(&sec, 8, m->has_files);
		kp_pb_uint(&sec, 9, m->has_lines);
		kp_pb_uint(&sec, 10, m->has_inline);
		kp_pb_msg(out, 3, &sec);
	}
	for (i = 0; i < pp->nlocs; i++) {
		const struct location *l = pp->locv[i];

		kp_pb_reset(&sec);
		kp_pb_uint(&sec, 1, l->id);
		kp_pb_uint(&sec, 2, l->key[0]);
		if (l->key[1])
			kp_pb_uint(&sec, 3, l->key[2]);
		for (j = 3; j + 1 < l->keylen; j += 2) {
			kp_pb_reset(&pp->tmp);
			kp_pb_uint(&pp->tmp, 1, l->key[j]);
			kp_pb_int(&pp->tmp, 2, (int64_t)l->key[j + 1]);
			kp_pb_msg(&sec, 4, &pp->tmp);
		}
		kp_pb_msg(out, 4, &sec);
	}
	for (i = 0; i < kp_profile_len(pp->prof); i++) {
		const struct kp_pkey *k = kp_profile_get(pp->prof, (uint32_t)i);
		uint64_t name = str_id(pp, k->name);

		kp_pb_reset(&sec);
		kp_pb_uint(&sec, 1, i + 1);
		kp_pb_uint(&sec, 2, name);
		kp_pb_uint(&sec, 3, name);
		if (i < pp->func_cap && pp->func_file[i])
			kp_pb_uint(&sec, 4, str_id(pp, pp->func_file[i]));
		kp_pb_msg(out, 5, &sec);
	}
	/* strings used below must exist before the table is written */
	for (i = 0; i < kp_meta_count(); i++)
		str_id(pp, kp_meta_line(i) + 2);
	str_id(pp, "samples");
	str_id(pp, "count");
	for (i = 0; i < pp->nstr; i++)
		kp_pb_str(out, 6, pp->strv[i]);
	if (d) {
		char *end;
		double s;

		errno = 0;
		s = strtod(d, &end);
		if (end != d && !errno && s >= 0 && s < 1e9 &&
		    strcmp(end, " s") == 0)
			kp_pb_int(out, 10, (int64_t)(s * 1e9 + 0.5));
	}
	if (pp->values_ns || pp->clock_period) {
		value_type(pp, out, 11, "cpu", "nanoseconds");
		kp_pb_int(out, 12, pp->values_ns ? 1 : (int64_t)pp->clock_period);
	} else {
		value_type(pp, out, 11, "samples", "count");
		kp_pb_int(out, 12, 1);
	}
	for (i = 0; i < kp_meta_count(); i++)
		kp_pb_int(out, 13, (int64_t)str_id(pp, kp_meta_line(i) + 2));
	kp_pb_free(&sec);
}

void
kp_pprof_write(FILE *out, struct kp_pprof *pp)
{
	struct kp_pb pb;

	kp_pb_init(&pb);
	build(pp, &pb);
	kp_pb_write_gzip(out, &pb);
	kp_pb_free(&pb);
}

void
kp_pprof_free(struct kp_pprof *pp)
{
	struct strent *s, *st;
	struct mapping *m, *mt;
	struct location *l, *lt;

	if (!pp)
		return;
	HASH_ITER(hh, pp->strs, s, st) {
		HASH_DEL(pp->strs, s);
		free(s);
	}
	HASH_ITER(hh, pp->maps, m, mt) {
		HASH_DEL(pp->maps, m);
		free(m);
	}
	HASH_ITER(hh, pp->locs, l, lt) {
		HASH_DEL(pp->locs, l);
		free(l->key);
		free(l);
	}
	free(pp->strv);
	free(pp->mapv);
	free(pp->locv);
	free(pp->func_file);
	kp_slots_free(&pp->floc);
	kp_pool_free(&pp->pool);
	kp_pb_free(&pp->samples);
	kp_pb_free(&pp->tmp);
	kp_pb_free(&pp->tmp2);
	free(pp->ids);
	free(pp->keybuf);
	kp_profile_free(pp->prof);
	free(pp);
}
