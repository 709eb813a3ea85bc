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
 * A node is found by the names on its path from the root: the table of
 * children is hashed by the path (a hash of its parent's path and its
 * name), so that the slots of a stack's frames are all known, and
 * fetched into the cache together, before the first is looked at; a
 * slot holds what is compared (the parent and the name), so that a
 * frame found reads its slot, not the nodes.  (On the real capture of
 * bench/, 118,000 stacks of 8 frames on average, 64,000 nodes: one
 * look-up waiting for the one before took most of the time.)
 */
#define ROOT_PATH 0x243f6a8885a308d3ull
#define FIRST_CHILDREN 4096

static inline uint64_t
path_hash(uint64_t parent, const char *name)
{
	uint64_t h = (parent ^ (uintptr_t)name) * 0x9e3779b97f4a7c15ull;

	return h ^ h >> 29;
}

/* The table twice as large (at least FIRST_CHILDREN slots), every node
 * but the root put in again by its path's hash. */
static void
children_grow(struct kp_flame *fg)
{
	size_t cap = fg->children_cap ? 2 * fg->children_cap : FIRST_CHILDREN;
	struct kp_flame_child *t = kp_xcalloc(cap, sizeof(*t));
	size_t i, j;
	uint64_t *ph = kp_xmalloc(fg->nnodes * sizeof(*ph));
	const struct kp_flame_node *n;

	ph[0] = ROOT_PATH;
	for (i = 1; i < fg->nnodes; i++) {
		/* (a parent is made before its children) */
		n = &fg->nodes[i];
		ph[i] = path_hash(ph[n->parent], n->name);
		for (j = ph[i] & (cap - 1); t[j].node; j = (j + 1) & (cap - 1))
			;
		t[j] = (struct kp_flame_child){ n->name, n->parent,
						(uint32_t)i };
	}
	free(ph);
	free(fg->children);
	fg->children = t;
	fg->children_cap = cap;
}

static uint8_t frame_kind(const struct kp_frame *f);

/* The child of parent named name, whose path has hash h; made (from
 * frame f) if new. */
static uint32_t
child(struct kp_flame *fg, uint32_t parent, const char *name, uint64_t h,
      const struct kp_frame *f)
{
	struct kp_flame_child *k;
	size_t j, mask;
	uint32_t c;

	if ((fg->nchildren + 1) * 2 > fg->children_cap)
		children_grow(fg);
	mask = fg->children_cap - 1;
	for (j = h & mask;; j = (j + 1) & mask) {
		k = &fg->children[j];
		if (!k->node)
			break;
		if (k->parent == parent && k->name == name)
			return k->node;
	}
	c = new_node(fg, parent, name, f->module, frame_kind(f));
	*k = (struct kp_flame_child){ name, parent, c };
	fg->nchildren++;
	return c;
}

/*
 * (called by the reader for each distinct line, before the graph sees
 * it: a frame becomes its symbol and module, and one without a module
 * also whether its address is the kernel's, which its colour says; the
 * bare addresses of perf's "[unknown]" frames, 59,000 distinct on the
 * real capture of bench/, are two frames)
 */
#define KERNEL_ADDR 0xffff800000000000ull

const struct kp_frame *
kp_flame_key(const struct kp_frame *f)
{
	struct kp_frame g;

	memset(&g, 0, sizeof(g));
	g.sym = f->sym;
	g.module = f->module;
	if (!f->module && (f->flags & KP_F_ADDR) &&
	    kp_addr_is_kernel(f->addr)) {
		g.addr = KERNEL_ADDR;
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

/* The name of frame f, of id `id`: made once a frame, then found by its
 * id (the frame itself is not read again). */
static const char *
frame_name(struct kp_flame *fg, const struct kp_frame *f, uint32_t id)
{
	size_t len, cap;

	if (id >= fg->fcap) {
		cap = fg->fcap ? fg->fcap : 1024;
		while (cap <= id)
			cap *= 2;
		fg->fnames = kp_xrealloc(fg->fnames, cap * sizeof(*fg->fnames));
		memset(fg->fnames + fg->fcap, 0,
		       (cap - fg->fcap) * sizeof(*fg->fnames));
		fg->fcap = cap;
	}
	if (fg->fnames[id])
		return fg->fnames[id];
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
	return fg->fnames[id] = kp_intern(fg->namebuf, len);
}

/*
 * The path of the previous stack: inputs come in an order where
 * neighbours may share their outer frames (sorted, or as a converter met
 * them), and those are found there without a look-up.  A stack adds its
 * count to the node it ends at (self), on the next stack's turn (that
 * node fetched into the cache meanwhile); the inclusive counts are
 * summed up the tree once, before the layout (sum_totals).
 */
static void
self_add(struct kp_flame *fg)
{
	if (fg->pend_count)
		fg->nodes[fg->pend_node].self[fg->pend_side] += fg->pend_count;
	fg->pend_count = 0;
}

int
kp_flame_add(struct kp_flame *fg, const struct kp_stack *st,
	     const uint32_t *ids, int side)
{
	size_t i, k, n = st->n, keep = 0;
	uint32_t cur;
	uint64_t h;

	if (fg->grand[side] > UINT64_MAX - st->count)
		return -1;
	/* no node's count can overflow: none exceeds the total */
	fg->grand[side] += st->count;
	self_add(fg);
	if (n > fg->path_cap) {
		fg->path_cap = n * 2;
		fg->path_name = kp_xrealloc(
			fg->path_name, fg->path_cap * sizeof(*fg->path_name));
		fg->path_node = kp_xrealloc(
			fg->path_node, fg->path_cap * sizeof(*fg->path_node));
		fg->path_hash = kp_xrealloc(
			fg->path_hash, fg->path_cap * sizeof(*fg->path_hash));
	}
	/* the names root first: those the last path began with are kept,
	 * the others' slots fetched */
	h = ROOT_PATH;
	for (k = 0; k < n; k++) {
		const struct kp_frame *f;
		const char *name;

		i = fg->reverse ? k : n - 1 - k;
		f = st->frames[i];
		name = frame_name(fg, f, ids ? ids[i] : f->id);
		if (keep == k && k < fg->path_len &&
		    fg->path_name[k] == name) {
			h = fg->path_hash[k];
			keep++;
			continue;
		}
		h = path_hash(h, name);
		fg->path_name[k] = name;
		fg->path_hash[k] = h;
		if (fg->children_cap)
			__builtin_prefetch(&fg->children[h & (fg->children_cap - 1)]);
	}
	cur = keep ? fg->path_node[keep - 1] : 0;
	for (k = keep; k < n; k++) {
		i = fg->reverse ? k : n - 1 - k;
		cur = child(fg, cur, fg->path_name[k], fg->path_hash[k],
			    st->frames[i]);
		fg->path_node[k] = cur;
	}
	fg->path_len = n;
	fg->pend_node = cur;
	fg->pend_side = side;
	fg->pend_count = st->count;
	__builtin_prefetch(&fg->nodes[cur].self[side]);
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

	self_add(fg);
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
	for (i = 0; i < fg->nnodes; i++)
		fg->nodes[i].p_value = p[i];
	free(p);
}

bool
kp_flame_significant(const struct kp_flame *fg, const struct kp_flame_node *n)
{
	return fg->alpha <= 0 || n->p_value < fg->alpha;
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
	free(fg->children);
	free(fg->fnames);
	free(fg->namebuf);
	free(fg->path_name);
	free(fg->path_node);
	free(fg->path_hash);
	free(fg->boxes);
	free(fg);
}
