/*
 * writer.c - the canonical kp writer (man/kp.5, CANONICAL FORM):
 *
 *	# key: value
 *	!
 *	 0xffffffff814cde75 : net_rx_action+0x105/0x2b0 [kernel]
 *	 0xffffffff81000000 [kernel+0x10/0x20]
 *	 : folded_frame [kernel]
 *		1168
 *	!
 */
#include <inttypes.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "bytes.h"
#include "internal.h"

/*
 * A record is built in one buffer and written with one fwrite: on
 * profiles of many distinct stacks, stdio calls per field (and printf's
 * format parsing for each address) were a sixth of a converter's time.
 * Write errors show in ferror(), which kp_output_finish checks.
 */
static char *line_buf;
static size_t line_cap;

static char *
reserve(size_t n)
{
	if (line_cap < n) {
		line_cap = n + 256;
		line_buf = kp_xrealloc(line_buf, line_cap);
	}
	return line_buf;
}

/* Each byte's two hex digits. */
static const char hexpair[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* "0x" and v in hex, no leading zeros (printf's "0x%" PRIx64) */
static char *
put_hex(char *p, uint64_t v)
{
	int n = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1, i;

	*p++ = '0';
	*p++ = 'x';
	if (n & 1) {
		p[0] = hexpair[2 * ((v >> (4 * (n - 1))) & 15) + 1];
		p++;
		n--;
	}
	for (i = n - 2; i >= 0; i -= 2) {
		memcpy(p, hexpair + 2 * ((v >> (4 * i)) & 255), 2);
		p += 2;
	}
	return p;
}

/* v as 16 hex digits ("%016" PRIx64) */
static char *
put_hex16(char *p, uint64_t v)
{
#ifdef __SSE2__
	/* its bytes, first the highest; each byte's two nibbles in turn;
	 * each nibble '0' + n, or 'a' + n - 10 past 9 */
	const __m128i b = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	const __m128i lo = _mm_and_si128(b, _mm_set1_epi8(0x0f));
	const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4),
					 _mm_set1_epi8(0x0f));
	const __m128i n = _mm_unpacklo_epi8(hi, lo);
	const __m128i d = _mm_add_epi8(
		_mm_add_epi8(n, _mm_set1_epi8('0')),
		_mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)),
			      _mm_set1_epi8('a' - '0' - 10)));

	_mm_storeu_si128((__m128i *)(void *)p, d);
#else
	int i;

	for (i = 14; i >= 0; i -= 2) {
		memcpy(p + i, hexpair + 2 * (v & 255), 2);
		v >>= 8;
	}
#endif
	return p + 16;
}

static char *
put_dec(char *p, uint64_t v)
{
	char t[20];
	int n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

static char *
put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* The symbol, quoted with \" and \\ escapes when bare it would misread. */
static char *
put_sym(char *p, const char *s, size_t n)
{
	if (!kp_sym_needs_quote(s))
		return put_str(p, s, n);
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

/* "+0xOFF" or "+0xOFF/0xSIZE" */
static char *
put_offsize(char *p, const struct kp_frame *f)
{
	*p++ = '+';
	p = put_hex(p, f->off);
	if (f->flags & KP_F_SIZE) {
		*p++ = '/';
		p = put_hex(p, f->size);
	}
	return p;
}

/* The room f's line may take, its three strings' lengths in *ls, *lm
 * and *lf (the symbol twice: quoted, each byte may be escaped). */
static size_t
frame_room(const struct kp_frame *f, size_t *ls, size_t *lm, size_t *lf)
{
	*ls = f->sym ? strlen(f->sym) : 0;
	*lm = f->module ? strlen(f->module) : 0;
	*lf = f->file ? strlen(f->file) : 0;
	return 128 + 2 * *ls + *lm + *lf;
}

/* f's line at p, the lengths from frame_room; returns its end. */
static char *
put_frame(char *p, const struct kp_frame *f, size_t ls, size_t lm, size_t lf)
{
	if (f->flags & KP_F_ADDR) {
		p = put_str(p, " 0x", 3);
		p = put_hex16(p, f->addr);
	}
	if (f->sym) {
		p = put_str(p, " : ", 3);
		p = put_sym(p, f->sym, ls);
		if (f->flags & KP_F_OFF)
			p = put_offsize(p, f);
	}
	if (f->module) {
		p = put_str(p, " [", 2);
		p = put_str(p, f->module, lm);
		if (!f->sym && (f->flags & KP_F_OFF))
			p = put_offsize(p, f);
		*p++ = ']';
	}
	if (f->flags & KP_F_INEXACT)
		p = put_str(p, " (inexact)", 10);
	if (f->flags & KP_F_INLINE)
		p = put_str(p, " (inline)", 9);
	if (f->file) {
		p = put_str(p, " (at ", 5);
		p = put_str(p, f->file, lf);
		if (f->line) {
			*p++ = ':';
			p = put_dec(p, f->line);
		}
		*p++ = ')';
	}
	*p++ = '\n';
	return p;
}

void
kp_line_parts(struct kp_line_parts *lp, const char *sym, const char *module)
{
	size_t ns = sym ? strlen(sym) : 0, nm = module ? strlen(module) : 0;
	char *p;

	/* (16 bytes readable past the tail: kp_line_put copies 16 at a
	 * time, kp_copy16) */
	lp->head = p = kp_xmalloc(2 * ns + nm + 32);
	if (sym) {
		p = put_str(p, " : ", 3);
		p = put_sym(p, sym, ns);
	}
	lp->nhead = (uint32_t)(p - lp->head);
	lp->tail = p;
	if (module) {
		p = put_str(p, " [", 2);
		p = put_str(p, module, nm);
		*p++ = ']';
	}
	lp->ntail = (uint32_t)(p - lp->tail);
	lp->sym = sym != NULL;
}

char *
kp_line_put(char *p, uint64_t addr, uint64_t off, unsigned flags,
	    const struct kp_line_parts *lp)
{
	if (flags & KP_F_ADDR) {
		memcpy(p, " 0x", 3);
		p = put_hex16(p + 3, addr);
	}
	p = kp_copy16(p, lp->head, lp->nhead);
	if (flags & KP_F_OFF) {
		*p++ = '+';
		p = put_hex(p, off);
	}
	p = kp_copy16(p, lp->tail, lp->ntail);
	if (flags & KP_F_INLINE)
		p = put_str(p, " (inline)", 9);
	*p++ = '\n';
	return p;
}

size_t
kp_line_room(const struct kp_frame *f)
{
	size_t ls, lm, lf;

	return frame_room(f, &ls, &lm, &lf);
}

char *
kp_line_frame(char *p, const struct kp_frame *f)
{
	size_t ls, lm, lf;

	frame_room(f, &ls, &lm, &lf);
	return put_frame(p, f, ls, lm, lf);
}

void
kp_write_frame(FILE *out, const struct kp_frame *f)
{
	size_t ls, lm, lf;
	char *b = reserve(frame_room(f, &ls, &lm, &lf)), *p;

	p = put_frame(b, f, ls, lm, lf);
	fwrite_unlocked(b, 1, (size_t)(p - b), out);
}

void
kp_write_meta(FILE *out)
{
	size_t i, n = kp_meta_count();

	for (i = 0; i < n; i++) {
		fputs(kp_meta_line(i), out);
		putc('\n', out);
	}
}

/*
 * The lines of frames written more than once, by frame id: a profile's
 * records share most of their frames (perf2kp's output of the check
 * capture: 1,040,000 frame lines, 150,000 distinct, 30,600 of them
 * written more than once), and a line copied is cheaper than a line made
 * (perf2kp alone 0.93x the time there).  A frame's entry holds the frame
 * once it was written (its line made then, not kept) and its line from
 * its second writing on.  kp_write_stack's frames are interned, so an id
 * names one frame; one whose id is not a frame's is made each time.
 */
struct seen {
	const struct kp_frame *f;
	const char *line; /* NULL: written once */
	size_t len;
};
static struct seen *seen;
static size_t nseen;
static struct kp_pool seen_lines;

/* The entry of f, id its own; NULL if it has none. */
static struct seen *
seen_of(const struct kp_frame *f)
{
	size_t id = f->id;

	if (id >= kp_frame_count())
		return NULL;
	seen = kp_grow_for(seen, &nseen, sizeof(*seen), id);
	if (seen[id].f != f && seen[id].f)
		return NULL;
	return &seen[id];
}

/* The record in the buffer, written with one fwrite (with one a frame
 * line, perf2kp took 1.11 times as long to write 1.2 million of them). */
void
kp_write_stack(FILE *out, const struct kp_stack *st)
{
	size_t i, at, ls, lm, lf, room;
	struct seen *s;
	char *p, *b;

	p = reserve(64);
	p = put_str(p, "!\n", 2);
	for (i = 0; i < st->n; i++) {
		s = seen_of(st->frames[i]);
		at = (size_t)(p - line_buf);
		if (s && s->line) {
			if (line_cap - at < s->len + 32)
				p = reserve(2 * line_cap + s->len + 32) + at;
			p = put_str(p, s->line, s->len);
			continue;
		}
		room = frame_room(st->frames[i], &ls, &lm, &lf);
		if (line_cap - at < room + 32)
			p = reserve(2 * line_cap + room + 32) + at;
		b = p;
		p = put_frame(p, st->frames[i], ls, lm, lf);
		if (!s)
			continue;
		if (!s->f) {
			s->f = st->frames[i];
		} else {
			s->len = (size_t)(p - b);
			s->line = memcpy(kp_pool_alloc(&seen_lines, s->len),
					 b, s->len);
		}
	}
	*p++ = '\t';
	p = put_dec(p, st->count);
	*p++ = '\n';
	fwrite_unlocked(line_buf, 1, (size_t)(p - line_buf), out);
}

void
kp_write_end(FILE *out)
{
	fputs("!\n", out);
}

static void
write_one(void *out, const struct kp_stack *st)
{
	kp_write_stack(out, st);
}

void
kp_write_agg(FILE *out, struct kp_agg *agg)
{
	kp_write_meta(out);
	kp_agg_each(agg, write_one, out);
	kp_write_end(out);
}
