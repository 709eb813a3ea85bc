/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data reader
 * (common/perfdata.c) and converter (common/perfdata_conv.c).
 *
 * The first byte picks perf2kp's options; the rest is a file, in file
 * mode or pipe mode (its first 16 bytes say which), compressed records
 * included.  The reader must read it to its end or refuse it with a
 * message, never crash or read out of bounds; every sample it returns
 * belongs to an event and is counted there.  The converter then runs on
 * it (no kernel symbols: --kallsyms names no file) and what it writes
 * must be kp that reads back the same (conv_fuzz.h).  Then it runs
 * twice more, on one thread and on two (the records read on one, the
 * addresses named on the other: common/perfdata_conv.c, "the naming
 * thread"): the same kp, samples and skipped records, or both refuse.
 * Seeds in
 * tests/fuzz/corpus/fuzz_perfdata/ are small real captures of this
 * machine (file mode, pipe mode, -z, two events, --call-graph dwarf, a
 * tracepoint, a user command), truncated copies, and crashers found.
 */
#include "conv_fuzz.h"
#include "perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reader alone, on the file at path. */
static void
read_all(const char *path)
{
	struct kp_input *in = kp_input_open(path);
	uint64_t sum = 0, samples = 0, done, total;
	struct kp_pd_rec r;
	struct kp_pd *pd;
	const char *why;
	size_t i;
	int st;

	if (!kp_pd_is(in) || (pd = kp_pd_open(in, &why)) == NULL) {
		kp_input_close(in);
		return;
	}
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
			sum += (unsigned char)r.comm[r.comm_len];
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
	kp_pd_progress(pd, &done, &total);
	kp_pd_close(pd);
	kp_input_close(in);
	if (sum == 42 && done == 42)
		fputc('\n', stderr); /* keep the reads */
}

/* The options the first byte picks. */
static void
set_opts(struct kp_perf_opts *o, struct kp_pd_opts *pdo, unsigned flags)
{
	memset(o, 0, sizeof(*o));
	memset(pdo, 0, sizeof(*pdo));
	o->proc = flags & 3;
	o->space = (flags >> 2) % 3;
	o->period = flags & 0x10;
	o->raw_names = flags & 0x20;
	pdo->no_demangle = flags & 0x40;
	o->functions = flags & 0x80;
	pdo->perf = o;
	pdo->kallsyms = "/nonexistent/kallsyms";
	pdo->keep_going = true;
}

static bool
convert(struct kp_agg *agg, struct kp_input *in, unsigned flags)
{
	struct kp_perf_opts o;
	struct kp_pd_opts pdo;
	struct kp_perf_events evs = { 0 };
	const char *why;
	int ret;

	set_opts(&o, &pdo, flags);
	if (!kp_pd_is(in))
		return true;
	ret = kp_perfdata_convert(agg, in, &pdo, &evs, &why);
	kp_perf_events_free(&evs);
	return ret < 0;
}

/* perf2kp's conversion of a perf.data (conv_fuzz_run), on two threads
 * (a naming thread) if halves. */
static struct kp_agg *
convert_events(struct kp_agg *agg, struct kp_input *in, unsigned flags,
	       bool halves, struct kp_perf_events *evs)
{
	struct kp_perf_opts o;
	struct kp_pd_opts pdo;
	const char *why;

	set_opts(&o, &pdo, flags);
	pdo.split_min = halves;
	if (!kp_pd_is(in) || kp_perfdata_convert(agg, in, &pdo, evs, &why) < 0)
		return NULL;
	return kp_perf_pick(&o, evs, agg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conv_run a, b;
	char path[64];
	int fd;

	if (size < 1)
		return 0;
	fd = memfd_with(data + 1, size - 1, path, sizeof(path));
	kp_progname = "fuzz_perfdata";
	kp_quiet = true;
	read_all(path);
	close(fd);
	conv_fuzz_one(data, size, "fuzz_perfdata", convert);
	a = conv_fuzz_run(data + 1, size - 1, data[0], false, convert_events);
	b = conv_fuzz_run(data + 1, size - 1, data[0], true, convert_events);
	if (!conv_run_same(&a, &b))
		abort(); /* two threads and one differ */
	free(a.kp);
	free(b.kp);
	return 0;
}
