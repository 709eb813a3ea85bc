/*
 * agg.h - stack aggregation (agg.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_AGG_H
#define KP_AGG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include "frame.h"
#include "reader.h"

struct kp_agg;

struct kp_agg *kp_agg_new(void);
/*
 * Add count samples of the stack frames[0..n) (leaf first).  Identical
 * stacks merge and their counts add.  Returns 0, or -1 if the sum would
 * overflow 64 bits (nothing is added then).
 */
int kp_agg_add(struct kp_agg *agg, const struct kp_frame *const *frames,
	       size_t n, uint64_t count);
/*
 * kp_agg_add for converters that read their own formats.  On overflow
 * the record is not added and the total is past 2^64 (it holds this
 * sum): the caller ends with kp_agg_check_total after the input.
 */
void kp_agg_add_or_skip(struct kp_agg *agg, struct kp_input *in,
			const struct kp_frame *const *frames, size_t n,
			uint64_t count);
/*
 * Stacks added late: each when two more have been given, so that its
 * slot in the index is fetched from memory as it is given and its entry
 * as the next one is, and by the time it is added both are in the
 * cache (on a capture of mostly distinct stacks the index and its
 * entries are megabytes, and each add waited for memory twice).  They
 * are added in the order given, each to its own agg, as
 * kp_agg_add_or_skip adds; the last two only at kp_agg_late_end, which
 * the caller calls before its aggs are read.  A zeroed struct is empty.
 */
struct kp_agg_behind {
	struct kp_agg *agg;
	const struct kp_frame **frames;
	size_t n, cap;
	uint64_t count, h;
};
struct kp_agg_late {
	struct kp_agg_behind q[3];
	size_t given, added;
};
void kp_agg_late_add(struct kp_agg_late *l, struct kp_agg *agg,
		     const struct kp_frame *const *frames, size_t n,
		     uint64_t count);
/* Every stack given added. */
void kp_agg_late_end(struct kp_agg_late *l);
/* Its buffers freed (what was not added is dropped); zeroed. */
void kp_agg_late_free(struct kp_agg_late *l);
/* Every stack of src added to agg, in src's order (a converter's second
 * thread's stacks after its first's). */
void kp_agg_add_agg(struct kp_agg *agg, const struct kp_agg *src);
/* Each stack of agg, in order, to fn. */
void kp_agg_each(struct kp_agg *agg,
		 void (*fn)(void *arg, const struct kp_stack *st), void *arg);
/* Distinct stacks, in order of first appearance. */
size_t kp_agg_len(const struct kp_agg *agg);
const struct kp_stack *kp_agg_get(const struct kp_agg *agg, size_t i);
/* Sum of all counts (saturating at UINT64_MAX; see kp_agg_total_ok). */
uint64_t kp_agg_total(const struct kp_agg *agg);
bool kp_agg_total_ok(const struct kp_agg *agg);
/* agg's total taken past 2^64 (that of what it was made from was). */
void kp_agg_overflowed(struct kp_agg *agg);
/*
 * A stack the caller knows agg does not hold, added after its others
 * without a look-up (a converter that made its stacks of distinct lists
 * of entries, each frame one entry's); its index is made when next
 * needed.  A count past 2^64 in the total is as in kp_agg_add_or_skip.
 */
void kp_agg_append(struct kp_agg *agg, const struct kp_frame *const *frames,
		   size_t n, uint64_t count);
/* Every stack of src, none of which agg holds, added after agg's without
 * a look-up or a copy (src's entries are agg's: agg owns src). */
void kp_agg_append_all(struct kp_agg *agg, struct kp_agg *src);
/*
 * The rule of kp(5) for totals: past 2^64 (a sum of identical stacks
 * included) is fatal, "prog: NAME: the total count overflows 64 bits",
 * exit 2, before anything is written.  NAME "-" is "<stdin>".
 */
void kp_agg_check_total(const struct kp_agg *agg, const char *name);
/* Sort the stacks (qsort comparator on const struct kp_stack *const *). */
void kp_agg_sort(struct kp_agg *agg,
		 int (*cmp)(const void *, const void *));
/* Read a whole kp input into agg (convenience for analysis filters). */
void kp_agg_read(struct kp_agg *agg, const char *path);
/*
 * A new agg holding the files' records (no file: standard input); a
 * total over 64 bits is fatal (kp_agg_check_total), naming the input
 * that took it over.  kp_agg_read_summed is the same.
 */
struct kp_agg *kp_agg_read_files(int nfiles, char **files);
struct kp_agg *kp_agg_read_summed(int nfiles, char **files);
/*
 * kp_agg_read_files for a filter that needs less of a frame than the
 * input holds (kp-fold names a frame by its function): each frame is
 * replaced by key(frame) before the stacks merge, so that records that
 * differ only in what the filter ignores (addresses, offsets) merge as
 * they are read.  key is the reader's (kp_reader_set_key); ignores()
 * says what it ignores (kp_reader_key_ignores), asked again whenever a
 * record has come with new metadata, since what a key ignores may
 * depend on it (kp-fold names a frame without a symbol by its address
 * only in DTrace's input).
 */
struct kp_agg *kp_agg_read_keyed(int nfiles, char **files,
				 kp_frame_key_fn key, unsigned (*ignores)(void));
void kp_agg_free(struct kp_agg *agg);

#endif /* KP_AGG_H */
