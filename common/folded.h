/*
 * folded.h - stacks written as folded lines, "root;...;leaf COUNT", in
 * the byte order of their text (the order of stackcollapse-perf.pl's
 * and inferno-collapse-perf's output), lines of the same text merged.
 */
#ifndef KP_FOLDED_H
#define KP_FOLDED_H

#include <stdint.h>
#include <stdio.h>

/* A frame's text in a folded line: no ';' and no newline in it. */
struct kp_fold_name {
	const char *s;
	size_t len;
};

/*
 * Stack i of the n, with count counts[i], is the frames
 * ids[start[i] .. start[i + 1]), root first, each an index into
 * names[0 .. nnames).  The lines written to fp: KP_EXIT_OK; or
 * KP_EXIT_FATAL, said and nothing written, where lines of one text sum
 * past 2^64 - 1.
 */
int kp_folded_write(FILE *fp, const struct kp_fold_name *names,
		    size_t nnames, const uint32_t *ids, const size_t *start,
		    const uint64_t *counts, size_t n);

#endif /* KP_FOLDED_H */
