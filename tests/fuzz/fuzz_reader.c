/*
 * fuzz_reader.c - libFuzzer target for the kp reader and writer.
 *
 * Feeds the input through kp_reader (from a memfd, by its /proc path),
 * aggregates, writes canonical kp, reads that back and checks that the
 * canonical form is a fixed point: write(read(write(x))) == write(x).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kp.h"

static char *
canon(const char *path, size_t *len)
{
	struct kp_agg *agg = kp_agg_new();
	char *buf = NULL;
	FILE *mem;

	kp_agg_read(agg, path);
	mem = open_memstream(&buf, len);
	if (!mem)
		abort();
	kp_write_agg(mem, agg);
	fclose(mem);
	kp_agg_free(agg);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	char *a, *b;
	size_t alen, blen;
	int fd = memfd_create("kp-fuzz", 0);

	if (fd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	kp_progname = "fuzz_reader";
	kp_quiet = true;
	kp_refuse_foreign = false; /* any bytes: read on */
	kp_meta_clear();
	a = canon(path, &alen);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, a, alen, 0) != (ssize_t)alen)
		abort();
	b = canon(path, &blen);
	if (alen != blen || memcmp(a, b, alen) != 0)
		abort(); /* canonical output must be a fixed point */
	close(fd);
	free(a);
	free(b);
	return 0;
}
