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
 * callees (-c) of one function as a tree, and with two inputs (or
 * several runs a side, "A1 A2 -- B1 B2") a differential table that says
 * which changes are more than sampling noise.  The counting rules live
 * in common/profile.c, the reports in common/report.h, the tests in
 * common/diff.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "diff.h"
#include "report.h"

static struct kp_report rep = { .fmt = KP_FMT_TEXT, .by = KP_BY_FUNCTION };
static bool opt_context;   /* --by context */
static bool opt_absolute;  /* --absolute */
static double opt_alpha = 0.05;
static uint64_t opt_depth; /* -d; 0: default */
static const char *opt_callers; /* -C */
static const char *opt_callees; /* -c */
static enum kp_color opt_color = KP_COLOR_AUTO;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-inclusive [-h] [-n rows] [--sort K] [--percent-limit P]\n"
		"                    [--by KEY] [--modules] [-C func | -c func]\n"
		"                    [-d depth] [--format text|tsv|json]\n"
		"                    [--color=auto|always|never]\n"
		"                    [--normalize | --absolute] [--alpha A]\n"
		"                    [file [after-file] | A1 A2 ... -- B1 B2 ...]\n"
		"Per function: inclusive and exclusive samples and their\n"
		"percentages of the total, sorted by inclusive.  A function counts\n"
		"once per sample for inclusive even when it recurses; exclusive\n"
		"is the leaf frame.  With two files, a differential table with a\n"
		"p-value per row; with several runs a side (A1 A2 -- B1 B2), tested\n"
		"across the runs.  With no file, or '-', read standard input.\n"
		"  -n N               print the first N rows (default all)\n"
		"  --sort K           inclusive (default), exclusive, name or\n"
		"                     module; with two files, which samples are\n"
		"                     compared (inclusive unless exclusive)\n"
		"  --percent-limit P  leave out rows (and tree nodes) under P%%;\n"
		"                     with two files, differences under P points\n"
		"                     (P samples with --absolute)\n"
		"  --by KEY           function (default), module, address,\n"
		"                     function+offset or context (user, task,\n"
		"                     softirq, hardirq, nmi, idle)\n"
		"  --modules          tell functions apart by module too, and\n"
		"                     print the module\n"
		"  -C FUNC            the callers of FUNC, as an indented tree\n"
		"  -c FUNC            FUNC's own line, then its callees as a tree\n"
		"  -d DEPTH           tree depth below FUNC (default: 1 for -c,\n"
		"                     all for -C); -n N keeps N children a node\n"
		"  --format F         text (default, aligned), tsv or json\n"
		"  --color[=WHEN]     colour text tables: auto (default: when\n"
		"                     stdout is a terminal), always or never\n"
		"  --normalize        compare shares of each side's total (default)\n"
		"  --absolute         compare sample counts (runs of equal length)\n"
		"  --alpha A          significance level of the adjusted p-values\n"
		"                     (default 0.05)\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped or FUNC not found,\n"
		"2 fatal, 64 usage.\n");
	exit(status);
}

/* A frame as the profile keys it (kp_profile_reduce). */
static const struct kp_frame *
reduce(const struct kp_frame *f)
{
	return kp_profile_reduce(f, rep.by, rep.modules);
}

/*
 * The profile of the inputs (none: standard input), counted record by
 * record as they are read: memory grows with the keys, not with the
 * stacks of every run of a differential.
 */
static struct kp_profile *
count(int nfiles, char **files)
{
	struct kp_profile *p = kp_profile_new(rep.by, rep.modules);
	const struct kp_stack *st;
	const struct kp_frame *f;
	struct kp_reader *rd;
	uint64_t total = 0;
	int i;

	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		rd = kp_reader_open(nfiles ? files[i] : "-");
		/* --by context reads the frames' addresses */
		if (!opt_context) {
			kp_reader_set_key(rd, reduce);
			if (rep.by != KP_BY_ADDRESS && rep.by != KP_BY_OFFSET)
				kp_reader_key_ignores(rd, KP_KEY_NAMED |
							  KP_KEY_UNNAMED);
		}
		while ((st = kp_reader_next(rd)) != NULL) {
			if (st->count > UINT64_MAX - total)
				kp_die("%s: the total count overflows 64 bits",
				       kp_input_name(kp_reader_input(rd)));
			total += st->count;
			if (opt_context) {
				f = kp_context_frame(st->frames, st->n);
				kp_profile_add(p, &f, 1, st->count);
			} else {
				kp_profile_add_ids(p, st->frames,
						   kp_reader_ids(rd), st->n,
						   st->count);
			}
		}
		kp_reader_close(rd);
	}
	return p;
}

static int
trees(struct kp_profile *p, const struct kp_agg *agg)
{
	const char *func = opt_callers ? opt_callers : opt_callees;
	size_t n = kp_profile_find(p, func, NULL, NULL, 0), i;
	size_t depth = opt_depth ? opt_depth : opt_callers ? 0 : 1;
	uint32_t *ids;
	int st;

	if (n == 0) {
		kp_warn("function '%s' does not occur in the input", func);
		st = kp_finish();
		return st ? st : KP_EXIT_SKIPPED;
	}
	ids = kp_xmalloc(n * sizeof(*ids));
	kp_profile_find(p, func, NULL, ids, n);
	if (rep.fmt == KP_FMT_JSON)
		printf("{\"by\": \"%s\", \"total\": %" PRIu64 ", \"trees\": [",
		       rep.by_name, kp_profile_total(p));
	for (i = 0; i < n; i++)
		kp_tree_print(&rep, p, agg, ids[i], opt_callers != NULL,
			      depth, i == 0);
	if (rep.fmt == KP_FMT_JSON)
		printf("\n]}\n");
	free(ids);
	return kp_finish();
}

/* The differential table of files[0..na) against files[na..na+nb). */
static int
diff(char **files, size_t na, size_t nb)
{
	struct kp_profile **p = kp_xcalloc(na + nb, sizeof(*p));
	struct kp_diff *d;
	size_t i;

	for (i = 0; i < na + nb; i++)
		p[i] = count(1, files + i);
	d = kp_diff_new(p, na, p + na, nb, rep.sort == KP_SORT_EXCLUSIVE,
			opt_absolute);
	kp_diff_print(&rep, d, opt_alpha, opt_absolute, na, nb);
	kp_diff_free(d);
	for (i = 0; i < na + nb; i++)
		kp_profile_free(p[i]);
	free(p);
	return kp_finish();
}

static void
set_by(const char *s)
{
	int by = kp_by_parse(s);

	opt_context = strcmp(s, "context") == 0;
	if (opt_context)
		by = KP_BY_FUNCTION;
	if (by < 0)
		kp_usage_error("--by: expected function, module, address, "
			       "function+offset or context, not '%s'", s);
	rep.by = (enum kp_by)by;
}

int
main(int argc, char **argv)
{
	enum {
		OPT_BY = 256, OPT_MODULES, OPT_NORMALIZE, OPT_ABSOLUTE,
		OPT_ALPHA,
	};
	static const struct option longopts[] = {
		KP_REPORT_LONGOPTS,
		{ "by", required_argument, NULL, OPT_BY },
		{ "modules", no_argument, NULL, OPT_MODULES },
		{ "normalize", no_argument, NULL, OPT_NORMALIZE },
		{ "absolute", no_argument, NULL, OPT_ABSOLUTE },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char **files = kp_xcalloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0, na = 0;
	bool runs = false;
	struct kp_agg *a;
	struct kp_profile *pa;
	int ch, status;

	kp_init(argv);
	/* "-": operands in order, so that "A1 A2 -- B1 B2" keeps its sides */
	while ((ch = getopt_long(argc, argv, "-C:c:d:hn:", longopts, NULL)) !=
	       -1)
		switch (ch) {
		case 1:
			files[nfiles++] = optarg;
			break;
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
		case OPT_ABSOLUTE:
		case OPT_NORMALIZE:
			opt_absolute = ch == OPT_ABSOLUTE;
			break;
		case OPT_ALPHA:
			opt_alpha = kp_arg_double("--alpha", optarg);
			if (!(opt_alpha > 0.0 && opt_alpha < 1.0))
				kp_usage_error("--alpha: expected a level between "
					       "0 and 1, not '%s'", optarg);
			break;
		case OPT_BY:
			set_by(optarg);
			break;
		case OPT_MODULES:
			rep.modules = true;
			break;
		default:
			if (!kp_report_option(&rep, &opt_color, ch, optarg))
				usage(stderr, KP_EXIT_USAGE);
		}
	if (optind > 1 && strcmp(argv[optind - 1], "--") == 0) {
		runs = true;
		na = nfiles;
		while (optind < argc)
			files[nfiles++] = argv[optind++];
	}
	if (opt_callers && opt_callees)
		kp_usage_error("-C and -c cannot be used together");
	if (opt_depth && !opt_callers && !opt_callees)
		kp_usage_error("-d needs -C or -c");
	if (runs && (na < 2 || nfiles - na < 2))
		kp_usage_error("runs: at least two files each side of '--'");
	if (!runs && nfiles > 2)
		kp_usage_error("at most two input files (runs: A1 A2 -- B1 B2)");
	if ((runs || nfiles == 2) && (opt_callers || opt_callees))
		kp_usage_error("-C and -c take one input, not two");
	if (opt_context && (opt_callers || opt_callees))
		kp_usage_error("-C and -c need functions, not --by context");
	rep.key_title = opt_context ? "context"
			: rep.by == KP_BY_MODULE ? "module" : "function";
	rep.by_name = opt_context ? "context" : kp_by_name(rep.by);
	rep.color = rep.fmt == KP_FMT_TEXT && kp_color_on(opt_color);
	rep.out = stdout;

	if (runs)
		status = diff(files, na, nfiles - na);
	else if (nfiles == 2)
		status = diff(files, 1, 1);
	else if (opt_callers || opt_callees) {
		/* trees walk the stacks again: they need them merged */
		a = kp_agg_read_summed((int)nfiles, files);
		pa = kp_profile_new(rep.by, rep.modules);
		kp_profile_add_agg(pa, a);
		status = trees(pa, a);
		kp_profile_free(pa);
		kp_agg_free(a);
	} else {
		pa = count((int)nfiles, files);
		kp_table_print(&rep, pa);
		status = kp_finish();
		kp_profile_free(pa);
	}
	free(files);
	return status;
}
