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

static void
print_text(const struct kp_report *r, const struct kp_profile *p,
	   const uint32_t *ids, size_t rows, int nw)
{
	uint64_t total = kp_profile_total(p);
	int cw = max_int(kp_digits(total), 9);
	size_t i;

	kp_report_key_head(r, cw, nw);
	for (i = 0; i < rows; i++)
		kp_report_key_line(r, p, kp_profile_get(p, ids[i]), cw, nw);
	fprintf(r->out,
		"%6.2f%%  %*" PRIu64 "  %6.2f%%  %*" PRIu64 "  Total\n",
		total ? 100.0 : 0.0, cw, total, total ? 100.0 : 0.0, cw, total);
}

void
kp_table_print(const struct kp_report *r, const struct kp_profile *p)
{
	uint64_t total = kp_profile_total(p);
	int nw = 8;
	size_t i, rows;
	uint32_t *ids = kp_report_rows(r, p, &rows, &nw);

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
			kp_report_tsv_key(r, p, kp_profile_get(p, ids[i]));
		}
		break;
	case KP_FMT_JSON:
		fprintf(r->out,
			"{\"by\": \"%s\", \"sort\": \"%s\", \"total\": %" PRIu64
			", \"rows\": [",
			r->by_name, kp_sort_name(r->sort), total);
		for (i = 0; i < rows; i++) {
			fprintf(r->out, "%s\n  {", i ? "," : "");
			kp_report_json_key(r, p, kp_profile_get(p, ids[i]));
			putc('}', r->out);
		}
		fprintf(r->out, "%s]}\n", rows ? "\n" : "");
		break;
	}
	free(ids);
}
