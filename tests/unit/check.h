/* check.h - the CHECK macro and counters of kp's C unit tests */
#ifndef KP_CHECK_H
#define KP_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond)                                                          \
	do {                                                                 \
		checks++;                                                    \
		if (!(cond)) {                                               \
			failures++;                                          \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",         \
				__FILE__, __LINE__, #cond);                  \
		}                                                            \
	} while (0)

/* The last line of a unit test: the figures, and its exit status. */
#define CHECK_DONE()                                                         \
	(printf("%d checks, %d failed\n", checks, failures), failures != 0)

#endif
