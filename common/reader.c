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
#define MAX_CACHED_LEN 4095

/*
 * The line cache: line text -> interned frame, so that each distinct
 * line is parsed once.  Its entries are carved from chunks of ENT_CHUNK
 * bytes, freed with the reader, and named by a 32-bit reference,
 * chunk << ENT_SHIFT | offset / 8 (0 is none: no chunk hands out its
 * first 8 bytes).  Its slots are 8 bytes, a reference and 32 bits of the
 * hash, half of what a hash and a pointer take: on a real capture
 * (142,000 distinct lines) its table is 2 MiB, not 4.  The limits keep
 * every reference in 32 bits.
 */
#define ENT_SHIFT 17
#define ENT_CHUNK ((size_t)8 << ENT_SHIFT) /* 1 MiB */

struct line_ent {
	const struct kp_frame *f; /* the line's frame, or its key */
	uint32_t id;  /* f->id, read here where the text is compared */
	uint16_t len;
	char text[]; /* trimmed: no blank at either end, no \r at the end */
};

struct line_slot {
	uint32_t tag; /* the hash's top 32 bits; the home slot is its top bits */
	uint32_t ref; /* 0: empty */
};

/*
 * The lines ahead of the cursor that are whole in the input buffer, in
 * a ring, so that the cache slot of a frame line is fetched from memory
 * while the lines before it are read (ahead()).
 */
#define AHEAD 16

struct ahead {
	const char *s; /* the line, trimmed */
	uint32_t len;
	uint32_t bytes; /* of the whole line, with its '\n' */
	uint32_t tag;   /* a frame line's hash (see frame_for_line) */
	bool frame;     /* it may be a frame line: tag is set */
};

struct kp_reader {
	struct kp_input *in;
	const struct kp_frame **frames;
	uint32_t *ids; /* frames[i]->id */
	size_t n, cap;
	bool bad; /* the current record holds a rejected line */
	struct kp_stack st;
	kp_frame_key_fn key; /* kp_reader_set_key's, or NULL */
	/* the line cache */
	struct line_slot *tab;
	unsigned bits; /* the table has 1 << bits slots */
	size_t nents;
	char **chunks;
	size_t nchunks, chunkcap, used; /* used: bytes of the last chunk */
	/* the lines ahead, in the input buffer (see ahead()) */
	struct ahead ring[AHEAD];
	unsigned head, nring;
	const char *scan; /* the first byte not yet in the ring */
	const char *dry;  /* the end of the buffer when scan met no '\n' */
};

bool kp_reader_fast = true;

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
	rd->ids = kp_xmalloc(rd->cap * sizeof(*rd->ids));
	return rd;
}

struct kp_input *
kp_reader_input(struct kp_reader *rd)
{
	return rd->in;
}

void
kp_reader_set_key(struct kp_reader *rd, kp_frame_key_fn key)
{
	rd->key = key;
}

const uint32_t *
kp_reader_ids(const struct kp_reader *rd)
{
	return rd->ids;
}

static void
push(struct kp_reader *rd, const struct kp_frame *f, uint32_t id)
{
	if (rd->n == rd->cap) {
		rd->cap *= 2;
		rd->frames = kp_xrealloc(rd->frames,
					 rd->cap * sizeof(*rd->frames));
		rd->ids = kp_xrealloc(rd->ids, rd->cap * sizeof(*rd->ids));
	}
	rd->frames[rd->n] = f;
	rd->ids[rd->n++] = id;
}

static inline struct line_ent *
ent_at(const struct kp_reader *rd, uint32_t ref)
{
	return (struct line_ent *)(void *)(rd->chunks[ref >> ENT_SHIFT] +
				   ((size_t)(ref & ((1u << ENT_SHIFT) - 1))
				    << 3));
}

/* A new entry of `size` bytes: its reference. */
static uint32_t
ent_alloc(struct kp_reader *rd, size_t size)
{
	uint32_t ref;

	size = (size + 7) & ~(size_t)7;
	if (rd->nchunks == 0 || rd->used + size > ENT_CHUNK) {
		if (rd->nchunks == rd->chunkcap) {
			rd->chunkcap = rd->chunkcap ? rd->chunkcap * 2 : 16;
			rd->chunks = kp_xrealloc(rd->chunks, rd->chunkcap *
							     sizeof(*rd->chunks));
		}
		rd->chunks[rd->nchunks++] = kp_xmalloc(ENT_CHUNK);
		rd->used = 8;
	}
	ref = (uint32_t)((rd->nchunks - 1) << ENT_SHIFT | rd->used >> 3);
	rd->used += size;
	return ref;
}

/* The table doubled (from 1024 slots), its entries put in their places. */
static void
grow_table(struct kp_reader *rd)
{
	struct line_slot *old = rd->tab;
	size_t oldcap = old ? (size_t)1 << rd->bits : 0, i, j, mask;

	rd->bits = old ? rd->bits + 1 : 10;
	mask = ((size_t)1 << rd->bits) - 1;
	rd->tab = kp_xcalloc(mask + 1, sizeof(*rd->tab));
	for (i = 0; i < oldcap; i++) {
		if (!old[i].ref)
			continue;
		for (j = old[i].tag >> (32 - rd->bits); rd->tab[j].ref;
		     j = (j + 1) & mask)
			;
		rd->tab[j] = old[i];
	}
	free(old);
}

static inline uint64_t
word(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t
mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/*
 * A line's tag: 32 bits of a hash of its first 32 bytes and its last 16
 * (frame lines differ in their address at the start and in their module
 * at the end, as kp_hash_line has it), and its length.  Every frame line
 * is hashed, so this is kp_hash_line's idea in a few multiplies inline.
 */
static inline uint32_t
line_tag(const char *s, size_t len)
{
	uint64_t h;

	if (len < 16)
		return (uint32_t)(kp_hash(s, len) >> 32);
	h = mix(word(s) ^ 0xa0761d6478bd642full,
		word(s + 8) ^ 0xe7037ed1a0b428dbull);
	if (len >= 32)
		h ^= mix(word(s + 16) ^ 0x8ebc6af09c88c6e3ull,
			 word(s + 24) ^ 0x589965cc75374cc3ull);
	h = mix(h ^ word(s + len - 16) ^ 0x1d8e4e27c47d124full,
		word(s + len - 8) ^ len ^ 0x9e3779b97f4a7c15ull);
	return (uint32_t)(h >> 32);
}

/*
 * The frame for a (trimmed) frame line of that tag, or NULL with *why
 * set; *ref is the line's cache entry (0 when the line is not cached:
 * too long, or the cache full).
 */
static const struct kp_frame *
frame_for_line(struct kp_reader *rd, const char *s, size_t len,
	       uint32_t tag, const char **why, uint32_t *ref)
{
	size_t mask, j;
	struct kp_frame f;
	const struct kp_frame *fp;
	struct line_ent *e;

	if ((rd->nents + 1) * 4 > ((size_t)3 << rd->bits))
		grow_table(rd);
	mask = ((size_t)1 << rd->bits) - 1;
	for (j = tag >> (32 - rd->bits); rd->tab[j].ref; j = (j + 1) & mask) {
		if (rd->tab[j].tag != tag)
			continue;
		e = ent_at(rd, rd->tab[j].ref);
		if (e->len == len && memcmp(e->text, s, len) == 0) {
			*ref = rd->tab[j].ref;
			return e->f;
		}
	}
	*ref = 0;
	if (kp_frame_parse(s, len, &f, why) < 0)
		return NULL;
	fp = rd->key ? rd->key(&f) : kp_frame_intern(&f);
	if (rd->nents < MAX_CACHED_LINES && len <= MAX_CACHED_LEN) {
		*ref = ent_alloc(rd, offsetof(struct line_ent, text) + len);
		e = ent_at(rd, *ref);
		e->f = fp;
		e->id = fp->id;
		e->len = (uint16_t)len;
		memcpy(e->text, s, len);
		rd->tab[j].tag = tag;
		rd->tab[j].ref = *ref;
		rd->nents++;
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
	const struct kp_frame *f;
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
		f = kp_frame_make(addr, KP_F_ADDR, NULL, NULL);
		if (rd->key)
			f = rd->key(f);
		push(rd, f, f->id);
	}
	return true;
}

/* The line without the blanks around it (and a \r at its end). */
static inline void
trim(const char **s, size_t *len)
{
	const char *b = *s, *e = *s + *len;

	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	/* a stray \r at the end is a line-end remnant, as in "\r\t\n" */
	while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*s = b;
	*len = (size_t)(e - b);
}

/* Could the trimmed line be a frame line (see line())? */
static inline bool
maybe_frame(const char *s, size_t len)
{
	return len && *s != '!' && *s != '#' &&
	       !(*s >= '0' && *s <= '9' && all_digits(s, len));
}

/*
 * The line at the cursor, if it is whole in the input buffer, and the
 * lines after it into the ring.  A frame line entering the ring has its
 * hash taken and its cache slot fetched, so that by the time it is read
 * the slot is in the cache: on a real capture the table is megabytes,
 * and each lookup waited for memory (without the fetch kp-inclusive
 * took 1.17x the time).  Fetching the entry too, once the slot is in,
 * paid nothing.  Only the bytes that the plain path reads are looked at,
 * the same way (trim()); nothing here changes what is read.
 */
static struct ahead *
ahead(struct kp_reader *rd)
{
	const char *b, *end, *nl, *s;
	size_t n = kp_input_buffered(rd->in, &b), len;
	struct ahead *a;

	end = b + n;
	if (rd->nring == 0) {
		rd->scan = b;
		rd->dry = NULL;
	}
	/* (a line cut by the buffer's end is searched once, not per line) */
	while (rd->nring < AHEAD && end != rd->dry) {
		nl = memchr(rd->scan, '\n', (size_t)(end - rd->scan));
		if (!nl) {
			rd->dry = end;
			break;
		}
		a = &rd->ring[(rd->head + rd->nring++) % AHEAD];
		s = rd->scan;
		len = (size_t)(nl - s);
		a->bytes = (uint32_t)(len + 1);
		trim(&s, &len);
		a->s = s;
		a->len = (uint32_t)len;
		a->frame = maybe_frame(s, len);
		if (a->frame) {
			a->tag = line_tag(s, len);
			if (rd->tab)
				__builtin_prefetch(
					&rd->tab[a->tag >> (32 - rd->bits)]);
		}
		rd->scan = nl + 1;
	}
	return rd->nring ? &rd->ring[rd->head] : NULL;
}

/*
 * One trimmed line, its tag taken if it is a frame line and has_tag:
 * the record it ends, or NULL.
 */
static const struct kp_stack *
line(struct kp_reader *rd, const char *s, size_t len, uint32_t tag,
     bool has_tag)
{
	const struct kp_frame *f;
	const char *why;
	uint64_t count;
	uint32_t ref;

	if (len == 0)
		return NULL;
	if (*s == '!' && len == 1) {
		if (rd->n && !rd->bad)
			kp_input_skip(rd->in, "record ends without a count "
					      "line; %zu frame%s dropped",
				      rd->n, rd->n == 1 ? "" : "s");
		rd->n = 0;
		rd->bad = false;
		return NULL;
	}
	if (*s == '#') {
		if (memchr(s, '\0', len))
			kp_input_skip(rd->in, "NUL byte in metadata");
		else if (kp_meta_count() >= MAX_META)
			kp_input_skip(rd->in, "more than %d metadata lines",
				      MAX_META);
		else
			kp_meta_add_line(s, len);
		return NULL;
	}
	if (*s >= '0' && *s <= '9' && all_digits(s, len)) {
		const struct kp_stack *st = NULL;

		if (kp_parse_u64(s, len, 10, &count) < 0) {
			kp_input_skip(rd->in, "count does not fit in 64 "
					      "bits; record dropped");
		} else if (rd->n == 0) {
			if (!rd->bad)
				kp_input_skip(rd->in, "count without frames");
		} else if (!rd->bad) {
			rd->st.frames = rd->frames;
			rd->st.n = rd->n;
			rd->st.count = count;
			st = &rd->st;
		}
		rd->n = 0;
		rd->bad = false;
		return st;
	}
	if (!has_tag)
		tag = line_tag(s, len);
	f = frame_for_line(rd, s, len, tag, &why, &ref);
	if (f) {
		push(rd, f, ref ? ent_at(rd, ref)->id : f->id);
		return NULL;
	}
	if (*s == '0' && hex_list(rd, s, len))
		return NULL;
	if (!rd->bad)
		kp_input_skip(rd->in, "%s; record dropped", why);
	rd->bad = true;
	return NULL;
}

const struct kp_stack *
kp_reader_next(struct kp_reader *rd)
{
	const struct kp_stack *st;
	struct ahead a, *h;
	const char *s;
	size_t len;

	for (;;) {
		if (kp_reader_fast && (h = ahead(rd)) != NULL) {
			a = *h;
			rd->head = (rd->head + 1) % AHEAD;
			rd->nring--;
			kp_input_consume(rd->in, a.bytes, 1);
			st = line(rd, a.s, a.len, a.tag, a.frame);
		} else {
			/* a line not whole in the buffer: it may move */
			rd->nring = 0;
			s = kp_input_getline(rd->in, &len);
			if (!s)
				break;
			trim(&s, &len);
			st = line(rd, s, len, 0, false);
		}
		if (st)
			return st;
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
	size_t i;

	if (!rd)
		return;
	kp_input_close(rd->in);
	free(rd->frames);
	free(rd->ids);
	for (i = 0; i < rd->nchunks; i++)
		free(rd->chunks[i]);
	free(rd->chunks);
	free(rd->tab);
	free(rd);
}
