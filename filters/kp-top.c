/*
 * kp-top - the flat profile of Itsy and oprofile: where the samples land.
 *
 *	samples       %    cum%  function
 *	    151  16.23%  16.23%  pv_native_safe_halt
 *	     64   6.88%  23.11%  do_syscall_64
 *	...
 *	    933 100.00%          Total
 *
 * heaviest first (ties by name), at most -n rows, the total of all
 * samples last.  --by function, module or address count each sample for
 * its leaf frame (exclusive); --by stack prints the heaviest whole
 * stacks as kp instead, so that "kp-top --by stack -n 5 | kp-fold"
 * works.  Keys are common/profile.c's.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static uint64_t opt_n = 20;
static double opt_limit;   /* --percent-limit */
static bool opt_by_name;   /* --sort name */
static enum kp_color opt_color = KP_COLOR_AUTO;
static bool opt_stack;
static enum kp_by opt_by = KP_BY_FUNCTION;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-top [-h] [-n rows] [--by function|stack|module|address]\n"
		"              [--percent-limit P] [--sort samples|name]\n"
		"              [--color=auto|always|never] [file ...]\n"
		"The flat profile: samples, %% and cumulative %% of the total per\n"
		"leaf function, heaviest first, and a Total line.  With no file,\n"
		"or '-', read standard input.\n"
		"  -n N        print the N heaviest rows (default 20; 0: all)\n"
		"  --by KEY    function (default): the leaf frame's function;\n"
		"              module: its module (kernel, each kernel module,\n"
		"              each user DSO); address: its address;\n"
		"              stack: the N heaviest whole stacks, written as kp\n"
		"  --percent-limit P  leave out the rows under P%%\n"
		"  --sort K    samples (default: heaviest first) or name; -n and\n"
		"              --percent-limit choose the rows first\n"
		"  --color[=WHEN]  colour the percentages: auto (default: when\n"
		"              stdout is a terminal), always or never\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

static void
pct_cell(bool color, double pct)
{
	if (color && *kp_pct_color(pct))
		printf("  %s%6.2f%%" KP_SGR_OFF, kp_pct_color(pct), pct);
	else
		printf("  %6.2f%%", pct);
}

static void
top_flat(const struct kp_agg *agg)
{
	struct kp_profile *p = kp_profile_new(opt_by, false);
	uint32_t *ids;
	uint64_t total, cum = 0;
	size_t i, len, rows = 0;
	int cw;
	const struct kp_pkey *k;
	bool color = kp_color_on(opt_color);

	kp_profile_add_agg(p, agg);
	total = kp_profile_total(p);
	ids = kp_profile_sorted(p, true);
	len = kp_profile_len(p);
	cw = kp_digits(total) > 7 ? kp_digits(total) : 7;
	/* the rows: heaviest first, then --sort name orders them */
	for (i = 0; i < len && (!opt_n || rows < opt_n); i++) {
		k = kp_profile_get(p, ids[i]);
		if (k->excl == 0 || kp_profile_pct(p, k->excl) < opt_limit)
			break; /* never a leaf: not in a flat profile */
		ids[rows++] = ids[i];
	}
	if (opt_by_name)
		kp_report_sort_names(p, ids, rows, false);
	printf("%*s  %7s  %7s  %s\n", cw, "samples", "%", "cum%",
	       kp_by_name(opt_by));
	for (i = 0; i < rows; i++) {
		k = kp_profile_get(p, ids[i]);
		cum += k->excl;
		printf("%*" PRIu64, cw, k->excl);
		pct_cell(color, kp_profile_pct(p, k->excl));
		printf("  %6.2f%%  %s\n", kp_profile_pct(p, cum), k->name);
	}
	printf("%*" PRIu64 "  %6.2f%%  %7s  Total\n", cw, total,
	       total ? 100.0 : 0.0, "");
	free(ids);
	kp_profile_free(p);
}

struct ranked {
	const struct kp_stack *st;
	size_t order;
};

static int
cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->st->count != y->st->count)
		return x->st->count > y->st->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The heaviest stacks as kp; ties keep their order of first appearance. */
static void
top_stacks(const struct kp_agg *agg)
{
	size_t i, n = kp_agg_len(agg);
	struct ranked *r = kp_xcalloc(n ? n : 1, sizeof(*r));

	for (i = 0; i < n; i++) {
		r[i].st = kp_agg_get(agg, i);
		r[i].order = i;
	}
	qsort(r, n, sizeof(*r), cmp_ranked);
	kp_write_meta(stdout);
	for (i = 0; i < n && (!opt_n || i < opt_n); i++)
		kp_write_stack(stdout, r[i].st);
	kp_write_end(stdout);
	free(r);
}

int
main(int argc, char **argv)
{
	enum { OPT_BY = 256, OPT_LIMIT, OPT_SORT, OPT_COLOR };
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, OPT_BY },
		{ "percent-limit", required_argument, NULL, OPT_LIMIT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "color", optional_argument, NULL, OPT_COLOR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *agg;
	int ch;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "hn:", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'n':
			opt_n = kp_arg_u64("-n", optarg);
			break;
		case OPT_BY:
			opt_stack = strcmp(optarg, "stack") == 0;
			if (opt_stack)
				break;
			if (strcmp(optarg, "function") == 0)
				opt_by = KP_BY_FUNCTION;
			else if (strcmp(optarg, "module") == 0)
				opt_by = KP_BY_MODULE;
			else if (strcmp(optarg, "address") == 0)
				opt_by = KP_BY_ADDRESS;
			else
				kp_usage_error("--by: expected function, stack, "
					       "module or address, not '%s'",
					       optarg);
			break;
		case OPT_COLOR:
			opt_color = kp_arg_color(optarg);
			break;
		case OPT_LIMIT:
			opt_limit = kp_arg_double("--percent-limit", optarg);
			break;
		case OPT_SORT:
			if (strcmp(optarg, "name") != 0 &&
			    strcmp(optarg, "samples") != 0)
				kp_usage_error("--sort: expected samples or name, "
					       "not '%s'", optarg);
			opt_by_name = strcmp(optarg, "name") == 0;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	agg = kp_agg_read_summed(argc, argv);
	if (opt_stack)
		top_stacks(agg);
	else
		top_flat(agg);
	kp_agg_free(agg);
	return kp_finish();
}
