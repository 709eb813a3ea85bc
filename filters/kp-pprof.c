/*
 * kp-pprof - kp in, a gzip-compressed profile.proto out, for pprof
 * (`pprof -top`, `pprof -http`, `go tool pprof`) and the tools that read
 * Go's profile format.  The profile and what it holds are common/pprof.c;
 * this is the command line and the checks that the counts fit.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>

#include "kp.h"
#include "pprof.h"

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

/*
 * profile.proto's values are int64, and pprof adds them up: a total
 * above INT64_MAX (or its nanoseconds, count * period) would read as
 * negative.  Refused before anything is written.
 */
static void
check_int64(uint64_t total)
{
	uint64_t period = kp_meta_clock_period();

	if (total > INT64_MAX)
		kp_die("the total count %" PRIu64 " is above %" PRId64
		       " (INT64_MAX), which pprof would read as negative",
		       total, INT64_MAX);
	if (period && total > INT64_MAX / period)
		kp_die("the total, %" PRIu64 " samples of %" PRIu64
		       " ns, is above %" PRId64
		       " ns (INT64_MAX), which pprof would read as negative",
		       total, period, INT64_MAX);
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
	struct kp_pprof *pp;
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
	check_int64(kp_agg_total(agg));
	pp = kp_pprof_new(opt_process);
	for (i = 0; i < n; i++)
		kp_pprof_add(pp, kp_agg_get(agg, i));
	fp = kp_output_open(opt_output);
	kp_pprof_write(fp, pp);
	status = kp_output_finish(fp, opt_output);
	kp_pprof_free(pp);
	kp_agg_free(agg);
	return status;
}
