/* flame_int.h - what flame.c (the tree, the layout) and flame_svg.c (the
 * drawing) share inside the flame module */
#ifndef KP_FLAME_INT_H
#define KP_FLAME_INT_H

#include "flame.h"

enum kp_flame_kind { K_KERNEL, K_KMOD, K_USER, K_UNKNOWN, K_MERGED, K_ROOT };

/* a frame of the call tree; node 0 is the root, "all" */
struct kp_flame_node {
	const char *name; /* interned */
	const char *module;
	uint64_t total[2]; /* inclusive: [0] before, [1] after (or only);
			    * summed by kp_flame_layout */
	uint64_t self[2];
	uint32_t parent;
	uint32_t kids, nkids; /* range in kidv, after kp_flame_layout */
	uint32_t depth;
	uint8_t kind;
	uint32_t first, next; /* children while building (0: none) */
	uint32_t nch;	      /* their number */
};

/* a box to draw */
struct kp_flame_box {
	uint64_t off;	/* samples left of the box */
	uint64_t width; /* samples */
	uint32_t node;	/* or UINT32_MAX: a merged run */
	uint32_t depth;
	uint32_t nmerged;
};

/* a frame as the graph draws it, made once a frame id */
struct kp_flame_fname {
	const char *name; /* interned; NULL: not yet */
	const char *module;
	uint8_t kind;
};

struct kp_flame {
	struct kp_flame_node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t *kidv;		/* children of each node, sorted by name */
	struct kp_slots ntab;	       /* (parent, name) -> node, for wide
					* nodes */
	struct kp_flame_fname *fnames; /* by frame id */
	size_t fcap;
	char *namebuf;
	size_t namecap;
	const char **path_name; /* the previous stack's path, root first */
	uint32_t *path_node;
	size_t path_len, path_cap;
	struct kp_flame_box *boxes;
	size_t nboxes, boxes_cap;
	uint32_t maxdepth;
	uint64_t grand[2];
	double *p_value; /* by node: its change's, adjusted (differential,
			  * alpha > 0: after kp_flame_layout) */
	double maxdelta; /* the largest change in share (differential) */
	double alpha;	 /* colour only changes significant at alpha (0: all) */
	bool reverse;
};

/* n's share of all samples of a side (0 when the side is empty) */
double kp_flame_share(const struct kp_flame *fg, const struct kp_flame_node *n,
		      int side);
/* Is n's change significant (always, when every change is coloured)? */
bool kp_flame_significant(const struct kp_flame *fg,
			  const struct kp_flame_node *n);
/* Sort the children and lay out the boxes at scale (pixels a count). */
void kp_flame_layout(struct kp_flame *fg, double scale, double minpx);

#endif /* KP_FLAME_INT_H */
