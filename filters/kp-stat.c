/*
 * kp-stat - what a profile holds and whether to trust it:
 *
 *	samples          933
 *	records          421
 *	distinct stacks  398
 *	depth            min 1, median 14, mean 15.2, p90 25, p99 38, max 41
 *	truncated        0 samples (0.00%) ...
 *
 * then the stacks that end in unknown frames, kernel and user shares,
 * execution contexts and the share of each module.  Text, tsv or json.
 * The numbers come from common/summary.c, the module table from
 * common/table.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "summary.h"

static struct kp_report rep = { .fmt = KP_FMT_TEXT, .by = KP_BY_MODULE,
				.key_title = "module", .by_name = "module" };
static uint64_t opt_max_stack = 127;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-stat [-h] [--format text|tsv|json] [--max-stack N]\n"
		"               [-n rows] [--percent-limit P] [--sort K]\n"
		"               [--color=auto|always|never] [file ...]\n"
		"What a profile holds and whether to trust it: samples, records,\n"
		"distinct stacks, metadata, depth, stacks cut at the kernel's\n"
		"maximum depth, stacks that end in unknown frames or bare\n"
		"addresses, kernel and user shares, execution contexts, and the\n"
		"share of each module.  With no file, or '-', read standard input.\n"
		"  --format F         text (default), tsv or json\n"
		"  --max-stack N      the kernel's perf_event_max_stack (default 127)\n"
		"  -n N               at most N module rows (default all)\n"
		"  --percent-limit P  leave out modules under P%% inclusive\n"
		"  --sort K           modules by inclusive (default), exclusive,\n"
		"                     name or module\n"
		"  --color[=WHEN]     colour percentages: auto (default), always,\n"
		"                     never\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

static double
pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* The records of the inputs into agg; returns how many were read. */
static uint64_t
read_all(struct kp_agg *agg, int nfiles, char **files)
{
	const struct kp_stack *st;
	struct kp_reader *rd;
	uint64_t records = 0;
	int i;

	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		rd = kp_reader_open(nfiles ? files[i] : "-");
		while ((st = kp_reader_next(rd)) != NULL) {
			records++;
			kp_agg_add_or_skip(agg, kp_reader_input(rd), st->frames,
					   st->n, st->count);
		}
		kp_reader_close(rd);
		if (!kp_agg_total_ok(agg))
			kp_die("%s: the total count overflows 64 bits",
			       nfiles ? files[i] : "<stdin>");
	}
	return records;
}

static const char *const space_names[] = { "kernel", "user", "mixed" };

static uint64_t
space_of(const struct kp_summary *s, int i)
{
	return i == 0 ? s->kernel_only : i == 1 ? s->user_only : s->mixed;
}

static void
print_text(const struct kp_summary *s, const struct kp_profile *mods)
{
	size_t i, lo, hi;
	const char *sep = "";

	printf("samples          %" PRIu64 "\n", s->samples);
	printf("records          %" PRIu64 "\n", s->records);
	printf("distinct stacks  %" PRIu64 "\n", s->stacks);
	for (i = 0; i < kp_meta_count(); i++)
		printf("%-17s%s\n", i ? "" : "metadata", kp_meta_line(i));
	printf("depth            min %zu, median %zu, mean %.1f, p90 %zu, "
	       "p99 %zu, max %zu frames\n",
	       s->depth_min, s->depth_median, s->depth_mean, s->depth_p90,
	       s->depth_p99, s->depth_max);
	for (i = 0; i < KP_DEPTH_BUCKETS; i++) {
		char range[32];

		kp_summary_bucket(i, &lo, &hi);
		if (lo == hi)
			snprintf(range, sizeof(range), "%zu", lo);
		else if (hi == SIZE_MAX)
			snprintf(range, sizeof(range), "%zu+", lo);
		else
			snprintf(range, sizeof(range), "%zu-%zu", lo, hi);
		printf("  %-15s%7s %12" PRIu64 "  %6.2f%%\n", "", range,
		       s->depth_hist[i], pct(s->depth_hist[i], s->samples));
	}
	printf("truncated        %" PRIu64 " samples (%.2f%%) whose frames and "
	       "context markers reach %zu\n",
	       s->truncated, pct(s->truncated, s->samples), s->max_stack);
	printf("root unknown     %" PRIu64 " samples (%.2f%%) whose outermost "
	       "frame has no symbol\n",
	       s->root_unknown, pct(s->root_unknown, s->samples));
	printf("root address     %" PRIu64 " samples (%.2f%%) whose outermost "
	       "frame is a bare address\n",
	       s->root_address, pct(s->root_address, s->samples));
	printf("unknown frames   %.2f%% of frames have no symbol\n",
	       pct(s->unknown_frames, s->frames));
	printf("kernel/user      kernel only %.2f%%, user only %.2f%%, both "
	       "%.2f%%\n",
	       pct(s->kernel_only, s->samples), pct(s->user_only, s->samples),
	       pct(s->mixed, s->samples));
	printf("contexts         ");
	for (i = 0; i < KP_CTX_COUNT; i++) {
		if (!s->context[i])
			continue;
		printf("%s%s %.2f%%", sep, kp_context_name((enum kp_context)i),
		       pct(s->context[i], s->samples));
		sep = ", ";
	}
	printf("%s\nmodules\n", *sep ? "" : "none");
	kp_table_print(&rep, mods);
}

static void
tsv_row(const char *section, const char *name, uint64_t v, uint64_t total)
{
	printf("%s\t", section);
	kp_tsv_str(stdout, name);
	printf("\t%" PRIu64 "\t%.4f\n", v, pct(v, total));
}

static void
print_tsv(const struct kp_summary *s, const struct kp_profile *mods)
{
	size_t i, lo, hi, rows;
	int nw = 0;
	uint32_t *ids = kp_report_rows(&rep, mods, &rows, &nw);
	const struct kp_pkey *k;
	char range[32];

	printf("section\tname\tvalue\tpct\n");
	tsv_row("count", "samples", s->samples, s->samples);
	printf("count\trecords\t%" PRIu64 "\t\n", s->records);
	printf("count\tstacks\t%" PRIu64 "\t\n", s->stacks);
	for (i = 0; i < kp_meta_count(); i++) {
		printf("meta\t");
		kp_tsv_str(stdout, kp_meta_line(i) + 2);
		printf("\t\t\n");
	}
	printf("depth\tmin\t%zu\t\ndepth\tmedian\t%zu\t\ndepth\tmean\t%.2f\t\n"
	       "depth\tp90\t%zu\t\ndepth\tp99\t%zu\t\ndepth\tmax\t%zu\t\n",
	       s->depth_min, s->depth_median, s->depth_mean, s->depth_p90,
	       s->depth_p99, s->depth_max);
	for (i = 0; i < KP_DEPTH_BUCKETS; i++) {
		kp_summary_bucket(i, &lo, &hi);
		if (hi == SIZE_MAX)
			snprintf(range, sizeof(range), "%zu+", lo);
		else
			snprintf(range, sizeof(range), "%zu-%zu", lo, hi);
		tsv_row("depth_samples", range, s->depth_hist[i], s->samples);
	}
	tsv_row("trust", "truncated", s->truncated, s->samples);
	tsv_row("trust", "root_unknown", s->root_unknown, s->samples);
	tsv_row("trust", "root_address", s->root_address, s->samples);
	tsv_row("trust", "unknown_frames", s->unknown_frames, s->frames);
	for (i = 0; i < 3; i++)
		tsv_row("space", space_names[i], space_of(s, (int)i), s->samples);
	for (i = 0; i < KP_CTX_COUNT; i++)
		tsv_row("context", kp_context_name((enum kp_context)i),
			s->context[i], s->samples);
	for (i = 0; i < rows; i++) {
		k = kp_profile_get(mods, ids[i]);
		tsv_row("module", k->name, k->incl, s->samples);
		tsv_row("module_leaf", k->name, k->excl, s->samples);
	}
	free(ids);
}

static void
json_count(const char *name, uint64_t v, uint64_t total, bool comma)
{
	printf("\"%s\": {\"samples\": %" PRIu64 ", \"pct\": %.4f}%s", name, v,
	       pct(v, total), comma ? ", " : "");
}

static void
print_json(const struct kp_summary *s, const struct kp_profile *mods)
{
	size_t i, lo, hi, rows;
	int nw = 0;
	uint32_t *ids = kp_report_rows(&rep, mods, &rows, &nw);

	printf("{\"samples\": %" PRIu64 ", \"records\": %" PRIu64
	       ", \"stacks\": %" PRIu64 ",\n \"metadata\": [",
	       s->samples, s->records, s->stacks);
	for (i = 0; i < kp_meta_count(); i++) {
		printf("%s", i ? ", " : "");
		kp_json_str(stdout, kp_meta_line(i) + 2);
	}
	printf("],\n \"depth\": {\"min\": %zu, \"median\": %zu, \"mean\": %.2f"
	       ", \"p90\": %zu, \"p99\": %zu, \"max\": %zu, \"histogram\": [",
	       s->depth_min, s->depth_median, s->depth_mean, s->depth_p90,
	       s->depth_p99, s->depth_max);
	for (i = 0; i < KP_DEPTH_BUCKETS; i++) {
		kp_summary_bucket(i, &lo, &hi);
		printf("%s{\"from\": %zu, \"to\": ", i ? ", " : "", lo);
		if (hi == SIZE_MAX)
			printf("null");
		else
			printf("%zu", hi);
		printf(", \"samples\": %" PRIu64 "}", s->depth_hist[i]);
	}
	printf("]},\n \"max_stack\": %zu, ", s->max_stack);
	json_count("truncated", s->truncated, s->samples, true);
	json_count("root_unknown", s->root_unknown, s->samples, true);
	json_count("root_address", s->root_address, s->samples, true);
	printf("\"unknown_frames\": {\"frames\": %" PRIu64 ", \"pct\": %.4f},\n"
	       " \"space\": {", s->unknown_frames,
	       pct(s->unknown_frames, s->frames));
	for (i = 0; i < 3; i++)
		json_count(space_names[i], space_of(s, (int)i), s->samples, i < 2);
	printf("},\n \"contexts\": {");
	for (i = 0; i < KP_CTX_COUNT; i++)
		json_count(kp_context_name((enum kp_context)i), s->context[i],
			   s->samples, i + 1 < KP_CTX_COUNT);
	printf("},\n \"modules\": [");
	for (i = 0; i < rows; i++) {
		printf("%s\n  {", i ? "," : "");
		kp_report_json_key(&rep, mods, kp_profile_get(mods, ids[i]));
		putchar('}');
	}
	printf("%s]}\n", rows ? "\n" : "");
	free(ids);
}

int
main(int argc, char **argv)
{
	enum { OPT_MAX_STACK = 256 };
	static const struct option longopts[] = {
		KP_REPORT_LONGOPTS,
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *agg = kp_agg_new();
	struct kp_profile *mods;
	struct kp_summary s;
	uint64_t records;
	int ch;
	enum kp_color color = KP_COLOR_AUTO;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "hn:", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case OPT_MAX_STACK:
			opt_max_stack = kp_arg_u64("--max-stack", optarg);
			if (opt_max_stack == 0)
				kp_usage_error("--max-stack: must be 1 or more");
			break;
		default:
			if (!kp_report_option(&rep, &color, ch, optarg))
				usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;
	rep.color = rep.fmt == KP_FMT_TEXT && kp_color_on(color);
	rep.out = stdout;

	records = read_all(agg, argc, argv);
	kp_summary_make(&s, agg, records, (size_t)opt_max_stack);
	mods = kp_profile_new(KP_BY_MODULE, false);
	kp_profile_add_agg(mods, agg);
	if (rep.fmt == KP_FMT_TEXT)
		print_text(&s, mods);
	else if (rep.fmt == KP_FMT_TSV)
		print_tsv(&s, mods);
	else
		print_json(&s, mods);
	kp_profile_free(mods);
	kp_agg_free(agg);
	return kp_finish();
}
