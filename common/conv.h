/*
 * conv.h - what the converters (perf2kp, dtrace2kp, bpftrace2kp) share:
 * the stack being built, the frame-name tidy passes of the peer
 * collapsers, small scanning helpers, and one entry point per input
 * format, so that each filter's main() and its fuzz target run the same
 * single streaming pass.
 *
 * The entry points read the whole input into an aggregation.  They
 * return 0, or -1 with *why set when the input is of the wrong kind (a
 * static message naming the expected format; the caller prints it and
 * exits 2).  Odd lines inside a valid input are skipped with
 * kp_input_skip.
 */
#ifndef KP_CONV_H
#define KP_CONV_H

#include <string.h>

#include "kp.h"
#include "scan.h"

/* The stack under construction: frames leaf first. */
struct kp_conv {
	struct kp_agg *agg;
	struct kp_input *in;
	const struct kp_frame **frames;
	size_t n, cap;
	char *tmp; /* kp_conv_tmp's scratch buffer */
	size_t tmpcap;
};

void kp_conv_init(struct kp_conv *cv, struct kp_agg *agg,
		  struct kp_input *in);
void kp_conv_push(struct kp_conv *cv, const struct kp_frame *f);
/*
 * kp_frame_intern for frames built from another tool's text: the frame
 * is first made what the kp reader reads back from its canonical line
 * (a module holding " [", a file holding '(', a symbol ending in a
 * newline would otherwise change on a round trip): kp_frame_reread,
 * repeated until the frame no longer changes (at most 4 times).  A
 * frame whose line reads as no frame keeps its address alone, or is
 * "[bad name]".
 */
const struct kp_frame *kp_conv_intern(const struct kp_frame *f);
/* The frame kp_conv_intern would intern, in *out (not interned). */
/* kp_conv_normal keeps f's names as they are (it may drop an offset
 * equal to the address). */
bool kp_conv_plain(const struct kp_frame *f);
void kp_conv_normal(const struct kp_frame *f, struct kp_frame *out);
/*
 * One frame per function (perf2kp --functions, pprof's -functions): a
 * frame with a symbol loses its address, offset and size, so that
 * stacks that differ only in them are one stack.  A frame without a
 * symbol keeps them: its address is what names it.
 */
static inline void
kp_conv_function_level(struct kp_frame *f)
{
	if (!f->sym)
		return;
	f->flags &= ~(uint32_t)(KP_F_ADDR | KP_F_OFF | KP_F_SIZE);
	f->addr = f->off = f->size = 0;
}

/* Add the stack with count (weight) to the aggregation and empty it. */
void kp_conv_flush(struct kp_conv *cv, uint64_t count);
void kp_conv_free(struct kp_conv *cv);
/* A scratch buffer of at least n + 1 bytes, reused by the next call. */
char *kp_conv_tmp(struct kp_conv *cv, size_t n);

/*
 * stackcollapse-perf.pl's tidy of a function name, in place; returns
 * the new length: cut the argument list at the first '(' (but keep Go
 * "pkg.(*T).M" and C++ "(anonymous namespace)"), delete quotes, and
 * drop the blanks the cut leaves at the end.
 */
size_t kp_conv_tidy_generic(char *s, size_t len);
/* Its Java tidy: "Ljava/lang/Foo;::bar" loses the leading 'L'. */
size_t kp_conv_tidy_java(char *s, size_t len);

/*
 * A line holding a NUL byte: skipped with a message (true).  Every name
 * in kp is a C string: a name cut at a NUL would print as another one.
 */
static inline bool
kp_conv_nul(struct kp_input *in, const char *line, size_t len)
{
	if (!memchr(line, '\0', len))
		return false;
	kp_input_skip(in, "NUL byte in line");
	return true;
}

/* Parse hex [s, e) without 0x prefix check; false if empty/bad/long. */
bool kp_conv_hex(const char *s, const char *e, uint64_t *v);

/* ---- perf script ---- */

enum { KP_PROC_NONE, KP_PROC_COMM, KP_PROC_PID, KP_PROC_TID };
enum { KP_SPACE_ALL, KP_SPACE_KERNEL, KP_SPACE_USER };

/* An event seen in the input, its samples, its stacks. */
struct kp_perf_event {
	char *name; /* as perf prints it; "" when it prints none */
	size_t len;
	unsigned long samples;
	struct kp_agg *agg; /* NULL: not kept (--event names another) */
	bool owned;	    /* agg is not the caller's (kp_perf_pick frees) */
	int text_ev;	    /* its number among the text's events, whose
			     * stacks the text keeps (-1: none) */
};

/*
 * The events a perf2kp run has seen, across the files it converts, each
 * with its samples and (until kp_perf_pick) its stacks.  The caller's:
 * zero-initialise it, hand it to the converters with each file, choose
 * with kp_perf_pick, free with kp_perf_events_free.
 */
struct kp_perf_events {
	struct kp_perf_event *v;
	size_t n;
	/* the stacks of the perf script text read (conv_perf.c), not in
	 * the events' aggregations until kp_perf_flush */
	struct kp_perf_text *text;
	int kept_text; /* kp_perf_pick's event's number there, or -1 */
};

/* perf2kp's options: the converters only read them. */
struct kp_perf_opts {
	const char *event;  /* keep only this event (NULL: the one with
			     * the most samples, kp_perf_pick) */
	int proc;	    /* KP_PROC_*: the outermost process frame */
	int space;	    /* KP_SPACE_*: which frames to keep */
	bool period;	    /* weight by the sample period */
	bool inline_flag;   /* mark "(inlined)" frames KP_F_INLINE */
	bool raw_names;	    /* keep symbols as perf prints them */
	bool functions;	    /* kp_conv_function_level every frame */
	/* perf.data: a file of at least this many bytes (or a pipe) is
	 * read on two threads; text: two threads read it, in chunks, once
	 * it is longer than one (0: one thread; 1: two, even on one
	 * processor: the tests; other: two where there are two) */
	size_t split_min;
	size_t chunk; /* text: the bytes a chunk aims at (0: 512 KiB) */
};

/*
 * Convert one input of perf script text into agg.  Each event's samples
 * go to an aggregation of its own: the first event's (or o->event's) to
 * agg, the others' to new ones in evs.
 */
int kp_perf_convert(struct kp_agg *agg, struct kp_input *in,
		    const struct kp_perf_opts *o, struct kp_perf_events *evs,
		    const char **why);
/*
 * The text's stacks added to their events' aggregations (before a
 * perf.data is converted into them, or to read them there).
 */
void kp_perf_flush(struct kp_perf_events *evs);
/*
 * After kp_perf_pick: the kept event's stacks written as kp (metadata,
 * records, the final "!"), those of the text read (in the order of
 * first sight) after agg's: what kp_write_agg writes of them all.
 */
void kp_perf_write(FILE *out, struct kp_perf_events *evs,
		   struct kp_agg *agg);
/*
 * After the files: the aggregation to write, of o->event's event or the
 * one with the most samples (the first seen of equals); with more than
 * one event, each is named with its samples on stderr ("cpu-clock 9406
 * samples, page-faults 1733: kept cpu-clock; --event to choose").  Sets
 * the "event" metadata.  Takes agg (the one given to the converters);
 * the other events' stacks are freed (their names and samples stay in
 * evs).
 */
struct kp_agg *kp_perf_pick(const struct kp_perf_opts *o,
			    struct kp_perf_events *evs, struct kp_agg *agg);
/*
 * A converter of another input (perf.data) that chose its event itself
 * and added its stacks to agg (kp_perf_convert's): the event for
 * kp_perf_pick.
 */
void kp_perf_kept(struct kp_perf_events *evs, const char *name,
		  unsigned long samples, struct kp_agg *agg);
void kp_perf_events_free(struct kp_perf_events *evs);

/* ---- DTrace printa(stack()) ---- */

struct kp_dtrace_opts {
	bool offsets; /* keep "+0xOFF" in the symbol name (stackcollapse.pl) */
};

/* o: const struct kp_dtrace_opts * */
int kp_dtrace_convert(struct kp_agg *agg, struct kp_input *in, void *o,
		      const char **why);

/* ---- bpftrace map output ---- */

struct kp_bpftrace_opts {
	bool keys; /* keep the other map keys (comm, pid ...) as frames */
};

/* o: const struct kp_bpftrace_opts * */
int kp_bpftrace_convert(struct kp_agg *agg, struct kp_input *in, void *o,
			const char **why);

/*
 * The converters' driver: run convert on each file (none: "-", standard
 * input) into agg, one streaming pass each; a file of the wrong kind
 * (convert returns -1 with *why) is fatal: "prog: FILE: why", exit 2.
 * o is convert's argument: its options, read only (dtrace2kp's,
 * bpftrace2kp's), or what else the caller's own convert function takes
 * (perf2kp's: the options and the events seen).
 */
typedef int (*kp_conv_fn)(struct kp_agg *agg, struct kp_input *in, void *o,
			  const char **why);
void kp_conv_files(struct kp_agg *agg, int nfiles, char **files,
		   kp_conv_fn convert, void *o);

#endif /* KP_CONV_H */
