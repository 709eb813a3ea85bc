/* input.c - line input: one big buffer, read(2), memchr */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"

#define KP_INPUT_BUF (1u << 20)
#define KP_MAX_LINE (256u << 20)
#define KP_SHOW_SKIPS 5

/* A skipped line of a split-off part, said when the parts are joined. */
struct note {
	unsigned long line;
	char *msg;
};

struct kp_input {
	int fd;
	char *name;
	char *buf;
	size_t cap;   /* allocated size of buf (one byte more for the NUL) */
	size_t start; /* first unread byte */
	size_t end;   /* end of valid data */
	bool eof;
	bool partial; /* the last line returned had no newline */
	unsigned long lineno;
	unsigned long nskip; /* kp_input_skip calls */
	/* kp_input_split: the file offset of the next read, where reading
	 * stops, bytes read; a part reads by pread on its parent's fd
	 * (shared), and keeps its skipped lines (notes) for the join */
	uint64_t pos, limit, nread;
	bool part;
	uint64_t part_from, part_at; /* the parent's lines: [from, at) */
	struct note *notes;
	size_t nnotes;
	bool borrowed; /* buf is the caller's (kp_input_mem) */
	bool ro;       /* and not to be written: lines not NUL-ended */
};

struct kp_input *
kp_input_open(const char *path)
{
	struct kp_input *in = kp_xcalloc(1, sizeof(*in));

	if (!path || strcmp(path, "-") == 0) {
		/* a filter run bare at a prompt would wait silently */
		if (isatty(STDIN_FILENO))
			kp_usage_error("no input: name a file, or pipe or "
				       "redirect one (standard input is a "
				       "terminal)");
		in->fd = 0;
		in->name = kp_xstrdup("<stdin>");
	} else {
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			kp_die("cannot open %s:", path);
		in->name = kp_xstrdup(path);
	}
	in->cap = KP_INPUT_BUF;
	in->buf = kp_xmalloc(in->cap + 1);
	in->limit = UINT64_MAX;
	return in;
}

/* Read more data after end; false at end of file. */
static bool
fill(struct kp_input *in)
{
	ssize_t n;

	if (in->eof)
		return false;
	if (in->start == in->end)
		in->start = in->end = 0;
	if (in->start > 0 && in->end == in->cap) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->end == in->cap) {
		if (in->cap >= KP_MAX_LINE) {
			in->lineno++; /* the long line, not the one before */
			kp_input_die(in, "line longer than %u MiB",
				     KP_MAX_LINE >> 20);
		}
		in->cap *= 2;
		in->buf = kp_xrealloc(in->buf, in->cap + 1);
	}
	for (;;) {
		size_t want = in->cap - in->end;

		if (in->limit - in->pos < want)
			want = (size_t)(in->limit - in->pos);
		n = want == 0 ? 0
		    : in->part ? pread(in->fd, in->buf + in->end, want,
				       (off_t)in->pos)
			       : read(in->fd, in->buf + in->end, want);
		if (n >= 0)
			break;
		if (errno != EINTR)
			kp_die("read error on %s:", in->name);
	}
	if (n == 0) {
		in->eof = true;
		return false;
	}
	in->end += (size_t)n;
	in->pos += (uint64_t)n;
	in->nread += (uint64_t)n;
	return true;
}

char *
kp_input_getline(struct kp_input *in, size_t *len)
{
	char *line, *nl;
	size_t scanned = 0, n;

	for (;;) {
		line = in->buf + in->start;
		nl = memchr(line + scanned, '\n', in->end - in->start - scanned);
		if (nl)
			break;
		scanned = in->end - in->start;
		if (!fill(in)) {
			if (in->start == in->end)
				return NULL;
			/* a last line without its newline */
			line = in->buf + in->start;
			nl = in->buf + in->end;
			break;
		}
	}
	line = in->buf + in->start;
	n = (size_t)(nl - line);
	in->partial = nl == in->buf + in->end;
	in->start += n + !in->partial;
	in->lineno++;
	if (n && line[n - 1] == '\r')
		n--;
	if (!in->ro)
		line[n] = '\0';
	*len = n;
	return line;
}

size_t
kp_input_peek(struct kp_input *in, const char **p)
{
	while (in->end - in->start < 1024 && !in->eof) {
		if (in->end == in->cap && in->start == 0)
			break;
		if (!fill(in))
			break;
	}
	*p = in->buf + in->start;
	return in->end - in->start;
}

size_t
kp_input_need(struct kp_input *in, size_t n, const char **p)
{
	while (in->end - in->start < n && fill(in))
		;
	*p = in->buf + in->start;
	return in->end - in->start;
}

int
kp_input_fd(const struct kp_input *in)
{
	return in->fd;
}

size_t
kp_input_buffered(const struct kp_input *in, const char **p)
{
	*p = in->buf + in->start;
	return in->end - in->start;
}

void
kp_input_consume(struct kp_input *in, size_t n, unsigned long lines)
{
	if (n > in->end - in->start)
		kp_die("kp_input_consume: %zu bytes, %zu buffered", n,
		       in->end - in->start);
	in->start += n;
	in->lineno += lines;
}

bool
kp_input_partial(const struct kp_input *in)
{
	return in->partial;
}

unsigned long
kp_input_lineno(const struct kp_input *in)
{
	return in->lineno;
}

const char *
kp_input_name(const struct kp_input *in)
{
	return in->name;
}

void
kp_input_skip(struct kp_input *in, const char *fmt, ...)
{
	va_list ap;

	in->nskip++;
	if (in->part) {
		/* said at the join, in the order of the lines */
		struct note *nt;

		in->notes = kp_xrealloc(in->notes, (in->nnotes + 1) *
							   sizeof(*in->notes));
		nt = &in->notes[in->nnotes++];
		nt->line = in->lineno;
		va_start(ap, fmt);
		if (vasprintf(&nt->msg, fmt, ap) < 0)
			kp_die("out of memory");
		va_end(ap);
		return;
	}
	if (kp_skipped++ < KP_SHOW_SKIPS && !kp_quiet) {
		fflush(stdout);
		fprintf(stderr, "%s: %s:%lu: ", kp_progname, in->name,
			in->lineno);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

/* The lines of a part's parent before the part (a fatal message's line). */
static unsigned long
lines_before(const struct kp_input *in)
{
	char buf[1 << 16];
	uint64_t off = in->part_from;
	unsigned long n = 0;
	ssize_t got;
	size_t want;

	while (off < in->part_at) {
		want = in->part_at - off < sizeof(buf) ? (size_t)(in->part_at - off)
						       : sizeof(buf);
		got = pread(in->fd, buf, want, (off_t)off);
		if (got <= 0)
			break;
		for (const char *p = buf;
		     (p = memchr(p, '\n', (size_t)(buf + got - p))) != NULL; p++)
			n++;
		off += (uint64_t)got;
	}
	return n;
}

void
kp_input_die(struct kp_input *in, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: %s:%lu: ", kp_progname, in->name,
		in->lineno + (in->part ? lines_before(in) : 0));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(KP_EXIT_FATAL);
}

void
kp_input_close(struct kp_input *in)
{
	size_t i;

	if (!in)
		return;
	if (in->fd > 0 && !in->part)
		close(in->fd);
	for (i = 0; i < in->nnotes; i++)
		free(in->notes[i].msg);
	free(in->notes);
	if (!in->borrowed)
		free(in->buf);
	free(in->name);
	free(in);
}

unsigned long
kp_input_skips(const struct kp_input *in)
{
	return in->nskip;
}

bool
kp_input_unread(const struct kp_input *in, uint64_t *at, uint64_t *size)
{
	struct stat st;
	off_t cur;

	if (in->part || in->limit != UINT64_MAX ||
	    fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (cur = lseek(in->fd, 0, SEEK_CUR)) < 0 ||
	    (uint64_t)st.st_size < (uint64_t)cur ||
	    (uint64_t)cur < in->end - in->start)
		return false;
	*at = (uint64_t)cur - (in->end - in->start);
	*size = (uint64_t)st.st_size;
	return true;
}

struct kp_input *
kp_input_split(struct kp_input *in, uint64_t at)
{
	struct kp_input *part;
	uint64_t first, cur, size;

	if (!kp_input_unread(in, &first, &size) || at < first || at > size)
		return NULL;
	cur = first + (in->end - in->start); /* the next read's */
	if (at <= cur) {
		/* in ends inside its buffer */
		in->end -= (size_t)(cur - at);
		in->eof = true;
	}
	in->pos = cur;
	in->limit = at;
	part = kp_xcalloc(1, sizeof(*part));
	part->fd = in->fd;
	part->name = kp_xstrdup(in->name);
	part->cap = KP_INPUT_BUF;
	part->buf = kp_xmalloc(part->cap + 1);
	part->part = true;
	part->pos = at;
	part->limit = UINT64_MAX;
	part->part_from = cur - in->nread; /* where in began */
	part->part_at = at;
	return part;
}

struct kp_input *
kp_input_mem(const struct kp_input *in, char *buf, size_t len, bool ro)
{
	struct kp_input *part = kp_xcalloc(1, sizeof(*part));

	part->ro = ro;
	part->fd = -1;
	part->name = kp_xstrdup(in->name);
	part->buf = buf;
	part->cap = len;
	part->end = len;
	part->eof = true;
	part->part = true;
	part->borrowed = true;
	part->limit = UINT64_MAX;
	return part;
}

void
kp_input_join(struct kp_input *in, struct kp_input *part)
{
	size_t i;

	for (i = 0; i < part->nnotes; i++) {
		in->nskip++;
		if (kp_skipped++ < KP_SHOW_SKIPS && !kp_quiet) {
			fflush(stdout);
			fprintf(stderr, "%s: %s:%lu: %s\n", kp_progname,
				in->name, in->lineno + part->notes[i].line,
				part->notes[i].msg);
		}
	}
	in->lineno += part->lineno;
	in->partial = part->partial;
	kp_input_close(part);
}
