/*
 * kp-flame - kp in, an interactive SVG flame graph out.
 *
 *	kp-flame [options] [file]		a flame graph
 *	kp-flame [options] before after		a differential flame graph
 *
 * Each box is one frame of the call tree (stacks merged root first), as
 * wide as its inclusive samples.  The SVG is self-contained: a small
 * script gives tooltips and a details line, click to zoom, Reset Zoom,
 * and a search (a regular expression) that highlights the matching
 * frames and prints the share of samples they cover.
 *
 * Names are escaped for XML (a symbol "<script>" stays text) and bytes
 * that are not UTF-8 become '?', so the output is always well-formed.
 * The output depends only on the input: same input, same bytes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"
#include "svg.h"

enum kind { K_KERNEL, K_KMOD, K_USER, K_UNKNOWN, K_MERGED, K_ROOT };

static const char *opt_title;
static const char *opt_countname;
static const char *opt_colors = "kp";
static double opt_width = 1200, opt_height = 16, opt_minwidth = 0.1;
static bool opt_minwidth_pct, opt_reverse, opt_inverted;

#define FONTSIZE 12.0
#define FONTWIDTH 0.59 /* average glyph width, in font sizes */
#define XPAD 10.0

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-flame [-h] [-o FILE] [--title TEXT] [--width PX] "
		"[--height PX]\n"
		"                [--minwidth PX|PCT%%] [--colors PALETTE] "
		"[--countname NAME]\n"
		"                [--reverse] [--inverted] [file | before after]\n"
		"Read kp and write an interactive SVG flame graph.  With two "
		"files,\n"
		"a differential flame graph of 'after': red frames grew, blue "
		"shrank\n"
		"(the change in each frame's share of all samples).  With no "
		"file,\n"
		"or '-', read standard input.\n"
		"  -t, --title TEXT   the title (default \"Flame Graph\", or\n"
		"                     \"Icicle Graph\" with --inverted)\n"
		"  -w, --width PX     image width (default 1200)\n"
		"      --height PX    frame height (default 16)\n"
		"      --minwidth W   frames narrower than W pixels, or W%% of "
		"the\n"
		"                     width, are not drawn; runs of such "
		"neighbours\n"
		"                     are drawn as one merged box (default 0.1)\n"
		"      --colors P     kp (default: kernel orange, kernel modules\n"
		"                     yellow, user aqua, unknown grey), or one "
		"of\n"
		"                     hot mem io red green blue aqua yellow "
		"purple\n"
		"                     orange gray\n"
		"      --countname N  what the counts are (default \"samples\",\n"
		"                     \"ns\" for '# weight: period' on cpu-clock)\n"
		"      --reverse      reverse the stacks: leaf functions at the "
		"base\n"
		"      --inverted     an icicle graph: the base at the top, "
		"callers\n"
		"                     above their callees\n"
		"  -o, --output FILE  write to FILE (default: standard output);\n"
		"                     removed if it cannot be written whole\n"
		"  -h, --help         show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/* ---- the call tree ---- */

struct node {
	const char *name; /* interned */
	const char *module;
	uint64_t total[2]; /* inclusive: [0] before, [1] after (or only) */
	uint64_t self[2];
	uint32_t parent;
	uint32_t kids, nkids; /* range in kidv, after build_children */
	uint32_t first, next; /* children while building (0: none) */
	uint32_t nch;	      /* their number */
	uint32_t depth;
	uint8_t kind;
};

static struct node *nodes;
static size_t nnodes, nodes_cap;
static uint32_t *kidv;

/*
 * A child is found by walking its parent's list of children when there
 * are few of them (the list is in cache: no hash lookup, no miss), and
 * in a hash table of (parent, name) -> node when there are more.
 */
#define SCAN_MAX 8

struct nslot {
	const char *name; /* NULL: empty */
	uint32_t parent, node;
};

static struct nslot *ntab;
static size_t ntab_cap, ntab_len;

static inline size_t
node_hash(uint32_t parent, const char *name)
{
	uint64_t h = ((uintptr_t)name >> 3) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)parent * 0xbf58476d1ce4e5b9ull;

	return (size_t)(h ^ h >> 29);
}

static uint32_t new_node(uint32_t parent, const char *name,
			 const char *module, uint8_t kind);

static void
ntab_put(uint32_t node)
{
	const struct node *n = &nodes[node];
	size_t j;

	if ((ntab_len + 1) * 2 > ntab_cap) {
		size_t cap = ntab_cap ? ntab_cap * 2 : 1u << 12, i;
		struct nslot *t = kp_xcalloc(cap, sizeof(*t));

		for (i = 0; i < ntab_cap; i++) {
			if (!ntab[i].name)
				continue;
			j = node_hash(ntab[i].parent, ntab[i].name) &
			    (cap - 1);
			while (t[j].name)
				j = (j + 1) & (cap - 1);
			t[j] = ntab[i];
		}
		free(ntab);
		ntab = t;
		ntab_cap = cap;
	}
	j = node_hash(n->parent, n->name) & (ntab_cap - 1);
	while (ntab[j].name)
		j = (j + 1) & (ntab_cap - 1);
	ntab[j].name = n->name;
	ntab[j].parent = n->parent;
	ntab[j].node = node;
	ntab_len++;
}

/*
 * Frames merge by name, as in folded stacks: the same name in two
 * modules is one frame (its tooltip names the first module seen).
 */
static uint32_t
child(uint32_t parent, const char *name, const char *module, uint8_t kind)
{
	uint32_t c;
	size_t j;

	if (nodes[parent].nch <= SCAN_MAX) {
		/* node 0, the root, is nobody's child: 0 ends the list */
		for (c = nodes[parent].first; c; c = nodes[c].next)
			if (nodes[c].name == name)
				return c;
	} else {
		j = node_hash(parent, name) & (ntab_cap - 1);
		for (; ntab[j].name; j = (j + 1) & (ntab_cap - 1))
			if (ntab[j].parent == parent && ntab[j].name == name)
				return ntab[j].node;
	}
	c = new_node(parent, name, module, kind);
	nodes[c].next = nodes[parent].first;
	nodes[parent].first = c;
	if (++nodes[parent].nch == SCAN_MAX + 1) {
		uint32_t k;

		for (k = nodes[parent].first; k; k = nodes[k].next)
			ntab_put(k);
	} else if (nodes[parent].nch > SCAN_MAX + 1) {
		ntab_put(c);
	}
	return c;
}

static uint32_t
new_node(uint32_t parent, const char *name, const char *module, uint8_t kind)
{
	struct node *n;

	if (nnodes == nodes_cap) {
		if (nodes_cap >= UINT32_MAX / 4)
			kp_die("too many frames in the call tree");
		nodes_cap = nodes_cap ? nodes_cap * 2 : 4096;
		nodes = kp_xrealloc(nodes, nodes_cap * sizeof(*nodes));
	}
	n = &nodes[nnodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->module = module;
	n->parent = parent;
	n->kind = kind;
	n->depth = nnodes ? nodes[parent].depth + 1 : 0;
	return (uint32_t)nnodes++;
}

/* frame -> (name, kind), each frame named once */
struct fname {
	const struct kp_frame *f;
	const char *name;
	uint8_t kind;
};

static struct fname *ftab;
static size_t ftab_cap, ftab_len;
static char *namebuf;
static size_t namecap;

static uint8_t
frame_kind(const struct kp_frame *f)
{
	const char *m = f->module;

	if (m) {
		if (kp_module_is_vmlinux(m))
			return K_KERNEL;
		return kp_module_is_kernel(m) ? K_KMOD : K_USER;
	}
	if ((f->flags & KP_F_ADDR) && kp_addr_is_kernel(f->addr))
		return K_KERNEL;
	return K_UNKNOWN;
}

static const struct fname *
frame_name(const struct kp_frame *f)
{
	size_t j, i, len;

	if ((ftab_len + 1) * 2 > ftab_cap) {
		size_t cap = ftab_cap ? ftab_cap * 2 : 1024;
		struct fname *t = kp_xcalloc(cap, sizeof(*t));

		for (i = 0; i < ftab_cap; i++) {
			if (!ftab[i].f)
				continue;
			j = kp_hash(&ftab[i].f, sizeof(ftab[i].f)) & (cap - 1);
			while (t[j].f)
				j = (j + 1) & (cap - 1);
			t[j] = ftab[i];
		}
		free(ftab);
		ftab = t;
		ftab_cap = cap;
	}
	j = kp_hash(&f, sizeof(f)) & (ftab_cap - 1);
	while (ftab[j].f) {
		if (ftab[j].f == f)
			return &ftab[j];
		j = (j + 1) & (ftab_cap - 1);
	}
	if (f->sym || !f->module) {
		len = kp_frame_name(f, false, false, &namebuf, &namecap);
	} else {
		/* [libc.so.6], not [/usr/lib/libc.so.6]: as kp-fold and
		 * stackcollapse-perf.pl name it (the tooltip has the path) */
		const char *base = strrchr(f->module, '/');

		base = base && base[1] ? base + 1 : f->module;
		len = strlen(base);
		if (namecap < len + 3) {
			namecap = len + 64;
			namebuf = kp_xrealloc(namebuf, namecap);
		}
		namebuf[0] = '[';
		memcpy(namebuf + 1, base, len);
		namebuf[len + 1] = ']';
		namebuf[len + 2] = '\0';
		len += 2;
	}
	ftab[j].f = f;
	ftab[j].name = kp_intern(namebuf, len);
	ftab[j].kind = frame_kind(f);
	ftab_len++;
	return &ftab[j];
}

/*
 * The path of the previous stack: inputs come in an order where
 * neighbours share their outer frames (sorted, or as a converter met
 * them), so most frames are found here without a hash lookup.
 */
static const char **path_name;
static uint32_t *path_node;
static size_t path_len, path_cap;

/* Add one stack of input side (0 before, 1 after) to the tree. */
static void
tree_add(const struct kp_stack *st, int side)
{
	uint32_t cur = 0;
	size_t i, k;
	bool same = true;

	if (st->n > path_cap) {
		path_cap = st->n * 2;
		path_name = kp_xrealloc(path_name,
					path_cap * sizeof(*path_name));
		path_node = kp_xrealloc(path_node,
					path_cap * sizeof(*path_node));
	}
	nodes[0].total[side] += st->count;
	for (k = 0; k < st->n; k++) {
		const struct kp_frame *f;
		const struct fname *fn;

		i = opt_reverse ? k : st->n - 1 - k;
		f = st->frames[i];
		fn = frame_name(f);
		if (same && k < path_len && path_name[k] == fn->name) {
			cur = path_node[k];
		} else {
			same = false;
			cur = child(cur, fn->name, f->module, fn->kind);
			path_name[k] = fn->name;
			path_node[k] = cur;
		}
		nodes[cur].total[side] += st->count;
	}
	path_len = st->n;
	nodes[cur].self[side] += st->count;
}

static int
cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

static int
cmp_kid(const void *a, const void *b)
{
	const struct node *x = &nodes[*(const uint32_t *)a];
	const struct node *y = &nodes[*(const uint32_t *)b];

	return cmp_str(x->name, y->name);
}

/* The children of each node, sorted by name: deterministic order. */
static void
build_children(void)
{
	size_t i;
	uint32_t *fill;

	kidv = kp_xcalloc(nnodes, sizeof(*kidv));
	for (i = 1; i < nnodes; i++)
		nodes[nodes[i].parent].nkids++;
	fill = kp_xcalloc(nnodes, sizeof(*fill));
	for (i = 0, fill[0] = 0; i < nnodes; i++) {
		nodes[i].kids = i ? nodes[i - 1].kids + nodes[i - 1].nkids : 0;
		fill[i] = nodes[i].kids;
	}
	for (i = 1; i < nnodes; i++)
		kidv[fill[nodes[i].parent]++] = (uint32_t)i;
	free(fill);
	for (i = 0; i < nnodes; i++)
		if (nodes[i].nkids > 1)
			qsort(kidv + nodes[i].kids, nodes[i].nkids,
			      sizeof(*kidv), cmp_kid);
}

/* ---- layout: the boxes to draw ---- */

struct box {
	uint64_t off;	/* samples left of the box */
	uint64_t width; /* samples */
	uint32_t node;	/* or UINT32_MAX: a merged run */
	uint32_t depth;
	uint32_t nmerged;
};

static struct box *boxes;
static size_t nboxes, boxes_cap;
static uint32_t maxdepth;

static void
box_add(uint64_t off, uint64_t width, uint32_t node, uint32_t depth,
	uint32_t nmerged)
{
	if (nboxes == boxes_cap) {
		boxes_cap = boxes_cap ? boxes_cap * 2 : 4096;
		boxes = kp_xrealloc(boxes, boxes_cap * sizeof(*boxes));
	}
	boxes[nboxes++] = (struct box){ off, width, node, depth, nmerged };
	if (depth > maxdepth)
		maxdepth = depth;
}

/*
 * Preorder walk from the root.  Children sit left to right from their
 * parent's left edge (the parent's own samples are the gap on the
 * right).  A child narrower than the minimum width is not drawn, and
 * neither is anything above it; a run of two or more such neighbours
 * that together reach the minimum becomes one merged box.
 */
static void
layout(double scale, double minpx)
{
	struct walk {
		uint32_t node;
		uint64_t off;
	} *stk;
	size_t sp = 0, scap = 1024;
	uint32_t i;

	stk = kp_xmalloc(scap * sizeof(*stk));
	stk[sp++] = (struct walk){ 0, 0 };
	while (sp) {
		struct walk w = stk[--sp];
		struct node *n = &nodes[w.node];
		uint64_t off = w.off, run_off = 0, run_w = 0;
		uint32_t run_n = 0, nwide = 0;
		size_t base;

		box_add(w.off, n->total[1], w.node, n->depth, 0);
		base = sp;
		for (i = 0; i <= n->nkids; i++) {
			struct node *c =
				i < n->nkids ? &nodes[kidv[n->kids + i]] : NULL;
			bool narrow = c && (double)c->total[1] * scale < minpx;

			if (c && c->total[1] == 0)
				continue;
			if (narrow) {
				if (!run_n)
					run_off = off;
				run_n++;
				run_w += c->total[1];
				off += c->total[1];
				continue;
			}
			if (run_n >= 2 && (double)run_w * scale >= minpx &&
			    run_w)
				box_add(run_off, run_w, UINT32_MAX,
					n->depth + 1, run_n);
			run_n = 0;
			run_w = 0;
			if (!c)
				break;
			if (sp == scap) {
				scap *= 2;
				stk = kp_xrealloc(stk, scap * sizeof(*stk));
			}
			stk[sp++] = (struct walk){ kidv[n->kids + i], off };
			off += c->total[1];
			nwide++;
		}
		/* visit the children left to right */
		for (i = 0; i < nwide / 2; i++) {
			struct walk t = stk[base + i];

			stk[base + i] = stk[sp - 1 - i];
			stk[sp - 1 - i] = t;
		}
	}
	free(stk);
}

/* ---- SVG output ---- */

static void
put_pct(FILE *out, uint64_t v, uint64_t total)
{
	fprintf(out, "%.2f%%", total ? 100.0 * (double)v / (double)total : 0.0);
}

/* A colour from a palette, varied by a hash of the name. */
static void
color(char *buf, size_t len, uint8_t kind, const char *name)
{
	uint64_t h = kp_hash(name, strlen(name));
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)(h >> 16 & 0xffff) / 65535.0;
	double v3 = (double)(h >> 32 & 0xffff) / 65535.0;
	const char *pal = opt_colors;
	double r, g, b;

	if (kind == K_MERGED) {
		snprintf(buf, len, "rgb(200,200,200)");
		return;
	}
	if (strcmp(pal, "kp") == 0)
		pal = kind == K_KERNEL	 ? "kernel"
		      : kind == K_KMOD	 ? "kmod"
		      : kind == K_USER	 ? "aqua"
		      : kind == K_ROOT	 ? "kernel"
					 : "gray";
	if (strcmp(pal, "kernel") == 0 || strcmp(pal, "orange") == 0) {
		r = 230 + 25 * v1, g = 100 + 70 * v2, b = 30 + 30 * v3;
	} else if (strcmp(pal, "kmod") == 0 || strcmp(pal, "yellow") == 0) {
		r = 195 + 40 * v1, g = 185 + 40 * v1, b = 40 + 30 * v2;
	} else if (strcmp(pal, "hot") == 0) {
		r = 205 + 50 * v3, g = 230 * v1, b = 55 * v2;
	} else if (strcmp(pal, "mem") == 0) {
		r = 0, g = 190 + 50 * v2, b = 230 * v1;
	} else if (strcmp(pal, "io") == 0) {
		r = 80 + 60 * v1, g = r, b = 190 + 55 * v2;
	} else if (strcmp(pal, "red") == 0) {
		r = 200 + 55 * v1, g = 50 + 80 * v1, b = g;
	} else if (strcmp(pal, "green") == 0) {
		g = 200 + 55 * v1, r = 50 + 60 * v1, b = r;
	} else if (strcmp(pal, "blue") == 0) {
		b = 205 + 50 * v1, r = 80 + 60 * v1, g = r;
	} else if (strcmp(pal, "aqua") == 0) {
		r = 50 + 60 * v1, g = 165 + 55 * v1, b = 165 + 55 * v1;
	} else if (strcmp(pal, "purple") == 0) {
		r = 190 + 65 * v1, g = 80 + 60 * v1, b = r;
	} else {
		r = 170 + 50 * v1, g = r, b = r;
	}
	snprintf(buf, len, "rgb(%d,%d,%d)", (int)r, (int)g, (int)b);
}

static const char *palettes[] = { "kp",	  "hot",    "mem",    "io",
				  "red",  "green",  "blue",   "aqua",
				  "yellow", "purple", "orange", "gray" };

static bool diffmode;
static uint64_t grand[2];
static double maxdelta;

static double
share(const struct node *n, int side)
{
	return grand[side] ? (double)n->total[side] / (double)grand[side] : 0;
}

static void
diff_color(char *buf, size_t len, const struct node *n)
{
	double d = share(n, 1) - share(n, 0);
	double r = maxdelta > 0 ? fabs(d) / maxdelta : 0;
	int c = (int)lround(210 * (1 - r));

	/* changes below 1e-9 of the total are noise from rounding */
	if (fabs(d) < 1e-9)
		snprintf(buf, len, "rgb(250,250,250)");
	else if (d > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
}

static void
put_title(FILE *out, const struct node *n, const struct box *b)
{
	uint64_t t = grand[1];

	if (b->node == UINT32_MAX) {
		fprintf(out, "[%" PRIu32 " merged]\n%" PRIu32
			     " neighbouring frames, each too narrow to draw\n"
			     "inclusive: %" PRIu64 " ",
			b->nmerged, b->nmerged, b->width);
		kp_svg_text(out, opt_countname, 0);
		fputs(", ", out);
		put_pct(out, b->width, t);
		return;
	}
	kp_svg_text(out, n->name, 0);
	putc('\n', out);
	if (n->module) {
		fputs("module: ", out);
		kp_svg_text(out, n->module, 0);
		putc('\n', out);
	}
	fprintf(out, "inclusive: %" PRIu64 " ", n->total[1]);
	kp_svg_text(out, opt_countname, 0);
	fputs(", ", out);
	put_pct(out, n->total[1], t);
	fprintf(out, "\nexclusive: %" PRIu64 " ", n->self[1]);
	kp_svg_text(out, opt_countname, 0);
	fputs(", ", out);
	put_pct(out, n->self[1], t);
	if (diffmode) {
		fprintf(out, "\nbefore: %" PRIu64 " ", n->total[0]);
		kp_svg_text(out, opt_countname, 0);
		fputs(", ", out);
		put_pct(out, n->total[0], grand[0]);
		fputs(" inclusive, ", out);
		put_pct(out, n->self[0], grand[0]);
		fprintf(out, " exclusive\nchange: %+.2f points inclusive, "
			     "%+.2f exclusive",
			100 * (share(n, 1) - share(n, 0)),
			grand[0] && grand[1]
				? 100 * ((double)n->self[1] / (double)grand[1] -
					 (double)n->self[0] / (double)grand[0])
				: 0.0);
	}
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var svg, frames, details, zoombtn, searchbtn, matched, W, FH, INV;\n"
	"var CW = 12 * 0.59, XPAD = 10, searching = null;\n"
	"function kp_init() {\n"
	"  svg = document.documentElement;\n"
	"  frames = document.getElementById('frames');\n"
	"  details = document.getElementById('details').firstChild;\n"
	"  zoombtn = document.getElementById('unzoom');\n"
	"  searchbtn = document.getElementById('search');\n"
	"  matched = document.getElementById('matched').firstChild;\n"
	"  W = +svg.getAttribute('width');\n"
	"  FH = +svg.getAttribute('data-fh');\n"
	"  INV = svg.getAttribute('data-inverted') === '1';\n"
	"  frames.addEventListener('click', function (e) {\n"
	"    var g = group(e.target); if (g) zoom(g); });\n"
	"  frames.addEventListener('mouseover', function (e) {\n"
	"    var g = group(e.target);\n"
	"    if (g) details.nodeValue = g.firstChild.textContent"
	".replace(/\\n/g, '; '); });\n"
	"  frames.addEventListener('mouseout', function () {\n"
	"    details.nodeValue = ' '; });\n"
	"  zoombtn.addEventListener('click', unzoom);\n"
	"  searchbtn.addEventListener('click', search_prompt);\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && "
	"e.keyCode === 70)) {\n"
	"      e.preventDefault(); search_prompt();\n"
	"    } else if (e.keyCode === 27) { reset_search(); unzoom(); }\n"
	"  });\n"
	"}\n"
	"function group(n) {\n"
	"  while (n && n !== frames) {\n"
	"    if (n.nodeName === 'g') return n;\n"
	"    n = n.parentNode;\n"
	"  }\n"
	"  return null;\n"
	"}\n"
	"function fname(g) {\n"
	"  var t = g.firstChild.textContent, i = t.indexOf('\\n');\n"
	"  return i < 0 ? t : t.substring(0, i);\n"
	"}\n"
	"function orig(e, a) {\n"
	"  var o = e.getAttribute('data-' + a);\n"
	"  if (o === null) { o = e.getAttribute(a); "
	"e.setAttribute('data-' + a, o); }\n"
	"  return +o;\n"
	"}\n"
	"function label(g, x, w) {\n"
	"  var r = g.getElementsByTagName('rect')[0];\n"
	"  var t = g.getElementsByTagName('text')[0];\n"
	"  var name = fname(g), n = Math.floor((w - 6) / CW);\n"
	"  if (n < 3) { if (t) t.textContent = ''; return; }\n"
	"  if (!t) {\n"
	"    t = document.createElementNS('http://www.w3.org/2000/svg', "
	"'text');\n"
	"    t.setAttribute('y', (+r.getAttribute('y') + FH / 2 + 4)"
	".toFixed(1));\n"
	"    g.appendChild(t);\n"
	"  }\n"
	"  t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  t.textContent = name.length <= n ? name : "
	"name.substring(0, n - 2) + '..';\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.getElementsByTagName('rect')[0];\n"
	"  r.setAttribute('x', x.toFixed(2));\n"
	"  r.setAttribute('width', w.toFixed(2));\n"
	"  label(g, x, w);\n"
	"}\n"
	"function zoom(g) {\n"
	"  var r = g.getElementsByTagName('rect')[0], x0 = orig(r, 'x'), "
	"w0 = orig(r, 'width');\n"
	"  var y0 = +r.getAttribute('y'), k = (W - 2 * XPAD) / w0, "
	"eps = 0.0001;\n"
	"  var fs = frames.children, i;\n"
	"  for (i = 0; i < fs.length; i++) {\n"
	"    var h = fs[i], hr = h.getElementsByTagName('rect')[0];\n"
	"    var x = orig(hr, 'x'), w = orig(hr, 'width'), "
	"y = +hr.getAttribute('y');\n"
	"    var above = INV ? y > y0 : y < y0;\n"
	"    h.classList.remove('h'); h.classList.remove('p');\n"
	"    if (h === g || (above && x >= x0 - eps && "
	"x + w <= x0 + w0 + eps)) {\n"
	"      place(h, XPAD + (x - x0) * k, w * k);\n"
	"    } else if (y !== y0 && !above && x <= x0 + eps && "
	"x + w >= x0 + w0 - eps) {\n"
	"      h.classList.add('p'); place(h, XPAD, W - 2 * XPAD);\n"
	"    } else {\n"
	"      h.classList.add('h');\n"
	"    }\n"
	"  }\n"
	"  zoombtn.classList.remove('h');\n"
	"}\n"
	"function unzoom() {\n"
	"  var fs = frames.children, i;\n"
	"  for (i = 0; i < fs.length; i++) {\n"
	"    var h = fs[i], r = h.getElementsByTagName('rect')[0];\n"
	"    h.classList.remove('h'); h.classList.remove('p');\n"
	"    place(h, orig(r, 'x'), orig(r, 'width'));\n"
	"  }\n"
	"  zoombtn.classList.add('h');\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching !== null) { reset_search(); return; }\n"
	"  var term = prompt('Search for a function (a regular expression, "
	"e.g. ^ext4_)', '');\n"
	"  if (term) search(term);\n"
	"}\n"
	"function reset_search() {\n"
	"  var fs = frames.children, i;\n"
	"  for (i = 0; i < fs.length; i++) {\n"
	"    var r = fs[i].getElementsByTagName('rect')[0];\n"
	"    if (r.getAttribute('data-fill') !== null) {\n"
	"      r.setAttribute('fill', r.getAttribute('data-fill'));\n"
	"      r.removeAttribute('data-fill');\n"
	"    }\n"
	"  }\n"
	"  searching = null;\n"
	"  searchbtn.firstChild.nodeValue = 'Search';\n"
	"  matched.nodeValue = ' ';\n"
	"}\n"
	"function count(g) {\n"
	"  var m = /\\ninclusive: (\\d+) /.exec(g.firstChild.textContent);\n"
	"  return m ? +m[1] : 0;\n"
	"}\n"
	"/* the share of samples under the matching frames, each sample once:\n"
	"   the counts of the matches not inside another match */\n"
	"function search(term) {\n"
	"  var re, fs = frames.children, i, spans = [], sum = 0, end = -1, "
	"total = 0;\n"
	"  reset_search();\n"
	"  try { re = new RegExp(term); } catch (e) {\n"
	"    re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, "
	"'\\\\$&'));\n"
	"  }\n"
	"  for (i = 0; i < fs.length; i++) {\n"
	"    var r = fs[i].getElementsByTagName('rect')[0];\n"
	"    if (fs[i].getAttribute('data-all') !== null) "
	"{ total = count(fs[i]); continue; }\n"
	"    if (!re.test(fname(fs[i]))) continue;\n"
	"    r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"    spans.push([orig(r, 'x'), orig(r, 'width'), count(fs[i])]);\n"
	"  }\n"
	"  /* outer frames first: by x, then the wider first */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  for (i = 0; i < spans.length; i++) {\n"
	"    var e = spans[i][0] + spans[i][1];\n"
	"    if (e <= end + 0.02) continue; /* inside a match (rounding) */\n"
	"    sum += spans[i][2];\n"
	"    end = e;\n"
	"  }\n"
	"  searching = term;\n"
	"  searchbtn.firstChild.nodeValue = 'Reset Search';\n"
	"  matched.nodeValue = 'Matched: ' + "
	"(total ? 100 * sum / total : 0).toFixed(2) + '%';\n"
	"  return total ? sum / total : 0;\n"
	"}\n"
	"]]></script>\n";

static void
put_legend(FILE *out, double y)
{
	static const struct {
		uint8_t kind;
		const char *name;
	} keys[] = { { K_KERNEL, "kernel" },
		     { K_KMOD, "kernel module" },
		     { K_USER, "user" },
		     { K_UNKNOWN, "unknown" } };
	char fill[32];
	double x = XPAD;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		color(fill, sizeof(fill), keys[i].kind, keys[i].name);
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%.1f\" width=\"10\" height=\"10\" "
			"fill=\"%s\"/><text x=\"%.2f\" y=\"%.1f\" "
			"class=\"s\">%s</text>\n",
			x, y - 9, fill, x + 14, y, keys[i].name);
		x += 14 + (double)strlen(keys[i].name) * 11 * FONTWIDTH + 16;
	}
}

static void
write_svg(FILE *out)
{
	double W = opt_width, fh = opt_height;
	double ypad1 = FONTSIZE * 4, ypad2 = FONTSIZE * 2 + 10;
	double scale = grand[1] ? (W - 2 * XPAD) / (double)grand[1] : 0;
	double minpx = opt_minwidth_pct ? opt_minwidth / 100 * (W - 2 * XPAD)
					: opt_minwidth;
	double H;
	const char *title = opt_title ? opt_title
			    : opt_inverted ? "Icicle Graph"
					   : "Flame Graph";
	char fill[32];
	size_t i;

	if (grand[1])
		layout(scale, minpx);
	H = ypad1 + ypad2 + (nboxes ? maxdepth + 1 : 1) * fh;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		"\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" "
		"data-fh=\"%g\" data-inverted=\"%d\" onload=\"kp_init()\">\n"
		"<!-- kp-flame: a flame graph from kp stacks -->\n"
		"<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" "
		"x2=\"0\"><stop stop-color=\"#eeeeee\" offset=\"5%%\"/>"
		"<stop stop-color=\"%s\" offset=\"95%%\"/></linearGradient>"
		"</defs>\n"
		"<style type=\"text/css\">\n"
		"text{font-family:Verdana,'DejaVu Sans',sans-serif;"
		"font-size:12px;fill:#000}\n"
		"#title{font-size:17px;text-anchor:middle}\n"
		".s{font-size:11px;fill:#444}\n"
		"#frames rect{stroke:#fff;stroke-width:0.5}\n"
		"#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
		"#frames text{pointer-events:none}\n"
		"#frames g{cursor:pointer}\n"
		"#unzoom,#search{cursor:pointer}\n"
		".h{display:none}\n"
		".p{opacity:0.5}\n"
		"</style>\n",
		W, H, W, H, fh, opt_inverted ? 1 : 0,
		"#eeeeb0");
	fputs(script, out);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
		"fill=\"url(#bg)\"/>\n"
		"<text id=\"title\" x=\"%.2f\" y=\"%.1f\">",
		W, H, W / 2, FONTSIZE * 2);
	kp_svg_text(out, title, 0);
	fputs("</text>\n", out);
	if (diffmode) {
		fprintf(out,
			"<text x=\"%.2f\" y=\"%.1f\" class=\"s\" "
			"text-anchor=\"middle\">widths: after (%" PRIu64
			" ",
			W / 2, FONTSIZE * 3.3, grand[1]);
		kp_svg_text(out, opt_countname, 0);
		fprintf(out, "); colours: change in share since before (%" PRIu64
			     " ",
			grand[0]);
		kp_svg_text(out, opt_countname, 0);
		fputs("), red grew, blue shrank</text>\n", out);
	} else if (strcmp(opt_colors, "kp") == 0) {
		put_legend(out, FONTSIZE * 3.3);
	}
	fprintf(out,
		"<text id=\"unzoom\" x=\"%.2f\" y=\"%.1f\" class=\"h\">"
		"Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%.2f\" y=\"%.1f\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%.2f\" y=\"%.1f\"> </text>\n"
		"<text id=\"matched\" x=\"%.2f\" y=\"%.1f\" "
		"text-anchor=\"end\"> </text>\n",
		XPAD, FONTSIZE * 2, W - XPAD, FONTSIZE * 2, XPAD,
		H - ypad2 / 2 + 3, W - XPAD, H - ypad2 / 2 + 3);
	if (!grand[1]) {
		fprintf(out,
			"<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">"
			"No samples</text>\n",
			W / 2, ypad1 + fh / 2 + 4);
	}
	fputs("<g id=\"frames\">\n", out);
	for (i = 0; i < nboxes; i++) {
		const struct box *b = &boxes[i];
		const struct node *n =
			b->node == UINT32_MAX ? NULL : &nodes[b->node];
		double x = XPAD + (double)b->off * scale;
		double w = (double)b->width * scale;
		double y = opt_inverted ? ypad1 + b->depth * fh
					: H - ypad2 - (b->depth + 1) * fh;
		size_t nch = (size_t)floor((w - 6) / (FONTSIZE * FONTWIDTH));
		char merged[48];
		const char *name;

		if (n) {
			name = n->name;
			if (diffmode)
				diff_color(fill, sizeof(fill), n);
			else
				color(fill, sizeof(fill),
				      b->node == 0 ? K_ROOT : n->kind, name);
		} else {
			snprintf(merged, sizeof(merged), "[%" PRIu32 " merged]",
				 b->nmerged);
			name = merged;
			color(fill, sizeof(fill), K_MERGED, name);
		}
		fputs(b->node == 0 ? "<g data-all=\"1\"><title>" : "<g><title>",
		      out);
		put_title(out, n, b);
		fprintf(out,
			"</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"%.1f\" fill=\"%s\"/>",
			x, y, w, fh - 1, fill);
		if (w >= 6 && nch >= 3) {
			fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
				y + fh / 2 + 4);
			kp_svg_text(out, name, nch);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
}

/*
 * Fill the tree from one input (side 0 before, 1 after), record by
 * record: the tree merges identical stacks itself.  No count can
 * overflow, since none exceeds the total, which is checked.
 */
static void
read_side(const char *path, int side)
{
	struct kp_reader *rd = kp_reader_open(path);
	const struct kp_stack *st;

	while ((st = kp_reader_next(rd)) != NULL) {
		/* the rule of kp.5: a total past 2^64-1 is fatal */
		if (grand[side] > UINT64_MAX - st->count)
			kp_die("%s: the total count overflows 64 bits",
			       kp_input_name(kp_reader_input(rd)));
		grand[side] += st->count;
		tree_add(st, side);
	}
	kp_reader_close(rd);
}

static void
max_delta(void)
{
	size_t i;

	for (i = 0; i < nnodes; i++) {
		double d = fabs(share(&nodes[i], 1) - share(&nodes[i], 0));

		if (nodes[i].total[1] && d > maxdelta)
			maxdelta = d;
	}
}

int
main(int argc, char **argv)
{
	enum { OPT_HEIGHT = 256, OPT_MINWIDTH, OPT_COLORS, OPT_COUNTNAME,
	       OPT_REVERSE, OPT_INVERTED };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		{ "height", required_argument, NULL, OPT_HEIGHT },
		{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
		{ "colors", required_argument, NULL, OPT_COLORS },
		{ "countname", required_argument, NULL, OPT_COUNTNAME },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL;
	FILE *fp = stdout;
	size_t i, len;
	int ch;
	bool ok;
	char *mw;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "ho:t:w:", longopts, NULL)) != -1)
		switch (ch) {
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'o':
			output = optarg;
			break;
		case 't':
			opt_title = optarg;
			break;
		case 'w':
			opt_width = kp_arg_double("--width", optarg);
			if (opt_width < 100 || opt_width > 100000)
				kp_usage_error("--width: %s is not between "
					       "100 and 100000",
					       optarg);
			break;
		case OPT_HEIGHT:
			opt_height = kp_arg_double("--height", optarg);
			if (opt_height < 4 || opt_height > 1000)
				kp_usage_error("--height: %s is not between 4 "
					       "and 1000",
					       optarg);
			break;
		case OPT_MINWIDTH:
			mw = kp_xstrdup(optarg);
			len = strlen(mw);
			opt_minwidth_pct = len && mw[len - 1] == '%';
			if (opt_minwidth_pct)
				mw[len - 1] = '\0';
			opt_minwidth = kp_arg_double("--minwidth", mw);
			free(mw);
			break;
		case OPT_COLORS:
			ok = false;
			for (i = 0; i < sizeof(palettes) / sizeof(palettes[0]);
			     i++)
				ok |= strcmp(optarg, palettes[i]) == 0;
			if (!ok)
				kp_usage_error("--colors: unknown palette '%s'",
					       optarg);
			opt_colors = optarg;
			break;
		case OPT_COUNTNAME:
			opt_countname = optarg;
			break;
		case OPT_REVERSE:
			opt_reverse = true;
			break;
		case OPT_INVERTED:
			opt_inverted = true;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;
	if (argc > 2)
		kp_usage_error("at most two inputs (before and after)");

	new_node(0, kp_intern_str("all"), NULL, K_ROOT);
	diffmode = argc == 2;
	if (diffmode) {
		read_side(argv[0], 0);
		read_side(argv[1], 1);
		max_delta();
	} else {
		read_side(argc ? argv[0] : "-", 1);
	}
	if (!grand[1])
		kp_warn("no samples in the input; writing an empty graph");
	if (!opt_countname) {
		/* perf2kp --weight period on a clock event: nanoseconds */
		const char *w = kp_meta_get("weight"), *ev = kp_meta_get("event");

		opt_countname = w && strcmp(w, "period") == 0 && ev &&
					(strncmp(ev, "cpu-clock", 9) == 0 ||
					 strncmp(ev, "task-clock", 10) == 0)
				? "ns"
				: "samples";
	}
	build_children();
	fp = kp_output_open(output);
	write_svg(fp);
	return kp_output_finish(fp, output);
}
