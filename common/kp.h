/*
 * kp.h - the shared library of the kp filters.
 *
 * One header for everything in common/: error conventions, line input,
 * the string interner, the frame and stack model, the kp reader and
 * writer (the only code that parses or prints kp frame lines), stack
 * aggregation, and metadata.  The contract the format follows is
 * man/kp.5.
 *
 * Conventions: exported names are kp_object_verb; the library never
 * prints to stdout; a fatal error (out of memory, a read error) prints
 * "prog: what: strerror" and exits 2, so callers never see NULL from the
 * allocating functions.
 */
#ifndef KP_H
#define KP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses, shared by every filter (man/kp.5, EXIT STATUS). */
#define KP_EXIT_OK 0      /* success */
#define KP_EXIT_SKIPPED 1 /* output written, but input lines were skipped */
#define KP_EXIT_FATAL 2   /* cannot open, read, write, out of memory */
#define KP_EXIT_USAGE 64  /* bad command line */

/* ---- util.c: program name, messages, memory ---- */

extern const char *kp_progname;
/* When set, warnings and skipped-line messages are not printed (fuzzing). */
extern bool kp_quiet;

/*
 * Set kp_progname from argv[0], restore the default SIGPIPE action (so
 * that "kp-fold | head -1" ends quietly) and give stdout a large buffer.
 */
void kp_init(char **argv);

/* "prog: msg" on stderr; a format ending in ':' appends strerror(errno). */
void kp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then exit(KP_EXIT_FATAL). */
_Noreturn void kp_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* "prog: msg", a hint to run "prog -h", exit(KP_EXIT_USAGE). */
_Noreturn void kp_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

void *kp_xmalloc(size_t n);
void *kp_xcalloc(size_t n, size_t size);
void *kp_xrealloc(void *p, size_t n);
char *kp_xstrdup(const char *s);
char *kp_xstrndup(const char *s, size_t n);

/*
 * An open-addressing table of (hash, pointer) slots: linear probing, a
 * power-of-two size, at most half full.  Its owner probes it with its
 * own key comparison, from slot hash & (cap - 1) on to an empty slot
 * (p NULL).  Zero-initialise it before use.
 */
struct kp_slot {
	uint64_t hash;
	void *p;
};
struct kp_slots {
	struct kp_slot *tab;
	size_t cap, n;
};
/*
 * Room for one more entry: the table doubles (from `first` slots, a
 * power of two) once it is half full, so slot pointers taken before
 * this call are stale.
 */
void kp_slots_grow(struct kp_slots *t, size_t first);
static inline void
kp_slots_reserve(struct kp_slots *t, size_t first)
{
	if ((t->n + 1) * 2 > t->cap)
		kp_slots_grow(t, first);
}
/* The empty slot where an entry of hash h goes (after kp_slots_reserve);
 * the caller fills it and counts it in t->n. */
struct kp_slot *kp_slots_free_slot(struct kp_slots *t, uint64_t h);
void kp_slots_free(struct kp_slots *t);

/*
 * A pool: many small allocations of one owner (a converter's caches),
 * carved from large chunks and freed at once.  Zero-initialise the
 * struct before the first kp_pool_alloc.
 */
struct kp_pool {
	struct kp_pool_chunk *chunks;
	char *cur;
	size_t left;
};
/* n bytes, aligned for any use; out of memory is fatal. */
void *kp_pool_alloc(struct kp_pool *pool, size_t n);
/* Free everything allocated from the pool; it can be used again. */
void kp_pool_free(struct kp_pool *pool);

/*
 * Strict unsigned parse of s[0..len): base 10 or 16 (an optional 0x/0X
 * prefix is accepted for base 16).  Returns 0 on success, -1 when the
 * text is empty, holds another character, or overflows 64 bits (errno
 * is ERANGE then).
 */
int kp_parse_u64(const char *s, size_t len, int base, uint64_t *out);

/* Parse a command-line number (for -n, -d ...); usage error if bad. */
uint64_t kp_arg_u64(const char *opt, const char *arg);
double kp_arg_double(const char *opt, const char *arg);

/* 64-bit hash of a byte string (fast, not cryptographic). */
uint64_t kp_hash(const void *p, size_t len);
/*
 * A hash of a text line by its ends: the first 32 bytes, the last 16 and
 * the length (frame lines differ in their address at the start and in
 * their module at the end).  For caches that memcmp the whole line.
 */
uint64_t kp_hash_line(const char *s, size_t len);

/*
 * The number of input lines skipped so far across all inputs, and the
 * end of a filter: flush and check stdout (a write error is reported
 * and gives KP_EXIT_FATAL; EPIPE ends quietly), print a summary of the
 * skipped lines, and return the exit status to pass to exit().
 */
extern unsigned long kp_skipped;
int kp_finish(void);
/* Check a stream opened for output (fflush + ferror + fclose). */
int kp_close_output(FILE *fp, const char *name);
/* ---- output.c: "-o FILE", the whole file or none of it ---- */

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

/* ---- input.c: fast line input ---- */

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

/* ---- strtab.c: the string interner ---- */

/*
 * Each distinct string is stored once; equal strings get the same
 * pointer, so interned strings compare with ==.  The strings live until
 * the process ends.
 */
const char *kp_intern(const char *s, size_t len);
const char *kp_intern_str(const char *s);
size_t kp_intern_count(void);

/* ---- frame.c: the frame model and the frame-line syntax ---- */

enum {
	KP_F_ADDR = 1 << 0,    /* addr is known */
	KP_F_OFF = 1 << 1,     /* off is known */
	KP_F_SIZE = 1 << 2,    /* size is known */
	KP_F_INEXACT = 1 << 3, /* SystemTap's "(inexact)" */
	KP_F_INLINE = 1 << 4,  /* an inlined function at its caller's addr */
};

/*
 * One frame.  sym, module and file are interned (or NULL when unknown).
 * Without sym, off and size are relative to the module (SystemTap's
 * "0xADDR [kernel+0x10/0x20]").  Frames are interned too: two equal
 * frames are one pointer (kp_frame_intern), so a stack is an array of
 * frame pointers that hashes and compares as plain memory.
 */
struct kp_frame {
	uint64_t addr;
	uint64_t off;
	uint64_t size;
	const char *sym;
	const char *module;
	const char *file; /* source file, with line (kp-addr2sym -l) */
	uint32_t line;
	uint32_t flags;
};

/* Return the unique pointer for a frame equal to *f. */
const struct kp_frame *kp_frame_intern(const struct kp_frame *f);
/* Helper: intern a frame from parts (any of sym/module may be NULL). */
const struct kp_frame *kp_frame_make(uint64_t addr, unsigned flags,
				     const char *sym, const char *module);
size_t kp_frame_count(void);

/*
 * Parse one frame line (already stripped of its line end).  Returns 0
 * and fills *f (strings interned), or -1 with *why set to a static
 * description of what is wrong.
 */
int kp_frame_parse(const char *s, size_t len, struct kp_frame *f,
		   const char **why);

/* True for an x86-64 kernel-half address (0xffff800000000000 and up). */
static inline bool
kp_addr_is_kernel(uint64_t addr)
{
	return addr >= 0xffff800000000000ull;
}

/* True when the module is the kernel image (kernel, vmlinux*,
 * [kernel.kallsyms]). */
bool kp_module_is_vmlinux(const char *module);
/* True when the module names kernel code (the image or a module). */
bool kp_module_is_kernel(const char *module);

/*
 * The one name of time spent in user mode when user stacks are not
 * recorded (kp-sample without --user, perf2kp --kernel-only, kp-top
 * --by module): a frame of this symbol and no module.  man/kp.5.
 */
#define KP_USER_FRAME "[user]"

/*
 * The name of a frame as the folded format and the reports show it:
 * the symbol (with "+0xOFF" if want_off), else the address if want_addr,
 * else "[module]" or "[unknown]".  Writes into buf (grown as needed),
 * returns its length.
 */
size_t kp_frame_name(const struct kp_frame *f, bool want_off, bool want_addr,
		     char **buf, size_t *cap);

/* ---- stacks ---- */

/* A stack: frames leaf (innermost) first, and its count (or weight). */
struct kp_stack {
	const struct kp_frame **frames;
	size_t n;
	uint64_t count;
};

/* ---- meta.c: "# key: value" metadata ---- */

/*
 * Metadata lines read from inputs (or added by a filter) in order of
 * first appearance; a line equal to one already held is not added
 * twice.  kp_meta_set replaces the value of a key or appends it.
 */
void kp_meta_add_line(const char *line, size_t len);
void kp_meta_set(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The value of key (the text after "# key: "), or NULL. */
const char *kp_meta_get(const char *key);
size_t kp_meta_count(void);
/* Forget every metadata line (a fresh start, as for each fuzz input). */
void kp_meta_clear(void);
const char *kp_meta_line(size_t i); /* "# key: value", no newline */
/*
 * True when the period of event (a "# event:" value such as
 * "cpu-clock" or "task-clock:u") is in nanoseconds: the software clock
 * events.  The one place that rule is decided.
 */
bool kp_event_period_is_ns(const char *event);
/*
 * What the counts are, for every filter: with "# weight: period" on a
 * clock event (kp_event_period_is_ns) they are nanoseconds, and with
 * "# weight: off-cpu-ns" (kp-sample --off-cpu).
 */
bool kp_meta_counts_ns(void);
/* With "# weight: samples" on a clock event and a fixed "# period: N":
 * N, the nanoseconds each sample stands for; else 0. */
uint64_t kp_meta_clock_period(void);

/* ---- reader.c: the kp reader ---- */

struct kp_reader;

/* Open a kp (or SystemTap) stream; "-" is stdin.  Cannot open: exit 2. */
struct kp_reader *kp_reader_open(const char *path);
/*
 * kp_reader_open ends the program when the input is what a converter
 * reads, not kp (perf.data, perf script text, folded stacks: kp(5)),
 * unless this is false (the fuzz targets, which feed it any bytes).
 */
extern bool kp_refuse_foreign;
/*
 * The next record, or NULL at the end of the input.  The stack and its
 * frame array are valid until the next call.  Metadata lines go to
 * kp_meta_*; malformed records are skipped with kp_input_skip.
 */
const struct kp_stack *kp_reader_next(struct kp_reader *rd);
struct kp_input *kp_reader_input(struct kp_reader *rd);
void kp_reader_close(struct kp_reader *rd);

/* ---- agg.c: stack aggregation ---- */

struct kp_agg;

struct kp_agg *kp_agg_new(void);
/*
 * Add count samples of the stack frames[0..n) (leaf first).  Identical
 * stacks merge and their counts add.  Returns 0, or -1 if the sum would
 * overflow 64 bits (nothing is added then).
 */
int kp_agg_add(struct kp_agg *agg, const struct kp_frame *const *frames,
	       size_t n, uint64_t count);
/*
 * kp_agg_add for converters that read their own formats.  On overflow
 * the record is not added and the total is past 2^64 (it holds this
 * sum): the caller ends with kp_agg_check_total after the input.
 */
void kp_agg_add_or_skip(struct kp_agg *agg, struct kp_input *in,
			const struct kp_frame *const *frames, size_t n,
			uint64_t count);
/*
 * kp_agg_add_or_skip, returning the stack's entry (NULL if skipped): a
 * handle that stays valid, so that a caller which knows the same stack
 * comes again (a converter's cached block) adds to it with
 * kp_agg_add_again, without hashing the frames.
 */
struct kp_stack *kp_agg_add_entry(struct kp_agg *agg, struct kp_input *in,
				  const struct kp_frame *const *frames,
				  size_t n, uint64_t count);
/* Add count to an entry of agg's; on overflow, as above. */
void kp_agg_add_again(struct kp_agg *agg, struct kp_input *in,
		      struct kp_stack *st, uint64_t count);
/* Distinct stacks, in order of first appearance. */
size_t kp_agg_len(const struct kp_agg *agg);
const struct kp_stack *kp_agg_get(const struct kp_agg *agg, size_t i);
/* Sum of all counts (saturating at UINT64_MAX; see kp_agg_total_ok). */
uint64_t kp_agg_total(const struct kp_agg *agg);
bool kp_agg_total_ok(const struct kp_agg *agg);
/*
 * The rule of kp(5) for totals: past 2^64 (a sum of identical stacks
 * included) is fatal, "prog: NAME: the total count overflows 64 bits",
 * exit 2, before anything is written.  NAME "-" is "<stdin>".
 */
void kp_agg_check_total(const struct kp_agg *agg, const char *name);
/* Sort the stacks (qsort comparator on const struct kp_stack *const *). */
void kp_agg_sort(struct kp_agg *agg,
		 int (*cmp)(const void *, const void *));
/* Read a whole kp input into agg (convenience for analysis filters). */
void kp_agg_read(struct kp_agg *agg, const char *path);
/*
 * A new agg holding the files' records (no file: standard input); a
 * total over 64 bits is fatal (kp_agg_check_total), naming the input
 * that took it over.  kp_agg_read_summed is the same.
 */
struct kp_agg *kp_agg_read_files(int nfiles, char **files);
struct kp_agg *kp_agg_read_summed(int nfiles, char **files);
void kp_agg_free(struct kp_agg *agg);

/* ---- writer.c: the canonical kp writer ---- */

/* One frame line, canonical (man/kp.5), with its newline. */
void kp_write_frame(FILE *out, const struct kp_frame *f);
/* All metadata lines. */
void kp_write_meta(FILE *out);
/* "!", the frames, the count line. */
void kp_write_stack(FILE *out, const struct kp_stack *st);
/* The final "!" that marks a complete stream. */
void kp_write_end(FILE *out);
/* Metadata, every stack of agg in its order, and the final "!". */
void kp_write_agg(FILE *out, const struct kp_agg *agg);

#endif /* KP_H */
