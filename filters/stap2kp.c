/*
 * stap2kp - SystemTap stack output in, canonical kp out.
 *
 * Accepted input: what SystemTap prints with print_stack(),
 * print_backtrace() and print_ubacktrace(), alone or in the seed script's
 * "!"-separated records, each stack closed by a count line:
 *
 *	!
 *	 0xffffffff814cde75 : net_rx_action+0x105/0x2b0 [kernel]
 *	 0xffffffff8106602d : irq_exit+0xbd/0xe0 [kernel
 *	 0xffffffff816b8aab : vfs_read+0xbb/0x360 [kernel] (inexact)
 *	 0x00000000000f82ad : read+0xd/0x4d [/usr/lib/x86_64-linux-gnu/libc.so.6]
 *	 0xffffffff81000000 [kernel+0x10/0x20]
 *		1168
 *
 * and the hex lists of backtrace()/ubacktrace() printed as a line:
 *
 *	0xffffffff8103ce3b 0xffffffff8101c6a3 0xffffffff81013236
 *		17
 *
 * All of it is the kp grammar: the parsing is common/'s kp reader, so
 * every kp filter reads SystemTap output directly; stap2kp merges
 * identical stacks (in first-seen order) and writes canonical kp.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "kp.h"

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: stap2kp [-h] [file ...]\n"
		"Read SystemTap print_stack/print_backtrace/print_ubacktrace\n"
		"output (or backtrace() hex lists), each stack followed by a\n"
		"count line, and write canonical kp with identical stacks\n"
		"merged.  With no file, or '-', read standard input.\n"
		"  -h, --help   show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *agg;
	int ch;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	agg = kp_agg_read_files(argc, argv);
	kp_write_agg(stdout, agg);
	kp_agg_free(agg);
	return kp_finish();
}
