/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data reader
 * (common/perfdata.c): an arbitrary file, in file mode or pipe mode
 * (its first 16 bytes say which), compressed records included, must be
 * read to its end or refused with a message, never crash or read out of
 * bounds.  Seeds in tests/fuzz/corpus/fuzz_perfdata/ are small real
 * captures of this machine (file mode, pipe mode, -z, two events,
 * --call-graph dwarf, a tracepoint, a user command) and truncated copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct kp_pd_info *info;
	struct kp_input *in;
	struct kp_pd_rec r;
	struct kp_pd *pd;
	const char *why;
	uint64_t sum = 0, samples = 0, done, total;
	char path[64];
	size_t i;
	int fd, st;

	if ((fd = memfd_create("kp-fuzz", 0)) < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	kp_progname = "fuzz_perfdata";
	kp_quiet = true;
	in = kp_input_open(path);
	if (kp_pd_is(in) && (pd = kp_pd_open(in, &why)) != NULL) {
		while ((st = kp_pd_next(pd, &r)) > 0) {
			/* touch what a converter reads */
			for (i = 0; i < r.nchain; i++)
				sum += r.chain[i];
			for (i = 0; i < r.nregs; i++)
				sum += r.regs[i];
			if (r.stack_dyn)
				sum += r.stack[r.stack_dyn - 1];
			if (r.raw_size)
				sum += r.raw[r.raw_size - 1];
			if (r.path)
				sum += strlen(r.path);
			if (r.comm)
				sum += r.comm[r.comm_len];
			if (r.type == PERF_RECORD_SAMPLE && r.ev >= 0) {
				if ((size_t)r.ev >= kp_pd_nevents(pd))
					abort();
				samples++;
			}
		}
		if (st < 0 && !*kp_pd_error(pd))
			abort(); /* an error says what */
		for (i = 0; i < kp_pd_nevents(pd); i++) {
			struct kp_pd_event *e = kp_pd_event(pd, i);

			if (!e->name)
				abort();
			samples -= e->nsamples;
		}
		if (st == 0 && samples != 0)
			abort(); /* every sample counted in its event */
		info = kp_pd_info(pd);
		if (info->cmdline)
			sum += strlen(info->cmdline);
		kp_pd_progress(pd, &done, &total);
		kp_pd_close(pd);
	}
	kp_input_close(in);
	close(fd);
	return sum == 42 ? 0 : 0;
}
