/*
 * kp-pprof - kp in, a gzip-compressed profile.proto out, for pprof
 * (`pprof -top`, `pprof -http`, `go tool pprof`) and the tools that read
 * Go's profile format.
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
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kp.h"
/* uthash with kp's faster hash */
#define HASH_FUNCTION(keyptr, keylen, hashv) \
	((hashv) = (unsigned)kp_hash((keyptr), (keylen)))
#include <uthash.h>
#include <zlib.h>

#include "pb.h"
#include "profile.h"

static const char *opt_output;
static bool opt_process;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-pprof [-h] [-o file] [--process] [file ...]\n"
		"Read kp and write a gzip-compressed profile.proto for pprof\n"
		"('pprof -top profile.pb.gz', 'go tool pprof -http=: ...').\n"
		"With no file, or '-', read standard input.\n"
		"  -o, --output FILE  write to FILE (default: standard output),\n"
		"                     whole or not at all (the old FILE kept)\n"
		"      --process      the outermost frame, when it has neither\n"
		"                     address nor module, is the process name\n"
		"                     (perf2kp --comm): also label samples "
		"with it\n"
		"                     (NAME-PID and NAME-PID/TID frames are "
		"always\n"
		"                     labelled process, pid and tid)\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/* ---- the string table ---- */

struct strent {
	const char *s; /* interned */
	uint64_t id;
	UT_hash_handle hh;
};

static struct strent *strs;
static const char **strv;
static size_t nstr, strcap;

static uint64_t
str_id(const char *s)
{
	struct strent *e;

	s = kp_intern_str(s ? s : "");
	HASH_FIND_PTR(strs, &s, e);
	if (e)
		return e->id;
	e = kp_xcalloc(1, sizeof(*e));
	e->s = s;
	e->id = nstr;
	HASH_ADD_PTR(strs, s, e);
	if (nstr == strcap) {
		strcap = strcap ? strcap * 2 : 256;
		strv = kp_xrealloc(strv, strcap * sizeof(*strv));
	}
	strv[nstr++] = s;
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

static struct mapping *maps, **mapv;
static size_t nmaps;

static struct mapping *
mapping_of(const char *module)
{
	struct mapping *m;

	module = kp_module_norm(module);
	HASH_FIND_PTR(maps, &module, m);
	if (m)
		return m;
	m = kp_xcalloc(1, sizeof(*m));
	m->module = module;
	m->start = UINT64_MAX;
	m->id = ++nmaps;
	HASH_ADD_PTR(maps, module, m);
	mapv = kp_xrealloc(mapv, nmaps * sizeof(*mapv));
	mapv[nmaps - 1] = m;
	return m;
}

/* function id = profile key id + 1; its file name, if any frame had one */
static const char **func_file;
static size_t func_cap;

struct location {
	uint64_t *key; /* mapping, has address, address, (function, line)* */
	size_t keylen;
	uint64_t id;
	UT_hash_handle hh;
};

static struct location *locs, **locv;
static size_t nlocs, loccap;

static uint64_t
location_id(const uint64_t *key, size_t n)
{
	struct location *l;

	HASH_FIND(hh, locs, key, n * sizeof(*key), l);
	if (l)
		return l->id;
	l = kp_xcalloc(1, sizeof(*l));
	l->key = kp_xmalloc(n * sizeof(*key));
	memcpy(l->key, key, n * sizeof(*key));
	l->keylen = n;
	l->id = ++nlocs;
	HASH_ADD_KEYPTR(hh, locs, l->key, n * sizeof(*key), l);
	if (nlocs > loccap) {
		loccap = loccap ? loccap * 2 : 1024;
		locv = kp_xrealloc(locv, loccap * sizeof(*locv));
	}
	locv[nlocs - 1] = l;
	return l->id;
}

/* frame -> its Location id when it is not part of an inline chain */
struct floc {
	const struct kp_frame *f;
	uint64_t id; /* 0: not known yet */
};

static struct floc *floc;
static size_t floc_cap, floc_len;

static uint64_t *
frame_loc(const struct kp_frame *f)
{
	size_t i, j;

	if ((floc_len + 1) * 2 > floc_cap) {
		size_t cap = floc_cap ? floc_cap * 2 : 4096;
		struct floc *t = kp_xcalloc(cap, sizeof(*t));

		for (i = 0; i < floc_cap; i++) {
			if (!floc[i].f)
				continue;
			j = kp_hash(&floc[i].f, sizeof(floc[i].f)) & (cap - 1);
			while (t[j].f)
				j = (j + 1) & (cap - 1);
			t[j] = floc[i];
		}
		free(floc);
		floc = t;
		floc_cap = cap;
	}
	j = kp_hash(&f, sizeof(f)) & (floc_cap - 1);
	while (floc[j].f && floc[j].f != f)
		j = (j + 1) & (floc_cap - 1);
	if (!floc[j].f) {
		floc[j].f = f;
		floc_len++;
	}
	return &floc[j].id;
}

/* ---- samples ---- */

static struct kp_profile *prof;
static struct kp_pb samples, tmp, tmp2;
static uint64_t *ids, *keybuf;
static size_t idcap, keycap;
static uint64_t clock_period; /* fixed period in ns, or 0 */
static bool values_ns;	      /* the counts are nanoseconds */

static uint64_t
function_id(const struct kp_frame *f)
{
	uint32_t k = kp_profile_key(prof, f);

	if (k >= func_cap) {
		size_t cap = (k + 1) * 2;

		func_file = kp_xrealloc(func_file, cap * sizeof(*func_file));
		memset(func_file + func_cap, 0,
		       (cap - func_cap) * sizeof(*func_file));
		func_cap = cap;
	}
	if (!func_file[k] && f->file)
		func_file[k] = f->file;
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
label(struct kp_pb *out, const char *key, const char *str, uint64_t num)
{
	kp_pb_reset(&tmp2);
	kp_pb_uint(&tmp2, 1, str_id(key));
	if (str)
		kp_pb_uint(&tmp2, 2, str_id(str));
	else
		kp_pb_int(&tmp2, 3, (int64_t)num);
	kp_pb_msg(out, 3, &tmp2);
}

static void
add_sample(const struct kp_stack *st)
{
	size_t i = 0, j, n = 0, kn;
	uint64_t v[2];

	if (st->n > idcap) {
		idcap = st->n * 2;
		ids = kp_xrealloc(ids, idcap * sizeof(*ids));
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
			cached = frame_loc(f);
			if (*cached) {
				ids[n++] = *cached;
				i++;
				continue;
			}
		}
		m = f->module ? mapping_of(f->module) : NULL;
		kn = 3 + 2 * (j - i);
		if (kn > keycap) {
			keycap = kn * 2;
			keybuf = kp_xrealloc(keybuf, keycap * sizeof(*keybuf));
		}
		keybuf[0] = m ? m->id : 0;
		keybuf[1] = (f->flags & KP_F_ADDR) != 0;
		keybuf[2] = (f->flags & KP_F_ADDR) ? f->addr : 0;
		for (kn = 3; i < j; i++) {
			const struct kp_frame *g = st->frames[i];

			keybuf[kn++] = function_id(g);
			keybuf[kn++] = g->line;
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
		ids[n++] = location_id(keybuf, kn);
		if (cached)
			*cached = ids[n - 1];
	}
	kp_pb_reset(&tmp);
	kp_pb_packed(&tmp, 1, ids, n);
	n = 0;
	v[n++] = st->count;
	if (!values_ns && clock_period)
		v[n++] = st->count * clock_period;
	kp_pb_packed(&tmp, 2, v, n);
	if (st->n) {
		const struct kp_frame *p = st->frames[st->n - 1];
		size_t nl;
		uint64_t pid, tid;

		if (!(p->flags & KP_F_ADDR) && !p->module && p->sym) {
			if (parse_proc(p->sym, &nl, &pid, &tid) == 0) {
				char *name = kp_xstrndup(p->sym, nl);

				label(&tmp, "process", name, 0);
				free(name);
				if (pid)
					label(&tmp, "pid", NULL, pid);
				if (tid)
					label(&tmp, "tid", NULL, tid);
			} else if (opt_process) {
				label(&tmp, "process", p->sym, 0);
			}
		}
	}
	kp_pb_msg(&samples, 2, &tmp);
}

static void
value_type(struct kp_pb *out, unsigned field, const char *type,
	   const char *unit)
{
	kp_pb_reset(&tmp);
	kp_pb_uint(&tmp, 1, str_id(type));
	kp_pb_uint(&tmp, 2, str_id(unit));
	kp_pb_msg(out, field, &tmp);
}

static bool
clock_event(void)
{
	const char *ev = kp_meta_get("event");

	return ev && (strncmp(ev, "cpu-clock", 9) == 0 ||
		      strncmp(ev, "task-clock", 10) == 0);
}

/* What the counts are, from the metadata (before any sample). */
static void
sample_types(void)
{
	const char *w = kp_meta_get("weight"), *p = kp_meta_get("period");
	uint64_t period = 0;

	values_ns = w && strcmp(w, "period") == 0 && clock_event();
	if (!values_ns && w && strcmp(w, "samples") == 0 && clock_event() &&
	    p && kp_parse_u64(p, strlen(p), 10, &period) == 0)
		clock_period = period;
}

/*
 * profile.proto's values are int64, and pprof adds them up: a total
 * above INT64_MAX (or its nanoseconds, count * period) would read as
 * negative.  Refused before anything is written.
 */
static void
check_int64(uint64_t total)
{
	if (total > INT64_MAX)
		kp_die("the total count %" PRIu64 " is above %" PRId64
		       " (INT64_MAX), which pprof would read as negative",
		       total, INT64_MAX);
	if (!values_ns && clock_period && total > INT64_MAX / clock_period)
		kp_die("the total, %" PRIu64 " samples of %" PRIu64
		       " ns, is above %" PRId64
		       " ns (INT64_MAX), which pprof would read as negative",
		       total, clock_period, INT64_MAX);
}

/* The whole Profile message. */
static void
build(struct kp_pb *out)
{
	struct kp_pb sec;
	const char *d = kp_meta_get("duration");
	size_t i, j;

	kp_pb_init(&sec);
	if (values_ns) {
		value_type(out, 1, "cpu", "nanoseconds");
	} else {
		value_type(out, 1, "samples", "count");
		if (clock_period)
			value_type(out, 1, "cpu", "nanoseconds");
	}
	kp_pb_raw(out, samples.p, samples.len);
	for (i = 0; i < nmaps; i++) {
		struct mapping *m = mapv[i];

		kp_pb_reset(&sec);
		kp_pb_uint(&sec, 1, m->id);
		if (m->start != UINT64_MAX) {
			kp_pb_uint(&sec, 2, m->start);
			kp_pb_uint(&sec, 3, m->limit);
		}
		kp_pb_uint(&sec, 5,
			   str_id(strcmp(m->module, KP_MODULE_KERNEL) == 0
					  ? "[kernel.kallsyms]"
					  : m->module));
		kp_pb_uint(&sec, 7, 1); /* has_functions */
		kp_pb_uint(&sec, 8, m->has_files);
		kp_pb_uint(&sec, 9, m->has_lines);
		kp_pb_uint(&sec, 10, m->has_inline);
		kp_pb_msg(out, 3, &sec);
	}
	for (i = 0; i < nlocs; i++) {
		const struct location *l = locv[i];

		kp_pb_reset(&sec);
		kp_pb_uint(&sec, 1, l->id);
		kp_pb_uint(&sec, 2, l->key[0]);
		if (l->key[1])
			kp_pb_uint(&sec, 3, l->key[2]);
		for (j = 3; j + 1 < l->keylen; j += 2) {
			kp_pb_reset(&tmp);
			kp_pb_uint(&tmp, 1, l->key[j]);
			kp_pb_int(&tmp, 2, (int64_t)l->key[j + 1]);
			kp_pb_msg(&sec, 4, &tmp);
		}
		kp_pb_msg(out, 4, &sec);
	}
	for (i = 0; i < kp_profile_len(prof); i++) {
		const struct kp_pkey *k = kp_profile_get(prof, (uint32_t)i);
		uint64_t name = str_id(k->name);

		kp_pb_reset(&sec);
		kp_pb_uint(&sec, 1, i + 1);
		kp_pb_uint(&sec, 2, name);
		kp_pb_uint(&sec, 3, name);
		if (i < func_cap && func_file[i])
			kp_pb_uint(&sec, 4, str_id(func_file[i]));
		kp_pb_msg(out, 5, &sec);
	}
	/* strings used below must exist before the table is written */
	for (i = 0; i < kp_meta_count(); i++)
		str_id(kp_meta_line(i) + 2);
	str_id("samples");
	str_id("count");
	for (i = 0; i < nstr; i++)
		kp_pb_str(out, 6, strv[i]);
	if (d) {
		char *end;
		double s;

		errno = 0;
		s = strtod(d, &end);
		if (end != d && !errno && s >= 0 && s < 1e9 &&
		    strcmp(end, " s") == 0)
			kp_pb_int(out, 10, (int64_t)(s * 1e9 + 0.5));
	}
	if (values_ns || clock_period) {
		value_type(out, 11, "cpu", "nanoseconds");
		kp_pb_int(out, 12, values_ns ? 1 : (int64_t)clock_period);
	} else {
		value_type(out, 11, "samples", "count");
		kp_pb_int(out, 12, 1);
	}
	for (i = 0; i < kp_meta_count(); i++)
		kp_pb_int(out, 13, (int64_t)str_id(kp_meta_line(i) + 2));
	kp_pb_free(&sec);
}

/* gzip (deterministic: no name, no time) to fp. */
static void
write_gzip(FILE *fp, const struct kp_pb *b)
{
	unsigned char out[1 << 16];
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		kp_die("zlib: cannot start deflate");
	z.next_in = b->p;
	z.avail_in = (uInt)b->len;
	if (z.avail_in != b->len)
		kp_die("profile too large (%zu bytes)", b->len);
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		r = deflate(&z, Z_FINISH);
		if (r == Z_STREAM_ERROR)
			kp_die("zlib: deflate failed");
		if (fwrite(out, 1, sizeof(out) - z.avail_out, fp) !=
		    sizeof(out) - z.avail_out)
			break; /* reported by kp_close_output */
	} while (r != Z_STREAM_END);
	deflateEnd(&z);
}

int
main(int argc, char **argv)
{
	enum { OPT_PROCESS = 256 };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "process", no_argument, NULL, OPT_PROCESS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *agg;
	struct kp_pb out;
	FILE *fp = stdout;
	size_t i, n;
	int ch, status;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'o':
			opt_output = optarg;
			break;
		case OPT_PROCESS:
			opt_process = true;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	agg = kp_agg_read_summed(argc, argv);
	n = kp_agg_len(agg);
	if (!kp_agg_total(agg))
		kp_warn("no samples in the input; writing an empty profile");
	prof = kp_profile_new(KP_BY_FUNCTION, false);
	str_id(""); /* string_table[0], before any other string */
	sample_types();
	check_int64(kp_agg_total(agg));
	for (i = 0; i < n; i++)
		add_sample(kp_agg_get(agg, i));
	kp_pb_init(&out);
	build(&out);

	fp = kp_output_open(opt_output);
	write_gzip(fp, &out);
	status = kp_output_finish(fp, opt_output);
	kp_pb_free(&out);
	kp_profile_free(prof);
	kp_agg_free(agg);
	free(floc);
	return status;
}
