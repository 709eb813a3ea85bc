/*
 * fuzz_reader.c - libFuzzer target for the kp reader and writer.
 *
 * Feeds the input through kp_reader (from a memfd, by its /proc path),
 * aggregates, writes canonical kp, reads that back and checks that the
 * canonical form is a fixed point: write(read(write(x))) == write(x).
 * It also reads the input with the reader's fast path and without
 * (kp_reader_fast), with no key and with keys that ignore addresses:
 * the records, their line numbers and the lines skipped must be the
 * same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kp.h"
#include "name_key.h"

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

/* The records of path and where they end, and the lines skipped. */
static char *
records(const char *path, bool fast, size_t *len)
{
	struct kp_reader *rd;
	const struct kp_stack *st;
	const uint32_t *ids;
	unsigned long nrec;
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, len);
	size_t i;

	if (!mem)
		abort();
	kp_reader_fast = fast;
	kp_skipped = 0;
	kp_meta_clear();
	rd = kp_reader_open(path);
	name_key_set(rd);
	for (nrec = 1; (st = kp_reader_next(rd)) != NULL; nrec++) {
		ids = kp_reader_ids(rd);
		fprintf(mem, "%lu %llu:", kp_input_lineno(kp_reader_input(rd)),
			(unsigned long long)st->count);
		for (i = 0; i < st->n; i++) {
			if (ids[i] != st->frames[i]->id)
				abort();
			fprintf(mem, " %p", (const void *)st->frames[i]);
		}
		fputc('\n', mem);
		name_key_after(rd, nrec);
	}
	fprintf(mem, "%lu %lu %zu\n", kp_input_lineno(kp_reader_input(rd)),
		kp_skipped, kp_meta_count());
	kp_reader_close(rd);
	fclose(mem);
	kp_reader_fast = true;
	kp_skipped = 0;
	kp_meta_clear();
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
	for (name_keyed = 0; name_keyed < NAME_KEYS; name_keyed++) {
		a = records(path, true, &alen);
		b = records(path, false, &blen);
		if (alen != blen || memcmp(a, b, alen) != 0)
			abort(); /* the fast path read something else */
		free(a);
		free(b);
	}
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
