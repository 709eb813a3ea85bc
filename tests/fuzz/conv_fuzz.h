/*
 * conv_fuzz.h - what the converters' fuzz targets share: the converter
 * must not crash, and what it writes must be kp that the kp reader reads
 * back to the same canonical text (every frame a converter builds can be
 * written and read).  The input is read from a memfd by its /proc path.
 */
#ifndef KP_CONV_FUZZ_H
#define KP_CONV_FUZZ_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conv.h"

static char *
write_kp(struct kp_agg *agg, size_t *len)
{
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, len);

	if (!mem)
		abort();
	kp_write_agg(mem, agg);
	fclose(mem);
	return buf;
}

static int
memfd_with(const void *p, size_t n, char *path, size_t size)
{
	int fd = memfd_create("kp-fuzz", 0);

	if (fd < 0)
		abort();
	snprintf(path, size, "/proc/self/fd/%d", fd);
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	return fd;
}

/*
 * One fuzz input for a converter: the first byte is the options, the
 * rest the input.  convert() returns true when the converter refused
 * the input (a file of another kind).
 */
static int
conv_fuzz_one(const uint8_t *data, size_t size, const char *name,
	      bool (*convert)(struct kp_agg *agg, struct kp_input *in,
			      unsigned flags))
{
	char path[64], path2[64];
	struct kp_agg *agg, *back;
	struct kp_input *in;
	char *a, *b;
	size_t alen, blen;
	unsigned flags;
	bool rejected;
	int fd, fd2;

	if (size < 1)
		return 0;
	flags = data[0];
	fd = memfd_with(data + 1, size - 1, path, sizeof(path));
	kp_progname = name;
	kp_quiet = true;
	kp_meta_clear();
	agg = kp_agg_new();
	in = kp_input_open(path);
	rejected = convert(agg, in, flags);
	kp_input_close(in);
	close(fd);
	if (rejected) {
		kp_agg_free(agg);
		return 0;
	}
	a = write_kp(agg, &alen);
	kp_agg_free(agg);
	/* read it back: the same canonical text */
	fd2 = memfd_with(a, alen, path2, sizeof(path2));
	kp_meta_clear();
	back = kp_agg_new();
	kp_agg_read(back, path2);
	close(fd2);
	b = write_kp(back, &blen);
	kp_agg_free(back);
	if (alen != blen || memcmp(a, b, alen) != 0)
		abort(); /* a converter built a frame kp cannot hold */
	free(a);
	free(b);
	return 0;
}

/*
 * One run of perf2kp's conversion (text or perf.data) as perf2kp runs it:
 * the kp written (metadata too) or NULL if the input was refused, with
 * the samples of every event and the lines or records skipped.
 */
struct conv_run {
	char *kp;
	size_t len;
	uint64_t samples;
	unsigned long skipped;
};

/* conv: convert in under the options flags (on two threads if halves:
 * text in small chunks), its events into evs; the aggregation to write
 * (kp_perf_pick's, with the text's stacks kept in evs: kp_perf_write),
 * or NULL if refused. */
typedef struct kp_agg *(*conv_events_fn)(struct kp_agg *agg,
					 struct kp_input *in, unsigned flags,
					 bool halves, struct kp_perf_events *evs);

static inline struct conv_run
conv_fuzz_run(const void *p, size_t n, unsigned flags, bool halves,
	      conv_events_fn conv)
{
	struct conv_run r = { 0 };
	struct kp_perf_events evs = { 0 };
	struct kp_agg *agg = kp_agg_new(), *kept;
	struct kp_input *in;
	char path[64];
	int fd = memfd_with(p, n, path, sizeof(path));

	kp_skipped = 0;
	kp_meta_clear();
	in = kp_input_open(path);
	if ((kept = conv(agg, in, flags, halves, &evs)) != NULL) {
		FILE *mem = open_memstream(&r.kp, &r.len);

		agg = kept;
		for (size_t i = 0; i < evs.n; i++)
			r.samples += evs.v[i].samples;
		/* as perf2kp writes it: the text's stacks after agg's */
		if (!mem)
			abort();
		kp_perf_write(mem, &evs, agg);
		fclose(mem);
		r.skipped = kp_skipped;
	}
	kp_input_close(in);
	close(fd);
	kp_perf_events_free(&evs);
	kp_agg_free(agg);
	return r;
}

/* The same kp, samples and skipped count, or both refused. */
static inline bool
conv_run_same(const struct conv_run *a, const struct conv_run *b)
{
	if (!a->kp || !b->kp)
		return !a->kp && !b->kp;
	return a->len == b->len && memcmp(a->kp, b->kp, a->len) == 0 &&
	       a->samples == b->samples && a->skipped == b->skipped;
}

#endif
