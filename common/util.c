/* util.c - program name, messages, memory, numbers, hashing, exit status */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

const char *kp_progname = "kp";
bool kp_quiet;
unsigned long kp_skipped;
_Thread_local struct kp_trap *kp_trap;

static char stdout_buf[1 << 17];

/*
 * A pipe on fd given 1 MiB (Linux's default limit for anyone,
 * /proc/sys/fs/pipe-max-size), not 64 KiB: a filter writing 54 MB of
 * kp into the next (perf2kp's by-address output of a system-wide
 * capture) then stops for it 16 times less often; perf2kp | kp-inclusive
 * took 0.97 of the time.  The pipe's pages are the kernel's, not in
 * either process's RSS.  Refused (another user's limit), it stays so.
 */
static void
pipe_room(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

void
kp_init(char **argv)
{
	const char *p;

	if (argv && argv[0]) {
		p = strrchr(argv[0], '/');
		kp_progname = p ? p + 1 : argv[0];
	}
	signal(SIGPIPE, SIG_DFL);
	setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));
	pipe_room(0);
	pipe_room(1);
}

static void
vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	size_t len = strlen(fmt);

	if (kp_quiet)
		return;
	if (kp_trap) {
		char *msg = NULL, *m;

		if (vasprintf(&msg, fmt, ap) < 0)
			msg = NULL;
		else if (len && fmt[len - 1] == ':' &&
			 asprintf(&m, "%s %s", msg, strerror(saved)) >= 0) {
			free(msg);
			msg = m;
		}
		kp_trap->warn(kp_trap, msg);
		return;
	}
	fflush(stdout);
	fprintf(stderr, "%s: ", kp_progname);
	vfprintf(stderr, fmt, ap);
	if (len && fmt[len - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
}

void
kp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
kp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	if (kp_trap)
		kp_trap->die(kp_trap);
	exit(KP_EXIT_FATAL);
}

void
kp_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s -h' for more information.\n", kp_progname);
	exit(KP_EXIT_USAGE);
}

void *
kp_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		kp_die("out of memory");
	return p;
}

#define HUGE_PAGE ((size_t)2 << 20)

void *
kp_table_alloc(size_t n)
{
	char *p, *a;
	size_t over;

	if (n < HUGE_PAGE) {
		p = kp_xmalloc(n);
		memset(p, 0, n);
		return p;
	}
	n = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	/* aligned: a mapping a huge page longer, its ends cut off */
	p = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		kp_die("out of memory");
	a = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	over = (size_t)(a - p);
	if (over)
		munmap(p, over);
	munmap(a + n, HUGE_PAGE - over);
	(void)madvise(a, n, MADV_HUGEPAGE); /* none: 4 KiB pages */
	return a;
}

/*
 * The pages inside [p, p + n) made now, in one call, as writing them
 * would one fault at a time (where the kernel can: Linux 5.14).
 */
void
kp_populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a, e;

	a = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	e = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

void
kp_table_free(void *p, size_t n)
{
	if (!p)
		return;
	if (n < HUGE_PAGE)
		free(p);
	else
		munmap(p, (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}

void *
kp_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		kp_die("out of memory");
	return p;
}

void *
kp_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		kp_die("out of memory");
	return p;
}

char *
kp_xstrndup(const char *s, size_t n)
{
	char *p = kp_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
kp_xstrdup(const char *s)
{
	return kp_xstrndup(s, strlen(s));
}

/* A character's value as a digit (0-9, a-f, A-F), else -1: a table, not
 * three range tests, which mispredict on the mix of letters and digits
 * of an address.  A row of 16 a line. */
#define NO16 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
const signed char kp_digit_value[256] = {
	NO16, NO16, NO16, /* 0x00-0x2f */
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,		  /* '0' */
	-1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, /* 'A' */
	NO16,
	-1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, /* 'a' */
	NO16,
	NO16, NO16, NO16, NO16, NO16, NO16, NO16, NO16, /* 0x80-0xff */
};
#undef NO16

int
kp_parse_u64(const char *s, size_t len, int base, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	int d;

	if (base != 10 && base != 16) {
		errno = EINVAL;
		return -1;
	}
	if (base == 16 && len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	if (i == len)
		return -1;
	/* digits that cannot overflow (16 hex, 19 decimal): no check each */
	if (len - i <= (base == 16 ? 16u : 19u)) {
		for (; i < len; i++) {
			d = kp_digit_value[(unsigned char)s[i]];
			if (d < 0 || d >= base)
				return -1;
			v = v * (uint64_t)base + (uint64_t)d;
		}
		*out = v;
		return 0;
	}
	for (; i < len; i++) {
		d = kp_digit_value[(unsigned char)s[i]];
		if (d < 0 || d >= base)
			return -1;
		/* v * base + d overflows, without a division a digit: in
		 * hex when v has its top four bits; in decimal when v is past
		 * UINT64_MAX / 10, or at it with d past UINT64_MAX % 10 */
		if (base == 16 ? v >> 60 != 0
			       : v > UINT64_MAX / 10 ||
					 (v == UINT64_MAX / 10 &&
					  (uint64_t)d > UINT64_MAX % 10)) {
			errno = ERANGE;
			return -1;
		}
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

uint64_t
kp_arg_u64(const char *opt, const char *arg)
{
	uint64_t v;

	if (kp_parse_u64(arg, strlen(arg), 10, &v) < 0)
		kp_usage_error("%s: not a number: '%s'", opt, arg);
	return v;
}

double
kp_arg_double(const char *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(v) || v < 0)
		kp_usage_error("%s: not a number: '%s'", opt, arg);
	return v;
}

/*
 * kp_hash: a 64-bit multiply-fold hash over 8-byte words (kp_mix);
 * fast on the short strings kp hashes: symbols, lines, stacks.
 */
uint64_t
kp_hash(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, a, b;
	size_t i = 0, r;

	/* longer keys (stacks, blocks of lines): 48 bytes a round in three
	 * independent multiplies, as wyhash does */
	if (len > 48) {
		uint64_t h1 = h, h2 = h, c, d;

		for (; i + 48 <= len; i += 48) {
			memcpy(&a, s + i, 8);
			memcpy(&b, s + i + 8, 8);
			h = kp_mix(a ^ 0xa0761d6478bd642full, b ^ h);
			memcpy(&c, s + i + 16, 8);
			memcpy(&d, s + i + 24, 8);
			h1 = kp_mix(c ^ 0xe7037ed1a0b428dbull, d ^ h1);
			memcpy(&c, s + i + 32, 8);
			memcpy(&d, s + i + 40, 8);
			h2 = kp_mix(c ^ 0x8ebc6af09c88c6e3ull, d ^ h2);
		}
		h ^= h1 ^ h2;
	}
	/* 16 bytes a multiply */
	for (; i + 16 <= len; i += 16) {
		memcpy(&a, s + i, 8);
		memcpy(&b, s + i + 8, 8);
		h = kp_mix(a ^ 0xa0761d6478bd642full, b ^ h);
	}
	/*
	 * The last 0-15 bytes, the first 8 in a, the rest in b, zero-filled
	 * above: read as whole words that may overlap what is hashed
	 * already and shifted down, not with a memcpy of a variable length
	 * (a call, whose bytes read back as one word wait for it; a frame
	 * is 60 bytes, a stack often an odd number of pointers).  The same
	 * values as those memcpys' (kp-flame's colours come from them).
	 */
	a = b = 0;
	r = len - i;
	if (r >= 8) {
		memcpy(&a, s + i, 8);
		if (r > 8) {
			memcpy(&b, s + len - 8, 8);
			b >>= 8 * (16 - r);
		}
	} else if (r >= 4) {
		uint32_t lo, hi;

		memcpy(&lo, s + i, 4);
		memcpy(&hi, s + len - 4, 4);
		a = lo;
		if (r > 4)
			a |= (uint64_t)(hi >> 8 * (8 - r)) << 32;
	} else if (r > 0) {
		a = s[i];
		if (r > 1)
			a |= (uint64_t)s[i + 1] << 8;
		if (r > 2)
			a |= (uint64_t)s[i + 2] << 16;
	}
	return kp_mix(a ^ 0xe7037ed1a0b428dbull, b ^ h ^ 0x8ebc6af09c88c6e3ull);
}

/*
 * A pipe's end for its reader now, not when this process exits: the
 * next filter reads the end of its input while this one frees its
 * memory and the kernel takes its pages back (perf2kp's are 95 MB on a
 * capture of 250,000 samples; perf2kp | kp-inclusive there took 0.985
 * times as long).  The descriptor is pointed at /dev/null rather than
 * closed, so that nothing opened later takes its number.  Only a pipe
 * or socket: a file has no reader waiting for its end, and closing it
 * can report a write error (NFS) that dup2 would drop.
 */
static void
end_pipe(int fd)
{
	struct stat sb;
	int null;

	if (fstat(fd, &sb) < 0 ||
	    !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		return;
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0)
		return;
	if (null != fd) {
		dup2(null, fd);
		close(null);
	}
}

int
kp_close_output(FILE *fp, const char *name)
{
	int bad = fflush(fp) != 0 || ferror(fp);
	int saved = errno;

	if (fp != stdout && fclose(fp) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		if (saved == EPIPE)
			exit(KP_EXIT_FATAL);
		errno = saved ? saved : EIO;
		kp_warn("write error on %s:", name);
		return -1;
	}
	if (fp == stdout)
		end_pipe(STDOUT_FILENO);
	return 0;
}

void
kp_spin_wait(const int *lock)
{
	unsigned spins = 0;

	while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
		if (++spins < 1000) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#elif defined(__aarch64__)
			__asm__ __volatile__("yield");
#endif
		} else {
			sched_yield();
		}
	}
}

int
kp_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	return CPU_COUNT(&set);
}

int
kp_finish(void)
{
	int status = KP_EXIT_OK;

	if (kp_close_output(stdout, "<stdout>") < 0)
		return KP_EXIT_FATAL;
	if (kp_skipped) {
		kp_warn("%lu input line%s skipped", kp_skipped,
			kp_skipped == 1 ? "" : "s");
		status = KP_EXIT_SKIPPED;
	}
	return status;
}

/* ---- pools ---- */

#define POOL_CHUNK (256u << 10)

/*
 * Pieces are 8-byte aligned, for pointers and 64-bit integers, which is
 * all the pools hold: not max_align_t's 16, which left 8 bytes unused
 * after half the pieces of odd lengths (perf2kp's cached lines, the
 * aggregations' stacks).
 */
#define POOL_ALIGN ((size_t)8)

struct kp_pool_chunk {
	struct kp_pool_chunk *next;
	uint64_t data[];
};

void *
kp_pool_alloc(struct kp_pool *pool, size_t n)
{
	const size_t align = POOL_ALIGN;
	struct kp_pool_chunk *c;
	void *p;

	if (n > SIZE_MAX - align - sizeof(*c))
		kp_die("out of memory");
	n = (n + align - 1) & ~(align - 1);
	if (n > POOL_CHUNK / 4) {
		/* a chunk of its own, behind the current one */
		c = kp_xmalloc(sizeof(*c) + n);
		if (pool->chunks) {
			c->next = pool->chunks->next;
			pool->chunks->next = c;
		} else {
			c->next = NULL;
			pool->chunks = c;
		}
		return c->data;
	}
	if (n > pool->left) {
		c = kp_xmalloc(sizeof(*c) + POOL_CHUNK);
		c->next = pool->chunks;
		pool->chunks = c;
		pool->cur = (char *)c->data;
		pool->left = POOL_CHUNK;
	}
	p = pool->cur;
	pool->cur += n;
	pool->left -= n;
	return p;
}

void
kp_pool_free(struct kp_pool *pool)
{
	struct kp_pool_chunk *c, *next;

	for (c = pool->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(pool, 0, sizeof(*pool));
}

void *
kp_grow_for(void *a, size_t *cap, size_t elem, size_t i)
{
	size_t n = *cap ? *cap : 1024;
	char *arr;

	if (i < *cap)
		return a;
	while (n <= i)
		n *= 2;
	arr = kp_xrealloc(a, n * elem);
	memset(arr + *cap * elem, 0, (n - *cap) * elem);
	*cap = n;
	return arr;
}

/* ---- open-addressing slots ---- */

/* t's entries into a table of cap slots. */
static void
rehash(struct kp_slots *t, size_t cap)
{
	struct kp_slots old = *t;
	size_t j;

	t->cap = cap;
	t->tab = kp_table_alloc(t->cap * sizeof(*t->tab));
	t->n = 0;
	for (j = 0; j < old.cap; j++)
		if (old.tab[j].p)
			kp_slots_put(t, old.tab[j].hash, old.tab[j].p);
	kp_table_free(old.tab, old.cap * sizeof(*old.tab));
}

void
kp_slots_grow(struct kp_slots *t, size_t first)
{
	rehash(t, t->cap ? t->cap * 2 : first);
}

void
kp_slots_reserve_n(struct kp_slots *t, size_t more, size_t first)
{
	size_t cap = t->cap ? t->cap : first;

	while ((t->n + more) * 4 > cap * 3)
		cap *= 2;
	if (cap != t->cap)
		rehash(t, cap);
}

void
kp_slots_free(struct kp_slots *t)
{
	kp_table_free(t->tab, t->cap * sizeof(*t->tab));
	memset(t, 0, sizeof(*t));
}

int
kp_open_regular_at(int dir, const char *path, int flags)
{
	struct stat sb;
	int fd, fl;

	/* O_NONBLOCK: a FIFO swapped in after a check cannot hang open() */
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0) {
		fl = errno;
		close(fd);
		errno = fl;
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int
kp_open_regular(const char *path, int flags)
{
	return kp_open_regular_at(AT_FDCWD, path, flags);
}

const char *
kp_open_strerror(int err)
{
	return err == EINVAL ? "not a regular file" : strerror(err);
}
