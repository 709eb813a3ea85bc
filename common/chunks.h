/*
 * chunks.h - a text input handed out in chunks of whole records to one
 * or two threads (chunks.c), for a converter that reads each chunk
 * alone and makes of the chunks what one pass over the input would
 * make (conv_perf.c: perf script text).
 *
 * A chunk is cut where the caller's cut function says a record starts;
 * a chunk with no such place ends at a line's end instead, and the
 * next chunk then goes to the same thread, which reads on as one pass
 * (the chunk is not fresh).  Each chunk's lines are a part of the input
 * (kp_input_mem) that kp_chunks_done joins to it in the chunks' order,
 * so that skipped lines are said in order, with their lines in the
 * whole input.
 */
#ifndef KP_CHUNKS_H
#define KP_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input.h"

/* bytes readable after a chunk's, all defined (zeros after the input) */
#define KP_CHUNK_PAD 64

/* Where buf[0 .. len) may be cut: the start of its last whole line that
 * begins a record; 0 if there is none. */
typedef size_t (*kp_chunk_cut_fn)(const char *buf, size_t len);

/* Start the second thread (called once, under the feed's lock, when the
 * first chunk is handed out and more follow): whether it started. */
typedef bool (*kp_chunk_start_fn)(void *arg);

/* A thread's chunk: its buffer is the thread's, kept from one chunk to
 * the next (the caller frees buf at the end). */
struct kp_chunk {
	char *buf;
	size_t cap;
	size_t len;	     /* the chunk: buf[0 .. len), whole lines */
	struct kp_input *in; /* its lines, a part of the input */
	uint64_t seq;	     /* its number, counted on from kp_chunks_new's */
	bool last;	     /* the input's last chunk */
	bool fresh;	     /* it starts at a cut (else it goes on from the
			      * thread's chunk before) */
};

/*
 * The chunks of input in (what was read of it is still buffered there),
 * aiming at size bytes each, for nw (1 or 2) threads, numbered from seq
 * on; start starts the second thread.
 */
struct kp_chunks *kp_chunks_new(struct kp_input *in, size_t size, int nw,
				uint64_t seq, kp_chunk_cut_fn cut,
				kp_chunk_start_fn start, void *arg);
/* The next chunk for thread lane (0 or 1) into *c: false at the end of
 * the input. */
bool kp_chunks_next(struct kp_chunks *F, int lane, struct kp_chunk *c);
/* c is read: its lines joined to the input once those before are. */
void kp_chunks_done(struct kp_chunks *F, struct kp_chunk *c);
/* Wait until the caller's chunk is the only one out, then call fn(arg)
 * under the feed's lock (what the other thread made is then seen). */
void kp_chunks_alone(struct kp_chunks *F, void (*fn)(void *), void *arg);
/* Whether a second thread was started. */
bool kp_chunks_shared(const struct kp_chunks *F);
/* The end: the number the next chunk would have had. */
uint64_t kp_chunks_free(struct kp_chunks *F);

#endif
