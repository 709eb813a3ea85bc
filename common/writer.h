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
/*
 * Frame lines made in a caller's buffer, for a writer of many frames of
 * few functions (idagg.c).  kp_line_room: the room f's line may take;
 * kp_line_frame puts it at p and returns its end.  kp_line_parts makes
 * what a function's lines hold of it, once (head: " : " and the symbol,
 * quoted if it must be; tail: " [MODULE]"; free(lp->head) frees both;
 * 16 bytes are readable after the tail: kp_copy16);
 * kp_line_put then puts the line of a frame of that function at p
 * (room: 64 + nhead + ntail) and returns its end: flags KP_F_ADDR,
 * KP_F_OFF (only with a symbol) and KP_F_INLINE.
 */
struct kp_line_parts {
	char *head, *tail;
	uint32_t nhead, ntail;
	bool sym; /* the function has a symbol */
};
size_t kp_line_room(const struct kp_frame *f);
char *kp_line_frame(char *p, const struct kp_frame *f);
void kp_line_parts(struct kp_line_parts *lp, const char *sym,
		   const char *module);
char *kp_line_put(char *p, uint64_t addr, uint64_t off, unsigned flags,
		  const struct kp_line_parts *lp);
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
