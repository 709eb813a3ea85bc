/*
 * diffview.c - the differential table (report.h, diff.h):
 *
 *	 before%    after%      diff        p  function
 *	   0.00%    80.00%   +80.00%  <0.0001* new_hot
 *	  60.00%    58.00%    -2.00%   0.4120  mid
 *	   10000     20000                     Total samples
 *
 * A '*' marks the rows whose change is significant (adjusted p-value
 * under alpha); the others may be sampling noise.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "report.h"


static int
cmp_row(const void *x, const void *y, void *arg)
{
	const struct kp_report *rep = arg;
	const struct kp_drow *r = *(const struct kp_drow *const *)x;
	const struct kp_drow *s = *(const struct kp_drow *const *)y;
	double ar = fabs(r->d), as = fabs(s->d);

	if (rep->sort == KP_SORT_NAME || rep->sort == KP_SORT_MODULE)
		return kp_report_cmp_names(r->k, s->k,
					   rep->sort == KP_SORT_MODULE);
	if (ar != as)
		return ar > as ? -1 : 1;
	if (r->d != s->d)
		return r->d > s->d ? -1 : 1;
	return kp_report_cmp_names(r->k, s->k, false);
}

static void
text_p(const struct kp_report *r, double p, bool sig)
{
	if (p < 0.0001)
		fprintf(r->out, "%8s", "<0.0001");
	else
		fprintf(r->out, "%8.4f", p);
	fputs(sig ? "* " : "  ", r->out);
}

static void
print_text(const struct kp_report *r, const struct kp_diff *d,
	   const struct kp_drow *const *rows, size_t n, double alpha,
	   bool absolute, int nw)
{
	int cw = kp_digits(d->ta) > kp_digits(d->tb) ? kp_digits(d->ta)
						      : kp_digits(d->tb);
	const struct kp_drow *w;
	size_t i;
	bool sig;

	cw = cw > 8 ? cw : 8;
	fprintf(r->out, "%*s  %*s  %8s  %8s  ", cw,
		absolute ? "before" : "before%", cw,
		absolute ? "after" : "after%", "diff", "p");
	kp_report_text_title(r, nw);
	for (i = 0; i < n; i++) {
		w = rows[i];
		sig = w->p_value < alpha;
		if (r->color)
			fputs(!sig ? KP_SGR_DIM
			      : w->d > 0 ? KP_SGR_RED : KP_SGR_GREEN,
			      r->out);
		if (absolute)
			fprintf(r->out, "%*" PRIu64 "  %*" PRIu64 "  %+8.0f  ",
				cw, w->a, cw, w->b, w->d);
		else
			fprintf(r->out, "%*.2f%%  %*.2f%%  %+7.2f%%  ", cw - 1,
				w->pa, cw - 1, w->pb, w->d);
		text_p(r, w->p_value, sig);
		if (r->color)
			fputs(KP_SGR_OFF, r->out);
		kp_report_text_name(r, w->k, nw);
	}
	fprintf(r->out, "%*" PRIu64 "  %*" PRIu64 "  %8s  %8s  Total samples\n",
		cw, d->ta, cw, d->tb, "", "");
}

static const char *
test_name(bool absolute, size_t runs_a, size_t runs_b)
{
	if (runs_a >= 2 && runs_b >= 2)
		return "runs";
	return absolute ? "poisson" : "two-proportion";
}

void
kp_diff_print(const struct kp_report *r, const struct kp_diff *d,
	      double alpha, bool absolute, size_t runs_a, size_t runs_b)
{
	const struct kp_drow **rows;
	const struct kp_drow *w;
	size_t i, n = 0;
	int nw = 8;
	const char *dname = absolute ? "diff" : "diff_pct";

	rows = kp_xmalloc((d->n ? d->n : 1) * sizeof(*rows));
	for (i = 0; i < d->n; i++)
		rows[i] = &d->rows[i];
	qsort_r(rows, d->n, sizeof(*rows), cmp_row, (void *)r);
	for (i = 0; i < d->n; i++) {
		if (r->n && n == r->n)
			break;
		if (fabs(rows[i]->d) < r->limit)
			continue;
		rows[n++] = rows[i];
		if ((int)strlen(rows[n - 1]->k->name) > nw)
			nw = (int)strlen(rows[n - 1]->k->name);
	}
	switch (r->fmt) {
	case KP_FMT_TEXT:
		print_text(r, d, rows, n, alpha, absolute, nw);
		break;
	case KP_FMT_TSV:
		fprintf(r->out, "# total before: %" PRIu64
				"\n# total after: %" PRIu64 "\n",
			d->ta, d->tb);
		if (runs_a > 1 || runs_b > 1)
			fprintf(r->out, "# runs before: %zu\n# runs after: %zu\n",
				runs_a, runs_b);
		fprintf(r->out, "before_pct\tafter_pct\t%s\tbefore\tafter\tp_value",
			dname);
		kp_report_tsv_title(r);
		for (i = 0; i < n; i++) {
			w = rows[i];
			fprintf(r->out, "%.4f\t%.4f\t%+.4f\t%" PRIu64 "\t%" PRIu64
					"\t%.4g",
				w->pa, w->pb, w->d, w->a, w->b, w->p_value);
			kp_report_tsv_name(r, w->k);
		}
		break;
	case KP_FMT_JSON:
		fprintf(r->out,
			"{\"by\": \"%s\", \"sort\": \"%s\", \"total_before\": %" PRIu64
			", \"total_after\": %" PRIu64 ", \"runs_before\": %zu"
			", \"runs_after\": %zu, \"diff\": \"%s\", \"test\": \"%s\""
			", \"adjust\": \"benjamini-hochberg\", \"alpha\": %g"
			", \"rows\": [",
			r->by_name,
			r->sort == KP_SORT_EXCLUSIVE ? "exclusive" : "inclusive",
			d->ta, d->tb, runs_a, runs_b,
			absolute ? "samples" : "points",
			test_name(absolute, runs_a, runs_b), alpha);
		for (i = 0; i < n; i++) {
			w = rows[i];
			fprintf(r->out, "%s\n  {", i ? "," : "");
			kp_report_json_name(r, w->k);
			fprintf(r->out,
				", \"before\": %" PRIu64 ", \"after\": %" PRIu64
				", \"before_pct\": %.4f, \"after_pct\": %.4f"
				", \"%s\": %.4f, \"p_value\": %.6g"
				", \"significant\": %s}",
				w->a, w->b, w->pa, w->pb, dname, w->d,
				w->p_value, w->p_value < alpha ? "true" : "false");
		}
		fprintf(r->out, "%s]}\n", n ? "\n" : "");
		break;
	}
	if (r->fmt == KP_FMT_TEXT)
		fprintf(r->out,
			"* adjusted p < %g: more than sampling noise (%s test, "
			"Benjamini-Hochberg over %zu rows)\n",
			alpha, test_name(absolute, runs_a, runs_b), d->n);
	free(rows);
}
