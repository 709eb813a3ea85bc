/*
 * writer.h - the canonical kp writer (writer.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_WRITER_H
#define KP_WRITER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frame.h"
#include "agg.h"
#include "meta.h"

/* One frame line, canonical (man/kp.5), with its newline. */
void kp_write_frame(FILE *out, const struct kp_frame *f);
/* All metadata lines. */
void kp_write_meta(FILE *out);
/* "!", the frames, the count line.  The frames are kp_frame_intern's
 * (an agg's are): the line of one written before is copied. */
void kp_write_stack(FILE *out, const struct kp_stack *st);
/* The final "!" that marks a complete stream. */
void kp_write_end(FILE *out);
/* Metadata, every stack of agg in its order, and the final "!". */
void kp_write_agg(FILE *out, struct kp_agg *agg);

#endif /* KP_WRITER_H */
