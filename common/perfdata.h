/*
 * perfdata.h - a streaming reader of perf.data, the file perf record
 * writes (tools/perf/Documentation/perf.data-file-format.txt in the
 * Linux tree; tools/perf/util/header.c and session.c settle doubts).
 *
 *	struct kp_pd *pd = kp_pd_open(in, &why);     (in: a kp_input)
 *	struct kp_pd_rec r;
 *	int st;
 *
 *	while ((st = kp_pd_next(pd, &r)) > 0)
 *		switch (r.type) { case PERF_RECORD_SAMPLE: ... }
 *	if (st < 0)
 *		kp_die("%s: %s", kp_input_name(in), kp_pd_error(pd));
 *	kp_pd_close(pd);
 *
 * Both layouts: the file mode (a header, the attributes, the data
 * section, the feature sections after it; read with pread, so the
 * input must be a regular file) and the pipe mode of "perf record -o -"
 * (a 16-byte header, then records only: HEADER_ATTR, HEADER_FEATURE,
 * EVENT_UPDATE ... carry what the file header holds).  Records of
 * "perf record -z" (PERF_RECORD_COMPRESSED, one zstd stream across
 * them, records split between chunks) come out decompressed.  Only the
 * byte order of this machine is read: the other is refused by name.
 *
 * kp_pd_next returns the records a converter needs (SAMPLE, MMAP,
 * MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE)
 * decoded; it takes in the header records (HEADER_ATTR, HEADER_FEATURE,
 * EVENT_UPDATE, ID_INDEX, FINISHED_ROUND ...) itself and passes over
 * record types it does not know.  A record whose size is impossible, a
 * section outside the file, a sample shorter than its sample_type says
 * ... is an error: kp_pd_next returns -1 and kp_pd_error says what, with
 * the offset ("offset 4096: record size 4 is less than its header").
 * Nothing of the input is trusted: hostile files give errors, never
 * reads out of bounds.  The library prints nothing.
 */
#ifndef KP_PERFDATA_H
#define KP_PERFDATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kp.h"

/* Record types perf itself adds after the kernel's (session.h). */
enum {
	KP_PD_HEADER_ATTR = 64,
	KP_PD_HEADER_EVENT_TYPE = 65,
	KP_PD_HEADER_TRACING_DATA = 66,
	KP_PD_HEADER_BUILD_ID = 67,
	KP_PD_FINISHED_ROUND = 68,
	KP_PD_ID_INDEX = 69,
	KP_PD_AUXTRACE_INFO = 70,
	KP_PD_AUXTRACE = 71,
	KP_PD_EVENT_UPDATE = 78,
	KP_PD_HEADER_FEATURE = 80,
	KP_PD_COMPRESSED = 81,
};

/* One event (attribute) of the capture. */
struct kp_pd_event {
	struct perf_event_attr attr; /* zero past the file's attr size */
	char *name;                  /* EVENT_DESC's, else made from attr */
	bool dummy;     /* perf's hidden sideband event, not a user's */
	uint64_t nsamples; /* samples read so far */
};

/* What the header's feature sections (or pipe-mode records) say. */
struct kp_pd_info {
	char *hostname, *osrelease, *version, *arch;
	char *cmdline;         /* its words joined by blanks */
	uint32_t nrcpus_avail, nrcpus_online;
	char *kernel_build_id; /* lowercase hex, of [kernel.kallsyms] */
	uint64_t lost, lost_samples, throttled;
	uint64_t first_time, last_time; /* of the samples (0: not said) */
};

/* A decoded record.  Pointers point into the reader's buffers: valid
 * until the next kp_pd_next call. */
struct kp_pd_rec {
	uint32_t type;	/* PERF_RECORD_* */
	uint16_t misc;
	uint64_t offset; /* in the file (or decompressed stream): messages */
	int ev;		/* index of the event, -1 if unknown */
	uint32_t pid, tid;
	uint64_t time;
	/* SAMPLE */
	uint64_t ip, addr, id, stream_id, period;
	uint32_t cpu;
	bool has_period;       /* PERIOD in sample_type */
	const uint64_t *chain; /* CALLCHAIN: with the PERF_CONTEXT_* marks */
	uint64_t nchain;
	bool has_chain;
	const uint8_t *raw; /* RAW */
	uint32_t raw_size;
	uint64_t nbranch; /* BRANCH_STACK: entries (not decoded further) */
	uint64_t regs_abi; /* REGS_USER: 0 if none */
	const uint64_t *regs;
	uint32_t nregs;
	const uint8_t *stack; /* STACK_USER: the copy, dyn_size bytes valid */
	uint64_t stack_size, stack_dyn;
	/* MMAP, MMAP2 */
	uint64_t start, len, pgoff;
	uint32_t prot, flags;
	const char *path;     /* NUL-terminated within the record */
	char build_id[41];    /* MMAP2 with MISC_MMAP_BUILD_ID, else "" */
	/* COMM */
	const char *comm;
	size_t comm_len;
	/* FORK, EXIT */
	uint32_t ppid, ptid;
	/* LOST, LOST_SAMPLES */
	uint64_t lost;
};

struct kp_pd;

/*
 * Open a perf.data whose first bytes are in the buffer of in (kp_pd_is
 * said yes); read its header.  NULL with *why set (a static message or
 * the reader's error) if it cannot be read.
 */
bool kp_pd_is(struct kp_input *in);
struct kp_pd *kp_pd_open(struct kp_input *in, const char **why);
/* 1 and the next record in *r, 0 at the end, -1 on error. */
int kp_pd_next(struct kp_pd *pd, struct kp_pd_rec *r);
const char *kp_pd_error(const struct kp_pd *pd);
/* Pipe mode ("perf record -o -"). */
bool kp_pd_pipe(const struct kp_pd *pd);
/* The events; their names and counts are final at the end. */
size_t kp_pd_nevents(const struct kp_pd *pd);
struct kp_pd_event *kp_pd_event(struct kp_pd *pd, size_t i);
/* Event i's attribute alone (kp_pd_event also names the events). */
const struct perf_event_attr *kp_pd_attr(const struct kp_pd *pd, size_t i);
const struct kp_pd_info *kp_pd_info(const struct kp_pd *pd);
/* Samples whose id names no event (perf skips them too). */
uint64_t kp_pd_unknown(const struct kp_pd *pd);
/* The kernel's build-id or a file's from the BUILD_ID feature, or NULL. */
const char *kp_pd_build_id(const struct kp_pd *pd, const char *path);
/* How many build-ids pd has read: more, as a pipe's HEADER_BUILD_ID
 * records come (perf inject -b), may answer kp_pd_build_id anew. */
size_t kp_pd_nbuild_ids(const struct kp_pd *pd);
/* Bytes read so far, and the size of the whole input if known (0). */
void kp_pd_progress(const struct kp_pd *pd, uint64_t *done, uint64_t *total);
/* File mode: where the data section ends (records are read up to it). */
uint64_t kp_pd_data_end(const struct kp_pd *pd);
void kp_pd_close(struct kp_pd *pd);

/* ---- perfdata_conv.c: perf.data to kp stacks ---- */

struct kp_perf_opts;
struct kp_perf_events;

/* perf2kp's options for perf.data: the converter only reads them. */
struct kp_pd_opts {
	const struct kp_perf_opts *perf; /* those of perf script text too */
	const char *kallsyms;      /* the kernel's symbols (NULL: found) */
	bool no_demangle;          /* keep C++ symbols mangled */
	bool offcpu; /* sched:sched_switch samples: each wait's stack
		      * weighted by its nanoseconds (common/offcpu) */
	bool state;  /* with offcpu: the task state as the outermost frame */
	bool keep_going; /* a malformed record ends the input with a
			  * warning (fuzzing), not exit 2 */
	/* a pipe, or a file whose data section has at least this many
	 * bytes, is read and named on two threads (perfdata_conv.c, "the
	 * naming thread"; 0: never; 1: every input, even on one
	 * processor: the tests) */
	size_t split_min;
	bool split_trace; /* say what the second thread named (the tests) */
};

/*
 * Convert one perf.data (kp_pd_is(in)) into agg: the samples of the
 * event o->perf->event (with o->offcpu, sched:sched_switch), else of the
 * event with the most samples (the others named on stderr), as perf
 * report and perf script name them; the event kept and its samples go
 * to evs (kp_perf_kept, for kp_perf_pick); header metadata with
 * kp_meta_set.  Returns 0, or -1 with *why when the input cannot be
 * opened as perf.data; a malformed record later is fatal: "prog: FILE:
 * offset N: why", exit 2.
 */
int kp_perfdata_convert(struct kp_agg *agg, struct kp_input *in,
			const struct kp_pd_opts *o, struct kp_perf_events *evs,
			const char **why);

#endif /* KP_PERFDATA_H */
