/*
 * treeview.c - the callers or callees of one key as a tree (report.h):
 *
 *	  incl%  inclusive    excl%  exclusive  function
 *	 60.00%          6    0.00%          0  mid
 *	  incl%  inclusive  callers of mid
 *	 60.00%          6  top
 *	 40.00%          4    main
 *
 * The tree comes from kp_profile_tree; this prints it depth first with
 * an explicit stack (a stack 100,000 frames deep is a tree as deep, and
 * a recursive walk ran out of stack).  Text indents two spaces a level up
 * to KP_TREE_MAX_INDENT levels; a deeper node is indented as that level
 * and starts with its depth, "[40] name".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* One level of the walk: the child being looked at and its rank. */
struct level {
	uint32_t node;
	uint64_t rank;
};

/* Is the child at rank shown: -n children a node, --percent-limit. */
static bool
shown(const struct kp_report *r, const struct kp_profile *p,
      const struct kp_tree *t, const struct level *l)
{
	if (l->node == KP_KEY_NONE || (r->n && l->rank == r->n))
		return false;
	/* children are sorted by total: the rest are smaller */
	return kp_profile_pct(p, kp_tree_node(t, l->node)->total) >= r->limit;
}

static int
indent(uint32_t depth)
{
	return (int)(depth < KP_TREE_MAX_INDENT ? depth : KP_TREE_MAX_INDENT);
}

/* A node's line (text, tsv) or the start of its object (json). */
static void
open_node(const struct kp_report *r, const struct kp_profile *p,
	  const struct kp_tnode *nd, bool first, int cw)
{
	const struct kp_pkey *k = kp_profile_get(p, nd->key);
	uint32_t d = nd->depth - 1;

	switch (r->fmt) {
	case KP_FMT_TEXT:
		fprintf(r->out, "%6.2f%%  %*" PRIu64 "  %*s",
			kp_profile_pct(p, nd->total), cw, nd->total,
			2 * indent(d), "");
		if (d > KP_TREE_MAX_INDENT)
			fprintf(r->out, "[%" PRIu32 "] ", d);
		if (kp_report_module_col(r))
			fprintf(r->out, "%s  [%s]\n", k->name,
				k->module ? k->module : "unknown");
		else
			fprintf(r->out, "%s\n", k->name);
		break;
	case KP_FMT_TSV:
		fprintf(r->out, "%" PRIu32 "\t%.4f\t%" PRIu64 "\t%.4f\t%" PRIu64,
			nd->depth, kp_profile_pct(p, nd->total), nd->total,
			kp_profile_pct(p, nd->self), nd->self);
		kp_report_tsv_name(r, k);
		break;
	case KP_FMT_JSON:
		fprintf(r->out, "%s\n%*s{", first ? "" : ",",
			2 * indent(nd->depth) + 2, "");
		kp_report_json_name(r, k);
		fprintf(r->out,
			", \"inclusive\": %" PRIu64
			", \"inclusive_pct\": %.4f, \"self\": %" PRIu64
			", \"self_pct\": %.4f, \"children\": [",
			nd->total, kp_profile_pct(p, nd->total), nd->self,
			kp_profile_pct(p, nd->self));
		break;
	}
}

/* The nodes below node 0, depth first, children in their order. */
static void
print_nodes(const struct kp_report *r, const struct kp_profile *p,
	    const struct kp_tree *t, int cw)
{
	struct level *st;
	size_t cap = 64, sp = 0;
	const struct kp_tnode *nd;

	st = kp_xmalloc(cap * sizeof(*st));
	st[0] = (struct level){ kp_tree_node(t, 0)->child, 0 };
	for (;;) {
		if (!shown(r, p, t, &st[sp])) {
			/* this level is done: close its parent, go on */
			if (sp == 0)
				break;
			sp--;
			if (r->fmt == KP_FMT_JSON)
				fputs("]}", r->out);
			st[sp].node = kp_tree_node(t, st[sp].node)->next;
			st[sp].rank++;
			continue;
		}
		nd = kp_tree_node(t, st[sp].node);
		open_node(r, p, nd, st[sp].rank == 0, cw);
		if (++sp == cap) {
			cap *= 2;
			st = kp_xrealloc(st, cap * sizeof(*st));
		}
		st[sp] = (struct level){ nd->child, 0 };
	}
	free(st);
}

void
kp_tree_print(const struct kp_report *r, struct kp_profile *p,
	      const struct kp_agg *agg, uint32_t id, bool callers,
	      size_t max_depth, bool first)
{
	const struct kp_pkey *k = kp_profile_get(p, id);
	uint64_t total = kp_profile_total(p);
	int cw = kp_digits(total) > 9 ? kp_digits(total) : 9;
	int nw = strlen(k->name) > 8 ? (int)strlen(k->name) : 8;
	struct kp_tree *t;

	t = kp_profile_tree(p, agg, callers ? KP_TREE_CALLERS : KP_TREE_CALLEES,
			    id, max_depth);
	kp_tree_sort(t, p);
	switch (r->fmt) {
	case KP_FMT_TEXT:
		if (!first)
			putc('\n', r->out);
		kp_report_key_head(r, cw, nw);
		kp_report_key_line(r, p, k, cw, nw);
		fprintf(r->out, "%7s  %*s  %s of %s\n", "incl%", cw,
			"inclusive", callers ? "callers" : "callees", k->name);
		break;
	case KP_FMT_TSV:
		if (first) {
			fprintf(r->out, "# total: %" PRIu64 "\n", total);
			fputs("depth\tinclusive_pct\tinclusive\tself_pct\tself",
			      r->out);
			kp_report_tsv_title(r);
		}
		fputs("0\t", r->out);
		kp_report_tsv_key(r, p, k);
		break;
	case KP_FMT_JSON:
		fprintf(r->out, "%s\n {", first ? "" : ",");
		kp_report_json_key(r, p, k);
		fprintf(r->out, ", \"%s\": [", callers ? "callers" : "callees");
		break;
	}
	print_nodes(r, p, t, cw);
	if (r->fmt == KP_FMT_JSON)
		fputs("]}", r->out);
	kp_tree_free(t);
}
