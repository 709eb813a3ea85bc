/*
 * kp-inclusive - per function, inclusive and exclusive samples and their
 * percentages of the total, sorted by inclusive:
 *
 *	 incl%  incl   excl%  excl  function
 *	32.04%   299   6.92%    64  do_syscall_64
 *	...
 *	100.00%  933 100.00%   933  Total
 *
 * A function counts once per sample for inclusive, even when it recurses
 * (perf report's "Children", pprof's "cum"); exclusive is the leaf frame
 * (perf report's "Self", pprof's "flat").  Also the callers (-C) or
 * callees (-c) of one function as a tree, and with two inputs a
 * differential table.  The counting rules live in common/profile.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

enum fmt { FMT_TEXT, FMT_TSV, FMT_JSON };

static enum kp_by opt_by = KP_BY_FUNCTION;
static bool opt_modules, opt_excl;
static enum fmt opt_fmt = FMT_TEXT;
static uint64_t opt_n;		/* 0: all rows */
static double opt_limit;	/* --percent-limit */
static uint64_t opt_depth;	/* -d; 0: default */
static const char *opt_callers; /* -C */
static const char *opt_callees; /* -c */

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-inclusive [-h] [-n rows] [--sort inclusive|exclusive]\n"
		"                    [--percent-limit P] [--by KEY] [--modules]\n"
		"                    [-C func | -c func] [-d depth]\n"
		"                    [--format text|tsv|json] [file [after-file]]\n"
		"Per function: inclusive and exclusive samples and their\n"
		"percentages of the total, sorted by inclusive.  A function counts\n"
		"once per sample for inclusive even when it recurses; exclusive\n"
		"is the leaf frame.  With two files, a differential table.  With\n"
		"no file, or '-', read standard input.\n"
		"  -n N               print the first N rows (default all)\n"
		"  --sort K           inclusive (default) or exclusive; with two\n"
		"                     files, which percentage is compared\n"
		"  --percent-limit P  leave out rows (and tree nodes) under P%%;\n"
		"                     with two files, differences under P points\n"
		"  --by KEY           function (default), module, address or\n"
		"                     function+offset\n"
		"  --modules          tell functions apart by module too, and\n"
		"                     print the module\n"
		"  -C FUNC            the callers of FUNC, as an indented tree\n"
		"  -c FUNC            FUNC's own line, then its callees as a tree\n"
		"  -d DEPTH           tree depth below FUNC (default: 1 for -c,\n"
		"                     all for -C); -n N keeps N children a node\n"
		"  --format F         text (default, aligned), tsv or json\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped or FUNC not found,\n"
		"2 fatal, 64 usage.\n");
	exit(status);
}

/* ---- output helpers ---- */

static void
json_str(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static int
digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

/* Is there a module column (--modules, unless the key is the module)? */
static bool
show_module(void)
{
	return opt_modules && opt_by != KP_BY_MODULE;
}

/* What the key column is called. */
static const char *
key_title(void)
{
	return opt_by == KP_BY_MODULE ? "module" : "function";
}

/* The name column of a key: the name, and the module with --modules. */
static void
text_name(const struct kp_pkey *k, int width)
{
	if (show_module())
		printf("%-*s  %s\n", width, k->name,
		       k->module ? k->module : "[unknown]");
	else
		printf("%s\n", k->name);
}

static void
tsv_name(const struct kp_pkey *k)
{
	if (show_module())
		printf("\t%s\t%s\n", k->name,
		       k->module ? k->module : "[unknown]");
	else
		printf("\t%s\n", k->name);
}

static void
json_name(const struct kp_pkey *k)
{
	printf("\"%s\": ", key_title());
	json_str(k->name);
	if (show_module()) {
		printf(", \"module\": ");
		if (k->module)
			json_str(k->module);
		else
			printf("null");
	}
}

/* The title of the name column(s). */
static void
text_header(int width)
{
	if (show_module())
		printf("%-*s  module\n", width, key_title());
	else
		printf("%s\n", key_title());
}

/* ---- the table ---- */

static void
print_table(const struct kp_profile *p)
{
	uint64_t total = kp_profile_total(p);
	uint32_t *ids = kp_profile_sorted(p, opt_excl);
	size_t i, len = kp_profile_len(p), rows = 0;
	int cw = max_int(digits(total), 9), nw = 8;
	const struct kp_pkey *k;

	/* the rows shown: -n and --percent-limit */
	for (i = 0; i < len; i++) {
		k = kp_profile_get(p, ids[i]);
		if (opt_n && rows == opt_n)
			break;
		if (kp_profile_pct(p, opt_excl ? k->excl : k->incl) <
		    opt_limit)
			break;
		rows++;
		nw = max_int(nw, (int)strlen(k->name));
	}
	switch (opt_fmt) {
	case FMT_TEXT:
		printf("%7s  %*s  %7s  %*s  ", "incl%", cw, "inclusive",
		       "excl%", cw, "exclusive");
		text_header(nw);
		for (i = 0; i < rows; i++) {
			k = kp_profile_get(p, ids[i]);
			printf("%6.2f%%  %*" PRIu64 "  %6.2f%%  %*" PRIu64 "  ",
			       kp_profile_pct(p, k->incl), cw, k->incl,
			       kp_profile_pct(p, k->excl), cw, k->excl);
			text_name(k, nw);
		}
		printf("%6.2f%%  %*" PRIu64 "  %6.2f%%  %*" PRIu64 "  Total\n",
		       total ? 100.0 : 0.0, cw, total, total ? 100.0 : 0.0, cw,
		       total);
		break;
	case FMT_TSV:
		printf("# total: %" PRIu64 "\n", total);
		printf("inclusive_pct\tinclusive\texclusive_pct\texclusive\t%s%s\n",
		       key_title(), show_module() ? "\tmodule" : "");
		for (i = 0; i < rows; i++) {
			k = kp_profile_get(p, ids[i]);
			printf("%.4f\t%" PRIu64 "\t%.4f\t%" PRIu64,
			       kp_profile_pct(p, k->incl), k->incl,
			       kp_profile_pct(p, k->excl), k->excl);
			tsv_name(k);
		}
		break;
	case FMT_JSON:
		printf("{\"by\": \"%s\", \"sort\": \"%s\", \"total\": %" PRIu64
		       ", \"rows\": [",
		       kp_by_name(opt_by), opt_excl ? "exclusive" : "inclusive",
		       total);
		for (i = 0; i < rows; i++) {
			k = kp_profile_get(p, ids[i]);
			printf("%s\n  {", i ? "," : "");
			json_name(k);
			printf(", \"inclusive\": %" PRIu64
			       ", \"inclusive_pct\": %.4f, \"exclusive\": %" PRIu64
			       ", \"exclusive_pct\": %.4f}",
			       k->incl, kp_profile_pct(p, k->incl), k->excl,
			       kp_profile_pct(p, k->excl));
		}
		printf("%s]}\n", rows ? "\n" : "");
		break;
	}
	free(ids);
}

/* ---- the differential table ---- */

struct drow {
	const struct kp_pkey *k; /* either side's key (same name, module) */
	uint64_t a, b;		 /* samples before, after */
	double pa, pb, d;	 /* percentages and b - a */
};

static int
cmp_drow(const void *x, const void *y)
{
	const struct drow *r = x, *s = y;
	double ar = fabs(r->d), as = fabs(s->d);
	int c;

	if (ar != as)
		return ar > as ? -1 : 1;
	if (r->d != s->d)
		return r->d > s->d ? -1 : 1;
	c = strcmp(r->k->name, s->k->name);
	if (c || r->k->module == s->k->module)
		return c;
	if (!r->k->module || !s->k->module)
		return r->k->module ? 1 : -1;
	return strcmp(r->k->module, s->k->module);
}

static uint64_t
metric(const struct kp_pkey *k)
{
	return opt_excl ? k->excl : k->incl;
}

static void
print_diff(const struct kp_profile *pa, const struct kp_profile *pb)
{
	size_t la = kp_profile_len(pa), lb = kp_profile_len(pb), n = 0, i, rows;
	struct drow *r = kp_xcalloc(la + lb + 1, sizeof(*r));
	uint64_t ta = kp_profile_total(pa), tb = kp_profile_total(pb);
	int cw = max_int(max_int(digits(ta), digits(tb)), 8), nw = 8;
	const struct kp_pkey *k;
	uint32_t id;

	/* every key of a, with b's count or 0; then b's keys not in a */
	for (i = 0; i < la; i++) {
		k = kp_profile_get(pa, (uint32_t)i);
		id = kp_profile_lookup(pb, k->name, k->module);
		r[n].k = k;
		r[n].a = metric(k);
		r[n].b = id == KP_KEY_NONE ? 0 : metric(kp_profile_get(pb, id));
		n++;
	}
	for (i = 0; i < lb; i++) {
		k = kp_profile_get(pb, (uint32_t)i);
		if (kp_profile_lookup(pa, k->name, k->module) != KP_KEY_NONE)
			continue;
		r[n].k = k;
		r[n].a = 0;
		r[n].b = metric(k);
		n++;
	}
	for (i = 0; i < n; i++) {
		r[i].pa = kp_profile_pct(pa, r[i].a);
		r[i].pb = kp_profile_pct(pb, r[i].b);
		r[i].d = r[i].pb - r[i].pa;
	}
	qsort(r, n, sizeof(*r), cmp_drow);
	for (rows = 0; rows < n; rows++) {
		if (opt_n && rows == opt_n)
			break;
		if (fabs(r[rows].d) < opt_limit)
			break;
		nw = max_int(nw, (int)strlen(r[rows].k->name));
	}
	switch (opt_fmt) {
	case FMT_TEXT:
		printf("%*s  %*s  %8s  ", cw, "before%", cw, "after%", "diff");
		text_header(nw);
		for (i = 0; i < rows; i++) {
			printf("%*.2f%%  %*.2f%%  %+7.2f%%  ", cw - 1, r[i].pa,
			       cw - 1, r[i].pb, r[i].d);
			text_name(r[i].k, nw);
		}
		printf("%*" PRIu64 "  %*" PRIu64 "  %8s  Total samples\n", cw,
		       ta, cw, tb, "");
		break;
	case FMT_TSV:
		printf("# total before: %" PRIu64 "\n# total after: %" PRIu64
		       "\n",
		       ta, tb);
		printf("before_pct\tafter_pct\tdiff_pct\tbefore\tafter\t%s%s\n",
		       key_title(), show_module() ? "\tmodule" : "");
		for (i = 0; i < rows; i++) {
			printf("%.4f\t%.4f\t%+.4f\t%" PRIu64 "\t%" PRIu64,
			       r[i].pa, r[i].pb, r[i].d, r[i].a, r[i].b);
			tsv_name(r[i].k);
		}
		break;
	case FMT_JSON:
		printf("{\"by\": \"%s\", \"sort\": \"%s\", \"total_before\": %" PRIu64
		       ", \"total_after\": %" PRIu64 ", \"rows\": [",
		       kp_by_name(opt_by), opt_excl ? "exclusive" : "inclusive",
		       ta, tb);
		for (i = 0; i < rows; i++) {
			printf("%s\n  {", i ? "," : "");
			json_name(r[i].k);
			printf(", \"before\": %" PRIu64 ", \"after\": %" PRIu64
			       ", \"before_pct\": %.4f, \"after_pct\": %.4f"
			       ", \"diff_pct\": %.4f}",
			       r[i].a, r[i].b, r[i].pa, r[i].pb, r[i].d);
		}
		printf("%s]}\n", rows ? "\n" : "");
		break;
	}
	free(r);
}

/* ---- caller and callee trees ---- */

/* Is the node shown: --percent-limit. */
static bool
node_shown(const struct kp_profile *p, const struct kp_tnode *t)
{
	return kp_profile_pct(p, t->total) >= opt_limit;
}

static void
print_nodes(const struct kp_profile *p, const struct kp_tree *t, uint32_t i,
	    int cw, bool *first)
{
	const struct kp_tnode *nd = kp_tree_node(t, i);
	const struct kp_pkey *k;
	uint64_t shown = 0;
	uint32_t c;

	for (c = nd->child; c != KP_KEY_NONE; c = kp_tree_node(t, c)->next) {
		const struct kp_tnode *ch = kp_tree_node(t, c);

		if (opt_n && shown == opt_n)
			break;
		if (!node_shown(p, ch))
			break; /* sorted: the rest are smaller */
		shown++;
		k = kp_profile_get(p, ch->key);
		switch (opt_fmt) {
		case FMT_TEXT:
			printf("%6.2f%%  %*" PRIu64 "  %*s", kp_profile_pct(p, ch->total),
			       cw, ch->total, (int)(2 * (ch->depth - 1)), "");
			if (show_module())
				printf("%s  [%s]\n", k->name,
				       k->module ? k->module : "unknown");
			else
				printf("%s\n", k->name);
			print_nodes(p, t, c, cw, first);
			break;
		case FMT_TSV:
			printf("%u\t%.4f\t%" PRIu64 "\t%.4f\t%" PRIu64, ch->depth,
			       kp_profile_pct(p, ch->total), ch->total,
			       kp_profile_pct(p, ch->self), ch->self);
			tsv_name(k);
			print_nodes(p, t, c, cw, first);
			break;
		case FMT_JSON:
			printf("%s\n%*s{", *first ? "" : ",",
			       (int)(2 * ch->depth + 2), "");
			*first = false;
			json_name(k);
			printf(", \"inclusive\": %" PRIu64
			       ", \"inclusive_pct\": %.4f, \"self\": %" PRIu64
			       ", \"self_pct\": %.4f, \"children\": [",
			       ch->total, kp_profile_pct(p, ch->total), ch->self,
			       kp_profile_pct(p, ch->self));
			*first = true;
			print_nodes(p, t, c, cw, first);
			printf("]}");
			*first = false;
			break;
		}
	}
}

static void
print_tree(struct kp_profile *p, const struct kp_agg *agg, uint32_t id,
	   bool callers, bool first_tree)
{
	const struct kp_pkey *k = kp_profile_get(p, id);
	uint64_t total = kp_profile_total(p);
	int cw = max_int(digits(total), 9), nw = max_int(8, (int)strlen(k->name));
	size_t depth = opt_depth ? opt_depth : callers ? 0 : 1;
	struct kp_tree *t;
	bool first = true;

	t = kp_profile_tree(p, agg, callers ? KP_TREE_CALLERS : KP_TREE_CALLEES,
			    id, depth);
	kp_tree_sort(t, p);
	switch (opt_fmt) {
	case FMT_TEXT:
		if (!first_tree)
			putchar('\n');
		printf("%7s  %*s  %7s  %*s  ", "incl%", cw, "inclusive",
		       "excl%", cw, "exclusive");
		text_header(nw);
		printf("%6.2f%%  %*" PRIu64 "  %6.2f%%  %*" PRIu64 "  ",
		       kp_profile_pct(p, k->incl), cw, k->incl,
		       kp_profile_pct(p, k->excl), cw, k->excl);
		text_name(k, nw);
		printf("%7s  %*s  %s of %s\n", "incl%", cw, "inclusive",
		       callers ? "callers" : "callees", k->name);
		print_nodes(p, t, 0, cw, &first);
		break;
	case FMT_TSV:
		if (first_tree) {
			printf("# total: %" PRIu64 "\n", total);
			printf("depth\tinclusive_pct\tinclusive\tself_pct\tself\t%s%s\n",
			       key_title(), show_module() ? "\tmodule" : "");
		}
		printf("0\t%.4f\t%" PRIu64 "\t%.4f\t%" PRIu64,
		       kp_profile_pct(p, k->incl), k->incl,
		       kp_profile_pct(p, k->excl), k->excl);
		tsv_name(k);
		print_nodes(p, t, 0, cw, &first);
		break;
	case FMT_JSON:
		printf("%s\n {", first_tree ? "" : ",");
		json_name(k);
		printf(", \"inclusive\": %" PRIu64 ", \"inclusive_pct\": %.4f"
		       ", \"exclusive\": %" PRIu64 ", \"exclusive_pct\": %.4f"
		       ", \"%s\": [",
		       k->incl, kp_profile_pct(p, k->incl), k->excl,
		       kp_profile_pct(p, k->excl), callers ? "callers" : "callees");
		print_nodes(p, t, 0, cw, &first);
		printf("]}");
		break;
	}
	kp_tree_free(t);
}

static int
trees(struct kp_profile *p, const struct kp_agg *agg)
{
	const char *func = opt_callers ? opt_callers : opt_callees;
	size_t n = kp_profile_find(p, func, NULL, NULL, 0), i;
	uint32_t *ids;

	if (n == 0) {
		kp_warn("function '%s' does not occur in the input", func);
		i = (size_t)kp_finish();
		return i ? (int)i : KP_EXIT_SKIPPED;
	}
	ids = kp_xmalloc(n * sizeof(*ids));
	kp_profile_find(p, func, NULL, ids, n);
	if (opt_fmt == FMT_JSON)
		printf("{\"by\": \"%s\", \"total\": %" PRIu64 ", \"trees\": [",
		       kp_by_name(opt_by), kp_profile_total(p));
	for (i = 0; i < n; i++)
		print_tree(p, agg, ids[i], opt_callers != NULL, i == 0);
	if (opt_fmt == FMT_JSON)
		printf("\n]}\n");
	free(ids);
	return kp_finish();
}


int
main(int argc, char **argv)
{
	enum { OPT_SORT = 256, OPT_LIMIT, OPT_BY, OPT_MODULES, OPT_FORMAT };
	static const struct option longopts[] = {
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "percent-limit", required_argument, NULL, OPT_LIMIT },
		{ "by", required_argument, NULL, OPT_BY },
		{ "modules", no_argument, NULL, OPT_MODULES },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *a, *b;
	struct kp_profile *pa, *pb;
	int ch, by, status;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "C:c:d:hn:", longopts, NULL)) !=
	       -1)
		switch (ch) {
		case 'C':
			opt_callers = optarg;
			break;
		case 'c':
			opt_callees = optarg;
			break;
		case 'd':
			opt_depth = kp_arg_u64("-d", optarg);
			if (opt_depth == 0)
				kp_usage_error("-d: the depth must be 1 or more");
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'n':
			opt_n = kp_arg_u64("-n", optarg);
			break;
		case OPT_BY:
			by = kp_by_parse(optarg);
			if (by < 0)
				kp_usage_error("--by: expected function, module, "
					       "address or function+offset, "
					       "not '%s'", optarg);
			opt_by = (enum kp_by)by;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				opt_fmt = FMT_TEXT;
			else if (strcmp(optarg, "tsv") == 0)
				opt_fmt = FMT_TSV;
			else if (strcmp(optarg, "json") == 0)
				opt_fmt = FMT_JSON;
			else
				kp_usage_error("--format: expected text, tsv or "
					       "json, not '%s'", optarg);
			break;
		case OPT_LIMIT:
			opt_limit = kp_arg_double("--percent-limit", optarg);
			break;
		case OPT_MODULES:
			opt_modules = true;
			break;
		case OPT_SORT:
			if (strcmp(optarg, "inclusive") == 0)
				opt_excl = false;
			else if (strcmp(optarg, "exclusive") == 0)
				opt_excl = true;
			else
				kp_usage_error("--sort: expected inclusive or "
					       "exclusive, not '%s'", optarg);
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;
	if (opt_callers && opt_callees)
		kp_usage_error("-C and -c cannot be used together");
	if (opt_depth && !opt_callers && !opt_callees)
		kp_usage_error("-d needs -C or -c");
	if (argc > 2)
		kp_usage_error("at most two input files");
	if (argc == 2 && (opt_callers || opt_callees))
		kp_usage_error("-C and -c take one input, not two");

	a = kp_agg_read_summed(argc ? 1 : 0, argv);
	pa = kp_profile_new(opt_by, opt_modules);
	kp_profile_add_agg(pa, a);
	if (opt_callers || opt_callees) {
		status = trees(pa, a);
	} else if (argc == 2) {
		b = kp_agg_read_summed(1, argv + 1);
		pb = kp_profile_new(opt_by, opt_modules);
		kp_profile_add_agg(pb, b);
		print_diff(pa, pb);
		kp_profile_free(pb);
		kp_agg_free(b);
		status = kp_finish();
	} else {
		print_table(pa);
		status = kp_finish();
	}
	kp_profile_free(pa);
	kp_agg_free(a);
	return status;
}
