/*
 * fuzz_bpftrace2kp.c - libFuzzer target for bpftrace2kp's parser
 * (common/conv_bpftrace.c).
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
	struct kp_bpftrace_opts o;

	memset(&o, 0, sizeof(o));
	o.keys = flags & 1;
	if (kp_bpftrace_convert(agg, in, &o, &why) < 0)
		rejected = true;
	return rejected;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return conv_fuzz_one(data, size, "fuzz_bpftrace2kp", convert);
}
