/*
 * kp.h - the shared library of the kp filters.
 *
 * The core of common/, one header a module, all included here: error
 * conventions and memory (util.h), -o FILE (output.h), line input
 * (input.h), the string interner (strtab.h), the frame and stack model
 * (frame.h), metadata (meta.h), the kp reader and writer (reader.h,
 * writer.h: the only code that parses or prints kp frame lines) and
 * stack aggregation (agg.h).  A filter includes kp.h; a module of
 * common/ may include just the headers it uses.  The contract the
 * format follows is man/kp.5.
 *
 * Conventions: exported names are kp_object_verb; the library never
 * prints to stdout; a fatal error (out of memory, a read error) prints
 * "prog: what: strerror" and exits 2, so callers never see NULL from the
 * allocating functions.
 */
#ifndef KP_H
#define KP_H

#include "util.h"
#include "output.h"
#include "input.h"
#include "strtab.h"
#include "frame.h"
#include "meta.h"
#include "reader.h"
#include "agg.h"
#include "writer.h"

#endif /* KP_H */
