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

#endif
