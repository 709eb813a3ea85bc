/*
 * input.h - fast line input (input.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_INPUT_H
#define KP_INPUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

struct kp_input;

/* "-" or NULL is stdin.  Cannot open: message and exit 2. */
struct kp_input *kp_input_open(const char *path);
/*
 * The next line without its "\n" or "\r\n", NUL-terminated; *len is its
 * length (the line may itself contain NUL bytes).  NULL at end of input.
 * The pointer is valid until the next call.  A read error is fatal.
 */
char *kp_input_getline(struct kp_input *in, size_t *len);
unsigned long kp_input_lineno(const struct kp_input *in);
/* The line kp_input_getline returned last had no newline (end of input). */
bool kp_input_partial(const struct kp_input *in);
const char *kp_input_name(const struct kp_input *in);
/*
 * A skipped input line: "prog: FILE:LINE: why" for the first few, then
 * counted silently (kp_finish prints the total).
 */
void kp_input_skip(struct kp_input *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A fatal problem with the input: "prog: FILE:LINE: why", exit 2. */
_Noreturn void kp_input_die(struct kp_input *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The first bytes of the input, without consuming them (format checks). */
size_t kp_input_peek(struct kp_input *in, const char **p);
/*
 * The unread bytes already in the buffer, without reading more: *p and
 * their count (0 at end of input or when the buffer is used up; the next
 * kp_input_getline reads on).  A parser that recognises whole lines there
 * (a repeated block of them) passes over them with kp_input_consume.
 */
size_t kp_input_buffered(const struct kp_input *in, const char **p);
/*
 * At least n unread bytes in the buffer (fewer only at end of input):
 * *p and their count.  For binary input (perf.data), with
 * kp_input_consume(in, n, 0).
 */
size_t kp_input_need(struct kp_input *in, size_t n, const char **p);
/* The file descriptor (pread of a binary file's other parts). */
int kp_input_fd(const struct kp_input *in);
/* Consume n buffered bytes: whole lines, `lines` of them. */
void kp_input_consume(struct kp_input *in, size_t n, unsigned long lines);
void kp_input_close(struct kp_input *in);
/* The kp_input_skip calls on this input. */
unsigned long kp_input_skips(const struct kp_input *in);

/*
 * A part of in, read by one of several threads: the bytes buf[0..len)
 * (the caller's, not copied or freed: it keeps them until the part is
 * joined), the lines that follow in's (or another such part's) in the
 * whole input.  Its line numbers count from its start, and its skipped
 * lines are kept, not said (nor counted in kp_skipped), for
 * kp_input_join, which must join the parts in their order; a fatal
 * message (kp_input_die) is not for a part, which cannot name its line
 * in the whole input.  A last line without a newline is the input's.
 * buf[len] must be writable (kp_input_getline ends each line with a NUL
 * where its newline was).
 */
struct kp_input *kp_input_mem(const struct kp_input *in, char *buf,
			      size_t len);
/*
 * Once in is read up to part: part's skipped lines said and counted, in
 * order, with their lines in the whole input; in's line count continued
 * through part's; part closed.
 */
void kp_input_join(struct kp_input *in, struct kp_input *part);

#endif /* KP_INPUT_H */
