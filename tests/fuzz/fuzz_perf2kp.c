/*
 * fuzz_perf2kp.c - libFuzzer target for perf2kp's parser
 * (common/conv_perf.c).
 *
 * The first byte picks the options; the rest is the input.  What is
 * checked is in conv_fuzz.h.
 */
#include "conv_fuzz.h"

static bool
convert(struct kp_agg *agg, struct kp_input *in, unsigned flags)
{
	const char *why;
	bool rejected = false;
	struct kp_perf_opts o;

	memset(&o, 0, sizeof(o));
	o.proc = flags & 3;
	o.space = (flags >> 2) % 3;
	o.period = flags & 0x10;
	o.inline_flag = flags & 0x20;
	o.raw_names = flags & 0x40;
	if (kp_perf_convert(agg, in, &o, &why) < 0)
		rejected = true;
	kp_perf_opts_free(&o);
	return rejected;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return conv_fuzz_one(data, size, "fuzz_perf2kp", convert);
}
