/*
 * kp-grep - keep, drop and reshape the stacks of a profile, kp in, kp
 * out: the transforms users of pprof and the Firefox Profiler apply
 * before they read a profile.
 *
 *	kp-grep ext4_ profile.kp           records through an ext4_ function
 *	kp-grep -v ext4_                   the others
 *	kp-grep --no-idle                  all but the idle loop
 *	kp-grep --focus '^vfs_read$'       re-rooted at vfs_read
 *	kp-grep --merge-clones a.kp        foo.isra.0 is foo
 *
 * The order the transforms apply in, and the matching rules, are in
 * common/xform.h; execution contexts in common/context.h.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "xform.h"

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-grep [-hmv] RE [file ...]\n"
		"       kp-grep [-hmv] [-e RE] [--hide RE] [--focus RE] [--prune RE]\n"
		"               [--collapse-recursion] [--merge-module M]\n"
		"               [--merge-clones] [--context C] [--no-idle]\n"
		"               [file ...]\n"
		"Keep the records (stacks) with a frame whose function matches\n"
		"the POSIX extended regex RE, and reshape them; kp in, kp out.\n"
		"With any option but -v and -m, RE is given with -e (or not at\n"
		"all) and every operand is a file.  With no file, or '-', read\n"
		"standard input.\n"
		"  -e RE                 keep the records with a frame matching RE\n"
		"  -v                    keep the records with no frame matching RE\n"
		"  -m                    the regexes match the module, not the\n"
		"                        function (kernel for the kernel image)\n"
		"  --hide RE             remove the frames matching; keep the samples\n"
		"  --focus RE            keep the records through RE, cut at the\n"
		"                        outermost match, which becomes the root\n"
		"  --prune RE            cut each record below its innermost match\n"
		"  --collapse-recursion  merge a frame that repeats its caller's\n"
		"                        function into the caller\n"
		"  --merge-module M      the frames of module M become one frame [M]\n"
		"  --merge-clones        foo.isra.0, foo.constprop.3, foo.part.1,\n"
		"                        foo.cold become foo\n"
		"  --context C           keep the records of context C: user, task,\n"
		"                        softirq, hardirq, nmi or idle\n"
		"  --no-idle             drop the records of the idle loop\n"
		"  -h, --help            show this help\n"
		"Order: context, RE, --focus, --prune, --hide, --merge-clones,\n"
		"--merge-module, --collapse-recursion.\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

static void
set_regex(struct kp_xform *x, enum kp_xre w, const char *opt, const char *re)
{
	char err[256];

	if (kp_xform_regex(x, w, re, err, sizeof(err)) < 0)
		kp_usage_error("%s: bad regex '%s': %s", opt, re, err);
}

int
main(int argc, char **argv)
{
	enum {
		OPT_HIDE = 256, OPT_FOCUS, OPT_PRUNE, OPT_COLLAPSE, OPT_MODULE,
		OPT_CLONES, OPT_CONTEXT, OPT_NO_IDLE,
	};
	static const struct option longopts[] = {
		{ "hide", required_argument, NULL, OPT_HIDE },
		{ "focus", required_argument, NULL, OPT_FOCUS },
		{ "prune", required_argument, NULL, OPT_PRUNE },
		{ "collapse-recursion", no_argument, NULL, OPT_COLLAPSE },
		{ "merge-module", required_argument, NULL, OPT_MODULE },
		{ "merge-clones", no_argument, NULL, OPT_CLONES },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_xform *x = kp_xform_new();
	struct kp_agg *agg = kp_agg_new();
	struct kp_reader *rd;
	const struct kp_stack *st;
	const struct kp_frame *const *frames;
	bool no_idle = false, anything = false;
	int ch, ctx = -1, i;
	size_t n;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "e:hmv", longopts, NULL)) != -1) {
		anything = anything || (ch != 'm' && ch != 'v');
		switch (ch) {
		case 'e':
			set_regex(x, KP_XRE_MATCH, "-e", optarg);
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'm':
			kp_xform_modules(x, true);
			break;
		case 'v':
			kp_xform_invert(x, true);
			break;
		case OPT_CLONES:
			kp_xform_merge_clones(x, true);
			break;
		case OPT_COLLAPSE:
			kp_xform_collapse_recursion(x, true);
			break;
		case OPT_CONTEXT:
			ctx = kp_context_parse(optarg);
			if (ctx < 0)
				kp_usage_error("--context: expected user, task, "
					       "softirq, hardirq, nmi or idle, "
					       "not '%s'", optarg);
			break;
		case OPT_FOCUS:
			set_regex(x, KP_XRE_FOCUS, "--focus", optarg);
			break;
		case OPT_HIDE:
			set_regex(x, KP_XRE_HIDE, "--hide", optarg);
			break;
		case OPT_MODULE:
			kp_xform_merge_module(x, optarg);
			break;
		case OPT_NO_IDLE:
			no_idle = true;
			break;
		case OPT_PRUNE:
			set_regex(x, KP_XRE_PRUNE, "--prune", optarg);
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	kp_xform_context(x, ctx, no_idle);
	/* as grep: the first operand is the regex, unless -e or a
	 * transform option says what to do */
	if (!anything) {
		if (argc == 0) {
			/* at a prompt, the hint every filter gives there */
			kp_input_close(kp_input_open("-"));
			kp_usage_error("nothing to do: give a regex or an option");
		}
		set_regex(x, KP_XRE_MATCH, "RE", argv[0]);
		argc--;
		argv++;
	}
	for (i = 0; i < (argc ? argc : 1); i++) {
		rd = kp_reader_open(argc ? argv[i] : "-");
		while ((st = kp_reader_next(rd)) != NULL)
			if (kp_xform_apply(x, st, &frames, &n))
				kp_agg_add_or_skip(agg, kp_reader_input(rd),
						   frames, n, st->count);
		kp_reader_close(rd);
	}
	kp_write_agg(stdout, agg);
	kp_agg_free(agg);
	kp_xform_free(x);
	return kp_finish();
}
