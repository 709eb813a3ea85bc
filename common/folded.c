/*
 * folded.c - stacks written as folded lines, in the byte order of their
 * text, without making the text first.
 *
 * A line is its frames' names, ';' between them.  Names have no ';', so
 * a line's text is a sequence of tokens, "NAME;" for an inner frame and
 * "NAME" then the line's end for the last, none a prefix of another:
 * two lines are in the order of their first tokens that differ.  The
 * tokens of the names used are ranked once (cmp_token), a line becomes
 * its tokens' ranks, and the lines are sorted as sequences of numbers,
 * a multikey quicksort (Bentley and Sedgewick): each pass looks at one
 * position of the lines that agree before it, so the long runs of root
 * frames that lines share are not compared again and again.  Sorting
 * the lines' text made first, kp-fold spent 18 ms after its input's end
 * on perf2kp's real capture of bench/ (29,784 lines of 185 bytes).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "folded.h"
#include "radix.h"
#include "util.h"

/* nested partitions before qsort takes over: this, and 2 more a bit of
 * n (test_folded sets it lower: qsort at once, or after a few) */
#ifndef FOLD_DEPTH
#define FOLD_DEPTH 16
#endif

struct fline {
	const uint32_t *r; /* its tokens' ranks (1, 2, ...), root first */
	size_t n;
	uint64_t count;
};

/* A token: a name, and whether the line ends after it (else ';'); pre,
 * its text's sort number (kp_prefix8: the name, then ';' or its end). */
struct token {
	uint64_t pre;
	uint32_t id;
	bool last;
};

/* Tokens in the order of their text: a name's bytes, then the line's end
 * (before any byte) or ';'. */
static int
cmp_token(const void *pa, const void *pb, void *arg)
{
	const struct kp_fold_name *names = arg;
	const struct token *ta = pa, *tb = pb;
	const struct kp_fold_name *a = &names[ta->id], *b = &names[tb->id];
	size_t m = a->len < b->len ? a->len : b->len;
	int c = m ? memcmp(a->s, b->s, m) : 0;

	if (c)
		return c;
	if (a->len == b->len)
		return ta->last == tb->last ? 0 : ta->last ? -1 : 1;
	if (a->len < b->len)
		return ta->last || ';' < (unsigned char)b->s[m] ? -1 : 1;
	return tb->last || ';' < (unsigned char)a->s[m] ? 1 : -1;
}

/*
 * tok[0 .. n) in the order of their text: a radix sort of their sort
 * numbers, then each run of one number by cmp_token.  On perf2kp's real
 * capture (16,424 tokens) 1.0 ms where qsort_r with cmp_token alone
 * took 2.3.
 */
static void
sort_tokens(struct token *tok, size_t n, const struct kp_fold_name *names)
{
	struct token *tmp = kp_xmalloc((n ? n : 1) * sizeof(*tmp));
	size_t i, j;

	kp_radix_sort(tok, n, sizeof(*tok), offsetof(struct token, pre), tmp);
	free(tmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && tok[j].pre == tok[i].pre; j++)
			;
		if (j - i > 1)
			qsort_r(tok + i, j - i, sizeof(*tok), cmp_token,
				(void *)names);
	}
}

/* Line x's rank at position d: 0 past its end. */
static inline uint32_t
key(const struct fline *x, size_t d)
{
	return d < x->n ? x->r[d] : 0;
}

/* x and y, the same before position d */
static int
cmp_from(const struct fline *x, const struct fline *y, size_t d)
{
	uint32_t a, b;

	for (;; d++) {
		a = key(x, d);
		b = key(y, d);
		if (a != b)
			return a < b ? -1 : 1;
		if (!a)
			return 0;
	}
}

static int
cmp_depth(const void *pa, const void *pb, void *arg)
{
	return cmp_from(pa, pb, *(const size_t *)arg);
}

static inline void
swap(struct fline *a, size_t i, size_t j)
{
	struct fline t = a[i];

	a[i] = a[j];
	a[j] = t;
}

static inline uint32_t
median3(uint32_t a, uint32_t b, uint32_t c)
{
	if (a > b) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	return c <= a ? a : c >= b ? b : c;
}

/*
 * a[0 .. n), the same before position d, sorted.  Past `depth' nested
 * partitions (an unlucky run of pivots) the rest is left to qsort, so
 * the stack stays shallow.
 */
static void
mkqs(struct fline *a, size_t n, size_t d, int depth)
{
	size_t lt, gt, i, j;
	uint32_t p, k;

	while (n > 1) {
		if (n < 16) {
			for (i = 1; i < n; i++)
				for (j = i; j > 0 && cmp_from(&a[j - 1], &a[j], d) > 0;
				     j--)
					swap(a, j - 1, j);
			return;
		}
		if (depth <= 0) {
			qsort_r(a, n, sizeof(*a), cmp_depth, &d);
			return;
		}
		p = median3(key(&a[0], d), key(&a[n / 2], d), key(&a[n - 1], d));
		/* [0, lt) before p, [lt, gt) at p, [gt, n) after */
		for (lt = 0, gt = n, i = 0; i < gt;) {
			k = key(&a[i], d);
			if (k < p)
				swap(a, lt++, i++);
			else if (k > p)
				swap(a, i, --gt);
			else
				i++;
		}
		mkqs(a, lt, d, depth - 1);
		mkqs(a + gt, n - gt, d, depth - 1);
		if (!p)
			return; /* all ended: the same lines */
		a += lt;
		n = gt - lt;
		d++;
	}
}

/* Output in blocks of 64 KiB: a line's names are many small writes. */
struct obuf {
	FILE *fp;
	size_t n;
	char b[1 << 16];
};

static void
put(struct obuf *o, const char *s, size_t len)
{
	if (o->n + len > sizeof(o->b)) {
		fwrite(o->b, 1, o->n, o->fp);
		o->n = 0;
		if (len > sizeof(o->b)) {
			fwrite(s, 1, len, o->fp);
			return;
		}
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

/* put(), where 16 bytes are readable from s + len: 16 bytes a copy
 * (the text of a token: most are 16 bytes or less, each a copy) */
static inline void
put16(struct obuf *o, const char *s, size_t len)
{
	if (o->n + len + 16 > sizeof(o->b)) {
		put(o, s, len);
		return;
	}
	kp_copy16(o->b + o->n, s, len);
	o->n += len;
}

/* Line l's text, for a message. */
static char *
line_text(const struct fline *l, const struct kp_fold_name *byrank)
{
	size_t i, len = 0;
	char *t, *p;

	for (i = 0; i < l->n; i++)
		len += byrank[l->r[i]].len + 1;
	p = t = kp_xmalloc(len + 1);
	for (i = 0; i < l->n; i++) {
		if (i)
			*p++ = ';';
		memcpy(p, byrank[l->r[i]].s, byrank[l->r[i]].len);
		p += byrank[l->r[i]].len;
	}
	*p = '\0';
	return t;
}

int
kp_folded_write(FILE *fp, const struct kp_fold_name *names, size_t nnames,
		const uint32_t *ids, const size_t *start,
		const uint64_t *counts, size_t n)
{
	/* rank[2 * id] "NAME;", rank[2 * id + 1] "NAME" at the end */
	uint32_t *rank = kp_xmalloc((nnames ? 2 * nnames : 1) * sizeof(*rank));
	uint32_t *r, next = 0;
	struct token *tok;
	struct kp_fold_name *byrank;
	struct fline *lines = kp_xmalloc((n ? n : 1) * sizeof(*lines));
	struct obuf *o;
	size_t nused = 0, nframes = start[n], ntok, i, k, out, at, *off;
	char num[24], *p, *t, *text;
	uint64_t v;
	int status = KP_EXIT_OK, depth;

	/* the tokens of the names the stacks use, ranked */
	memset(rank, 0, (nnames ? 2 * nnames : 1) * sizeof(*rank));
	for (i = 0; i < nframes; i++)
		if (!rank[2 * ids[i]]) {
			rank[2 * ids[i]] = 1;
			nused++;
		}
	tok = kp_xmalloc((nused ? 2 * nused : 1) * sizeof(*tok));
	for (i = 0, k = 0; i < nnames; i++)
		if (rank[2 * i]) {
			tok[k++] = (struct token){
				kp_prefix8(names[i].s, names[i].len, ';'),
				(uint32_t)i, false};
			tok[k++] = (struct token){
				kp_prefix8(names[i].s, names[i].len, 0),
				(uint32_t)i, true};
		}
	ntok = k;
	sort_tokens(tok, ntok, names);
	/* and each rank's text ("NAME;" in a line, "NAME" at its end) in
	 * text[off[rank] .. off[rank + 1]), 16 bytes readable after it */
	byrank = kp_xmalloc((ntok + 1) * sizeof(*byrank));
	off = kp_xmalloc((ntok + 2) * sizeof(*off));
	for (i = 0, at = 0; i < ntok; i++)
		at += names[tok[i].id].len + 1;
	text = kp_xmalloc(at + 16);
	off[0] = off[1] = at = 0;
	for (i = 0; i < ntok; i++) {
		const struct kp_fold_name *nm = &names[tok[i].id];

		if (!i || cmp_token(&tok[i - 1], &tok[i], (void *)names) != 0) {
			next++;
			off[next] = at;
			memcpy(text + at, nm->s, nm->len);
			at += nm->len;
			if (!tok[i].last)
				text[at++] = ';';
		}
		rank[2 * tok[i].id + tok[i].last] = next;
		byrank[next] = *nm;
	}
	off[next + 1] = at;
	memset(text + at, 0, 16);

	/* the lines as ranks, sorted; those of one text merged (a stack
	 * of no frames is the text of one frame named "", the first
	 * token if there is one) */
	r = kp_xmalloc((nframes + 1) * sizeof(*r));
	r[nframes] = ntok && !names[tok[0].id].len && tok[0].last ? 1 : 0;
	for (i = 0; i < n; i++) {
		for (k = start[i]; k < start[i + 1]; k++)
			r[k] = rank[2 * ids[k] + (k + 1 == start[i + 1])];
		lines[i].r = r + start[i];
		lines[i].n = start[i + 1] - start[i];
		if (!lines[i].n && r[nframes]) {
			lines[i].r = r + nframes;
			lines[i].n = 1;
		}
		lines[i].count = counts[i];
	}
	free(rank);
	free(tok);
	for (depth = FOLD_DEPTH, i = n; i; i >>= 1)
		depth += 2;
	mkqs(lines, n, 0, depth);
	for (i = 0, out = 0; i < n; i++) {
		if (out && lines[out - 1].n == lines[i].n &&
		    memcmp(lines[out - 1].r, lines[i].r,
			   lines[i].n * sizeof(*r)) == 0) {
			if (lines[out - 1].count > UINT64_MAX - lines[i].count) {
				t = line_text(&lines[i], byrank);
				kp_warn("the count of '%s' overflows 64 bits", t);
				free(t);
				status = KP_EXIT_FATAL;
				break;
			}
			lines[out - 1].count += lines[i].count;
			continue;
		}
		lines[out++] = lines[i];
	}

	if (status == KP_EXIT_OK) {
		o = kp_xmalloc(sizeof(*o));
		o->fp = fp;
		o->n = 0;
		for (i = 0; i < out; i++) {
			for (k = 0; k < lines[i].n; k++)
				put16(o, text + off[lines[i].r[k]],
				      off[lines[i].r[k] + 1] -
					      off[lines[i].r[k]]);
			p = num + sizeof(num);
			*--p = '\n';
			v = lines[i].count;
			do
				*--p = (char)('0' + v % 10);
			while ((v /= 10) != 0);
			*--p = ' ';
			put(o, p, (size_t)(num + sizeof(num) - p));
		}
		fwrite(o->b, 1, o->n, fp);
		free(o);
	}
	free(r);
	free(byrank);
	free(off);
	free(text);
	free(lines);
	return status;
}
