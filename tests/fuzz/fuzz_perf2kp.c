/*
 * fuzz_perf2kp.c - libFuzzer target for perf2kp's parser
 * (common/conv_perf.c).
 *
 * The first byte picks the options; the rest is the input.  What is
 * checked is in conv_fuzz.h, and here: the input with CRLF line ends
 * converts to the same stacks, sample count and skipped lines.  perf2kp
 * reads a sample's frame lines as one cached block when they end in an
 * empty line, which CRLF text never has: the two runs compare the block
 * path with the line-by-line one.  A third run splits the input at a
 * sample header near its middle and reads the halves on two threads
 * (what perf2kp does with a big file): the same stacks, samples and
 * skipped lines again.
 */
#include "conv_fuzz.h"

/* The options the first byte picks. */
static void
set_opts(struct kp_perf_opts *o, unsigned flags)
{
	memset(o, 0, sizeof(*o));
	o->proc = flags & 3;
	o->space = (flags >> 2) % 3;
	o->period = flags & 0x10;
	o->inline_flag = flags & 0x20;
	o->raw_names = flags & 0x40;
}

static bool
convert(struct kp_agg *agg, struct kp_input *in, unsigned flags)
{
	const char *why;
	bool rejected = false;
	struct kp_perf_opts o;
	struct kp_perf_events evs = { 0 };

	set_opts(&o, flags);
	if (kp_perf_convert(agg, in, &o, &evs, &why) < 0)
		rejected = true;
	kp_perf_events_free(&evs);
	return rejected;
}

/* Convert [p, p + n), split in two halves at its middle where it can
 * be if halves; the kp written, or NULL if refused. */
static char *
run(const uint8_t *p, size_t n, unsigned flags, bool halves, size_t *len,
    uint64_t *samples, unsigned long *skipped)
{
	char path[64], *out = NULL;
	struct kp_perf_opts o;
	struct kp_perf_events evs = { 0 };
	struct kp_agg *agg = kp_agg_new();
	struct kp_input *in;
	const char *why;
	int fd = memfd_with(p, n, path, sizeof(path));

	set_opts(&o, flags);
	o.split_min = halves;
	kp_skipped = 0;
	in = kp_input_open(path);
	if (kp_perf_convert(agg, in, &o, &evs, &why) == 0) {
		*samples = 0;
		for (size_t i = 0; i < evs.n; i++)
			*samples += evs.v[i].samples;
		agg = kp_perf_pick(&o, &evs, agg);
		out = write_kp(agg, len);
		*skipped = kp_skipped;
	}
	kp_input_close(in);
	close(fd);
	kp_perf_events_free(&evs);
	kp_agg_free(agg);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *crlf;
	char *a, *b, *c;
	size_t alen = 0, blen = 0, clen = 0, i, n;
	uint64_t as = 0, bs = 0, cs = 0;
	unsigned long ak = 0, bk = 0, ck = 0;

	conv_fuzz_one(data, size, "fuzz_perf2kp", convert);
	if (size < 1 || memchr(data + 1, '\r', size - 1))
		return 0;
	crlf = malloc(2 * size);
	if (!crlf)
		abort();
	for (i = 1, n = 0; i < size; i++) {
		if (data[i] == '\n')
			crlf[n++] = '\r';
		crlf[n++] = data[i];
	}
	a = run(data + 1, size - 1, data[0], false, &alen, &as, &ak);
	b = run(crlf, n, data[0], false, &blen, &bs, &bk);
	if (a && b &&
	    (alen != blen || memcmp(a, b, alen) != 0 || as != bs || ak != bk))
		abort(); /* the block path and the line path differ */
	c = run(data + 1, size - 1, data[0], true, &clen, &cs, &ck);
	if ((a == NULL) != (c == NULL) ||
	    (a && (alen != clen || memcmp(a, c, alen) != 0 || as != cs ||
		   ak != ck)))
		abort(); /* two halves on two threads and one differ */
	free(a);
	free(b);
	free(c);
	free(crlf);
	return 0;
}
