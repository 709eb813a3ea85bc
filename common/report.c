/*
 * report.c - what every report shares: formats, escaping of names in tsv
 * and json, colour, sort orders and the name column(s) (report.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "utf8.h"

/* The index of s in words[0..n), -1 if none. */
static int
word_index(const char *s, const char *const *words, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, words[i]) == 0)
			return i;
	return -1;
}

int
kp_fmt_parse(const char *s)
{
	static const char *const words[] = { "text", "tsv", "json" };

	return word_index(s, words, 3);
}

void
kp_tsv_str(FILE *out, const char *s)
{
	const char *p;

	for (p = s; *p; p++) {
		switch (*p) {
		case '\t':
			fputs("\\t", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		default:
			putc(*p, out);
		}
	}
}

void
kp_json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	putc('"', out);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			putc('\\', out);
			putc(*p++, out);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else if ((n = kp_utf8_decode(p, &cp)) == 0) {
			fputs("\\ufffd", out);
			p++;
		} else {
			fwrite(p, 1, n, out);
			p += n;
		}
	}
	putc('"', out);
}

int
kp_color_parse(const char *s)
{
	static const char *const words[] = { "auto", "always", "never" };

	return word_index(s, words, 3);
}

bool
kp_color_on(enum kp_color c)
{
	const char *term;

	if (c != KP_COLOR_AUTO)
		return c == KP_COLOR_ALWAYS;
	term = getenv("TERM");
	return isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

const char *
kp_pct_color(double pct)
{
	if (pct >= 5.0)
		return KP_SGR_RED;
	if (pct >= 0.5)
		return KP_SGR_GREEN;
	return "";
}

static const char *const sort_names[] = { "inclusive", "exclusive", "name",
					  "module" };

int
kp_sort_parse(const char *s)
{
	return word_index(s, sort_names, 4);
}

const char *
kp_sort_name(enum kp_sort s)
{
	return sort_names[s];
}

int
kp_digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

bool
kp_report_module_col(const struct kp_report *r)
{
	return r->modules && r->by != KP_BY_MODULE;
}

void
kp_report_text_title(const struct kp_report *r, int width)
{
	if (kp_report_module_col(r))
		fprintf(r->out, "%-*s  module\n", width, r->key_title);
	else
		fprintf(r->out, "%s\n", r->key_title);
}

void
kp_report_text_name(const struct kp_report *r, const struct kp_pkey *k,
		    int width)
{
	if (kp_report_module_col(r))
		fprintf(r->out, "%-*s  %s\n", width, k->name,
			k->module ? k->module : "[unknown]");
	else {
		fputs(k->name, r->out);
		putc('\n', r->out);
	}
}

void
kp_report_key_head(const struct kp_report *r, int cw, int nw)
{
	fprintf(r->out, "%7s  %*s  %7s  %*s  ", "incl%", cw, "inclusive",
		"excl%", cw, "exclusive");
	kp_report_text_title(r, nw);
}

/*
 * "%6.2f%%" of pct at b (room for 64: a percentage of a total, 0 to
 * 100, takes 7): its length.  A table's rows hold
 * few values (kp-inclusive on perf2kp's real capture: 8,215 rows, 608
 * inclusive and 316 exclusive counts), so the text of each is kept by
 * its value's bits, in a small table that any report may share (the
 * text is the value's alone): printf's took 4.7 ms of kp-inclusive's
 * 5 ms of printing the table there.
 */
static size_t
pct_text(double pct, char *b)
{
	static struct {
		uint64_t bits;
		char s[15];
		unsigned char n; /* 0: none */
	} memo[256];
	uint64_t bits;
	size_t i;
	int n;

	memcpy(&bits, &pct, sizeof(bits));
	i = (size_t)((bits * 0x9e3779b97f4a7c15ull) >> 56);
	if (memo[i].n && memo[i].bits == bits) {
		memcpy(b, memo[i].s, memo[i].n);
		return memo[i].n;
	}
	n = snprintf(b, 64, "%6.2f%%", pct);
	if (n < 0)
		return 0;
	if (n >= (int)sizeof(memo[i].s))
		return n < 64 ? (size_t)n : 63;
	memo[i].bits = bits;
	memcpy(memo[i].s, b, (size_t)n);
	memo[i].n = (unsigned char)n;
	return (size_t)n;
}

/* v right-aligned in w columns at b (room for w + 20): its length. */
static size_t
count_text(uint64_t v, int w, char *b)
{
	char d[20], *q = d + sizeof(d);
	size_t n, pad;

	do
		*--q = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	n = (size_t)(d + sizeof(d) - q);
	pad = w > 0 && (size_t)w > n ? (size_t)w - n : 0;
	memset(b, ' ', pad);
	memcpy(b + pad, q, n);
	return pad + n;
}

/* pct at b, coloured if r colours (room for 96): its length. */
static size_t
text_pct(const struct kp_report *r, double pct, char *b)
{
	const char *c = r->color ? kp_pct_color(pct) : "";
	size_t n = strlen(c), m;

	memcpy(b, c, n);
	m = n + pct_text(pct, b + n);
	if (n) {
		memcpy(b + m, KP_SGR_OFF, sizeof(KP_SGR_OFF) - 1);
		m += sizeof(KP_SGR_OFF) - 1;
	}
	return m;
}

/* "PCT  COUNT  " of count v at b (room for cw + 120): its length. */
static size_t
pct_count(const struct kp_report *r, const struct kp_profile *p,
	  uint64_t v, int cw, char *b)
{
	size_t n = text_pct(r, kp_profile_pct(p, v), b);

	memcpy(b + n, "  ", 2);
	n += 2;
	n += count_text(v, cw, b + n);
	memcpy(b + n, "  ", 2);
	return n + 2;
}

void
kp_report_key_line(const struct kp_report *r, const struct kp_profile *p,
		   const struct kp_pkey *k, int cw, int nw)
{
	char buf[512], *b = buf;
	size_t n, need = 2 * ((size_t)(cw > 0 ? cw : 0) + 120);

	if (need > sizeof(buf))
		b = kp_xmalloc(need);
	n = pct_count(r, p, k->incl, cw, b);
	n += pct_count(r, p, k->excl, cw, b + n);
	fwrite(b, 1, n, r->out);
	if (b != buf)
		free(b);
	kp_report_text_name(r, k, nw);
}

void
kp_report_tsv_key(const struct kp_report *r, const struct kp_profile *p,
		  const struct kp_pkey *k)
{
	fprintf(r->out, "%.4f\t%" PRIu64 "\t%.4f\t%" PRIu64,
		kp_profile_pct(p, k->incl), k->incl, kp_profile_pct(p, k->excl),
		k->excl);
	kp_report_tsv_name(r, k);
}

void
kp_report_json_key(const struct kp_report *r, const struct kp_profile *p,
		   const struct kp_pkey *k)
{
	kp_report_json_name(r, k);
	fprintf(r->out,
		", \"inclusive\": %" PRIu64 ", \"inclusive_pct\": %.4f"
		", \"exclusive\": %" PRIu64 ", \"exclusive_pct\": %.4f",
		k->incl, kp_profile_pct(p, k->incl), k->excl,
		kp_profile_pct(p, k->excl));
}

void
kp_report_tsv_title(const struct kp_report *r)
{
	fprintf(r->out, "\t%s%s\n", r->key_title,
		kp_report_module_col(r) ? "\tmodule" : "");
}

void
kp_report_tsv_name(const struct kp_report *r, const struct kp_pkey *k)
{
	putc('\t', r->out);
	kp_tsv_str(r->out, k->name);
	if (kp_report_module_col(r)) {
		putc('\t', r->out);
		kp_tsv_str(r->out, k->module ? k->module : "[unknown]");
	}
	putc('\n', r->out);
}

void
kp_report_json_name(const struct kp_report *r, const struct kp_pkey *k)
{
	fprintf(r->out, "\"%s\": ", r->key_title);
	kp_json_str(r->out, k->name);
	if (kp_report_module_col(r)) {
		fputs(", \"module\": ", r->out);
		if (k->module)
			kp_json_str(r->out, k->module);
		else
			fputs("null", r->out);
	}
}

int
kp_report_cmp_names(const struct kp_pkey *x, const struct kp_pkey *y,
		    bool module_first)
{
	int c;

	if (module_first) {
		c = kp_strcmp_null(x->module, y->module);
		return c ? c : kp_strcmp_null(x->name, y->name);
	}
	c = kp_strcmp_null(x->name, y->name);
	return c ? c : kp_strcmp_null(x->module, y->module);
}

static int
cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct kp_profile *p = arg;

	return kp_report_cmp_names(kp_profile_get(p, *(const uint32_t *)a),
				   kp_profile_get(p, *(const uint32_t *)b),
				   false);
}

static int
cmp_by_module(const void *a, const void *b, void *arg)
{
	const struct kp_profile *p = arg;

	return kp_report_cmp_names(kp_profile_get(p, *(const uint32_t *)a),
				   kp_profile_get(p, *(const uint32_t *)b),
				   true);
}

void
kp_report_sort_names(const struct kp_profile *p, uint32_t *ids, size_t n,
		     bool module_first)
{
	qsort_r(ids, n, sizeof(*ids), module_first ? cmp_by_module : cmp_by_name,
		(void *)p);
}

uint32_t *
kp_report_order(const struct kp_report *r, const struct kp_profile *p)
{
	uint32_t *ids = kp_profile_sorted(p, r->sort == KP_SORT_EXCLUSIVE);

	if (r->sort == KP_SORT_NAME || r->sort == KP_SORT_MODULE)
		kp_report_sort_names(p, ids, kp_profile_len(p),
				     r->sort == KP_SORT_MODULE);
	return ids;
}

uint32_t *
kp_report_rows(const struct kp_report *r, const struct kp_profile *p,
	       size_t *rows, int *nw)
{
	uint32_t *ids = kp_report_order(r, p);
	bool excl = r->sort == KP_SORT_EXCLUSIVE;
	size_t i, len = kp_profile_len(p), n = 0;
	const struct kp_pkey *k;

	for (i = 0; i < len; i++) {
		if (r->n && n == r->n)
			break;
		k = kp_profile_get(p, ids[i]);
		if (kp_profile_pct(p, excl ? k->excl : k->incl) < r->limit)
			continue;
		ids[n++] = ids[i];
		if ((int)strlen(k->name) > *nw)
			*nw = (int)strlen(k->name);
	}
	*rows = n;
	return ids;
}

enum kp_fmt
kp_arg_fmt(const char *arg)
{
	int v = kp_fmt_parse(arg);

	if (v < 0)
		kp_usage_error("--format: expected text, tsv or json, not '%s'",
			       arg);
	return (enum kp_fmt)v;
}

enum kp_color
kp_arg_color(const char *arg)
{
	int v = arg ? kp_color_parse(arg) : KP_COLOR_ALWAYS;

	if (v < 0)
		kp_usage_error("--color: expected auto, always or never, not "
			       "'%s'", arg);
	return (enum kp_color)v;
}

enum kp_sort
kp_arg_sort(const char *arg)
{
	int v = kp_sort_parse(arg);

	if (v < 0)
		kp_usage_error("--sort: expected inclusive, exclusive, name or "
			       "module, not '%s'", arg);
	return (enum kp_sort)v;
}

bool
kp_report_option(struct kp_report *r, enum kp_color *color, int ch,
		 const char *arg)
{
	switch (ch) {
	case 'n':
		r->n = kp_arg_u64("-n", arg);
		return true;
	case KP_ROPT_COLOR:
		*color = kp_arg_color(arg);
		return true;
	case KP_ROPT_FORMAT:
		r->fmt = kp_arg_fmt(arg);
		return true;
	case KP_ROPT_LIMIT:
		r->limit = kp_arg_double("--percent-limit", arg);
		return true;
	case KP_ROPT_SORT:
		r->sort = kp_arg_sort(arg);
		return true;
	}
	return false;
}
