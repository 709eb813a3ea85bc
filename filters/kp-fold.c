/*
 * kp-fold - kp in, Brendan Gregg's folded format out:
 *
 *	root;parent;leaf COUNT
 *
 * one line per distinct stack, root first, sorted bytewise (as
 * stackcollapse-*.pl and inferno sort them).  Stacks that differ only in
 * offsets or addresses fold into one line and their counts add.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kp.h"

static bool opt_modules, opt_offsets, opt_addrs;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-fold [-h] [--modules] [--offsets] [--addrs] "
		"[file ...]\n"
		"Read kp (or SystemTap output) and write folded stacks,\n"
		"'root;...;leaf COUNT', for flamegraph.pl, inferno and\n"
		"speedscope.  With no file, or '-', read standard input.\n"
		"  --modules   append _[k] to kernel frames (kernel, vmlinux and\n"
		"              kernel modules), as stackcollapse-perf.pl --kernel\n"
		"  --offsets   keep each frame's offset: name+0xOFF\n"
		"  --addrs     name a frame without a symbol by its address\n"
		"              (default: [module], or [unknown])\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

struct line {
	char *text;
	size_t len;
	uint64_t count;
};

static int
cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Append the folded text of st to *buf (root first). */
static size_t
fold(const struct kp_stack *st, char **buf, size_t *cap, char **nb,
     size_t *ncap)
{
	size_t len = 0, n, i, j;
	char *p;

	for (i = st->n; i-- > 0;) {
		const struct kp_frame *f = st->frames[i];

		n = kp_frame_name(f, opt_offsets, opt_addrs, nb, ncap);
		if (len + n + 8 > *cap) {
			*cap = (len + n + 8) * 2;
			*buf = kp_xrealloc(*buf, *cap);
		}
		p = *buf + len;
		if (len)
			*p++ = ';';
		for (j = 0; j < n; j++)
			p[j] = (*nb)[j] == ';' ? ':' : (*nb)[j];
		p += n;
		if (opt_modules && kp_module_is_kernel(f->module)) {
			memcpy(p, "_[k]", 4);
			p += 4;
		}
		len = (size_t)(p - *buf);
	}
	return len;
}

int
main(int argc, char **argv)
{
	enum { OPT_MODULES = 256, OPT_OFFSETS, OPT_ADDRS };
	static const struct option longopts[] = {
		{ "modules", no_argument, NULL, OPT_MODULES },
		{ "offsets", no_argument, NULL, OPT_OFFSETS },
		{ "addrs", no_argument, NULL, OPT_ADDRS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *agg;
	struct line *lines;
	char *buf = NULL, *nb = NULL;
	size_t cap = 0, ncap = 0, i, n, out;
	int ch, status;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case OPT_MODULES:
			opt_modules = true;
			break;
		case OPT_OFFSETS:
			opt_offsets = true;
			break;
		case OPT_ADDRS:
			opt_addrs = true;
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
	for (i = 0; i < (size_t)(argc ? argc : 1); i++)
		kp_agg_read(agg, argc ? argv[i] : "-");

	n = kp_agg_len(agg);
	lines = kp_xcalloc(n ? n : 1, sizeof(*lines));
	for (i = 0; i < n; i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);
		size_t len = fold(st, &buf, &cap, &nb, &ncap);

		lines[i].text = kp_xstrndup(buf, len);
		lines[i].len = len;
		lines[i].count = st->count;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	status = KP_EXIT_OK;
	for (i = 0, out = 0; i < n; i++) {
		/* equal folded text: merge into the line before */
		if (out && cmp_line(&lines[out - 1], &lines[i]) == 0) {
			if (lines[out - 1].count > UINT64_MAX - lines[i].count) {
				kp_warn("the count of '%s' overflows 64 bits",
					lines[i].text);
				status = KP_EXIT_FATAL;
				break;
			}
			lines[out - 1].count += lines[i].count;
			free(lines[i].text);
			continue;
		}
		lines[out++] = lines[i];
	}
	if (status == KP_EXIT_FATAL)
		return status;
	for (i = 0; i < out; i++) {
		fwrite(lines[i].text, 1, lines[i].len, stdout);
		printf(" %" PRIu64 "\n", lines[i].count);
	}
	return kp_finish();
}
