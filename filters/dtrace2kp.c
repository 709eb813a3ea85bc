/*
 * dtrace2kp - DTrace printa() output of stack aggregations in, canonical
 * kp out.
 *
 *	dtrace -x stackframes=100 -n 'profile-997 /arg0/ { @[stack()] = count(); }
 *	    tick-60s { exit(0); }' -o out.stacks
 *	dtrace2kp out.stacks > out.kp
 *
 * The accepted line shapes are pasted above their parsers in
 * common/conv_dtrace.c.  Identical stacks merge; stacks keep their
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
		"usage: dtrace2kp [-h] [--offsets] [file ...]\n"
		"Read DTrace printa() output of @[stack()] = count() (also\n"
		"@[stack(), ustack()] and kp.d's @[\"!\", stack()]) and write\n"
		"canonical kp with identical stacks merged.  With no file, or\n"
		"'-', read standard input.\n"
		"  --offsets   keep each frame's +0xOFF (but the leaf's), as\n"
		"              stackcollapse.pl with $includeoffset\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	enum { OPT_OFFSETS = 256 };
	static const struct option longopts[] = {
		{ "offsets", no_argument, NULL, OPT_OFFSETS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_dtrace_opts o;
	struct kp_agg *agg;
	int ch;

	kp_init(argv);
	memset(&o, 0, sizeof(o));
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case OPT_OFFSETS:
			o.offsets = true;
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
	kp_conv_files(agg, argc, argv, kp_dtrace_convert, &o);
	kp_meta_set("source", "dtrace");
	kp_write_agg(stdout, agg);
	kp_agg_free(agg);
	return kp_finish();
}
