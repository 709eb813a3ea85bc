/*
 * report.h - the reports of the analysis filters (kp-inclusive, kp-top,
 * kp-stat): their output formats, escaping and colour (report.c), the
 * per-key table (table.c), and the caller/callee trees (treeview.c).
 *
 * Three formats: text (aligned columns for people), tsv (one header
 * line, then tab-separated rows; "# key: value" comment lines first) and
 * json (one object).  A name in tsv has its tab, newline, carriage
 * return and backslash written as \t, \n, \r and \\, so the columns never
 * shift (the convention of PostgreSQL's and MySQL's text format); a name
 * in json is a valid JSON string whatever its bytes: '"', '\' and the
 * control characters are escaped, and each byte that is not part of
 * valid UTF-8 becomes U+FFFD, the replacement character.
 */
#ifndef KP_REPORT_H
#define KP_REPORT_H

#include <getopt.h>

#include "profile.h"

enum kp_fmt { KP_FMT_TEXT, KP_FMT_TSV, KP_FMT_JSON };

/* "text", "tsv", "json"; -1 if none. */
int kp_fmt_parse(const char *s);

/* s as a tsv field (escaped as above). */
void kp_tsv_str(FILE *out, const char *s);
/* s as a JSON string, with its quotes (escaped as above). */
void kp_json_str(FILE *out, const char *s);

/* --color=auto|always|never: whether to colour text output. */
enum kp_color { KP_COLOR_AUTO, KP_COLOR_ALWAYS, KP_COLOR_NEVER };
/* Parse "auto", "always", "never"; -1 if none. */
int kp_color_parse(const char *s);
/* Colour stdout?  auto: when it is a terminal and TERM is not "dumb". */
bool kp_color_on(enum kp_color c);
/* SGR sequences (empty strings when colour is off). */
#define KP_SGR_RED "\033[31m"
#define KP_SGR_GREEN "\033[32m"
#define KP_SGR_DIM "\033[2m"
#define KP_SGR_BOLD "\033[1m"
#define KP_SGR_OFF "\033[m"
/* perf report's colours for a percentage: red from 5%, green from 0.5%. */
const char *kp_pct_color(double pct);

/* How a report orders its rows. */
enum kp_sort {
	KP_SORT_INCLUSIVE, /* inclusive count, heaviest first */
	KP_SORT_EXCLUSIVE, /* exclusive count, heaviest first */
	KP_SORT_NAME,      /* name, then module, bytewise */
	KP_SORT_MODULE,    /* module, then name, bytewise */
};
/* "inclusive", "exclusive", "name", "module"; -1 if none. */
int kp_sort_parse(const char *s);
const char *kp_sort_name(enum kp_sort s);

/* What a report shows; every filter fills it from its options. */
struct kp_report {
	enum kp_fmt fmt;
	enum kp_by by;
	const char *key_title; /* the key column: "function", "module", ... */
	const char *by_name;   /* json's "by": kp_by_name(by), "context" */
	bool modules;	       /* --modules: a module column */
	enum kp_sort sort;
	uint64_t n;	       /* rows (children per tree node); 0: all */
	double limit;	       /* --percent-limit */
	bool color;
	FILE *out;
};

/*
 * The options every table report takes: -n, --format, --percent-limit,
 * --sort and --color, in a filter's getopt_long table with
 * KP_REPORT_LONGOPTS ("n:" in its short options), handled by
 * kp_report_option.
 */
enum {
	KP_ROPT_FORMAT = 0x200,
	KP_ROPT_LIMIT,
	KP_ROPT_SORT,
	KP_ROPT_COLOR,
};
#define KP_REPORT_LONGOPTS                                                   \
	{ "format", required_argument, NULL, KP_ROPT_FORMAT },               \
	{ "percent-limit", required_argument, NULL, KP_ROPT_LIMIT },         \
	{ "sort", required_argument, NULL, KP_ROPT_SORT },                   \
	{ "color", optional_argument, NULL, KP_ROPT_COLOR }
/* Take option ch (its argument arg) into r and *color; false when ch is
 * not one of them.  A bad argument is a usage error. */
bool kp_report_option(struct kp_report *r, enum kp_color *color, int ch,
		      const char *arg);

/* Is there a module column (modules, unless the key is the module)? */
bool kp_report_module_col(const struct kp_report *r);
/* The title line of the name column(s) in text, and its newline. */
void kp_report_text_title(const struct kp_report *r, int width);
/* A key's name column(s): text (padded to width), tsv (leading tab),
 * json (the members, no braces); each text and tsv form ends the line. */
void kp_report_text_name(const struct kp_report *r, const struct kp_pkey *k,
			 int width);
void kp_report_tsv_name(const struct kp_report *r, const struct kp_pkey *k);
void kp_report_json_name(const struct kp_report *r, const struct kp_pkey *k);
/* Text: the title line of a key's counts, and a key's line (incl%,
 * inclusive, excl%, exclusive, name), counts cw wide, names nw. */
void kp_report_key_head(const struct kp_report *r, int cw, int nw);
void kp_report_key_line(const struct kp_report *r, const struct kp_profile *p,
			const struct kp_pkey *k, int cw, int nw);
/* tsv: a key's percentages and counts, then its name; json: its name
 * and counts as members (no braces). */
void kp_report_tsv_key(const struct kp_report *r, const struct kp_profile *p,
		       const struct kp_pkey *k);
void kp_report_json_key(const struct kp_report *r, const struct kp_profile *p,
			const struct kp_pkey *k);
/* The tsv title of the name column(s): "\tfunction[\tmodule]\n". */
void kp_report_tsv_title(const struct kp_report *r);
/* Decimal digits of v. */
int kp_digits(uint64_t v);
/*
 * Key ids of p in the report's order (kp_profile_sorted for inclusive
 * and exclusive).  malloc'ed, kp_profile_len(p) of them.
 */
uint32_t *kp_report_order(const struct kp_report *r,
			  const struct kp_profile *p);
/* Sort ids[0..n) of p by name then module (or module then name). */
void kp_report_sort_names(const struct kp_profile *p, uint32_t *ids, size_t n,
			  bool module_first);
/*
 * The rows a report shows: key ids in its order, cut by -n and by
 * --percent-limit on the sorting percentage (exclusive with --sort
 * exclusive, else inclusive); their number in *rows, and *nw raised to
 * the longest name.  malloc'ed.
 */
uint32_t *kp_report_rows(const struct kp_report *r, const struct kp_profile *p,
			 size_t *rows, int *nw);
/* --format, --color[=WHEN] (NULL: always) and --sort arguments; a bad
 * one is a usage error. */
enum kp_fmt kp_arg_fmt(const char *arg);
enum kp_color kp_arg_color(const char *arg);
enum kp_sort kp_arg_sort(const char *arg);
/* Compare two keys by name then module (or module then name). */
int kp_report_cmp_names(const struct kp_pkey *x, const struct kp_pkey *y,
			bool module_first);

/* ---- table.c ---- */

/* The per-key table: inclusive and exclusive samples and percentages. */
void kp_table_print(const struct kp_report *r, const struct kp_profile *p);

/* ---- treeview.c ---- */

/*
 * The callers (callers true) or callees of key id, max_depth levels
 * below it (0: all), as an indented tree (text), depth-numbered rows
 * (tsv) or nested objects (json), walked without recursion: a tree as
 * deep as the stacks prints, and text indents at most
 * KP_TREE_MAX_INDENT levels (deeper nodes name their depth).  first
 * says it is the first tree of the report (titles, separators).
 */
#define KP_TREE_MAX_INDENT 32
void kp_tree_print(const struct kp_report *r, struct kp_profile *p,
		   const struct kp_agg *agg, uint32_t id, bool callers,
		   size_t max_depth, bool first);

/* ---- diffview.c ---- */

struct kp_diff;
/*
 * The differential table of d (diff.h): the rows sorted by the size of
 * their difference (or by name, module), cut by -n and --percent-limit
 * (points, or samples when absolute), each with its adjusted p-value;
 * in text a row significant at alpha has a '*' after its p-value (and
 * the others are dim in colour).  runs_a, runs_b: the runs of each side.
 */
void kp_diff_print(const struct kp_report *r, const struct kp_diff *d,
		   double alpha, bool absolute, size_t runs_a, size_t runs_b);

#endif /* KP_REPORT_H */
