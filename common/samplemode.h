/*
 * samplemode.h - what kp-sample samples, and how its records become
 * weighted stacks:
 *
 *	plain      every sample of the event (-e: any name perf accepts,
 *	           common/events) counts 1 under its callchain
 *	--data     the same, under the mapping, page size and NUMA node
 *	           of the sample's data address (common/dataaddr)
 *	--off-cpu  sched:sched_switch: each stack a task left the CPU with
 *	           counts the nanoseconds until the task ran again
 *	           (common/offcpu); -a and -C read both ends from the
 *	           tracepoint, a command and -p the switch-out from it and
 *	           the switch-in from PERF_RECORD_SWITCH
 *
 * Several events (-e A -e B) share the first one's rings; each sample
 * says its event (PERF_SAMPLE_IDENTIFIER) and the event's name is the
 * outermost frame of its stacks, "[A]": one profile per event, side by
 * side in one stream (kp-inclusive -C '[A]', a flame graph's towers).
 *
 *	struct kp_samplemode *m = kp_samplemode_new(&opts, procs, chains);
 *	kp_samplemode_event(m, i, &set[i]);   (each event's attr, before
 *					       opening; set[0] leads)
 *	... each record of the rings: kp_samplemode_record(m, h);
 *	... after each reading of every ring: kp_samplemode_round(m);
 *	kp_samplemode_finish(m);  kp_samplemode_meta(m);
 */
#ifndef KP_SAMPLEMODE_H
#define KP_SAMPLEMODE_H

#include <stdbool.h>
#include <stdint.h>

#include "chains.h"
#include "perfev.h"
#include "procs.h"

enum {
	KP_SM_DATA = 1 << 0,   /* --data */
	KP_SM_OFFCPU = 1 << 1, /* --off-cpu */
	KP_SM_STATE = 1 << 2,  /* --state: the task state outside the stack */
};

struct kp_samplemode_opts {
	unsigned modes;
	const char *const *events; /* -e, each once; none: cycles (cpu-clock
				    * without a PMU) */
	size_t nevents;
	uint64_t freq, period; /* -F (or its default), -c (0: not given) */
	bool freq_given;       /* -F given */
	size_t pages;       /* -m */
	bool user;          /* --user */
	bool tasks;         /* per-task events (a command, -p), not -a/-C */
};

struct kp_samplemode;

/*
 * procs: the process model (needed with --data or side-band records,
 * else NULL); chains: where stacks go.  Exits 64 for an event name
 * perf would not accept, 2 for --off-cpu without tracefs.
 */
struct kp_samplemode *kp_samplemode_new(const struct kp_samplemode_opts *o,
					struct kp_procs *procs,
					struct kp_chains *chains);
void kp_samplemode_free(struct kp_samplemode *m);
/* How many events; fill set's attr, name, pages, may_fall_back and,
 * past the first, leader (sets[0]) and the chain of next. */
size_t kp_samplemode_nevents(const struct kp_samplemode *m);
void kp_samplemode_event(struct kp_samplemode *m, size_t i,
			 struct kp_perfev_set *set);
/* One record of a ring (kp_perfev_fn's shape: arg is the mode). */
void kp_samplemode_record(const struct perf_event_header *h, void *arg);
/* Every ring has been read once more. */
void kp_samplemode_round(struct kp_samplemode *m);
/* Sampling ended (the rings read a last time). */
void kp_samplemode_finish(struct kp_samplemode *m);
/* The counts for the status line: samples (or spans) and lost. */
const uint64_t *kp_samplemode_samples(const struct kp_samplemode *m);
const uint64_t *kp_samplemode_lost(const struct kp_samplemode *m);
/* Warn of losses; set the metadata of event, weight, rate, counts. */
void kp_samplemode_meta(struct kp_samplemode *m);

#endif /* KP_SAMPLEMODE_H */
