/*
 * reader.c - the kp reader: one streaming pass, records out.
 *
 * Accepted input (man/kp.5 has the full grammar):
 *
 *	# event: cpu-clock
 *	!
 *	 0xffffffff814cde75 : net_rx_action+0x105/0x2b0 [kernel]
 *	 0xffffffff8106602d : irq_exit+0xbd/0xe0 [kernel
 *	 0xffffffff816b8aab : vfs_read+0xbb/0x360 [kernel] (inexact)
 *	 0x00000000000f82ad : read+0xd/0x4d [/usr/lib/x86_64-linux-gnu/libc.so.6]
 *	 0xffffffff81000000 [kernel+0x10/0x20]
 *	 0xffffffff81000000
 *	ffffffff81039e37 : smp_call_function_single_interrupt+ffffffff81039e37
 *	 : folded_frame_without_address
 *		1168
 *	!
 *
 * and the hex lists that SystemTap's backtrace()/ubacktrace() return,
 * printed as one line (each address becomes an address-only frame):
 *
 *	0xffffffff8103ce3b 0xffffffff8101c6a3 0xffffffff81013236
 *		17
 *
 * Blank lines, blanks and tabs around any line, CRLF line ends and a
 * missing final newline are accepted everywhere; the opening "!" is
 * optional, so plain SystemTap print_stack output is valid input.
 */
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "internal.h"

#define MAX_META 10000
#define MAX_CACHED_LINES (1u << 22)

/* line text -> interned frame, so each distinct line is parsed once */
struct line_ent {
	const struct kp_frame *f;
	size_t len;
	char text[];
};

struct kp_reader {
	struct kp_input *in;
	const struct kp_frame **frames;
	size_t n, cap;
	bool bad; /* the current record holds a rejected line */
	struct kp_stack st;
	struct kp_slots cache; /* of struct line_ent */
};

static bool
all_digits(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return len > 0;
}

/*
 * Input that is not kp but what a converter reads, found by its first
 * KiB: fatal, naming the converter (a filter would otherwise skip every
 * line and print an empty profile).  perf.data (magic "PERFILE2"); a
 * first line that is a 'perf script' sample header; a first line of
 * folded stacks, "a;b;c COUNT".  A first line that is kp ("!", a count,
 * a frame line, SystemTap's hex list) is never refused.
 */
static const char *
check_kind(struct kp_input *in)
{
	const char *p, *e, *s, *le;
	size_t n = kp_input_peek(in, &p), len;
	struct kp_frame f;
	const char *why;

	if (n >= 8 && memcmp(p, "PERFILE2", 8) == 0)
		return "this is a perf.data file, not kp: run it through "
		       "perf2kp";
	e = p + (n > 1024 ? 1024 : n);
	for (s = p; s < e; s = le + 1) {
		le = memchr(s, '\n', (size_t)(e - s));
		if (!le)
			return NULL; /* no whole line to judge */
		while (s < le && (*s == ' ' || *s == '\t'))
			s++;
		len = (size_t)(le - s);
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
			       s[len - 1] == '\r'))
			len--;
		if (len == 0 || *s == '#')
			continue;
		if ((len == 1 && *s == '!') || all_digits(s, len) ||
		    *s == '0' || kp_frame_parse(s, len, &f, &why) == 0)
			return NULL;
		if (kp_perf_script_line(s, len))
			return "this is 'perf script' output, not kp: run it "
			       "through perf2kp";
		if (kp_folded_line(s, len))
			return "these are folded stacks ('a;b;c COUNT'), not "
			       "kp: run them through fold2kp";
		return NULL;
	}
	return NULL;
}

bool kp_refuse_foreign = true;

struct kp_reader *
kp_reader_open(const char *path)
{
	struct kp_reader *rd = kp_xcalloc(1, sizeof(*rd));
	const char *why;

	rd->in = kp_input_open(path);
	why = check_kind(rd->in);
	if (why && kp_refuse_foreign) {
		kp_input_close(rd->in); /* before exit: nothing to leak */
		free(rd);
		kp_die("%s: %s", path && strcmp(path, "-") ? path : "<stdin>",
		       why);
	}
	rd->cap = 64;
	rd->frames = kp_xmalloc(rd->cap * sizeof(*rd->frames));
	return rd;
}

struct kp_input *
kp_reader_input(struct kp_reader *rd)
{
	return rd->in;
}

static void
push(struct kp_reader *rd, const struct kp_frame *f)
{
	if (rd->n == rd->cap) {
		rd->cap *= 2;
		rd->frames = kp_xrealloc(rd->frames,
					 rd->cap * sizeof(*rd->frames));
	}
	rd->frames[rd->n++] = f;
}

/* The frame for a (trimmed) frame line, or NULL with *why set. */
static const struct kp_frame *
frame_for_line(struct kp_reader *rd, const char *s, size_t len,
	       const char **why)
{
	uint64_t h = kp_hash_line(s, len);
	size_t mask, j;
	struct kp_frame f;
	const struct kp_frame *fp;
	struct line_ent *e;
	struct kp_slot *sl;

	kp_slots_reserve(&rd->cache, 1024);
	mask = rd->cache.cap - 1;
	for (j = h & mask; (e = rd->cache.tab[j].p) != NULL;
	     j = (j + 1) & mask)
		if (rd->cache.tab[j].hash == h && e->len == len &&
		    memcmp(e->text, s, len) == 0)
			return e->f;
	if (kp_frame_parse(s, len, &f, why) < 0)
		return NULL;
	fp = kp_frame_intern(&f);
	if (rd->cache.n < MAX_CACHED_LINES && len < 4096) {
		e = kp_arena_alloc(sizeof(*e) + len);
		e->f = fp;
		e->len = len;
		memcpy(e->text, s, len);
		sl = &rd->cache.tab[j];
		sl->hash = h;
		sl->p = e;
		rd->cache.n++;
	}
	return fp;
}

/*
 * "0xADDR 0xADDR ...", two or more: push one address-only frame each.
 * False (and nothing pushed) when the line is not such a list.
 */
static bool
hex_list(struct kp_reader *rd, const char *s, size_t len)
{
	const char *e = s + len, *p, *tok;
	uint64_t addr;
	size_t n = 0, k;

	for (p = s; p < e;) {
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p == e)
			break;
		tok = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		if (p - tok < 3 || tok[0] != '0' || (tok[1] | 0x20) != 'x' ||
		    kp_parse_u64(tok, (size_t)(p - tok), 16, &addr) < 0)
			return false;
		n++;
	}
	if (n < 2)
		return false;
	for (p = s, k = 0; k < n; k++) {
		while (*p == ' ' || *p == '\t')
			p++;
		tok = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		kp_parse_u64(tok, (size_t)(p - tok), 16, &addr);
		push(rd, kp_frame_make(addr, KP_F_ADDR, NULL, NULL));
	}
	return true;
}

const struct kp_stack *
kp_reader_next(struct kp_reader *rd)
{
	const struct kp_frame *f;
	const char *why;
	uint64_t count;
	size_t len;
	char *s, *e;

	while ((s = kp_input_getline(rd->in, &len)) != NULL) {
		e = s + len;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		/* a stray \r at the end is a line-end remnant, as in "\r\t\n" */
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		len = (size_t)(e - s);
		if (len == 0)
			continue;
		if (*s == '!' && len == 1) {
			if (rd->n && !rd->bad)
				kp_input_skip(rd->in, "record ends without a "
						      "count line; %zu frame%s "
						      "dropped",
					      rd->n, rd->n == 1 ? "" : "s");
			rd->n = 0;
			rd->bad = false;
			continue;
		}
		if (*s == '#') {
			if (memchr(s, '\0', len))
				kp_input_skip(rd->in, "NUL byte in metadata");
			else if (kp_meta_count() >= MAX_META)
				kp_input_skip(rd->in, "more than %d metadata "
						      "lines", MAX_META);
			else
				kp_meta_add_line(s, len);
			continue;
		}
		if (*s >= '0' && *s <= '9' && all_digits(s, len)) {
			if (kp_parse_u64(s, len, 10, &count) < 0) {
				kp_input_skip(rd->in, "count does not fit in "
						      "64 bits; record "
						      "dropped");
			} else if (rd->n == 0) {
				if (!rd->bad)
					kp_input_skip(rd->in,
						      "count without frames");
			} else if (!rd->bad) {
				rd->st.frames = rd->frames;
				rd->st.n = rd->n;
				rd->st.count = count;
				rd->n = 0;
				return &rd->st;
			}
			rd->n = 0;
			rd->bad = false;
			continue;
		}
		f = frame_for_line(rd, s, len, &why);
		if (f) {
			push(rd, f);
			continue;
		}
		if (*s == '0' && hex_list(rd, s, len))
			continue;
		if (!rd->bad)
			kp_input_skip(rd->in, "%s; record dropped", why);
		rd->bad = true;
	}
	if (rd->n && !rd->bad)
		kp_input_skip(rd->in, "input ends inside a record (no count "
				      "line); %zu frame%s dropped",
			      rd->n, rd->n == 1 ? "" : "s");
	rd->n = 0;
	rd->bad = false;
	return NULL;
}

void
kp_reader_close(struct kp_reader *rd)
{
	if (!rd)
		return;
	kp_input_close(rd->in);
	free(rd->frames);
	kp_slots_free(&rd->cache);
	free(rd);
}
