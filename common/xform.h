/*
 * xform.h - the transforms of kp-grep: keep or drop whole records,
 * and rewrite the frames of those kept (xform.c).
 *
 * They apply to each record in this order (man/kp-grep.1):
 *	1. context: keep the records of one execution context, or drop the
 *	   idle loop (context.h);
 *	2. match: keep the records with a frame matching the regex (or,
 *	   inverted, those with none);
 *	3. focus: cut each record at its outermost frame matching, which
 *	   becomes the root (records without one are dropped);
 *	4. prune: cut each record below its innermost frame matching;
 *	5. hide: remove the frames matching (the samples stay; a record
 *	   with no frame left is one frame "[hidden]");
 *	6. merge clones: "foo.isra.0" becomes "foo";
 *	7. merge module: the frames of one module become one frame "[M]";
 *	8. collapse recursion: a frame whose function is its caller's is
 *	   merged into the caller.
 * Regexes are POSIX extended, unanchored, matched against the function
 * name as kp-inclusive shows it (the symbol, else "[module]"), or with
 * on_module against the module (kernel for the kernel image).
 */
#ifndef KP_XFORM_H
#define KP_XFORM_H

#include <regex.h>

#include "kp.h"

enum kp_xre { KP_XRE_MATCH, KP_XRE_FOCUS, KP_XRE_PRUNE, KP_XRE_HIDE, KP_XRE_N };

struct kp_xform;

struct kp_xform *kp_xform_new(void);
void kp_xform_free(struct kp_xform *x);
/* Set one regex; -1 and a message in *err (static) when it is bad. */
int kp_xform_regex(struct kp_xform *x, enum kp_xre which, const char *re,
		   char *err, size_t errlen);
void kp_xform_invert(struct kp_xform *x, bool on);  /* -v */
void kp_xform_modules(struct kp_xform *x, bool on); /* -m */
/* Keep only context ctx (-1: any); drop the idle loop. */
void kp_xform_context(struct kp_xform *x, int ctx, bool no_idle);
void kp_xform_merge_clones(struct kp_xform *x, bool on);
/* module: as written in the input, or "kernel" for the kernel image. */
void kp_xform_merge_module(struct kp_xform *x, const char *module);
void kp_xform_collapse_recursion(struct kp_xform *x, bool on);

/*
 * Apply the transforms to st.  Returns false when the record is
 * dropped; else the frames to keep (leaf first) in *frames[0..*n),
 * valid until the next call.
 */
bool kp_xform_apply(struct kp_xform *x, const struct kp_stack *st,
		    const struct kp_frame *const **frames, size_t *n);

#endif /* KP_XFORM_H */
