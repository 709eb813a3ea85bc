/*
 * fuzz_fold2kp.c - libFuzzer target for the folded-stack parser that
 * fold2kp uses (kp_folded_parse in common/profile.c).
 *
 * Each input line goes through the parser; accepted stacks go into an
 * aggregation, which is written as kp and read back by the kp reader.
 * The property fold2kp promises: what it accepts, kp holds unchanged, so
 * the read-back stacks are the same frames (interned pointers) with the
 * same counts, in the same order; and every accepted frame name is a
 * piece of its line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/kp-fuzz-fold-XXXXXX";
	struct kp_folded *fd = kp_folded_new();
	struct kp_agg *a = kp_agg_new(), *b = kp_agg_new();
	const struct kp_frame *const *frames;
	const char *why;
	const char *s = (const char *)data, *e = s + size, *nl;
	uint64_t count;
	size_t n, i, j;
	char *line;
	FILE *fp;
	int tmp;

	kp_progname = "fuzz_fold2kp";
	kp_quiet = true;
	kp_refuse_foreign = false; /* any bytes: read on */
	while (s < e) {
		nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl)
			nl = e;
		line = kp_xstrndup(s, (size_t)(nl - s));
		if (kp_folded_parse(fd, line, (size_t)(nl - s), &frames, &n,
				    &count, &why) == 0) {
			for (i = 0; i < n; i++)
				if (!memmem(line, (size_t)(nl - s),
					    frames[i]->sym,
					    strlen(frames[i]->sym)))
					abort(); /* a name not from the line */
			kp_agg_add(a, frames, n, count);
		} else if (!why || !*why) {
			abort(); /* a rejection must say why */
		}
		free(line);
		s = nl + (nl < e);
	}

	tmp = mkstemp(path);
	if (tmp < 0 || !(fp = fdopen(tmp, "w")))
		abort();
	kp_write_agg(fp, a);
	if (fclose(fp) != 0)
		abort();
	kp_agg_read(b, path);
	unlink(path);
	if (kp_agg_len(a) != kp_agg_len(b))
		abort();
	for (i = 0; i < kp_agg_len(a); i++) {
		const struct kp_stack *x = kp_agg_get(a, i);
		const struct kp_stack *y = kp_agg_get(b, i);

		if (x->n != y->n || x->count != y->count)
			abort();
		for (j = 0; j < x->n; j++)
			if (x->frames[j] != y->frames[j])
				abort(); /* kp did not hold the name unchanged */
	}
	kp_agg_free(a);
	kp_agg_free(b);
	kp_folded_free(fd);
	return 0;
}
