/*
 * report.c - what every report shares: formats, escaping of names in tsv
 * and json, colour, sort orders and the name column(s) (report.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

int
kp_fmt_parse(const char *s)
{
	if (strcmp(s, "text") == 0)
		return KP_FMT_TEXT;
	if (strcmp(s, "tsv") == 0)
		return KP_FMT_TSV;
	if (strcmp(s, "json") == 0)
		return KP_FMT_JSON;
	return -1;
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

/*
 * The length of the valid UTF-8 sequence at p (1 to 4), or 0 when the
 * bytes there are not one: a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate or a code point over U+10FFFF
 * (RFC 3629).
 */
static size_t
utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	size_t n, i;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* over U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void
kp_json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	putc('"', out);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			putc('\\', out);
			putc(*p++, out);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else if ((n = utf8_len(p)) == 0) {
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
	if (strcmp(s, "auto") == 0)
		return KP_COLOR_AUTO;
	if (strcmp(s, "always") == 0)
		return KP_COLOR_ALWAYS;
	if (strcmp(s, "never") == 0)
		return KP_COLOR_NEVER;
	return -1;
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

int
kp_sort_parse(const char *s)
{
	static const char *const names[] = { "inclusive", "exclusive", "name",
					     "module" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
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
	else
		fprintf(r->out, "%s\n", k->name);
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

static int
cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

int
kp_report_cmp_names(const struct kp_pkey *x, const struct kp_pkey *y,
		    bool module_first)
{
	int c;

	if (module_first) {
		c = cmp_str(x->module, y->module);
		return c ? c : cmp_str(x->name, y->name);
	}
	c = cmp_str(x->name, y->name);
	return c ? c : cmp_str(x->module, y->module);
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

uint32_t *
kp_report_order(const struct kp_report *r, const struct kp_profile *p)
{
	uint32_t *ids = kp_profile_sorted(p, r->sort == KP_SORT_EXCLUSIVE);

	if (r->sort == KP_SORT_NAME)
		qsort_r(ids, kp_profile_len(p), sizeof(*ids), cmp_by_name,
			(void *)p);
	else if (r->sort == KP_SORT_MODULE)
		qsort_r(ids, kp_profile_len(p), sizeof(*ids), cmp_by_module,
			(void *)p);
	return ids;
}
