/*
 * profile.h - per-function profiles from aggregated stacks: inclusive and
 * exclusive counts, caller/callee trees and call edges, under one choice
 * of key (function, module, address or function+offset).
 *
 * Used by kp-inclusive and kp-top, and meant for kp-flame, kp-callgrind
 * and kp-pprof.  The usual pattern:
 *
 *	struct kp_agg *agg = kp_agg_new();
 *	kp_agg_read(agg, path);
 *	struct kp_profile *p = kp_profile_new(KP_BY_FUNCTION, false);
 *	kp_profile_add_agg(p, agg);
 *	for (i = 0; i < kp_profile_len(p); i++) {
 *		const struct kp_pkey *k = kp_profile_get(p, i);
 *		... k->name, k->incl, k->excl, kp_profile_total(p) ...
 *	}
 *
 * The rules (the same as perf report --children and pprof's cum/flat):
 *  - a key's inclusive count is the sum of the counts of the stacks it
 *    occurs in, counted once per stack even when it occurs several times
 *    (recursion, or two frames that map to the same key);
 *  - a key's exclusive count is the sum of the counts of the stacks whose
 *    leaf (innermost frame) it is;
 *  - percentages are of the total of all counts (kp_profile_pct).
 *
 * Keys are dense ids 0 .. kp_profile_len()-1 in order of first
 * appearance; their name and module strings are interned (kp_intern), so
 * the same key of two profiles has pointer-equal name and module.
 * Counts saturate at UINT64_MAX rather than wrap.  Nothing here prints.
 */
#ifndef KP_PROFILE_H
#define KP_PROFILE_H

#include "kp.h"

/* What a frame is counted as. */
enum kp_by {
	/*
	 * The symbol; a frame without one (or with perf's "[unknown]") is
	 * "[MODULE]", or "[unknown]" when the module is not known either.
	 */
	KP_BY_FUNCTION,
	/*
	 * The module: "kernel" for the kernel image (kernel, vmlinux,
	 * [kernel.kallsyms]), each kernel module and user DSO by its name,
	 * "[unknown]" when not known.
	 */
	KP_BY_MODULE,
	/*
	 * The address: "0xADDR SYMBOL+0xOFF" (or "0xADDR [MODULE]"); a
	 * frame without an address falls back to KP_BY_OFFSET's name.
	 */
	KP_BY_ADDRESS,
	/*
	 * The symbol and offset: "SYMBOL+0xOFF" (just "SYMBOL" if no
	 * offset); without a symbol "[MODULE]+0xOFF" when the offset in the
	 * module is known, else "0xADDR", else "[MODULE]".
	 */
	KP_BY_OFFSET,
};

/* Parse "function", "module", "address", "function+offset"; -1 if none. */
int kp_by_parse(const char *s);
const char *kp_by_name(enum kp_by by);

/* The name kernel-image modules are reported under. */
#define KP_MODULE_KERNEL "kernel"
/*
 * The module name as reports show it: "kernel" for the kernel image,
 * else m unchanged; NULL stays NULL.  Interned.
 */
const char *kp_module_norm(const char *m);

/* One key and its counts. */
struct kp_pkey {
	const char *name;   /* interned; never NULL */
	const char *module; /* interned normalized module, or NULL */
	uint64_t incl;      /* samples in which it occurs (once each) */
	uint64_t excl;      /* samples in which it is the leaf */
};

/* A key id that names no key. */
#define KP_KEY_NONE UINT32_MAX

struct kp_profile;

/*
 * A new, empty profile.  With with_module, keys also differ by module
 * (KP_BY_FUNCTION: "main" in two programs is two keys) and
 * kp_pkey.module is set; without, module is NULL unless by is
 * KP_BY_MODULE.
 */
struct kp_profile *kp_profile_new(enum kp_by by, bool with_module);
void kp_profile_free(struct kp_profile *p);

/*
 * f with only what its key under by (and with_module) is made of: the
 * same key, and one frame for frames that differ in nothing else (a
 * reader's key, kp_reader_set_key, so that the frames a profile does not
 * tell apart are not interned one by one).  f need not be interned; the
 * result is.
 */
const struct kp_frame *kp_profile_reduce(const struct kp_frame *f,
					 enum kp_by by, bool with_module);
/* The key id of an interned frame (created on first use; cached per
 * frame id). */
uint32_t kp_profile_key(struct kp_profile *p, const struct kp_frame *f);
/*
 * The key ids of frames[0..n) into keys[0..n) (leaf first, as frames).
 * keys must hold n ids.
 */
void kp_profile_keys(struct kp_profile *p, const struct kp_frame *const *frames,
		     size_t n, uint32_t *keys);

/* Count one stack (leaf first): inclusive once per key, exclusive leaf. */
void kp_profile_add(struct kp_profile *p, const struct kp_frame *const *frames,
		    size_t n, uint64_t count);
/*
 * kp_profile_add given the frames' ids as well (kp_reader_ids): a frame
 * whose key is known is not read.
 */
void kp_profile_add_ids(struct kp_profile *p,
			const struct kp_frame *const *frames,
			const uint32_t *ids, size_t n, uint64_t count);
/* Count every stack of agg. */
void kp_profile_add_agg(struct kp_profile *p, const struct kp_agg *agg);

size_t kp_profile_len(const struct kp_profile *p);
const struct kp_pkey *kp_profile_get(const struct kp_profile *p, uint32_t id);
/* The sum of the counts added (saturating). */
uint64_t kp_profile_total(const struct kp_profile *p);
/* 100 * n / total, 0 when the total is 0. */
double kp_profile_pct(const struct kp_profile *p, uint64_t n);

/*
 * The ids of the keys called name (with module, if not NULL), in id
 * order: fills ids[0..max) and returns how many there are in all.
 */
size_t kp_profile_find(const struct kp_profile *p, const char *name,
		       const char *module, uint32_t *ids, size_t max);

/* strcmp with NULL first (an unknown module). */
int kp_strcmp_null(const char *a, const char *b);

/*
 * Key ids sorted for a report: by incl (or excl, by_excl) descending,
 * then the other count descending, then name and module bytewise.
 * Returns a malloc'ed array of kp_profile_len() ids.
 */
uint32_t *kp_profile_sorted(const struct kp_profile *p, bool by_excl);

/* ---- call edges (kp-callgrind) ---- */

/* A caller -> callee pair and the samples in which it occurs (once each). */
struct kp_pedge {
	uint32_t caller, callee;
	uint64_t count;
};

/*
 * Count the caller -> callee edges of every stack of agg, each edge once
 * per stack.  Returns a malloc'ed array sorted by caller then callee id,
 * and its length in *n.
 */
struct kp_pedge *kp_profile_edges(struct kp_profile *p,
				  const struct kp_agg *agg, size_t *n);

/* ---- caller and callee trees (kp-inclusive -C/-c, kp-flame) ---- */

enum kp_tree_dir {
	KP_TREE_CALLEES, /* from the root towards the leaves */
	KP_TREE_CALLERS, /* from the root towards the outermost frames */
};

/*
 * A tree node.  Node 0 is the root.  total is the samples through the
 * node; self is the samples whose path ends at it (for callees: the node
 * is the leaf; for callers: it is the outermost frame).
 */
struct kp_tnode {
	uint32_t key;    /* key id; the root of a whole-profile tree is KP_KEY_NONE */
	uint32_t parent; /* node index; KP_KEY_NONE for the root */
	uint32_t child;  /* first child, or KP_KEY_NONE */
	uint32_t next;   /* next sibling, or KP_KEY_NONE */
	uint32_t depth;  /* root 0 */
	uint64_t total;
	uint64_t self;
};

struct kp_tree;

/*
 * The callees (or callers) of key root over the stacks of agg.  In each
 * stack that holds root, the path starts at its outermost occurrence
 * (so a recursive function's samples count once) and runs to the leaf
 * (callees) or to the outermost frame (callers), at most max_depth nodes
 * below the root (0: no limit).  With root KP_KEY_NONE and
 * KP_TREE_CALLEES, the whole top-down tree (the flame graph): node 0 is
 * a virtual root over every stack, its children the outermost frames.
 */
struct kp_tree *kp_profile_tree(struct kp_profile *p, const struct kp_agg *agg,
				enum kp_tree_dir dir, uint32_t root,
				size_t max_depth);
size_t kp_tree_len(const struct kp_tree *t);
const struct kp_tnode *kp_tree_node(const struct kp_tree *t, uint32_t i);
/*
 * Order every node's children by total descending, then by key name and
 * module bytewise (so output is deterministic).
 */
void kp_tree_sort(struct kp_tree *t, const struct kp_profile *p);
void kp_tree_free(struct kp_tree *t);

#endif /* KP_PROFILE_H */

/* ---- folded stacks (fold2kp) ---- */

struct kp_folded;

/* A parser of folded lines; it keeps the frame array between calls. */
struct kp_folded *kp_folded_new(void);
void kp_folded_free(struct kp_folded *fd);
/*
 * Parse one folded line (without its newline), "root;...;leaf COUNT":
 * frames without an address (" : name" in kp), leaf first, in
 * *frames[0..*n) (valid until the next call), the count in *count.
 * Returns 0, or -1 with *why set to a description (valid until the
 * next call): no count, a bad count, an empty frame name, or a name
 * that kp would not read back unchanged (one that ends in +HEX, holds
 * " [", ends in an annotation such as " (inline)", or has blanks at
 * either end).
 */
int kp_folded_parse(struct kp_folded *fd, const char *s, size_t len,
		    const struct kp_frame *const **frames, size_t *n,
		    uint64_t *count, const char **why);
