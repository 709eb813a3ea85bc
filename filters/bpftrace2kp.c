/*
 * bpftrace2kp - bpftrace map output with stack keys in, canonical kp
 * out.
 *
 *	bpftrace -e 'profile:hz:99 { @[kstack] = count(); }' > out.bt
 *	bpftrace2kp out.bt > out.kp
 *
 * The accepted line shapes are pasted above their parsers in
 * common/conv_bpftrace.c.  Identical stacks merge; stacks keep their
 * first-seen order.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: bpftrace2kp [-h] [--key] [file ...]\n"
		"Read bpftrace map output whose keys hold stacks (kstack,\n"
		"ustack, in the default, perf and raw modes) and write\n"
		"canonical kp with identical stacks merged.  With no file, or\n"
		"'-', read standard input.\n"
		"  --key       keep the other key elements (comm, pid ...) as\n"
		"              outer frames, the first one outermost\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	enum { OPT_KEY = 256 };
	static const struct option longopts[] = {
		{ "key", no_argument, NULL, OPT_KEY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_bpftrace_opts o;
	struct kp_agg *agg;
	int ch;

	kp_init(argv);
	memset(&o, 0, sizeof(o));
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case OPT_KEY:
			o.keys = true;
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	agg = kp_agg_new();
	kp_conv_files(agg, argc, argv, kp_bpftrace_convert, &o);
	kp_meta_set("source", "bpftrace");
	kp_write_agg(stdout, agg);
	kp_agg_free(agg);
	return kp_finish();
}
