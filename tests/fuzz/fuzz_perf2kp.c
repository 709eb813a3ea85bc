/*
 * fuzz_perf2kp.c - libFuzzer target for perf2kp's parser
 * (common/conv_perf.c).
 *
 * The first byte picks the options; the rest is the input, read from a
 * memfd by its /proc path.  The parser must not crash, and what it
 * writes must be kp that the kp reader reads back to the same canonical
 * text (every frame a converter builds can be written and read).
 */
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

static void
convert(struct kp_agg *agg, struct kp_input *in, unsigned flags,
	bool *rejected_out)
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
	*rejected_out = rejected;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
	kp_progname = "fuzz_perf2kp";
	kp_quiet = true;
	kp_meta_clear();
	agg = kp_agg_new();
	in = kp_input_open(path);
	convert(agg, in, flags, &rejected);
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
