/*
 * fuzz_analysis.c - libFuzzer target for the analysis modules of
 * common/: kp-grep's transforms (xform.c), contexts (context.c), the
 * summary (summary.c), differences (diff.c) and the reports (report.c,
 * table.c, treeview.c, diffview.c) in every format.
 *
 * The input is read as kp, and the rules are checked:
 *  - --hide, --prune, --merge-clones, --merge-module and
 *    --collapse-recursion keep the total; after --collapse-recursion no
 *    frame's function is its caller's; the records --focus keeps all end
 *    in a match; the contexts partition the total;
 *  - the summary's depth histogram and spaces add up to the total;
 *  - a profile compared with itself has no difference and p-values 1;
 *  - names in json are valid UTF-8 without control bytes, and in tsv
 *    hold no tab or newline.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "report.h"
#include "summary.h"
#include "xform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The total of agg's stacks after the transforms of x. */
static uint64_t
through(struct kp_xform *x, const struct kp_agg *agg, bool no_recursion)
{
	const struct kp_frame *const *f;
	struct kp_profile *fn = kp_profile_new(KP_BY_FUNCTION, false);
	uint64_t sum = 0;
	size_t i, j, n;

	for (i = 0; i < kp_agg_len(agg); i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);

		if (!kp_xform_apply(x, st, &f, &n))
			continue;
		sum += st->count;
		if (n == 0)
			abort();
		for (j = 0; no_recursion && j + 1 < n; j++)
			if (kp_profile_key(fn, f[j]) == kp_profile_key(fn, f[j + 1]))
				abort();
	}
	kp_profile_free(fn);
	return sum;
}

static void
check_xforms(const struct kp_agg *agg, uint64_t total)
{
	char err[128];
	struct kp_xform *x;
	uint64_t sum = 0;
	int c;

	x = kp_xform_new();
	kp_xform_regex(x, KP_XRE_HIDE, "^[a-m]", err, sizeof(err));
	kp_xform_regex(x, KP_XRE_PRUNE, "_", err, sizeof(err));
	kp_xform_merge_clones(x, true);
	kp_xform_merge_module(x, "kernel");
	kp_xform_collapse_recursion(x, true);
	if (through(x, agg, true) != total)
		abort();
	kp_xform_free(x);
	for (c = 0; c < KP_CTX_COUNT; c++) {
		x = kp_xform_new();
		kp_xform_context(x, c, false);
		sum += through(x, agg, false);
		kp_xform_free(x);
	}
	if (sum != total)
		abort();
	x = kp_xform_new();
	kp_xform_regex(x, KP_XRE_FOCUS, "a", err, sizeof(err));
	kp_xform_regex(x, KP_XRE_MATCH, "b", err, sizeof(err));
	kp_xform_invert(x, true);
	kp_xform_modules(x, true);
	through(x, agg, false);
	kp_xform_free(x);
}

/* Print every report of agg into a buffer, and check its names. */
static void
check_reports(const struct kp_agg *agg)
{
	struct kp_report r = { .by = KP_BY_FUNCTION, .key_title = "function",
			       .by_name = "function", .modules = true };
	struct kp_profile *p = kp_profile_new(KP_BY_FUNCTION, true);
	struct kp_diff *d;
	char *buf;
	size_t len, i;
	int fmt;

	kp_profile_add_agg(p, agg);
	d = kp_diff_new(&p, 1, &p, 1, false, false);
	for (i = 0; i < d->n; i++)
		if (d->rows[i].d != 0.0 || d->rows[i].p_value != 1.0)
			abort();
	for (fmt = KP_FMT_TEXT; fmt <= KP_FMT_JSON; fmt++) {
		r.fmt = (enum kp_fmt)fmt;
		r.color = fmt == KP_FMT_TEXT;
		r.out = open_memstream(&buf, &len);
		kp_table_print(&r, p);
		if (kp_profile_len(p))
			kp_tree_print(&r, p, agg, 0, fmt == KP_FMT_TSV, 0, true);
		kp_diff_print(&r, d, 0.05, false, 1, 1);
		fclose(r.out);
		if (fmt == KP_FMT_JSON)
			for (i = 0; i < len; i++)
				if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n')
					abort();
		free(buf);
	}
	kp_diff_free(d);
	kp_profile_free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/kp-fuzz-analysis-XXXXXX";
	struct kp_agg *agg = kp_agg_new();
	struct kp_summary s;
	uint64_t sum = 0;
	int fd = mkstemp(path), i;

	kp_refuse_foreign = false; /* any bytes: read on */

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	kp_progname = "fuzz_analysis";
	kp_quiet = true;
	kp_agg_read(agg, path);
	unlink(path);
	if (kp_agg_total_ok(agg) && kp_agg_total(agg) < UINT64_MAX / 4 &&
	    kp_agg_len(agg) < 2000) {
		check_xforms(agg, kp_agg_total(agg));
		kp_summary_make(&s, agg, kp_agg_len(agg), 127);
		for (i = 0; i < KP_DEPTH_BUCKETS; i++)
			sum += s.depth_hist[i];
		if (sum != s.samples ||
		    s.kernel_only + s.user_only + s.mixed + s.empty != s.samples)
			abort();
		check_reports(agg);
	}
	kp_agg_free(agg);
	return 0;
}
