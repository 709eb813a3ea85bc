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

#include "bytes.h"
#include "scan.h"
#include "internal.h"
#include "perf_lines.h"

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

/* A frame line's symbol and module, for the name cache (name_shape()) */
struct shape {
	const char *sym, *mod;
	size_t slen, mlen; /* slen 0: no symbol */
	uint8_t kern; /* a bare address read by its kind (KP_KEY_BARE_KERNEL):
		       * 1 + whether it is the kernel's; else 0 */
};

enum { LINE_ANY, LINE_TAG, LINE_NAME };

struct ahead {
	const char *s; /* the line, trimmed */
	size_t len;
	uint32_t bytes; /* of the whole line, with its '\n' */
	uint32_t tag;   /* LINE_TAG: the line's hash (see frame_for_line);
			 * LINE_NAME: its name's (name_tag()) */
	int kind;	/* LINE_ANY: not looked at yet */
	struct shape sh; /* LINE_NAME's */
};

struct kp_reader {
	struct kp_input *in;
	const struct kp_frame **frames;
	uint32_t *ids; /* frames[i]->id */
	size_t n, cap;
	bool bad; /* the current record holds a rejected line */
	struct kp_stack st;
	kp_frame_key_fn key; /* kp_reader_set_key's, or NULL */
	unsigned ignores;    /* kp_reader_key_ignores's */
	/* the line cache */
	struct line_slot *tab;
	unsigned bits; /* the table has 1 << bits slots */
	size_t nents;
	char **chunks;
	size_t nchunks, chunkcap, used; /* used: bytes of the last chunk */
	/* the name cache (see name_frame()), its entries in the same chunks */
	struct line_slot *ntab;
	unsigned nbits;
	size_t nnents;
	struct name_ent *nlast; /* the lean path's last line's name, or NULL */
	uint32_t nstart; /* the name the last record began with, or 0 */
	uint32_t *byaddr; /* the name last read at an address (lean_slot) */
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

void
kp_reader_key_ignores(struct kp_reader *rd, unsigned what)
{
	/* without a key every line is its own frame: nothing is ignored */
	rd->ignores = rd->key ? what : 0;
	/* (between records: the lines ahead were looked at for the last) */
	rd->nring = 0;
	rd->nlast = NULL;
}

const uint32_t *
kp_reader_ids(const struct kp_reader *rd)
{
	return rd->ids;
}

static void
grow_frames(struct kp_reader *rd)
{
	rd->cap *= 2;
	rd->frames = kp_xrealloc(rd->frames, rd->cap * sizeof(*rd->frames));
	rd->ids = kp_xrealloc(rd->ids, rd->cap * sizeof(*rd->ids));
}

/* (inline, its growing not: once a frame line) */
static inline void
push(struct kp_reader *rd, const struct kp_frame *f, uint32_t id)
{
	if (__builtin_expect(rd->n == rd->cap, 0))
		grow_frames(rd);
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
		/* (16 bytes more: an entry's text is read 16 at a time) */
		rd->chunks[rd->nchunks++] = kp_xmalloc(ENT_CHUNK + 16);
		rd->used = 8;
	}
	ref = (uint32_t)((rd->nchunks - 1) << ENT_SHIFT | rd->used >> 3);
	rd->used += size;
	return ref;
}

/* A table (*tab of 1 << *bits slots) doubled, from 1024 slots, its
 * entries put in their places. */
static void
grow_table(struct line_slot **tab, unsigned *bits)
{
	struct line_slot *old = *tab;
	size_t oldcap = old ? (size_t)1 << *bits : 0, i, j, mask;

	*bits = old ? *bits + 1 : 10;
	mask = ((size_t)1 << *bits) - 1;
	*tab = kp_xcalloc(mask + 1, sizeof(**tab));
	for (i = 0; i < oldcap; i++) {
		if (!old[i].ref)
			continue;
		for (j = old[i].tag >> (32 - *bits); (*tab)[j].ref;
		     j = (j + 1) & mask)
			;
		(*tab)[j] = old[i];
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

static inline uint32_t
word32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * A hash of a line (or a name) of its first 32 bytes and its last 16
 * (frame lines differ in their address at the start and in their module
 * at the end), and its length, in a few multiplies inline; its tag is
 * the top 32 bits.
 */
static inline uint64_t
line_hash(const char *s, size_t len)
{
	uint64_t h, v = 0;

	if (len < 8) {
		/* every byte in v, without a memcpy of a variable length (a
		 * call, its bytes then read back as one word: "kernel", the
		 * module of most frame lines, cost kp-inclusive 4% here) */
		if (len >= 4)
			v = (uint64_t)word32(s) << 32 | word32(s + len - 4);
		else if (len > 0)
			v = (uint64_t)(unsigned char)s[0] << 16 |
			    (uint64_t)(unsigned char)s[len >> 1] << 8 |
			    (unsigned char)s[len - 1];
		return kp_mix(v ^ 0xa0761d6478bd642full,
			   len ^ 0x9e3779b97f4a7c15ull);
	}
	if (len < 16)
		return kp_mix(word(s) ^ 0xa0761d6478bd642full,
			   word(s + len - 8) ^ len ^ 0x9e3779b97f4a7c15ull);
	h = kp_mix(word(s) ^ 0xa0761d6478bd642full,
		word(s + 8) ^ 0xe7037ed1a0b428dbull);
	if (len >= 32)
		h ^= kp_mix(word(s + 16) ^ 0x8ebc6af09c88c6e3ull,
			 word(s + 24) ^ 0x589965cc75374cc3ull);
	return kp_mix(h ^ word(s + len - 16) ^ 0x1d8e4e27c47d124full,
		   word(s + len - 8) ^ len ^ 0x9e3779b97f4a7c15ull);
}

static inline uint32_t
line_tag(const char *s, size_t len)
{
	return (uint32_t)(line_hash(s, len) >> 32);
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
		grow_table(&rd->tab, &rd->bits);
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
 * ---- the name cache ----
 *
 * A filter whose key ignores addresses (kp_reader_key_ignores) needs
 * each distinct name, not each distinct line: on a capture of mostly
 * distinct stacks most lines differ from another only in their address
 * (perf2kp's output of perfdata-check.data: 939,000 frame lines, 150,000
 * distinct, 67,000 distinct symbols and modules), and a table of every
 * line waits for memory.  So a line of one of the shapes a converter
 * writes
 *
 *	0xADDR : SYM+0xOFF/0xSIZE [MODULE]	(KP_KEY_NAMED; or no /0xSIZE)
 *	0xADDR [MODULE+0xOFF]			(KP_KEY_MODULE; or with /0xSIZE,
 *	0xADDR [MODULE]				 or no offset)
 *	0xADDR					(KP_KEY_UNNAMED; or
 *						 KP_KEY_BARE_KERNEL)
 *
 * is looked up by its symbol and module alone (a bare address under
 * KP_KEY_BARE_KERNEL, by whether it is the kernel's), in a table of
 * its own.
 * Only lines the parser reads as exactly that are taken: ADDR, OFF and
 * SIZE of 1 to 16 hex digits after "0x"; SYM not empty, not beginning
 * with a blank or '"'; MODULE not empty; after a symbol, MODULE without
 * '[' (the parser takes the last " [" for the module's start); without
 * an offset, MODULE not ending in what the parser would take for one;
 * no NUL.  kp_frame_parse then gives the frame {ADDR, SYM, OFF, SIZE,
 * MODULE} (without the offset when it is the address), {ADDR, MODULE,
 * OFF, SIZE}, {ADDR, MODULE} or {ADDR}: its symbol and module are that
 * text, and what else differs the key ignores.  test_reader and
 * fuzz_reader read their inputs with such keys both ways
 * (kp_reader_fast), and the records must be the same.
 */
/*
 * The bytes of w (8 of the line, the first lowest) that are hex digits
 * as kp_conv_xdigit has them (0-9, a-f, A-F): 0x80 in each.  Each test
 * of a range adds to the low 7 bits, which cannot carry into the next
 * byte, and a byte with its top bit set is not one.
 */
static inline uint64_t
hex_bytes(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7;
	uint64_t x = w & ~high, l = x | 0x20 * ones; /* l: letters lower */
	uint64_t digit = (x + 0x50 * ones) & ~(x + 0x46 * ones);
	uint64_t alpha = (l + 0x1f * ones) & ~(l + 0x19 * ones);

	return (digit | alpha) & ~w & high;
}

/* Are the 16 hex digits at d an address of the kernel's
 * (kp_addr_is_kernel: 0xffff8... and up)? */
static inline bool
hex16_kernel(const char *d)
{
	return (d[0] | 0x20) == 'f' && (d[1] | 0x20) == 'f' &&
	       (d[2] | 0x20) == 'f' && (d[3] | 0x20) == 'f' && d[4] >= '8';
}

/* The first byte past the hex digits from p on, not past e. */
static inline const char *
hex_after(const char *p, const char *e)
{
	uint64_t not_hex;

	while (e - p >= 8) {
		not_hex = ~hex_bytes(word(p)) & (0x0101010101010101ull << 7);
		if (not_hex)
			return p + (__builtin_ctzll(not_hex) >> 3);
		p += 8;
	}
	while (p < e && kp_conv_xdigit(*p))
		p++;
	return p;
}

/* The "0x" of "0xHEX" (1 to 16 digits) that ends at e, not before b;
 * NULL if there is none. */
static inline const char *
hex_before(const char *b, const char *e)
{
	const char *p = e;
	uint64_t not_hex;

	while (p - b >= 8) {
		not_hex = ~hex_bytes(word(p - 8)) &
			  (0x0101010101010101ull << 7);
		if (not_hex) {
			p -= __builtin_clzll(not_hex) >> 3;
			goto done;
		}
		p -= 8;
	}
	while (p > b && kp_conv_xdigit(p[-1]))
		p--;
done:
	if (p == e || e - p > 16 || p - b < 2 || p[-1] != 'x' || p[-2] != '0')
		return NULL;
	return p - 2;
}

/* The '+' of "+0xOFF" or "+0xOFF/0xSIZE" that ends at e, after b; NULL
 * if there is none. */
static inline const char *
offsize_before(const char *b, const char *e)
{
	const char *h = hex_before(b, e);

	if (!h || h == b)
		return NULL;
	if (h[-1] == '/') {
		h = hex_before(b, h - 1);
		if (!h || h == b)
			return NULL;
	}
	return h[-1] == '+' ? h - 1 : NULL;
}

/* The last '[' in [b, e), or NULL: the 16 bytes before e a word at a
 * time (a kernel frame's " [kernel]"), then memrchr. */
static inline const char *
last_bracket(const char *b, const char *e)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7;
	uint64_t w, x;
	int k;

	for (k = 0; k < 2 && e - b >= 8; k++) {
		w = word(e - 8) ^ ('[' * ones);
		/* 0x80 in each byte that was '[' (exact: no borrow between
		 * bytes, as hex_bytes) */
		x = ~(((w & ~high) + ~high) | w) & high;
		if (x)
			return e - 8 + (63 - __builtin_clzll(x)) / 8;
		e -= 8;
	}
	return memrchr(b, '[', (size_t)(e - b));
}

/* Does the module text [b, e), which has no offset the lean way, end
 * in what the parser could take for one ("+" and hex digits, 'x', '/')? */
static inline bool
offset_like(const char *b, const char *e)
{
	const char *p;

	for (p = e; p > b; p--)
		if (!kp_conv_xdigit(p[-1]) && p[-1] != 'x' && p[-1] != 'X' &&
		    p[-1] != '/')
			break;
	return p > b && p[-1] == '+';
}

/* Is the (trimmed) line of one of the shapes above that rd's key
 * ignores the numbers of?  Its symbol and module into *sh. */
static bool
name_shape(const struct kp_reader *rd, const char *s, size_t len,
	   struct shape *sh)
{
	const char *e = s + len, *p, *q, *plus;

	if (len < 3 || s[0] != '0' || s[1] != 'x')
		return false;
	p = hex_after(s + 2, e);
	if (p == s + 2 || p - (s + 2) > 16)
		return false;
	sh->sym = sh->mod = "";
	sh->slen = sh->mlen = 0;
	sh->kern = 0;
	if (p == e) {
		if ((rd->ignores & KP_KEY_UNNAMED) == KP_KEY_UNNAMED)
			return true;
		if (!(rd->ignores & KP_KEY_BARE_KERNEL))
			return false;
		sh->kern = 1 + (p - (s + 2) == 16 && hex16_kernel(s + 2));
		return true;
	}
	if (e[-1] != ']' || *p != ' ' || e - p < 4)
		return false;
	if (p[1] == '[') {
		if (!(rd->ignores & KP_KEY_MODULE))
			return false;
		sh->mod = p + 2;
		plus = offsize_before(sh->mod, e - 1);
		if (!plus) {
			/* no offset: not if the parser could take one */
			if (offset_like(sh->mod, e - 1))
				return false;
			plus = e - 1;
		}
		sh->mlen = (size_t)(plus - sh->mod);
		return sh->mlen > 0;
	}
	if (!(rd->ignores & KP_KEY_NAMED) || p[1] != ':' || p[2] != ' ')
		return false;
	sh->sym = p + 3;
	if (*sh->sym == ' ' || *sh->sym == '\t' || *sh->sym == '"')
		return false;
	q = last_bracket(sh->sym, e - 1);
	if (!q || q == e - 2 || q - sh->sym < 2 || q[-1] != ' ')
		return false;
	sh->mod = q + 1;
	sh->mlen = (size_t)(e - 1 - sh->mod);
	plus = offsize_before(sh->sym, q - 1);
	if (!plus || plus == sh->sym)
		return false;
	sh->slen = (size_t)(plus - sh->sym);
	return true;
}

/* a name entry of at most this much text has room for a line's tail */
#define TAIL_NAMES 256

struct name_ent {
	const struct kp_frame *f; /* the key */
	uint32_t id;		  /* f->id */
	uint32_t next; /* the name the line after it had last (lean path) */
	uint16_t slen, mlen;
	uint16_t tlen; /* the tail's bytes, or 0 (lean_known) */
	bool bare; /* a module alone that a line without an offset can give
		    * (lean_known) */
	bool tails; /* the text has room for the tail (TAIL_NAMES) */
	uint8_t kern; /* a bare address's kind (shape's kern), or 0 */
	char text[]; /* the symbol, then the module; then (tails) the tail:
		      * the text after the address of the last line of this
		      * name the lean path read, to its '\n' (slen + mlen + 48
		      * bytes of room: " : ", the offsets, " [", "]\n") */
};

static inline char *
tail_of(struct name_ent *n)
{
	return n->text + n->slen + n->mlen;
}

static inline uint32_t
name_tag(const struct shape *sh)
{
	return (uint32_t)((line_hash(sh->sym, sh->slen) ^
			   line_hash(sh->mod, sh->mlen) *
				   0x9e3779b97f4a7c15ull ^
			   sh->kern * 0xc2b2ae3d27d4eb4full) >> 32);
}

/*
 * The key of a frame line of that shape and tag (its whole text s, len,
 * for the parser the first time), and its id in *id; NULL if its symbol
 * or module holds a NUL (the parser refuses the line: read it as any).
 */
static const struct kp_frame *
name_frame(struct kp_reader *rd, const char *s, size_t len,
	   const struct shape *sh, uint32_t tag, uint32_t *id,
	   uint32_t *refp)
{
	uint32_t ref;
	const struct kp_frame *fp;
	const char *why;
	struct kp_frame f;
	struct name_ent *e;
	size_t mask, j;
	bool tails;

	if ((rd->nnents + 1) * 4 > ((size_t)3 << rd->nbits))
		grow_table(&rd->ntab, &rd->nbits);
	mask = ((size_t)1 << rd->nbits) - 1;
	for (j = tag >> (32 - rd->nbits); rd->ntab[j].ref; j = (j + 1) & mask) {
		if (rd->ntab[j].tag != tag)
			continue;
		e = (struct name_ent *)(void *)ent_at(rd, rd->ntab[j].ref);
		if (e->slen == sh->slen && e->mlen == sh->mlen &&
		    e->kern == sh->kern &&
		    memcmp(e->text, sh->sym, sh->slen) == 0 &&
		    memcmp(e->text + sh->slen, sh->mod, sh->mlen) == 0) {
			*id = e->id;
			*refp = rd->ntab[j].ref;
			return e->f;
		}
	}
	/* (a NUL is looked for here: the text of an entry has none) */
	if (memchr(sh->sym, '\0', sh->slen) ||
	    memchr(sh->mod, '\0', sh->mlen) ||
	    kp_frame_parse(s, len, &f, &why) < 0)
		return NULL;
	fp = rd->key(&f);
	*id = fp->id;
	*refp = 0;
	/* half as many names as lines: both kinds of entry, each at most
	 * MAX_CACHED_LEN bytes, still fit references of 32 bits */
	if (rd->nnents < MAX_CACHED_LINES / 2 &&
	    sh->slen + sh->mlen <= MAX_CACHED_LEN) {
		tails = sh->slen + sh->mlen <= TAIL_NAMES;
		ref = ent_alloc(rd, offsetof(struct name_ent, text) +
					    (sh->slen + sh->mlen) * (tails ? 2 : 1) +
					    (tails ? 48 : 0));
		e = (struct name_ent *)(void *)ent_at(rd, ref);
		e->f = fp;
		e->id = fp->id;
		e->next = 0;
		e->slen = (uint16_t)sh->slen;
		e->mlen = (uint16_t)sh->mlen;
		e->tlen = 0;
		e->tails = tails;
		e->kern = sh->kern;
		memcpy(e->text, sh->sym, sh->slen);
		memcpy(e->text + sh->slen, sh->mod, sh->mlen);
		e->bare = !sh->slen && sh->mlen &&
			  !offsize_before(e->text, e->text + sh->mlen) &&
			  !offset_like(e->text, e->text + sh->mlen);
		rd->ntab[j].tag = tag;
		rd->ntab[j].ref = ref;
		rd->nnents++;
		*refp = ref;
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
		a->len = len;
		a->kind = LINE_ANY;
		if (!maybe_frame(s, len)) {
		} else if (rd->ignores && name_shape(rd, s, len, &a->sh)) {
			a->kind = LINE_NAME;
			a->tag = name_tag(&a->sh);
			if (rd->ntab)
				__builtin_prefetch(
					&rd->ntab[a->tag >> (32 - rd->nbits)]);
		} else {
			a->kind = LINE_TAG;
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
 * One trimmed line (a->s, a->len; what ahead() found of it, or
 * LINE_ANY): the record it ends, or NULL.
 */
static const struct kp_stack *
line(struct kp_reader *rd, struct ahead *a)
{
	const char *s = a->s, *why;
	size_t len = a->len;
	const struct kp_frame *f;
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
	if (a->kind == LINE_ANY) {
		if (rd->ignores && kp_reader_fast &&
		    name_shape(rd, s, len, &a->sh)) {
			a->kind = LINE_NAME;
			a->tag = name_tag(&a->sh);
		} else {
			a->tag = line_tag(s, len);
		}
	}
	if (a->kind == LINE_NAME) {
		uint32_t nref;

		f = name_frame(rd, s, len, &a->sh, a->tag, &ref, &nref);
		if (f) {
			push(rd, f, ref);
			return NULL;
		}
		a->tag = line_tag(s, len); /* refused: read as any line */
	}
	f = frame_for_line(rd, s, len, a->tag, &why, &ref);
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

/*
 * ---- the lean path ----
 *
 * With a key that ignores addresses, most lines of a stream are frame
 * lines as a writer prints them: " 0x", 16 hex digits, then " : " and a
 * symbol, its offset and a module, or " [MODULE+0xOFF]", " [MODULE]",
 * or nothing; and the "\tCOUNT" and "!" between records.  Each is read
 * where it lies in the input buffer, and nothing else is done (not the
 * ring of lines ahead: the names of a capture are few, 67,000 or 9,000
 * where its lines are 150,000, and their table is seldom out of the
 * cache).  A frame line is first taken for the name that followed the
 * last line's the last time (at a record's start, the name the last
 * record began with): where it is that name's, its end is where the
 * name says and no search for it is made (lean_known; on perf2kp's
 * real capture 3 lines in 4).  Else its end is found and its name
 * looked up in the name cache (name_shape, name_frame).  Any other line
 * (metadata, another shape, blanks at its end, one the name cache
 * refuses, a count or "!" not where a record ends or begins) goes to
 * line() as the plain path reads it, the lines before it counted as
 * read: the same records, messages and line numbers.
 */

static inline struct name_ent *
name_at(const struct kp_reader *rd, uint32_t ref)
{
	return (struct name_ent *)(void *)ent_at(rd, ref);
}

/* "+0xOFF" or "+0xOFF/0xSIZE" at q, 1 or more digits each: its end,
 * or NULL; 40 bytes readable from q.  (More than 16 digits: the end is
 * a 17th, no blank, '/' or ']', and lean_known refuses the line.) */
static inline const char *
offsize_known(const char *q)
{
	size_t h;

	if (q[0] != '+' || q[1] != '0' || q[2] != 'x' ||
	    !(h = kp_hex_len16(q + 3)))
		return NULL;
	q += 3 + h;
	if (q[0] == '/' && q[1] == '0' && q[2] == 'x') {
		if (!(h = kp_hex_len16(q + 3)))
			return NULL;
		q += 3 + h;
	}
	return q;
}

/*
 * The line at p, if it is a frame line of name entry n's shape with its
 * name, as name_shape() reads it: " 0xADDR : SYM+0xOFF [MOD]",
 * " 0xADDR [MOD+0xOFF]" ("/0xSIZE" after either offset), " 0xADDR
 * [MOD]" (n->bare: the module cannot be taken for one with an offset)
 * or " 0xADDR", one blank before and nothing after: its '\n', else
 * NULL.  The line ends where n says (the bytes before hold no '\n': nor
 * does n's text), so it is not searched for.  Then name_shape() finds
 * n's name there: the module has no '[' (name_shape took it so once),
 * and what the offsets are is all hex digits.  LEAN_MARGIN bytes more
 * than n's text are readable from p.  lean_addr() reads " 0xADDR",
 * lean_shape() the rest, from q = p + 19.
 */
#define LEAN_MARGIN 96

static inline const char *
lean_shape(const char *q, const struct name_ent *n)
{
	const char *mod = n->text + n->slen;

	if (n->slen) {
		if (q[0] != ' ' || q[1] != ':' || q[2] != ' ' ||
		    !kp_bytes_eq(q + 3, n->text, n->slen) ||
		    !(q = offsize_known(q + 3 + n->slen)) || q[0] != ' ' ||
		    q[1] != '[' || !kp_bytes_eq(q + 2, mod, n->mlen))
			return NULL;
		q += 2 + n->mlen;
		return q[0] == ']' && q[1] == '\n' ? q + 1 : NULL;
	}
	if (!n->mlen)
		return q[0] == '\n' ? q : NULL;
	if (q[0] != ' ' || q[1] != '[' || !kp_bytes_eq(q + 2, mod, n->mlen))
		return NULL;
	q += 2 + n->mlen;
	if (q[0] == ']')
		return n->bare && q[1] == '\n' ? q + 1 : NULL;
	q = offsize_known(q);
	return q && q[0] == ']' && q[1] == '\n' ? q + 1 : NULL;
}

/* lean_shape(), or the same bytes as the tail (n's last line that the
 * lean path read had them after its address, so they read as n): then
 * they are compared, not read again; else read, and kept as the tail.
 * On perf2kp's real capture 763,000 of 971,000 frame lines match the
 * tail: kp-fold's instructions 377.7M -> 344.8M with lean_addr(). */
static inline const char *
lean_known(const char *q, struct name_ent *n)
{
	const char *nl;

	if (n->tlen && kp_bytes_eq(q, tail_of(n), n->tlen))
		return q + n->tlen - 1;
	nl = lean_shape(q, n);
	if (nl && n->tails) {
		n->tlen = (uint16_t)(nl + 1 - q);
		memcpy(tail_of(n), q, n->tlen);
	}
	return nl;
}

/* The slot of rd->byaddr of the frame line at p (19 bytes readable):
 * its address's text hashed.  (64K slots, 256 KiB: perf2kp's real
 * capture has 141,700 addresses; with 16K slots kp-fold took 2.7% more
 * instructions, reading more lines afresh.  Each line's slot is fetched
 * before its guess is tried: kp-fold took 1.017x the time without.) */
#define BYADDR_BITS 16

static inline uint32_t *
lean_slot(const struct kp_reader *rd, const char *p)
{
	uint64_t h = (word(p + 3) * 0x9e3779b97f4a7c15ull ^ word(p + 11)) *
		     0xbf58476d1ce4e5b9ull;

	return &rd->byaddr[h >> (64 - BYADDR_BITS)];
}

/* Name ref read at the frame line p: what the next guesses take */
static inline void
lean_link(struct kp_reader *rd, const char *p, uint32_t ref)
{
	if (!rd->n)
		rd->nstart = ref;
	else if (rd->nlast)
		rd->nlast->next = ref;
	*lean_slot(rd, p) = ref;
}

/*
 * A frame line of those shapes (p, len: as it lies, without its
 * newline): its key pushed, LINE_NAME; else LINE_TAG when it is no such
 * line (line() need not look at its shape again: p + 1 is the line
 * trimmed), LINE_ANY when it was not looked at.
 */
static inline int
lean_frame(struct kp_reader *rd, const char *p, size_t len)
{
	const char *s = p + 1;
	const struct kp_frame *f;
	struct shape sh;
	uint32_t id, ref;
	char last;

	if (len < 19 || p[0] != ' ' || p[1] != '0')
		return LINE_ANY;
	last = p[len - 1];
	if (last == ' ' || last == '\t' || last == '\r')
		return LINE_ANY;
	if (!name_shape(rd, s, len - 1, &sh))
		return LINE_TAG;
	f = name_frame(rd, s, len - 1, &sh, name_tag(&sh), &id, &ref);
	if (!f)
		return LINE_TAG; /* refused: read as any line */
	if (ref)
		lean_link(rd, p, ref);
	rd->nlast = ref ? name_at(rd, ref) : NULL;
	push(rd, f, id);
	return LINE_NAME;
}

/* The name the line at the cursor is likely to have (see above): its
 * reference, or 0. */
static inline uint32_t
lean_guess(const struct kp_reader *rd)
{
	return !rd->n ? rd->nstart : rd->nlast ? rd->nlast->next : 0;
}

/* Does the line at p (19 bytes readable) start " 0xADDR", 16 digits? */
static inline bool
lean_addr(const char *p)
{
	return p[0] == ' ' && p[1] == '0' && p[2] == 'x' &&
	       kp_hex_len16(p + 3) == 16;
}

/* The line at p (before e; lean_addr) if it has name g (lean_known): its
 * '\n'; else NULL. */
static inline const char *
lean_try(const char *p, const char *e, struct name_ent *g)
{
	if (e - p < LEAN_MARGIN + g->slen + g->mlen)
		return NULL;
	/* a bare address's name: of its kind only */
	if (g->kern && g->kern != 1 + hex16_kernel(p + 3))
		return NULL;
	return lean_known(p + 19, g);
}

/* The line has name g: its key pushed. */
static inline void
lean_push(struct kp_reader *rd, struct name_ent *g)
{
	rd->nlast = g;
	push(rd, g->f, g->id);
}

static const struct kp_stack *
lean_next(struct kp_reader *rd)
{
	const struct kp_stack *st;
	const char *b, *p, *e, *nl, *s, *q;
	size_t n, len;
	unsigned long lines;
	uint64_t count;
	uint32_t ref;
	struct name_ent *g;
	uint32_t *slot;
	struct ahead a;
	int kind = LINE_ANY;

	if (!rd->byaddr)
		rd->byaddr = kp_xcalloc((size_t)1 << BYADDR_BITS,
					sizeof(*rd->byaddr));
	for (;;) {
		n = kp_input_buffered(rd->in, &b);
		e = b + n;
		for (p = b, lines = 0;; p = nl + 1, lines++) {
			if (e - p >= 19 && lean_addr(p)) {
				slot = lean_slot(rd, p);
				__builtin_prefetch(slot);
				if ((ref = lean_guess(rd)) != 0 &&
				    (nl = lean_try(p, e, g = name_at(rd, ref)))) {
					lean_push(rd, g);
					continue;
				}
				/* else the name last read at its address */
				if ((ref = *slot) != 0 &&
				    (nl = lean_try(p, e, g = name_at(rd, ref)))) {
					lean_link(rd, p, ref);
					lean_push(rd, g);
					continue;
				}
			}
			if (e - p >= 24 && p[0] == '\t' && rd->n && !rd->bad) {
				/* a count of up to 19 digits: it fits */
				for (q = p + 1, count = 0;
				     q < p + 20 && *q >= '0' && *q <= '9'; q++)
					count = count * 10 +
						(uint64_t)(*q - '0');
				if (q > p + 1 && *q == '\n') {
					kp_input_consume(rd->in,
							 (size_t)(q + 1 - b),
							 lines + 1);
					rd->st.frames = rd->frames;
					rd->st.n = rd->n;
					rd->st.count = count;
					rd->n = 0;
					rd->nlast = NULL;
					return &rd->st;
				}
			}
			if (e - p >= 2 && p[0] == '!' && p[1] == '\n' &&
			    !rd->n && !rd->bad) {
				rd->nlast = NULL;
				nl = p + 1;
				continue;
			}
			nl = memchr(p, '\n', (size_t)(e - p));
			if (!nl ||
			    (kind = lean_frame(rd, p, (size_t)(nl - p))) !=
				    LINE_NAME)
				break;
		}
		kp_input_consume(rd->in, (size_t)(p - b), lines);
		if (nl) {
			/* a line of another kind, whole in the buffer */
			s = p;
			len = (size_t)(nl - p);
			kp_input_consume(rd->in, len + 1, 1);
		} else if (!(s = kp_input_getline(rd->in, &len))) {
			return NULL; /* (a line not whole in it may move) */
		} else {
			kind = LINE_ANY;
		}
		rd->nlast = NULL; /* (a count ends the record) */
		trim(&s, &len);
		a.s = s;
		a.len = len;
		a.kind = kind;
		if (kind == LINE_TAG)
			a.tag = line_tag(s, len);
		if ((st = line(rd, &a)) != NULL)
			return st;
	}
}

const struct kp_stack *
kp_reader_next(struct kp_reader *rd)
{
	const struct kp_stack *st;
	struct ahead a, *h;
	const char *s;
	size_t len;

	if (kp_reader_fast && rd->ignores) {
		if ((st = lean_next(rd)) != NULL)
			return st;
		goto end;
	}
	for (;;) {
		if (kp_reader_fast && (h = ahead(rd)) != NULL) {
			a = *h;
			rd->head = (rd->head + 1) % AHEAD;
			rd->nring--;
			kp_input_consume(rd->in, a.bytes, 1);
			st = line(rd, &a);
		} else {
			/* a line not whole in the buffer: it may move */
			rd->nring = 0;
			s = kp_input_getline(rd->in, &len);
			if (!s)
				break;
			trim(&s, &len);
			a.s = s;
			a.len = len;
			a.kind = LINE_ANY;
			st = line(rd, &a);
		}
		if (st)
			return st;
	}
end:
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
	free(rd->ntab);
	free(rd->byaddr);
	free(rd);
}
