/*
 * fold2kp - folded stacks in, kp out:
 *
 *	swapper;start_kernel;rest_init;cpu_idle;default_idle 1168
 *
 * becomes
 *
 *	!
 *	 : default_idle
 *	 : cpu_idle
 *	 : rest_init
 *	 : start_kernel
 *	 : swapper
 *		1168
 *	!
 *
 * so that profiles collected elsewhere (FlameGraph's stackcollapse-*,
 * inferno, kp-fold) can be analysed with kp.  Frames have no address;
 * identical stacks merge, in order of first appearance, so
 * "fold2kp | kp-fold" gives back the input, sorted.  The line syntax is
 * kp_folded_parse's (common/profile.c).
 */
#include <getopt.h>
#include <stdlib.h>

#include "profile.h"

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: fold2kp [-h] [file ...]\n"
		"Read folded stacks, 'root;...;leaf COUNT' (FlameGraph,\n"
		"inferno, kp-fold), and write kp.  Identical stacks merge.\n"
		"With no file, or '-', read standard input.\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

static void
read_folded(struct kp_agg *agg, struct kp_folded *fd, const char *path)
{
	struct kp_input *in = kp_input_open(path);
	const struct kp_frame *const *frames;
	const char *why;
	uint64_t count;
	size_t len, n, i;
	char *s;

	while ((s = kp_input_getline(in, &len)) != NULL) {
		for (i = 0; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
			;
		if (i == len)
			continue; /* blank line */
		if (kp_folded_parse(fd, s, len, &frames, &n, &count, &why) < 0)
			kp_input_skip(in, "%s; line skipped", why);
		else
			kp_agg_add_or_skip(agg, in, frames, n, count);
	}
	kp_input_close(in);
	kp_agg_check_total(agg, path);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_folded *fd;
	struct kp_agg *agg;
	int ch, i;

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

	agg = kp_agg_new();
	fd = kp_folded_new();
	for (i = 0; i < (argc ? argc : 1); i++)
		read_folded(agg, fd, argc ? argv[i] : "-");
	kp_write_agg(stdout, agg);
	kp_folded_free(fd);
	kp_agg_free(agg);
	return kp_finish();
}
