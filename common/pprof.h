/*
 * pprof.h - stacks in, a gzip-compressed profile.proto out (kp-pprof);
 * what the profile holds is described at the top of pprof.c.
 *
 *	struct kp_pprof *pp = kp_pprof_new(false);	(after the metadata)
 *	for each stack: kp_pprof_add(pp, st);
 *	kp_pprof_write(fp, pp);
 *	kp_pprof_free(pp);
 *
 * The sample types come from the metadata read so far (kp_meta_counts_ns,
 * kp_meta_clock_period).  The output depends only on the input: no time
 * stamp, no file name in the gzip header.
 */
#ifndef KP_PPROF_H
#define KP_PPROF_H

#include <stdbool.h>
#include <stdio.h>

#include "kp.h"

struct kp_pprof;

/*
 * A new profile.  With process, an outermost frame without address and
 * module is the process name (perf2kp --comm) and labels its samples;
 * NAME-PID and NAME-PID/TID frames always do.
 */
struct kp_pprof *kp_pprof_new(bool process);
/* One sample: the stack and its count. */
void kp_pprof_add(struct kp_pprof *pp, const struct kp_stack *st);
/* The Profile message, gzip-compressed; write errors show in ferror. */
void kp_pprof_write(FILE *out, struct kp_pprof *pp);
void kp_pprof_free(struct kp_pprof *pp);

#endif /* KP_PPROF_H */
