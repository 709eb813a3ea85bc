/*
 * perf2kp - perf.data or "perf script" text in, canonical kp out.
 *
 *	perf record -a -g -- sleep 10
 *	perf2kp perf.data > out.kp
 *	perf script | perf2kp > out.kp
 *
 * A perf.data (file or pipe mode) is known by its magic and read by
 * common/perfdata*.c, its addresses named by the resolver.
 * The accepted shapes of the sample header and frame lines are pasted
 * above their parsers in common/conv_perf.c.  Identical stacks merge;
 * stacks keep their first-seen order.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "perfdata.h"

/* What each file is converted with: the options, and the events seen. */
struct run {
	const struct kp_pd_opts *o;
	struct kp_perf_events *evs;
};

/* perf.data by its magic, else perf script text. */
static int
convert(struct kp_agg *agg, struct kp_input *in, void *arg, const char **why)
{
	const struct run *r = arg;

	if (kp_pd_is(in)) {
		/* the text's stacks before the capture's, in order */
		kp_perf_flush(r->evs);
		return kp_perfdata_convert(agg, in, r->o, r->evs, why);
	}
	if (r->o->offcpu)
		kp_die("%s: --off-cpu reads a perf.data, not perf script text",
		       kp_input_name(in));
	return kp_perf_convert(agg, in, r->o->perf, r->evs, why);
}

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: perf2kp [-h] [--event EV] [--comm | --pid | --tid]\n"
		"               [--kernel-only | --user-only] "
		"[--weight samples|period]\n"
		"               [--inline] [--raw-names] [--functions]\n"
		"               [--kallsyms FILE] [--no-demangle]\n"
		"               [--off-cpu [--state]] [file ...]\n"
		"Read a perf.data file or the text of 'perf script' and write\n"
		"canonical kp with identical stacks merged.  With no file, or\n"
		"'-', read standard input.\n"
		"  --event EV        keep samples of event EV (default: the\n"
		"                    event with the most samples; each is\n"
		"                    named with its samples on stderr)\n"
		"  --comm            the process name as the outermost frame\n"
		"  --pid             the same, as NAME-PID\n"
		"  --tid             the same, as NAME-PID/TID\n"
		"  --kernel-only     keep kernel frames only\n"
		"  --user-only       keep user frames only\n"
		"  --weight W        count 'samples' (default) or sum each\n"
		"                    sample's 'period'\n"
		"  --inline          mark perf's '(inlined)' frames as inline\n"
		"  --functions       one frame per function: drop the address\n"
		"                    and offset of every frame with a symbol,\n"
		"                    so stacks that differ only in them merge\n"
		"                    (smaller output for kp-fold, kp-inclusive,\n"
		"                    kp-top, kp-flame)\n"
		"  --raw-names       keep symbols as perf prints them (default:\n"
		"                    cut argument lists, drop quotes, as\n"
		"                    stackcollapse-perf.pl does)\n"
		"  --kallsyms FILE   perf.data: the kernel's symbols from FILE\n"
		"                    (a saved /proc/kallsyms of the capture's\n"
		"                    boot; default: perf's build-id cache,\n"
		"                    else /proc/kallsyms)\n"
		"  --no-demangle     perf.data: keep C++ symbols mangled (default:\n"
		"                    demangled as perf report shows them)\n"
		"  --off-cpu         perf.data of sched:sched_switch with -g:\n"
		"                    each stack a task left the CPU with,\n"
		"                    weighted by the nanoseconds until it ran\n"
		"                    again\n"
		"  --state           with --off-cpu: the task state ([S], [D],\n"
		"                    [R] preempted, ...) as the outermost frame\n"
		"  -h, --help        show this help\n"
		"Environment: PERF2KP_SPLIT=0 one thread; =1 or =2 two\n"
		"threads for any input (text in chunks of 512 bytes or\n"
		"64 KiB); unset or empty: a perf.data pipe, a perf.data\n"
		"file of 8 MB or more and text longer than a chunk (512\n"
		"KiB) on two threads;\n"
		"PERF2KP_SPLIT_TRACE: what a perf.data's second thread\n"
		"named, on stderr.\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	enum {
		OPT_EVENT = 256,
		OPT_COMM,
		OPT_PID,
		OPT_TID,
		OPT_KERNEL,
		OPT_USER,
		OPT_WEIGHT,
		OPT_INLINE,
		OPT_RAW,
		OPT_FUNCTIONS,
		OPT_KALLSYMS,
		OPT_NO_DEMANGLE,
		OPT_OFFCPU,
		OPT_STATE,
	};
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "comm", no_argument, NULL, OPT_COMM },
		{ "pid", no_argument, NULL, OPT_PID },
		{ "tid", no_argument, NULL, OPT_TID },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL },
		{ "user-only", no_argument, NULL, OPT_USER },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "raw-names", no_argument, NULL, OPT_RAW },
		{ "functions", no_argument, NULL, OPT_FUNCTIONS },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "off-cpu", no_argument, NULL, OPT_OFFCPU },
		{ "state", no_argument, NULL, OPT_STATE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_perf_opts o;
	struct kp_pd_opts pdo = { .perf = &o };
	struct kp_perf_events evs = { 0 };
	struct run run = { &pdo, &evs };
	struct kp_agg *agg;
	const char *env;
	int ch, status;

	kp_init(argv);
	memset(&o, 0, sizeof(o));
	/* a big input on two threads; PERF2KP_SPLIT=0 one thread, =1 and
	 * =2 two for every input (the tests) */
	o.split_min = 8u << 20;
	pdo.split_min = 8u << 20;
	if ((env = getenv("PERF2KP_SPLIT")) && *env) {
		if (strcmp(env, "0") && strcmp(env, "1") && strcmp(env, "2"))
			kp_usage_error("PERF2KP_SPLIT is 0, 1 or 2, not '%s'",
				       env);
		o.split_min = pdo.split_min = *env != '0';
		/* text: small chunks, so that small inputs are cut too */
		o.chunk = *env == '1' ? 512 : *env == '2' ? 64u << 10 : 0;
	}
	pdo.split_trace = getenv("PERF2KP_SPLIT_TRACE") != NULL;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case OPT_EVENT:
			if (!*optarg)
				kp_usage_error("--event needs an event name");
			o.event = optarg;
			break;
		case OPT_COMM:
		case OPT_PID:
		case OPT_TID:
			if (o.proc != KP_PROC_NONE)
				kp_usage_error("use one of --comm, --pid, "
					       "--tid");
			o.proc = ch == OPT_COMM  ? KP_PROC_COMM
				 : ch == OPT_PID ? KP_PROC_PID
						 : KP_PROC_TID;
			break;
		case OPT_KERNEL:
		case OPT_USER:
			if (o.space != KP_SPACE_ALL)
				kp_usage_error("use one of --kernel-only, "
					       "--user-only");
			o.space = ch == OPT_KERNEL ? KP_SPACE_KERNEL
						   : KP_SPACE_USER;
			break;
		case OPT_WEIGHT:
			if (strcmp(optarg, "samples") == 0)
				o.period = false;
			else if (strcmp(optarg, "period") == 0)
				o.period = true;
			else
				kp_usage_error("--weight is 'samples' or "
					       "'period', not '%s'", optarg);
			break;
		case OPT_INLINE:
			o.inline_flag = true;
			break;
		case OPT_RAW:
			o.raw_names = true;
			break;
		case OPT_FUNCTIONS:
			o.functions = true;
			break;
		case OPT_KALLSYMS:
			pdo.kallsyms = optarg;
			break;
		case OPT_NO_DEMANGLE:
			pdo.no_demangle = true;
			break;
		case OPT_OFFCPU:
			pdo.offcpu = true;
			break;
		case OPT_STATE:
			pdo.state = true;
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	if (pdo.offcpu && (o.event || o.period))
		kp_usage_error("--off-cpu reads sched:sched_switch weighted "
			       "by time: not with --event or --weight");
	if (pdo.state && !pdo.offcpu)
		kp_usage_error("--state goes with --off-cpu");
	argc -= optind;
	argv += optind;

	agg = kp_agg_new();
	kp_conv_files(agg, argc, argv, convert, &run);
	if (!kp_meta_get("source"))
		kp_meta_set("source", "perf script");
	agg = kp_perf_pick(&o, &evs, agg);
	kp_meta_set("weight", "%s", pdo.offcpu ? "off-cpu-ns"
				    : o.period ? "period" : "samples");
	kp_perf_write(stdout, &evs, agg);
	/* the output closed first: the next filter reads its end while
	 * the memory is given back */
	status = kp_finish();
	kp_agg_free(agg);
	kp_perf_events_free(&evs);
	return status;
}
