/*
 * flame.c - the call tree of a flame graph and its layout (flame.h).
 *
 * Stacks are merged root first; frames merge by name, as in folded
 * stacks: the same name in two modules is one frame (its tooltip names
 * the first module seen).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame_int.h"
#include "stats.h"

static uint32_t
new_node(struct kp_flame *fg, uint32_t parent, const char *name,
	 const char *module, uint8_t kind)
{
	struct kp_flame_node *n;

	if (fg->nnodes == fg->nodes_cap) {
		if (fg->nodes_cap >= UINT32_MAX / 4)
			kp_die("too many frames in the call tree");
		fg->nodes_cap = fg->nodes_cap ? fg->nodes_cap * 2 : 4096;
		fg->nodes = kp_xrealloc(fg->nodes,
					fg->nodes_cap * sizeof(*fg->nodes));
	}
	n = &fg->nodes[fg->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->module = module;
	n->parent = parent;
	n->kind = kind;
	n->depth = fg->nnodes ? fg->nodes[parent].depth + 1 : 0;
	return (uint32_t)fg->nnodes++;
}

struct kp_flame *
kp_flame_new(bool reverse)
{
	struct kp_flame *fg = kp_xcalloc(1, sizeof(*fg));

	fg->reverse = reverse;
	new_node(fg, 0, kp_intern_str("all"), NULL, K_ROOT);
	return fg;
}

/*
 * ---- the children ----
 *
 * A child is found by walking its parent's list of children when there
 * are few of them, and in a table of (parent, name) -> node when there
 * are more.  (A table of every node, hashed by its path so that a
 * stack's look-ups could all be fetched at once, was 9% faster on the
 * real capture of bench/ but 1.3x slower on bench/pictures.sh's deep
 * distinct stacks, where most frames make a node: a list appends to a
 * parent in the cache, a table writes at random.)
 */
#define SCAN_MAX 8

static inline uint64_t
node_hash(uint32_t parent, const char *name)
{
	uint64_t h = ((uintptr_t)name >> 3) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)parent * 0xbf58476d1ce4e5b9ull;

	return h ^ h >> 29;
}

/* ntab's slots hold node numbers (never 0: the root is nobody's child) */
static void
ntab_put(struct kp_flame *fg, uint32_t node)
{
	const struct kp_flame_node *n = &fg->nodes[node];
	uint64_t h = node_hash(n->parent, n->name);

	kp_slots_reserve(&fg->ntab, 1u << 12);
	kp_slots_put(&fg->ntab, h, (void *)(uintptr_t)node);
}

/* The child of parent named fn's name, made if new. */
static uint32_t
child(struct kp_flame *fg, uint32_t parent, const struct kp_flame_fname *fn)
{
	struct kp_flame_node *nodes = fg->nodes;
	const char *name = fn->name;
	uint32_t c, k;
	uint64_t h;
	size_t j, mask;

	if (nodes[parent].nch <= SCAN_MAX) {
		/* node 0, the root, is nobody's child: 0 ends the list */
		for (c = nodes[parent].first; c; c = nodes[c].next)
			if (nodes[c].name == name)
				return c;
	} else {
		h = node_hash(parent, name);
		mask = fg->ntab.cap - 1;
		for (j = h & mask; fg->ntab.tab[j].p; j = (j + 1) & mask) {
			c = (uint32_t)(uintptr_t)fg->ntab.tab[j].p;
			if (fg->ntab.tab[j].hash == h &&
			    nodes[c].parent == parent && nodes[c].name == name)
				return c;
		}
	}
	c = new_node(fg, parent, name, fn->module, fn->kind);
	nodes = fg->nodes;
	nodes[c].next = nodes[parent].first;
	nodes[parent].first = c;
	if (++nodes[parent].nch == SCAN_MAX + 1) {
		for (k = nodes[parent].first; k; k = nodes[k].next)
			ntab_put(fg, k);
	} else if (nodes[parent].nch > SCAN_MAX + 1) {
		ntab_put(fg, c);
	}
	return c;
}

/*
 * (called by the reader for each distinct line, before the graph sees
 * it: a frame becomes its symbol and module, and one without a module
 * also whether its address is the kernel's, which its colour says; the
 * bare addresses of perf's "[unknown]" frames, 59,000 distinct on the
 * real capture of bench/, are two frames)
 */
const struct kp_frame *
kp_flame_key(const struct kp_frame *f)
{
	struct kp_frame g;

	memset(&g, 0, sizeof(g));
	g.sym = f->sym;
	g.module = f->module;
	if (!f->module && (f->flags & KP_F_ADDR) &&
	    kp_addr_is_kernel(f->addr)) {
		g.addr = KP_KERNEL_START;
		g.flags = KP_F_ADDR;
	}
	return kp_frame_intern(&g);
}

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

/* The name, module and kind of frame f, of id `id`: made once a frame,
 * then found by its id (the frame itself is not read again). */
static const struct kp_flame_fname *
frame_name(struct kp_flame *fg, const struct kp_frame *f, uint32_t id)
{
	struct kp_flame_fname *e;
	size_t len;

	fg->fnames =
		kp_grow_for(fg->fnames, &fg->fcap, sizeof(*fg->fnames), id);
	e = &fg->fnames[id];
	if (e->name)
		return e;
	if (f->sym || !f->module) {
		len = kp_frame_name(f, false, false, &fg->namebuf,
				    &fg->namecap);
	} else {
		/* [libc.so.6], not [/usr/lib/libc.so.6]: as kp-fold and
		 * stackcollapse-perf.pl name it (the tooltip has the path) */
		const char *base = strrchr(f->module, '/');

		base = base && base[1] ? base + 1 : f->module;
		len = strlen(base);
		if (fg->namecap < len + 3) {
			fg->namecap = len + 64;
			fg->namebuf = kp_xrealloc(fg->namebuf, fg->namecap);
		}
		fg->namebuf[0] = '[';
		memcpy(fg->namebuf + 1, base, len);
		fg->namebuf[len + 1] = ']';
		fg->namebuf[len + 2] = '\0';
		len += 2;
	}
	e->name = kp_intern(fg->namebuf, len);
	e->module = f->module;
	e->kind = frame_kind(f);
	return e;
}

/*
 * The path of the previous stack: inputs come in an order where
 * neighbours may share their outer frames (sorted, or as a converter met
 * them), and those are found there without a look-up.  A stack adds its
 * count to the node it ends at (self) only; the inclusive counts are
 * summed up the tree once, before the layout (sum_totals).
 */
int
kp_flame_add(struct kp_flame *fg, const struct kp_stack *st,
	     const uint32_t *ids, int side)
{
	size_t i, k, n = st->n, keep = 0;
	uint32_t cur;

	if (fg->grand[side] > UINT64_MAX - st->count)
		return -1;
	/* no node's count can overflow: none exceeds the total */
	fg->grand[side] += st->count;
	if (n > fg->path_cap) {
		fg->path_cap = n * 2;
		fg->path_name = kp_xrealloc(
			fg->path_name, fg->path_cap * sizeof(*fg->path_name));
		fg->path_node = kp_xrealloc(
			fg->path_node, fg->path_cap * sizeof(*fg->path_node));
	}
	cur = 0;
	for (k = 0; k < n; k++) {
		const struct kp_frame *f;
		const struct kp_flame_fname *fn;

		i = fg->reverse ? k : n - 1 - k;
		f = st->frames[i];
		fn = frame_name(fg, f, ids ? ids[i] : f->id);
		if (keep == k && k < fg->path_len &&
		    fg->path_name[k] == fn->name) {
			cur = fg->path_node[k];
			keep++;
			continue;
		}
		cur = child(fg, cur, fn);
		fg->path_name[k] = fn->name;
		fg->path_node[k] = cur;
	}
	fg->path_len = n;
	fg->nodes[cur].self[side] += st->count;
	return 0;
}

/* Each node's inclusive counts: its own and its children's (a child is
 * made after its parent, so a walk down the nodes sums a node's
 * children before it reaches the node). */
static void
sum_totals(struct kp_flame *fg)
{
	struct kp_flame_node *nodes = fg->nodes;
	size_t i;
	int s;

	for (i = 0; i < fg->nnodes; i++)
		for (s = 0; s < 2; s++)
			nodes[i].total[s] += nodes[i].self[s];
	for (i = fg->nnodes; i-- > 1;)
		for (s = 0; s < 2; s++)
			nodes[nodes[i].parent].total[s] += nodes[i].total[s];
}

uint64_t
kp_flame_total(const struct kp_flame *fg, int side)
{
	return fg->grand[side];
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

/* qsort has no context argument: the nodes being sorted */
static const struct kp_flame_node *sort_nodes;

static int
cmp_kid(const void *a, const void *b)
{
	const struct kp_flame_node *x = &sort_nodes[*(const uint32_t *)a];
	const struct kp_flame_node *y = &sort_nodes[*(const uint32_t *)b];

	return cmp_str(x->name, y->name);
}

/* The children of each node, sorted by name: deterministic order. */
static void
build_children(struct kp_flame *fg)
{
	struct kp_flame_node *nodes = fg->nodes;
	size_t i, nn = fg->nnodes;
	uint32_t *fill;

	fg->kidv = kp_xcalloc(nn, sizeof(*fg->kidv));
	for (i = 1; i < nn; i++)
		nodes[nodes[i].parent].nkids++;
	fill = kp_xcalloc(nn, sizeof(*fill));
	for (i = 0, fill[0] = 0; i < nn; i++) {
		nodes[i].kids = i ? nodes[i - 1].kids + nodes[i - 1].nkids : 0;
		fill[i] = nodes[i].kids;
	}
	for (i = 1; i < nn; i++)
		fg->kidv[fill[nodes[i].parent]++] = (uint32_t)i;
	free(fill);
	sort_nodes = nodes;
	for (i = 0; i < nn; i++)
		if (nodes[i].nkids > 1)
			qsort(fg->kidv + nodes[i].kids, nodes[i].nkids,
			      sizeof(*fg->kidv), cmp_kid);
}

static void
box_add(struct kp_flame *fg, uint64_t off, uint64_t width, uint32_t node,
	uint32_t depth, uint32_t nmerged)
{
	if (fg->nboxes == fg->boxes_cap) {
		fg->boxes_cap = fg->boxes_cap ? fg->boxes_cap * 2 : 4096;
		fg->boxes = kp_xrealloc(fg->boxes,
					fg->boxes_cap * sizeof(*fg->boxes));
	}
	fg->boxes[fg->nboxes++] =
		(struct kp_flame_box){ off, width, node, depth, nmerged };
	if (depth > fg->maxdepth)
		fg->maxdepth = depth;
}

/*
 * Preorder walk from the root.  Children sit left to right from their
 * parent's left edge (the parent's own samples are the gap on the
 * right).  A child narrower than the minimum width is not drawn, and
 * neither is anything above it; a run of two or more such neighbours
 * that together reach the minimum becomes one merged box.
 */
static void
layout(struct kp_flame *fg, double scale, double minpx)
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
		struct kp_flame_node *n = &fg->nodes[w.node];
		uint64_t off = w.off, run_off = 0, run_w = 0;
		uint32_t run_n = 0, nwide = 0;
		size_t base;

		box_add(fg, w.off, n->total[1], w.node, n->depth, 0);
		base = sp;
		for (i = 0; i <= n->nkids; i++) {
			struct kp_flame_node *c =
				i < n->nkids ? &fg->nodes[fg->kidv[n->kids + i]]
					     : NULL;
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
				box_add(fg, run_off, run_w, UINT32_MAX,
					n->depth + 1, run_n);
			run_n = 0;
			run_w = 0;
			if (!c)
				break;
			if (sp == scap) {
				scap *= 2;
				stk = kp_xrealloc(stk, scap * sizeof(*stk));
			}
			stk[sp++] = (struct walk){ fg->kidv[n->kids + i], off };
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

double
kp_flame_share(const struct kp_flame *fg, const struct kp_flame_node *n, int side)
{
	return fg->grand[side]
		       ? (double)n->total[side] / (double)fg->grand[side]
		       : 0;
}

/* Each frame's p-value: its samples out of each side's, adjusted for
 * the number of frames. */
static void
test_changes(struct kp_flame *fg)
{
	double *p = kp_xmalloc(fg->nnodes * sizeof(*p));
	size_t i;

	for (i = 0; i < fg->nnodes; i++)
		p[i] = kp_test_two_prop(fg->nodes[i].total[0], fg->grand[0],
					fg->nodes[i].total[1], fg->grand[1]);
	kp_adjust_bh(p, fg->nnodes);
	free(fg->p_value);
	fg->p_value = p;
}

bool
kp_flame_significant(const struct kp_flame *fg, const struct kp_flame_node *n)
{
	return fg->alpha <= 0 || fg->p_value[n - fg->nodes] < fg->alpha;
}

void
kp_flame_layout(struct kp_flame *fg, double scale, double minpx)
{
	size_t i;

	sum_totals(fg);
	build_children(fg);
	if (fg->alpha > 0)
		test_changes(fg);
	for (i = 0; i < fg->nnodes; i++) {
		const struct kp_flame_node *n = &fg->nodes[i];
		double d = fabs(kp_flame_share(fg, n, 1) - kp_flame_share(fg, n, 0));

		if (n->total[1] && d > fg->maxdelta &&
		    kp_flame_significant(fg, n))
			fg->maxdelta = d;
	}
	if (fg->grand[1])
		layout(fg, scale, minpx);
}

void
kp_flame_free(struct kp_flame *fg)
{
	if (!fg)
		return;
	free(fg->nodes);
	free(fg->kidv);
	kp_slots_free(&fg->ntab);
	free(fg->fnames);
	free(fg->p_value);
	free(fg->namebuf);
	free(fg->path_name);
	free(fg->path_node);
	free(fg->boxes);
	free(fg);
}
