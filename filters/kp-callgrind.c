/*
 * kp-callgrind - kp in, the callgrind profile format out, for
 * kcachegrind/qcachegrind and callgrind_annotate:
 *
 *	# callgrind format
 *	version: 1
 *	creator: kp-callgrind
 *	positions: line
 *	events: Samples
 *	summary: 101
 *
 *	ob=(1) kernel
 *	fl=(1) ???
 *	fn=(1) vfs_read
 *	0 34
 *	cob=(2) ext4
 *	cfi=(1)
 *	cfn=(2) ext4_file_read_iter
 *	calls=50 0
 *	0 50
 *
 * One fn= block per function (named as kp-inclusive names them) with its
 * exclusive samples on cost lines, then one call per caller -> callee
 * edge with the inclusive samples of the call; ob/fl/fn names are
 * compressed ("(id) name" the first time, "(id)" after).
 *
 * Which edge a sample's cost goes to: for each function in the stack,
 * the call into its outermost occurrence.  So the calls into a function
 * add up to its inclusive samples (counted once per sample, even when
 * it recurses: what callgrind_annotate --inclusive=yes and kp-inclusive
 * report), and without recursion a function's exclusive samples plus its
 * calls out add up to the same.  The outermost frames are called by one
 * synthetic function, "[all]", whose inclusive cost is the total.
 */
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

#include "profile.h"

#define ROOT_NAME "[all]"

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-callgrind [-h] [-o file] [file ...]\n"
		"Read kp and write the callgrind format for kcachegrind and\n"
		"callgrind_annotate: per function, exclusive samples and the\n"
		"inclusive samples of each call.  With no file, or '-', read\n"
		"standard input.\n"
		"  -o, --output FILE  write to FILE (default: standard output),\n"
		"                     whole or not at all (the old FILE kept)\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/*
 * A cost: self (callee == KP_KEY_NONE) or a call, at a line of the
 * caller.  The costs are one array (sorted at the end); a kp_slots
 * table indexes it, its slots holding an index + 1.
 */
struct ckey {
	uint32_t fn, callee, line;
};

struct cost {
	struct ckey k;
	uint64_t cost, calls;
};

static struct cost *costs;
static size_t ncosts, costs_cap;
static struct kp_slots cost_index;

static inline uint64_t
cost_hash(const struct ckey *k)
{
	uint64_t h = ((uint64_t)k->fn << 32 | k->callee) *
			     0x9e3779b97f4a7c15ull ^
		     (uint64_t)k->line * 0xbf58476d1ce4e5b9ull;

	return h ^ h >> 31;
}

static void
add_cost(uint32_t fn, uint32_t callee, uint32_t line, uint64_t n)
{
	struct ckey k = { fn, callee, line };
	uint64_t h = cost_hash(&k);
	struct kp_slots *t = &cost_index;
	struct cost *c = NULL;
	size_t j, mask;

	if (t->cap) {
		mask = t->cap - 1;
		for (j = h & mask; t->tab[j].p; j = (j + 1) & mask) {
			c = &costs[(uintptr_t)t->tab[j].p - 1];
			if (t->tab[j].hash == h && c->k.fn == fn &&
			    c->k.callee == callee && c->k.line == line)
				break;
			c = NULL;
		}
	}
	if (!c) {
		if (ncosts == costs_cap) {
			costs_cap = costs_cap ? costs_cap * 2 : 4096;
			costs = kp_xrealloc(costs, costs_cap * sizeof(*costs));
		}
		c = &costs[ncosts++];
		*c = (struct cost){ .k = k };
		kp_slots_reserve(t, 4096);
		kp_slots_put(t, h, (void *)(uintptr_t)ncosts);
	}
	/* saturate: the total has been checked, so only sums of calls */
	c->cost = c->cost > UINT64_MAX - n ? UINT64_MAX : c->cost + n;
	c->calls = c->calls > UINT64_MAX - n ? UINT64_MAX : c->calls + n;
}

static int
cmp_cost(const void *a, const void *b)
{
	const struct cost *x = a, *y = b;

	if (x->k.fn != y->k.fn)
		return x->k.fn < y->k.fn ? -1 : 1;
	/* self costs first, then calls */
	if ((x->k.callee == KP_KEY_NONE) != (y->k.callee == KP_KEY_NONE))
		return x->k.callee == KP_KEY_NONE ? -1 : 1;
	if (x->k.line != y->k.line)
		return x->k.line < y->k.line ? -1 : 1;
	if (x->k.callee != y->k.callee)
		return x->k.callee < y->k.callee ? -1 : 1;
	return 0;
}

/* per function: module and file (from its first frame that has them) */
struct finfo {
	const char *module, *file;
	uint64_t seen; /* the stack it was last seen in, + 1 */
};

static struct finfo *info;
static size_t ninfo;
static uint32_t root; /* the id of [all] (one past the profile's keys) */

static struct finfo *
finfo(uint32_t k)
{
	if (k >= ninfo) {
		size_t n = (k + 1) * 2;

		info = kp_xrealloc(info, n * sizeof(*info));
		memset(info + ninfo, 0, (n - ninfo) * sizeof(*info));
		ninfo = n;
	}
	return &info[k];
}

static void
add_stack(struct kp_profile *prof, const struct kp_stack *st, uint64_t stamp,
	  uint32_t **keys, size_t *cap)
{
	size_t i;

	if (!st->n) {
		add_cost(root, KP_KEY_NONE, 0, st->count);
		return;
	}
	if (st->n > *cap) {
		*cap = st->n * 2;
		*keys = kp_xrealloc(*keys, *cap * sizeof(**keys));
	}
	kp_profile_keys(prof, st->frames, st->n, *keys);
	for (i = 0; i < st->n; i++) {
		struct finfo *fi = finfo((*keys)[i]);

		if (!fi->module)
			fi->module = kp_module_norm(st->frames[i]->module);
		if (!fi->file)
			fi->file = st->frames[i]->file;
	}
	add_cost((*keys)[0], KP_KEY_NONE, st->frames[0]->line, st->count);
	/* from the outermost frame in: the first time a function is met
	 * is its outermost occurrence, and its caller gets the edge */
	for (i = st->n; i-- > 0;) {
		struct finfo *fi = finfo((*keys)[i]);

		if (fi->seen == stamp)
			continue;
		fi->seen = stamp;
		if (i == st->n - 1)
			add_cost(root, (*keys)[i], 0, st->count);
		else
			add_cost((*keys)[i + 1], (*keys)[i],
				 st->frames[i + 1]->line, st->count);
	}
}

/* name compression: "(id) name" the first time, then "(id)" */
struct names {
	const char **v; /* indexed by our id; NULL until written */
	uint32_t *ids;	/* our id -> compressed id, 0 if not yet */
	size_t cap;
	uint32_t next;
};

static struct names obs, fls, fns;

static void
put_name(FILE *out, const char *what, struct names *nm, uint32_t id,
	 const char *name)
{
	if (id >= nm->cap) {
		size_t n = (id + 1) * 2;

		nm->ids = kp_xrealloc(nm->ids, n * sizeof(*nm->ids));
		memset(nm->ids + nm->cap, 0, (n - nm->cap) * sizeof(*nm->ids));
		nm->cap = n;
	}
	fputs(what, out);
	if (nm->ids[id]) {
		fprintf(out, "=(%" PRIu32 ")\n", nm->ids[id]);
		return;
	}
	nm->ids[id] = ++nm->next;
	fprintf(out, "=(%" PRIu32 ") ", nm->ids[id]);
	/* a name is one line: a newline would end it */
	for (; *name; name++)
		putc(*name == '\n' || *name == '\r' ? ' ' : *name, out);
	putc('\n', out);
}

/* Files and modules get small ids by interned pointer. */
struct sid {
	const char *s;
	uint32_t id;
	UT_hash_handle hh;
};

static uint32_t
str_id(struct sid **tab, const char *s)
{
	struct sid *e;

	HASH_FIND_PTR(*tab, &s, e);
	if (!e) {
		e = kp_xcalloc(1, sizeof(*e));
		e->s = s;
		e->id = HASH_COUNT(*tab);
		HASH_ADD_PTR(*tab, s, e);
	}
	return e->id;
}

static struct sid *modtab, *filetab;

static const char *
fn_name(struct kp_profile *prof, uint32_t k)
{
	return k == root ? ROOT_NAME : kp_profile_get(prof, k)->name;
}

static void
put_ob(FILE *out, const char *what, uint32_t k)
{
	const char *m = info[k].module ? info[k].module : "???";

	put_name(out, what, &obs, str_id(&modtab, kp_intern_str(m)), m);
}

static void
put_fl(FILE *out, const char *what, uint32_t k)
{
	const char *f = info[k].file ? info[k].file : "???";

	put_name(out, what, &fls, str_id(&filetab, kp_intern_str(f)), f);
}

static void
write_callgrind(FILE *out, struct kp_profile *prof, uint64_t total)
{
	struct cost *c;
	size_t i, n;
	uint32_t cur = KP_KEY_NONE;

	if (ncosts)
		qsort(costs, ncosts, sizeof(*costs), cmp_cost);
	fputs("# callgrind format\n"
	      "version: 1\n"
	      "creator: kp-callgrind\n",
	      out);
	for (n = 0; n < kp_meta_count(); n++) {
		fputs(kp_meta_line(n), out);
		putc('\n', out);
	}
	fprintf(out,
		"positions: line\n"
		"events: Samples\n"
		"summary: %" PRIu64 "\n",
		total);
	for (i = 0; i < ncosts; i++) {
		c = &costs[i];
		if (c->k.fn != cur) {
			cur = c->k.fn;
			putc('\n', out);
			put_ob(out, "ob", cur);
			put_fl(out, "fl", cur);
			put_name(out, "fn", &fns, cur, fn_name(prof, cur));
		}
		if (c->k.callee == KP_KEY_NONE) {
			fprintf(out, "%" PRIu32 " %" PRIu64 "\n", c->k.line,
				c->cost);
			continue;
		}
		put_ob(out, "cob", c->k.callee);
		put_fl(out, "cfi", c->k.callee);
		put_name(out, "cfn", &fns, c->k.callee,
			 fn_name(prof, c->k.callee));
		fprintf(out,
			"calls=%" PRIu64 " 0\n"
			"%" PRIu32 " %" PRIu64 "\n",
			c->calls, c->k.line, c->cost);
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL;
	struct kp_profile *prof;
	struct kp_agg *agg;
	struct sid *e, *et;
	uint32_t *keys = NULL;
	size_t i, n, cap = 0;
	FILE *fp = stdout;
	int ch, status;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'o':
			output = optarg;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	agg = kp_agg_read_summed(argc, argv);
	if (!kp_agg_total(agg))
		kp_warn("no samples in the input; writing an empty profile");
	prof = kp_profile_new(KP_BY_FUNCTION, false);
	n = kp_agg_len(agg);
	/* key ids first, so that [all] can take the id after them */
	for (i = 0; i < n; i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);

		if (st->n > cap) {
			cap = st->n * 2;
			keys = kp_xrealloc(keys, cap * sizeof(*keys));
		}
		kp_profile_keys(prof, st->frames, st->n, keys);
	}
	root = (uint32_t)kp_profile_len(prof);
	finfo(root)->module = NULL;
	for (i = 0; i < n; i++)
		add_stack(prof, kp_agg_get(agg, i), i + 1, &keys, &cap);

	fp = kp_output_open(output);
	write_callgrind(fp, prof, kp_agg_total(agg));
	status = kp_output_finish(fp, output);

	free(costs);
	kp_slots_free(&cost_index);
	HASH_ITER(hh, modtab, e, et) {
		HASH_DEL(modtab, e);
		free(e);
	}
	HASH_ITER(hh, filetab, e, et) {
		HASH_DEL(filetab, e);
		free(e);
	}
	free(keys);
	free(info);
	free(obs.ids);
	free(fls.ids);
	free(fns.ids);
	kp_profile_free(prof);
	kp_agg_free(agg);
	return status;
}
