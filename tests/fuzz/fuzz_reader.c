/*
 * fuzz_reader.c - libFuzzer target for the kp reader and writer.
 *
 * Feeds the input through kp_reader (via a pipe-less temporary file),
 * aggregates, writes canonical kp, reads that back and checks that the
 * canonical form is a fixed point: write(read(write(x))) == write(x).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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
	char path[] = "/tmp/kp-fuzz-XXXXXX";
	char *a, *b;
	size_t alen, blen;
	int fd = mkstemp(path);

	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	kp_progname = "fuzz_reader";
	kp_quiet = true;
	kp_meta_clear();
	a = canon(path, &alen);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, a, alen) != (ssize_t)alen)
		abort();
	close(fd);
	b = canon(path, &blen);
	if (alen != blen || memcmp(a, b, alen) != 0)
		abort(); /* canonical output must be a fixed point */
	unlink(path);
	free(a);
	free(b);
	return 0;
}
