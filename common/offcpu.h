/*
 * offcpu.h - off-CPU time: how long each task waited after it left the
 * CPU, and the stack it left with.
 *
 *	struct kp_offcpu *o = kp_offcpu_new();
 *
 *	kp_offcpu_out(o, t1, pid, tid, 'S', ips, n);	(switched out)
 *	kp_offcpu_in(o, t2, tid);			(switched in again)
 *	kp_offcpu_flush(o, horizon, add_span, arg);	(t2 < horizon:
 *						 add_span gets t2 - t1 ns)
 *	...
 *	kp_offcpu_finish(o, t_end, add_span, arg);
 *	kp_offcpu_free(o);
 *
 * The events are fed as they are read (per-CPU rings give them out of
 * order: a task's switch-in on one CPU may be read before its
 * switch-out on another) and kept until the caller names a horizon, a
 * time before which every event has been fed; then those events are
 * taken in time order, each switch-in closing its task's pending
 * switch-out.  kp-sample's horizon is the time its previous round of
 * reading the rings began (perf's "finished round").
 *
 * A switch-in with nothing pending (the task left the CPU before the
 * capture began) counts nothing; a second switch-out before a
 * switch-in (records lost) replaces the first; at the end, a task still
 * off the CPU counts until the end.  The library prints nothing;
 * memory grows with the tasks seen and the events of the last two
 * rounds.
 */
#ifndef KP_OFFCPU_H
#define KP_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_offcpu;

/* One wait: a task off the CPU from start for ns nanoseconds. */
struct kp_offcpu_span {
	uint32_t pid, tid;
	char state;         /* kp_offcpu_state's letter, '\0' if unknown */
	const uint64_t *ips; /* the stack it left with (valid during the call) */
	size_t n;
	uint64_t start, ns;
};
typedef void (*kp_offcpu_fn)(const struct kp_offcpu_span *s, void *arg);

/* What did not add up, for the capture's metadata. */
struct kp_offcpu_stats {
	uint64_t spans;     /* spans given to fn */
	uint64_t unmatched; /* switch-ins with no switch-out before them */
	uint64_t replaced;  /* switch-outs with no switch-in after them */
	uint64_t late;      /* events older than a horizon already passed */
	uint64_t open;      /* tasks still off the CPU at the end */
	uint64_t exited;    /* switch-outs closed by the task's end */
};

struct kp_offcpu *kp_offcpu_new(void);
void kp_offcpu_free(struct kp_offcpu *o);

/* Task tid of process pid left the CPU at time (ns) with ips[0..n). */
void kp_offcpu_out(struct kp_offcpu *o, uint64_t time, uint32_t pid,
		   uint32_t tid, char state, const void *ips, size_t n);
/* Task tid ran again at time. */
void kp_offcpu_in(struct kp_offcpu *o, uint64_t time, uint32_t tid);
/*
 * Task tid ended (PERF_RECORD_EXIT): a switch-out pending then counts
 * nothing.  A switch-out in state X or Z is a task's last, the same.
 */
void kp_offcpu_exit(struct kp_offcpu *o, uint64_t time, uint32_t tid);

/* Take the events before horizon, in time order; fn gets each span. */
void kp_offcpu_flush(struct kp_offcpu *o, uint64_t horizon, kp_offcpu_fn fn,
		     void *arg);
/* Take every event; then each task still off the CPU counts until end. */
void kp_offcpu_finish(struct kp_offcpu *o, uint64_t end, kp_offcpu_fn fn,
		      void *arg);
const struct kp_offcpu_stats *kp_offcpu_stats(const struct kp_offcpu *o);

/*
 * The letter ps(1) and sched_switch's prev_state print: 'R' for a task
 * preempted (0, or the "+" bit, 0x100 since Linux 4.14), else S, D, T,
 * t, X, Z, P or I by the lowest state bit.
 */
char kp_offcpu_state(uint64_t prev_state);

/*
 * Where sched:sched_switch keeps prev_pid, prev_state and next_pid in
 * its RAW data (PERF_SAMPLE_RAW), read from tracefs's format file once.
 */
struct kp_sched_switch {
	unsigned prev_pid, prev_pid_size;
	unsigned prev_state, prev_state_size;
	unsigned next_pid, next_pid_size;
};
/* Returns 0, or -1 with a message in err (tracefs not mounted, ...). */
int kp_sched_switch_layout(struct kp_sched_switch *l, char *err,
			   size_t errlen);
/*
 * Decode one sample's RAW data (raw[0..len), after the u32 size).
 * Returns 0, or -1 if the data is too short for the layout.
 */
int kp_sched_switch_decode(const struct kp_sched_switch *l, const void *raw,
			   size_t len, uint32_t *prev_pid,
			   uint64_t *prev_state, uint32_t *next_pid);

/*
 * From perf_event_open records (kp-sample): a sched:sched_switch
 * sample (TID, TIME, CALLCHAIN, RAW) is prev's switch-out with its
 * callchain and, if next, next's switch-in (0, the idle task, left
 * out; following tasks, next is none of them: their switch-ins are
 * PERF_RECORD_SWITCH records);
 * -1 if its RAW data does not fit the layout.  A PERF_RECORD_SWITCH
 * (attr.context_switch, sample_id_all with TID and TIME) that is not
 * a switch-out is its task's switch-in: true if h was one.
 */
struct kp_perfev_sample;
struct perf_event_header;
int kp_offcpu_sched_switch(struct kp_offcpu *o,
			   const struct kp_sched_switch *l,
			   const struct kp_perfev_sample *s, bool next);
bool kp_offcpu_switch_record(struct kp_offcpu *o,
			     const struct perf_event_header *h,
			     uint64_t sample_type);

#endif /* KP_OFFCPU_H */
