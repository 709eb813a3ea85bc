/*
 * kp-flame - kp in, an interactive SVG flame graph out.
 *
 *	kp-flame [options] [file]		a flame graph
 *	kp-flame [options] before after		a differential flame graph
 *
 * Each box is one frame of the call tree (stacks merged root first), as
 * wide as its inclusive samples.  The tree, its layout and the SVG with
 * its script are common/flame.h; this is the command line.  The output
 * depends only on the input: same input, same bytes.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "kp.h"

static struct kp_flame_opts opt = {
	.colors = "kp", .width = 1200, .height = 16, .minwidth = 0.1,
	.alpha = 0.05,
};
static bool opt_reverse;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-flame [-h] [-o FILE] [--title TEXT] [--width PX] "
		"[--height PX]\n"
		"                [--minwidth PX|PCT%%] [--colors PALETTE] "
		"[--countname NAME]\n"
		"                [--reverse] [--inverted] [file | before after]\n"
		"Read kp and write an interactive SVG flame graph.  With two "
		"files,\n"
		"a differential flame graph of 'after': red frames grew, blue "
		"shrank\n"
		"(the change in each frame's share of all samples).  With no "
		"file,\n"
		"or '-', read standard input.\n"
		"  -t, --title TEXT   the title (default \"Flame Graph\", or\n"
		"                     \"Icicle Graph\" with --inverted)\n"
		"  -w, --width PX     image width (default 1200)\n"
		"      --height PX    frame height (default 16)\n"
		"      --minwidth W   frames narrower than W pixels, or W%% of "
		"the\n"
		"                     width, are not drawn; runs of such "
		"neighbours\n"
		"                     are drawn as one merged box (default 0.1)\n"
		"      --colors P     kp (default: kernel orange, kernel modules\n"
		"                     yellow, user aqua, unknown grey), or one "
		"of\n"
		"                     hot mem io red green blue aqua yellow "
		"purple\n"
		"                     orange gray\n"
		"      --countname N  what the counts are (default \"samples\",\n"
		"                     \"ns\" for '# weight: period' on cpu-clock)\n"
		"      --reverse      reverse the stacks: leaf functions at the "
		"base\n"
		"      --inverted     an icicle graph: the base at the top, "
		"callers\n"
		"                     above their callees\n"
		"      --alpha A      with two files, colour only the changes\n"
		"                     significant at A after the Benjamini-\n"
		"                     Hochberg adjustment (default 0.05)\n"
		"      --all-changes  with two files, colour every change\n"
		"  -o, --output FILE  write to FILE (default: standard output),\n"
		"                     whole or not at all (the old FILE kept)\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/*
 * Add one input (side 0 before, 1 after) to the graph, record by record:
 * the tree merges identical stacks itself.  A total past 2^64-1 is
 * fatal, the rule of kp.5.
 */
static void
read_side(struct kp_flame *fg, const char *path, int side)
{
	struct kp_reader *rd = kp_reader_open(path);
	const struct kp_stack *st;
	bool over = false;

	/* frames as the graph names them: lines that differ only in their
	 * address and offset read as one (bare addresses: in their kind) */
	kp_reader_set_key(rd, kp_flame_key);
	kp_reader_key_ignores(rd, KP_KEY_NAMED | KP_KEY_MODULE |
					  KP_KEY_BARE_KERNEL);
	while (!over && (st = kp_reader_next(rd)) != NULL)
		over = kp_flame_add(fg, st, kp_reader_ids(rd), side) < 0;
	kp_reader_close(rd);
	if (over)
		kp_die("%s: the total count overflows 64 bits",
		       strcmp(path, "-") ? path : "<stdin>");
}

int
main(int argc, char **argv)
{
	enum { OPT_HEIGHT = 256, OPT_MINWIDTH, OPT_COLORS, OPT_COUNTNAME,
	       OPT_REVERSE, OPT_INVERTED, OPT_ALPHA, OPT_ALL_CHANGES };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		{ "height", required_argument, NULL, OPT_HEIGHT },
		{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
		{ "colors", required_argument, NULL, OPT_COLORS },
		{ "countname", required_argument, NULL, OPT_COUNTNAME },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "all-changes", no_argument, NULL, OPT_ALL_CHANGES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL;
	struct kp_flame *fg;
	FILE *fp = stdout;
	size_t len;
	int ch, status;
	char *mw;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "ho:t:w:", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'o':
			output = optarg;
			break;
		case 't':
			opt.title = optarg;
			break;
		case 'w':
			opt.width = kp_arg_double("--width", optarg);
			if (opt.width < 100 || opt.width > 100000)
				kp_usage_error("--width: %s is not between "
					       "100 and 100000",
					       optarg);
			break;
		case OPT_HEIGHT:
			opt.height = kp_arg_double("--height", optarg);
			if (opt.height < 4 || opt.height > 1000)
				kp_usage_error("--height: %s is not between 4 "
					       "and 1000",
					       optarg);
			break;
		case OPT_MINWIDTH:
			mw = kp_xstrdup(optarg);
			len = strlen(mw);
			opt.minwidth_pct = len && mw[len - 1] == '%';
			if (opt.minwidth_pct)
				mw[len - 1] = '\0';
			opt.minwidth = kp_arg_double("--minwidth", mw);
			free(mw);
			break;
		case OPT_COLORS:
			if (!kp_flame_palette_ok(optarg))
				kp_usage_error("--colors: unknown palette '%s'",
					       optarg);
			opt.colors = optarg;
			break;
		case OPT_COUNTNAME:
			opt.countname = optarg;
			break;
		case OPT_REVERSE:
			opt_reverse = true;
			break;
		case OPT_INVERTED:
			opt.inverted = true;
			break;
		case OPT_ALPHA:
			opt.alpha = kp_arg_double("--alpha", optarg);
			if (!(opt.alpha > 0 && opt.alpha < 1))
				kp_usage_error("--alpha: expected a level between "
					       "0 and 1, not '%s'", optarg);
			break;
		case OPT_ALL_CHANGES:
			opt.alpha = 0;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;
	if (argc > 2)
		kp_usage_error("at most two inputs (before and after)");

	fg = kp_flame_new(opt_reverse);
	if (argc == 2) {
		read_side(fg, argv[0], 0);
		read_side(fg, argv[1], 1);
	} else {
		read_side(fg, argc ? argv[0] : "-", 1);
	}
	if (!kp_flame_total(fg, 1))
		kp_warn("no samples in the input; writing an empty graph");
	if (!opt.countname)
		opt.countname = kp_meta_counts_ns() ? "ns" : "samples";
	fp = kp_output_open(output);
	kp_flame_write_svg(fp, fg, &opt, argc == 2);
	status = kp_output_finish(fp, output);
	kp_flame_free(fg);
	return status;
}
