/* input.c - line input: one big buffer, read(2), memchr */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"

#define KP_INPUT_BUF (1u << 20)
#define KP_MAX_LINE (256u << 20)
#define KP_SHOW_SKIPS 5

/* A skipped line of a part (kp_input_mem), said when the parts are joined. */
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
	/* a part (kp_input_mem): it keeps its skipped lines (notes) for the
	 * join; its buffer is the caller's */
	bool part;
	struct note *notes;
	size_t nnotes;
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
		n = read(in->fd, in->buf + in->end, in->cap - in->end);
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

void
kp_input_die(struct kp_input *in, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: %s:%lu: ", kp_progname, in->name, in->lineno);
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
	if (!in->part)
		free(in->buf);
	free(in->name);
	free(in);
}

unsigned long
kp_input_skips(const struct kp_input *in)
{
	return in->nskip;
}

struct kp_input *
kp_input_mem(const struct kp_input *in, char *buf, size_t len)
{
	struct kp_input *part = kp_xcalloc(1, sizeof(*part));

	part->fd = -1;
	part->name = kp_xstrdup(in->name);
	part->buf = buf;
	part->cap = len;
	part->end = len;
	part->eof = true;
	part->part = true;
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
