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

#include "profile.h"

static uint64_t opt_n = 20;
static bool opt_stack;
static enum kp_by opt_by = KP_BY_FUNCTION;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-top [-h] [-n rows] [--by function|stack|module|address]\n"
		"              [file ...]\n"
		"The flat profile: samples, %% and cumulative %% of the total per\n"
		"leaf function, heaviest first, and a Total line.  With no file,\n"
		"or '-', read standard input.\n"
		"  -n N        print the N heaviest rows (default 20; 0: all)\n"
		"  --by KEY    function (default): the leaf frame's function;\n"
		"              module: its module (kernel, each kernel module,\n"
		"              each user DSO); address: its address;\n"
		"              stack: the N heaviest whole stacks, written as kp\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
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

static void
top_flat(const struct kp_agg *agg)
{
	struct kp_profile *p = kp_profile_new(opt_by, false);
	uint32_t *ids;
	uint64_t total, cum = 0;
	size_t i, len;
	int cw;
	const struct kp_pkey *k;

	kp_profile_add_agg(p, agg);
	total = kp_profile_total(p);
	ids = kp_profile_sorted(p, true);
	len = kp_profile_len(p);
	cw = digits(total) > 7 ? digits(total) : 7;
	printf("%*s  %7s  %7s  %s\n", cw, "samples", "%", "cum%",
	       kp_by_name(opt_by));
	for (i = 0; i < len && (!opt_n || i < opt_n); i++) {
		k = kp_profile_get(p, ids[i]);
		if (k->excl == 0)
			break; /* never a leaf: not in a flat profile */
		cum += k->excl;
		printf("%*" PRIu64 "  %6.2f%%  %6.2f%%  %s\n", cw, k->excl,
		       kp_profile_pct(p, k->excl), kp_profile_pct(p, cum),
		       k->name);
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
	enum { OPT_BY = 256 };
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, OPT_BY },
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
