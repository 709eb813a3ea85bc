/*
 * output.h - "-o FILE", the whole file or none of it (output.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_OUTPUT_H
#define KP_OUTPUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/*
 * "-o FILE": NULL or "-" is stdout.  Otherwise a temporary file beside
 * FILE (or beside the target of FILE, a symbolic link of the caller's:
 * a link owned by another user is refused), renamed over it by
 * kp_output_finish; an existing device or FIFO is written directly.
 * Cannot create: message and exit 2.  A fatal exit or signal before
 * kp_output_finish removes the temporary file and leaves FILE as it was.
 */
FILE *kp_output_open(const char *path);
/*
 * The end of a filter that wrote to fp (from kp_output_open): flush,
 * sync and close fp; when all went well rename it over FILE, else report
 * the write error and remove it (FILE keeps its old contents); then
 * kp_finish().  Returns the exit status.
 */
int kp_output_finish(FILE *fp, const char *path);

#endif /* KP_OUTPUT_H */
