/*
 * fuzz-main.c - a plain main() for the fuzz targets: replays the files
 * named on the command line through LLVMFuzzerTestOneInput, so that
 * saved crashers and the seed corpus run as ordinary tests.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *fp = fopen(argv[i], "rb");
		uint8_t *buf;
		long n;

		if (!fp) {
			perror(argv[i]);
			return 2;
		}
		fseek(fp, 0, SEEK_END);
		n = ftell(fp);
		rewind(fp);
		buf = malloc(n > 0 ? (size_t)n : 1);
		if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			perror(argv[i]);
			return 2;
		}
		fclose(fp);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
		printf("replayed %s (%ld bytes)\n", argv[i], n);
	}
	return 0;
}
