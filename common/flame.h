/*
 * flame.h - flame graphs: the call tree of a profile, laid out in boxes
 * and written as an interactive SVG (kp-flame).
 *
 * Stacks are merged root first into a tree whose frames merge by name,
 * as in folded stacks.  With two inputs (side 0 before, side 1 after) the
 * graph is differential: widths are "after", colours the change in each
 * frame's share.  The output depends only on the input and the options.
 */
#ifndef KP_FLAME_H
#define KP_FLAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kp.h"

struct kp_flame;

struct kp_flame_opts {
	const char *title;     /* NULL: "Flame Graph" or "Icicle Graph" */
	const char *countname; /* what the counts are: "samples", "ns" */
	const char *colors;    /* a palette (kp_flame_palette_ok) */
	double width;	       /* image width, pixels */
	double height;	       /* frame height, pixels */
	double minwidth;       /* narrower frames are not drawn */
	bool minwidth_pct;     /* minwidth is a % of the width */
	bool inverted;	       /* an icicle graph: the root at the top */
	/*
	 * Differential: colour only the frames whose change in share is
	 * significant at alpha (two-proportion test, Benjamini-Hochberg over
	 * the frames; common/stats.h); 0 colours every change.
	 */
	double alpha;
};

/* A new, empty graph; with reverse, stacks are merged leaf first. */
struct kp_flame *kp_flame_new(bool reverse);
/*
 * Add one stack to side 0 (before) or 1 (after, or the only input);
 * ids: its frames' ids (kp_reader_ids), or NULL to read them from the
 * frames.  Returns 0, or -1 when the side's total would overflow 64
 * bits (nothing is added then).
 */
int kp_flame_add(struct kp_flame *fg, const struct kp_stack *st,
		 const uint32_t *ids, int side);
/*
 * A frame as the graph names it, for the reader's key
 * (kp_reader_set_key, ignoring KP_KEY_NAMED, KP_KEY_MODULE and
 * KP_KEY_BARE_KERNEL): its symbol and module, and for a frame without a
 * module (its colour depends on its address) whether its address is the
 * kernel's.  Stacks of such keys give the graph that the frames give,
 * from fewer distinct frames.
 */
const struct kp_frame *kp_flame_key(const struct kp_frame *f);
/* The total count of a side. */
uint64_t kp_flame_total(const struct kp_flame *fg, int side);
/* True for a palette name --colors accepts. */
bool kp_flame_palette_ok(const char *name);
/* Lay out and write the SVG (differential with diff); once per graph. */
void kp_flame_write_svg(FILE *out, struct kp_flame *fg,
			const struct kp_flame_opts *o, bool diff);
void kp_flame_free(struct kp_flame *fg);

#endif /* KP_FLAME_H */
