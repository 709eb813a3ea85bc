/*
 * fuzz_perf2kp.c - libFuzzer target for perf2kp's parser
 * (common/conv_perf.c).
 *
 * The first byte picks the options; the rest is the input.  What is
 * checked is in conv_fuzz.h, and here: the input with CRLF line ends
 * converts to the same stacks, sample count and skipped lines (perf2kp
 * reads a frame line it read before as its record, which a line ending
 * in "\r" never is, and reads CRLF text, which has no empty line to cut
 * it at, on one thread: the two runs compare those paths with the plain
 * ones).  A third run reads the input on two threads in chunks of 64
 * bytes (cut where a sample header follows an empty line, else at a
 * line's end): the same stacks, samples and skipped lines again.  A
 * fourth writes the stacks made kp_agg stacks first (kp_perf_flush, as
 * before a perf.data is converted): the same bytes as perf2kp's own
 * writer of the text's stacks.
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
	o->functions = flags & 0x80;
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
	kp_perf_flush(&evs); /* the stacks, in agg to be read back */
	kp_perf_events_free(&evs);
	return rejected;
}

/* perf2kp's conversion of perf script text (conv_fuzz_run): on two
 * threads, in chunks of 64 bytes, if halves. */
static struct kp_agg *
convert_events(struct kp_agg *agg, struct kp_input *in, unsigned flags,
	       bool halves, struct kp_perf_events *evs)
{
	struct kp_perf_opts o;
	const char *why;

	set_opts(&o, flags);
	o.split_min = halves;
	o.chunk = halves ? 64 : 0;
	if (kp_perf_convert(agg, in, &o, evs, &why) < 0)
		return NULL;
	return kp_perf_pick(&o, evs, agg);
}

/* The same, its stacks made the events' kp_agg stacks before the pick. */
static struct kp_agg *
convert_flushed(struct kp_agg *agg, struct kp_input *in, unsigned flags,
		bool halves, struct kp_perf_events *evs)
{
	struct kp_perf_opts o;
	const char *why;

	(void)halves;
	set_opts(&o, flags);
	if (kp_perf_convert(agg, in, &o, evs, &why) < 0)
		return NULL;
	kp_perf_flush(evs);
	return kp_perf_pick(&o, evs, agg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conv_run a, b, c, d;
	uint8_t *crlf;
	size_t i, n;

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
	a = conv_fuzz_run(data + 1, size - 1, data[0], false, convert_events);
	b = conv_fuzz_run(crlf, n, data[0], false, convert_events);
	if (a.kp && b.kp && !conv_run_same(&a, &b))
		abort(); /* CRLF lines and plain ones differ */
	c = conv_fuzz_run(data + 1, size - 1, data[0], true, convert_events);
	if (!conv_run_same(&a, &c))
		abort(); /* chunks on two threads and one thread differ */
	d = conv_fuzz_run(data + 1, size - 1, data[0], false, convert_flushed);
	if (!conv_run_same(&a, &d))
		abort(); /* the text's writer and kp_write_agg differ */
	free(a.kp);
	free(b.kp);
	free(c.kp);
	free(d.kp);
	free(crlf);
	return 0;
}
