/*
 * util.h - program name, messages, memory, exit statuses (util.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_UTIL_H
#define KP_UTIL_H

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

extern const char *kp_progname;
/* When set, warnings and skipped-line messages are not printed (fuzzing). */
extern bool kp_quiet;

/*
 * Set kp_progname from argv[0], restore the default SIGPIPE action (so
 * that "kp-fold | head -1" ends quietly), give stdout a large buffer and
 * a pipe on standard input or output 1 MiB of room.
 */
void kp_init(char **argv);

/* "prog: msg" on stderr; a format ending in ':' appends strerror(errno). */
void kp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then exit(KP_EXIT_FATAL). */
_Noreturn void kp_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/*
 * A helper thread's messages, kept for the thread that runs it to say
 * in their place: on a thread whose kp_trap is set, kp_warn hands its
 * line (without "prog: "; NULL when out of memory) to warn instead of
 * printing it (nothing when kp_quiet), and kp_die then calls die, which
 * must not return (it ends the thread).
 */
struct kp_trap {
	void (*warn)(struct kp_trap *t, char *msg); /* msg: warn's to free */
	void (*die)(struct kp_trap *t);
};
extern _Thread_local struct kp_trap *kp_trap;
/* "prog: msg", a hint to run "prog -h", exit(KP_EXIT_USAGE). */
_Noreturn void kp_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

void *kp_xmalloc(size_t n);
/*
 * A zeroed table of n bytes, freed with kp_table_free(p, n): from 2 MiB
 * up a mapping of its own, on huge pages where the kernel gives them
 * (madvise), so that a table filled at random takes a page fault every
 * 2 MiB, not every 4 KiB (perf2kp's frame and pid tables, the indexes
 * of its stacks, frames and names: 10,000 faults of the 30,000 it took
 * on perfdata-check.data); smaller, malloc's and written with zeros.
 */
void *kp_table_alloc(size_t n);
void kp_table_free(void *p, size_t n);
/* The pages inside [p, p + n) made at once (see util.c). */
void kp_populate(void *p, size_t n);
void *kp_xcalloc(size_t n, size_t size);
void *kp_xrealloc(void *p, size_t n);
/*
 * An array indexed by an id (a frame's, a key's): a of *cap elements of
 * size elem, grown (doubling, from 1024) and zero-filled so that index i
 * is in it.  Returns the array (a, or where it moved).
 */
void *kp_grow_for(void *a, size_t *cap, size_t elem, size_t i);
char *kp_xstrdup(const char *s);
char *kp_xstrndup(const char *s, size_t n);

/*
 * An open-addressing table of (hash, pointer) slots: linear probing, a
 * power-of-two size, at most three quarters full (at half, a real
 * capture's frame and line tables grew once more: 9% more of perf2kp's
 * time and 9 MB more memory, for probes that mostly stay in one cache
 * line either way).  Its owner probes it with its
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
 * power of two) once it is three quarters full, so slot pointers taken
 * before this call are stale.
 */
void kp_slots_grow(struct kp_slots *t, size_t first);
static inline void
kp_slots_reserve(struct kp_slots *t, size_t first)
{
	if ((t->n + 1) * 4 > t->cap * 3)
		kp_slots_grow(t, first);
}
/* Room for `more` entries at once: the table grown (rehashed) once, to
 * the size the doublings of kp_slots_reserve would reach. */
void kp_slots_reserve_n(struct kp_slots *t, size_t more, size_t first);
/* Add p, of hash h, to t (after kp_slots_reserve: there is room). */
static inline void
kp_slots_put(struct kp_slots *t, uint64_t h, void *p)
{
	size_t mask = t->cap - 1, i;

	for (i = h & mask; t->tab[i].p; i = (i + 1) & mask)
		;
	t->tab[i].hash = h;
	t->tab[i].p = p;
	t->n++;
}
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
/* n bytes, aligned to 8 (pointers, 64-bit integers: not long double or
 * vector types); out of memory is fatal. */
void *kp_pool_alloc(struct kp_pool *pool, size_t n);
/* Free everything allocated from the pool; it can be used again. */
void kp_pool_free(struct kp_pool *pool);

/*
 * Strict unsigned parse of s[0..len): base 10 or 16 (an optional 0x/0X
 * prefix is accepted for base 16).  Returns 0 on success, -1 when the
 * text is empty, holds another character, or overflows 64 bits (errno
 * is ERANGE then), or the base is another (errno EINVAL).
 */
int kp_parse_u64(const char *s, size_t len, int base, uint64_t *out);
/* A character's value as a hex digit (0-9, a-f, A-F), else -1. */
extern const signed char kp_digit_value[256];

/* Parse a command-line number (for -n, -d ...); usage error if bad. */
uint64_t kp_arg_u64(const char *opt, const char *arg);
double kp_arg_double(const char *opt, const char *arg);

/*
 * Open path read-only (close-on-exec, plus flags such as O_NOFOLLOW) if
 * it is a regular file: a FIFO, device or directory named in the input
 * is refused (errno EINVAL, or EISDIR) without blocking.  -1 on error;
 * kp_open_strerror(errno) says why ("not a regular file" for EINVAL).
 */
int kp_open_regular(const char *path, int flags);
/* The same for path relative to directory dir (openat). */
int kp_open_regular_at(int dir, const char *path, int flags);
const char *kp_open_strerror(int err);

/* 64-bit hash of a byte string (fast, not cryptographic). */
uint64_t kp_hash(const void *p, size_t len);
/* The multiply-fold step of kp_hash (in the manner of wyhash): a times
 * b, 128 bits, the halves xored.  Its callers xor constants into a and
 * b first (a zero factor would lose the other). */
static inline uint64_t
kp_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/*
 * The number of input lines skipped so far across all inputs, and the
 * end of a filter: flush and check stdout (a write error is reported
 * and gives KP_EXIT_FATAL; EPIPE ends quietly), print a summary of the
 * skipped lines, and return the exit status to pass to exit().
 */
extern unsigned long kp_skipped;
int kp_finish(void);
/* The processors this thread may run on (1 if that cannot be told):
 * whether a converter's second thread can run beside the first. */
int kp_cpus(void);
/* Until *lock reads 0 (a spin lock's holder let it go): a pause a
 * look, then, after 1,000, sched_yield (its holder is not running). */
void kp_spin_wait(const int *lock);
/* Check a stream opened for output (fflush + ferror + fclose). */
int kp_close_output(FILE *fp, const char *name);

#endif /* KP_UTIL_H */
