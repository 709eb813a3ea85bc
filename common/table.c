/*
 * table.c - the per-key table of kp-inclusive: inclusive and exclusive
 * samples and percentages, a row per key in the report's order, and the
 * total (report.h).
 *
 *	  incl%  inclusive    excl%  exclusive  function
 *	 32.04%        299    6.92%         64  do_syscall_64
 *	100.00%        933  100.00%        933  Total
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

/* The rows shown: -n, and --percent-limit on the sorting percentage. */
static size_t
pick_rows(const struct kp_report *r, const struct kp_profile *p,
	  uint32_t *ids, int *nw)
{
	bool excl = r->sort == KP_SORT_EXCLUSIVE;
	size_t i, len = kp_profile_len(p), rows = 0;
	const struct kp_pkey *k;

	for (i = 0; i < len; i++) {
		if (r->n && rows == r->n)
			break;
		k = kp_profile_get(p, ids[i]);
		if (kp_profile_pct(p, excl ? k->excl : k->incl) < r->limit)
			continue;
		ids[rows++] = ids[i];
		*nw = max_int(*nw, (int)strlen(k->name));
	}
	return rows;
}

static void
text_pct(const struct kp_report *r, double pct)
{
	if (r->color && *kp_pct_color(pct))
		fprintf(r->out, "%s%6.2f%%" KP_SGR_OFF, kp_pct_color(pct), pct);
	else
		fprintf(r->out, "%6.2f%%", pct);
}

static void
print_text(const struct kp_report *r, const struct kp_profile *p,
	   const uint32_t *ids, size_t rows, int nw)
{
	uint64_t total = kp_profile_total(p);
	int cw = max_int(kp_digits(total), 9);
	const struct kp_pkey *k;
	size_t i;

	fprintf(r->out, "%7s  %*s  %7s  %*s  ", "incl%", cw, "inclusive",
		"excl%", cw, "exclusive");
	kp_report_text_title(r, nw);
	for (i = 0; i < rows; i++) {
		k = kp_profile_get(p, ids[i]);
		text_pct(r, kp_profile_pct(p, k->incl));
		fprintf(r->out, "  %*" PRIu64 "  ", cw, k->incl);
		text_pct(r, kp_profile_pct(p, k->excl));
		fprintf(r->out, "  %*" PRIu64 "  ", cw, k->excl);
		kp_report_text_name(r, k, nw);
	}
	fprintf(r->out,
		"%6.2f%%  %*" PRIu64 "  %6.2f%%  %*" PRIu64 "  Total\n",
		total ? 100.0 : 0.0, cw, total, total ? 100.0 : 0.0, cw, total);
}

static const char *
sort_name(enum kp_sort s)
{
	static const char *const names[] = { "inclusive", "exclusive", "name",
					     "module" };
	return names[s];
}

void
kp_table_print(const struct kp_report *r, const struct kp_profile *p)
{
	uint64_t total = kp_profile_total(p);
	uint32_t *ids = kp_report_order(r, p);
	int nw = 8;
	size_t i, rows = pick_rows(r, p, ids, &nw);
	const struct kp_pkey *k;

	switch (r->fmt) {
	case KP_FMT_TEXT:
		print_text(r, p, ids, rows, nw);
		break;
	case KP_FMT_TSV:
		fprintf(r->out, "# total: %" PRIu64 "\n", total);
		fputs("inclusive_pct\tinclusive\texclusive_pct\texclusive",
		      r->out);
		kp_report_tsv_title(r);
		for (i = 0; i < rows; i++) {
			k = kp_profile_get(p, ids[i]);
			fprintf(r->out, "%.4f\t%" PRIu64 "\t%.4f\t%" PRIu64,
				kp_profile_pct(p, k->incl), k->incl,
				kp_profile_pct(p, k->excl), k->excl);
			kp_report_tsv_name(r, k);
		}
		break;
	case KP_FMT_JSON:
		fprintf(r->out,
			"{\"by\": \"%s\", \"sort\": \"%s\", \"total\": %" PRIu64
			", \"rows\": [",
			r->by_name, sort_name(r->sort), total);
		for (i = 0; i < rows; i++) {
			k = kp_profile_get(p, ids[i]);
			fprintf(r->out, "%s\n  {", i ? "," : "");
			kp_report_json_name(r, k);
			fprintf(r->out,
				", \"inclusive\": %" PRIu64
				", \"inclusive_pct\": %.4f, \"exclusive\": %" PRIu64
				", \"exclusive_pct\": %.4f}",
				k->incl, kp_profile_pct(p, k->incl), k->excl,
				kp_profile_pct(p, k->excl));
		}
		fprintf(r->out, "%s]}\n", rows ? "\n" : "");
		break;
	}
	free(ids);
}
