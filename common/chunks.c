/*
 * chunks.c - a text input handed out in chunks of whole records to one
 * or two threads: see chunks.h.
 *
 * The threads take the next chunk in turn, under the feed's lock: what
 * was read past the last cut (the carry) starts the next chunk, read on
 * to the size aimed at, then cut at the last place the caller's cut
 * function finds.  The finished chunks wait in `done' for those before
 * them, then are joined to the input in order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunks.h"
#include "util.h"

#define MAX_LINE (256u << 20) /* a longer line is fatal */

struct kp_chunks {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct kp_input *in; /* the input: the parts are joined to it */
	int fd;
	char *carry; /* read, not yet handed out */
	size_t ncarry, carrycap;
	bool eof;
	int owner;   /* the thread the next chunk is for (a chunk cut at a
		      * line's end), or -1: any */
	size_t size; /* the bytes a chunk aims at */
	uint64_t seq, joined;
	struct kp_input **done; /* finished, waiting for those before */
	size_t ndone;
	int busy;     /* chunks handed out and not finished */
	int nw;	      /* threads that may read (1 or 2) */
	bool tried;   /* the second thread's start was called */
	bool shared;  /* the second thread was started */
	kp_chunk_cut_fn cut;
	kp_chunk_start_fn start;
	void *arg;
};

struct kp_chunks *
kp_chunks_new(struct kp_input *in, size_t size, int nw, uint64_t seq,
	      kp_chunk_cut_fn cut, kp_chunk_start_fn start, void *arg)
{
	struct kp_chunks *F = kp_xcalloc(1, sizeof(*F));
	const char *p;
	size_t n;

	pthread_mutex_init(&F->mu, NULL);
	pthread_cond_init(&F->cv, NULL);
	F->in = in;
	F->fd = kp_input_fd(in);
	F->owner = -1;
	F->seq = seq;
	F->size = size;
	F->nw = nw;
	F->cut = cut;
	F->start = start;
	F->arg = arg;
	/* what the input read first (a kind check) */
	n = kp_input_buffered(in, &p);
	F->carry = kp_xmalloc(n + 1);
	memcpy(F->carry, p, n);
	F->ncarry = F->carrycap = n;
	kp_input_consume(in, n, 0);
	return F;
}

/* More of the input after buf[0 .. *len), up to cap bytes in all. */
static void
feed_read(struct kp_chunks *F, char *buf, size_t *len, size_t cap)
{
	ssize_t n;

	while (!F->eof && *len < cap) {
		n = read(F->fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			kp_die("read error on %s:", kp_input_name(F->in));
		if (n == 0)
			F->eof = true;
		*len += (size_t)n;
	}
}

bool
kp_chunks_next(struct kp_chunks *F, int lane, struct kp_chunk *c)
{
	size_t len, cut, cap;
	bool fresh, cut_short = false, last = false;

	pthread_mutex_lock(&F->mu);
	while (F->owner >= 0 && F->owner != lane)
		pthread_cond_wait(&F->cv, &F->mu);
	if (F->eof && !F->ncarry) {
		pthread_mutex_unlock(&F->mu);
		return false;
	}
	fresh = F->owner < 0;
	cap = F->size > F->ncarry ? F->size : F->ncarry;
	if (c->cap < cap + KP_CHUNK_PAD) {
		free(c->buf);
		c->cap = cap + KP_CHUNK_PAD;
		c->buf = kp_xmalloc(c->cap);
		kp_populate(c->buf, c->cap);
	}
	len = F->ncarry;
	memcpy(c->buf, F->carry, len);
	F->ncarry = 0;
	feed_read(F, c->buf, &len, cap);
	for (;;) {
		if (F->eof) {
			cut = len;
			last = true;
			break;
		}
		if ((cut = F->cut(c->buf, len)) > 0)
			break;
		/* no place to cut: whole lines, and this thread goes on */
		const char *nl = memrchr(c->buf, '\n', len);

		if (nl) {
			cut = (size_t)(nl + 1 - c->buf);
			cut_short = true;
			break;
		}
		/* not one whole line (it starts the buffer): read more */
		if (len > MAX_LINE) {
			/* its number: the chunks before it joined */
			while (F->busy)
				pthread_cond_wait(&F->cv, &F->mu);
			kp_input_consume(F->in, 0, 1);
			kp_input_die(F->in, "line longer than %u MiB",
				     MAX_LINE >> 20);
		}
		c->cap = 2 * c->cap < MAX_LINE + 1 + KP_CHUNK_PAD
				 ? 2 * c->cap
				 : MAX_LINE + 1 + KP_CHUNK_PAD;
		c->buf = kp_xrealloc(c->buf, c->cap);
		feed_read(F, c->buf, &len, c->cap - KP_CHUNK_PAD);
	}
	/* what a reader may read past the data: defined bytes */
	memset(c->buf + len, 0, KP_CHUNK_PAD);
	if (len - cut > F->carrycap) {
		F->carrycap = len - cut + 4096;
		free(F->carry);
		F->carry = kp_xmalloc(F->carrycap);
	}
	memcpy(F->carry, c->buf + cut, len - cut);
	F->ncarry = len - cut;
	F->owner = cut_short ? lane : -1;
	c->seq = F->seq++;
	F->busy++;
	if (F->nw > 1 && !F->tried && !last) {
		/* a second thread reads the chunks after this one */
		F->tried = true;
		F->shared = F->start(F->arg);
		if (!F->shared)
			F->nw = 1;
	}
	pthread_cond_broadcast(&F->cv);
	pthread_mutex_unlock(&F->mu);
	c->in = kp_input_mem(F->in, c->buf, cut);
	c->len = cut;
	c->last = last;
	c->fresh = fresh;
	return true;
}

void
kp_chunks_done(struct kp_chunks *F, struct kp_chunk *c)
{
	size_t k;

	pthread_mutex_lock(&F->mu);
	k = (size_t)(c->seq - F->joined);
	if (k >= F->ndone) {
		F->done = kp_xrealloc(F->done, (k + 1) * sizeof(*F->done));
		memset(F->done + F->ndone, 0,
		       (k + 1 - F->ndone) * sizeof(*F->done));
		F->ndone = k + 1;
	}
	F->done[k] = c->in;
	c->in = NULL;
	while (F->ndone && F->done[0]) {
		kp_input_join(F->in, F->done[0]);
		memmove(F->done, F->done + 1, (F->ndone - 1) * sizeof(*F->done));
		F->ndone--;
		F->joined++;
	}
	F->busy--;
	pthread_cond_broadcast(&F->cv);
	pthread_mutex_unlock(&F->mu);
}

void
kp_chunks_alone(struct kp_chunks *F, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&F->mu);
	while (F->busy > 1)
		pthread_cond_wait(&F->cv, &F->mu);
	fn(arg);
	pthread_mutex_unlock(&F->mu);
}

bool
kp_chunks_shared(const struct kp_chunks *F)
{
	return F->shared;
}

uint64_t
kp_chunks_free(struct kp_chunks *F)
{
	uint64_t seq = F->seq;

	free(F->carry);
	free(F->done);
	pthread_mutex_destroy(&F->mu);
	pthread_cond_destroy(&F->cv);
	free(F);
	return seq;
}
