/* test_common.c - unit tests of common/: numbers, frames, interner, agg, meta,
 * slots, pools, buffered input */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"

#include "check.h"

/*
 * kp_hash reads its key's last bytes as words that may overlap (not byte
 * by byte): every byte of the key changes the hash, none outside it
 * does, wherever the key lies.  (Its values are fixed too: kp-flame's
 * colours come from them, and tests/kp-flame's SVGs hold those.)
 */
static void
test_hash_bytes(void)
{
	unsigned char buf[160 + 16], key[160];
	size_t len, off, k;
	uint64_t h;
	int bad_place = 0, bad_byte = 0;

	srand(7);
	for (k = 0; k < sizeof(key); k++)
		key[k] = (unsigned char)rand();
	for (len = 0; len <= 150; len++) {
		h = kp_hash(key, len);
		for (off = 0; off < 16; off++) {
			for (k = 0; k < sizeof(buf); k++)
				buf[k] = (unsigned char)rand();
			memcpy(buf + off, key, len);
			bad_place += kp_hash(buf + off, len) != h;
		}
		for (k = 0; k < len; k++) {
			key[k] ^= 0x01;
			bad_byte += kp_hash(key, len) == h;
			key[k] ^= 0x81;
			bad_byte += kp_hash(key, len) == h;
			key[k] ^= 0x80;
		}
	}
	CHECK(bad_place == 0);
	CHECK(bad_byte == 0);
	CHECK(kp_hash(key, 0) != kp_hash(key, 1));
}

static void
test_parse_u64(void)
{
	uint64_t v;

	CHECK(kp_parse_u64("18446744073709551615", 20, 10, &v) == 0 &&
	      v == UINT64_MAX);
	CHECK(kp_parse_u64("18446744073709551616", 20, 10, &v) < 0);
	CHECK(kp_parse_u64("0xffffffffffffffff", 18, 16, &v) == 0 &&
	      v == UINT64_MAX);
	CHECK(kp_parse_u64("0x10000000000000000", 19, 16, &v) < 0);
	CHECK(kp_parse_u64("ffff", 4, 16, &v) == 0 && v == 0xffff);
	CHECK(kp_parse_u64("0x", 2, 16, &v) < 0);
	CHECK(kp_parse_u64("", 0, 10, &v) < 0);
	CHECK(kp_parse_u64("12a", 3, 10, &v) < 0);
	CHECK(kp_parse_u64("-1", 2, 10, &v) < 0);
	/* the edges of overflow, base 10: at UINT64_MAX / 10 the last
	 * digit decides; past it any digit overflows */
	CHECK(kp_parse_u64("18446744073709551610", 20, 10, &v) == 0 &&
	      v == UINT64_MAX - 5);
	CHECK(kp_parse_u64("18446744073709551619", 20, 10, &v) < 0);
	CHECK(kp_parse_u64("18446744073709551620", 20, 10, &v) < 0);
	CHECK(kp_parse_u64("99999999999999999999", 20, 10, &v) < 0);
	/* the longest that cannot overflow, parsed without a check a digit */
	CHECK(kp_parse_u64("9999999999999999999", 19, 10, &v) == 0 &&
	      v == 9999999999999999999ull);
	CHECK(kp_parse_u64("0xfffffffffffffff", 17, 16, &v) == 0 &&
	      v == 0xfffffffffffffffull);
	CHECK(kp_parse_u64("00000000000000000000018446744073709551615", 41,
			   10, &v) == 0 && v == UINT64_MAX);
	/* base 16: seventeen digits overflow unless the first is 0 */
	CHECK(kp_parse_u64("0ffffffffffffffff", 17, 16, &v) == 0 &&
	      v == UINT64_MAX);
	CHECK(kp_parse_u64("1fffffffffffffff0", 17, 16, &v) < 0);
	CHECK(kp_parse_u64("0xFFFFFFFF814CDE75", 18, 16, &v) == 0 &&
	      v == 0xffffffff814cde75ull);
	CHECK(kp_parse_u64("0xg", 3, 16, &v) < 0);
	/* only the two bases it is for */
	CHECK(kp_parse_u64("12", 2, 8, &v) < 0);
	/* against strtoull on random digit strings of both bases, some of
	 * them too long, some with a wrong character */
	{
		static const char digs[] = "0123456789abcdefABCDEFxz";
		char buf[32], *end;
		unsigned seed = 12345, k, n, j, bad = 0;
		int base, r;
		uint64_t want;

		for (k = 0; k < 200000; k++) {
			base = k & 1 ? 16 : 10;
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 22;
			for (j = 0; j < n; j++) {
				seed = seed * 1103515245u + 12345u;
				buf[j] = digs[(seed >> 16) %
					      (base == 16 ? 22u : 10u +
					       ((seed >> 8) % 64 == 0))];
			}
			buf[n] = '\0';
			r = kp_parse_u64(buf, n, base, &v);
			errno = 0;
			want = strtoull(buf, &end, base);
			/* both take a "0x" prefix in base 16 */
			if (*end || errno || end == buf) {
				bad += r == 0;
			} else {
				bad += r != 0 || v != want;
			}
		}
		CHECK(bad == 0);
	}
	/* every byte: a digit's value from the table, the rest rejected */
	{
		unsigned c, bad = 0;
		int want;
		char one[2] = { 0, 0 };

		for (c = 0; c < 256; c++) {
			want = c >= '0' && c <= '9'   ? (int)c - '0'
			       : c >= 'a' && c <= 'f' ? (int)c - 'a' + 10
			       : c >= 'A' && c <= 'F' ? (int)c - 'A' + 10
						      : -1;
			bad += kp_digit_value[c] != want;
			one[0] = (char)c;
			bad += (kp_parse_u64(one, 1, 16, &v) == 0) != (want >= 0);
			bad += want >= 0 && v != (uint64_t)want;
			bad += (kp_parse_u64(one, 1, 10, &v) == 0) !=
			       (want >= 0 && want < 10);
		}
		CHECK(bad == 0);
	}
}

struct frame_case {
	const char *line;
	int ok;
	uint64_t addr;
	const char *sym, *module;
	uint64_t off, size;
	unsigned flags;
};

static const struct frame_case frame_cases[] = {
	{ " 0xffffffff814cde75 : net_rx_action+0x105/0x2b0 [kernel]", 1,
	  0xffffffff814cde75, "net_rx_action", "kernel", 0x105, 0x2b0,
	  KP_F_ADDR | KP_F_OFF | KP_F_SIZE },
	{ " 0xffffffff8106602d : irq_exit+0xbd/0xe0 [kernel", 1,
	  0xffffffff8106602d, "irq_exit", "kernel", 0xbd, 0xe0,
	  KP_F_ADDR | KP_F_OFF | KP_F_SIZE },
	{ "0xffffffff816b8aab : vfs_read+0xbb/0x360 [kernel] (inexact)", 1,
	  0xffffffff816b8aab, "vfs_read", "kernel", 0xbb, 0x360,
	  KP_F_ADDR | KP_F_OFF | KP_F_SIZE | KP_F_INEXACT },
	{ " 0xffffffff81000000 [kernel+0x10/0x20]", 1, 0xffffffff81000000,
	  NULL, "kernel", 0x10, 0x20, KP_F_ADDR | KP_F_OFF | KP_F_SIZE },
	{ "\t0xffffffff81000000\t", 1, 0xffffffff81000000, NULL, NULL, 0, 0,
	  KP_F_ADDR },
	{ "ffffffff81039e37 : smp_call_function_single_interrupt+ffffffff81039e37",
	  1, 0xffffffff81039e37, "smp_call_function_single_interrupt", NULL,
	  0, 0, KP_F_ADDR },
	{ " : folded [kernel]", 1, 0, "folded", "kernel", 0, 0, 0 },
	{ ": operator+", 1, 0, "operator+", NULL, 0, 0, 0 },
	{ ": [unknown] [/usr/lib/libc.so.6]", 1, 0, "[unknown]",
	  "/usr/lib/libc.so.6", 0, 0, 0 },
	{ " 0x1 : f+0x2 (inline) (at a/b.c:12)", 1, 1, "f", NULL, 2, 0,
	  KP_F_ADDR | KP_F_OFF | KP_F_INLINE },
	{ ": a [b] c [", 1, 0, "a [b] c [", NULL, 0, 0, 0 },
	{ ": f+0x1 []", 1, 0, "f+0x1 []", NULL, 0, 0, 0 },
	{ "hello world", 0, 0, NULL, NULL, 0, 0, 0 },
	{ "WARNING: x", 0, 0, NULL, NULL, 0, 0, 0 },
	{ "deadbeef", 0, 0, NULL, NULL, 0, 0, 0 },
	{ "0x12345 junk", 0, 0, NULL, NULL, 0, 0, 0 },
	{ "0x10000000000000000 : f", 0, 0, NULL, NULL, 0, 0, 0 },
	{ " : ", 0, 0, NULL, NULL, 0, 0, 0 },
	{ "", 0, 0, NULL, NULL, 0, 0, 0 },
};

static void
test_frame_parse(void)
{
	size_t i;

	for (i = 0; i < sizeof(frame_cases) / sizeof(frame_cases[0]); i++) {
		const struct frame_case *c = &frame_cases[i];
		struct kp_frame f;
		const char *why = NULL;
		int r = kp_frame_parse(c->line, strlen(c->line), &f, &why);

		if (!c->ok) {
			CHECK(r < 0 && why != NULL);
			continue;
		}
		CHECK(r == 0);
		if (r)
			continue;
		CHECK(f.flags == c->flags);
		CHECK(f.addr == c->addr);
		CHECK(f.sym == kp_intern_str(c->sym));
		CHECK(f.module == kp_intern_str(c->module));
		CHECK(f.off == c->off);
		CHECK(f.size == c->size);
	}
}

static void
test_annotation_file_line(void)
{
	struct kp_frame f;
	const char *why;
	const char *l = " 0x1 : f [kernel] (at /src/a b.c:42)";

	CHECK(kp_frame_parse(l, strlen(l), &f, &why) == 0);
	CHECK(f.file == kp_intern_str("/src/a b.c") && f.line == 42);
	CHECK(f.module == kp_intern_str("kernel"));
}

static void
test_intern(void)
{
	const char *a = kp_intern("abc", 3), *b = kp_intern_str("abc");
	char buf[] = "abcd";

	CHECK(a == b);
	CHECK(kp_intern(buf, 3) == a);
	CHECK(kp_intern(buf, 4) != a);
	CHECK(kp_frame_make(1, KP_F_ADDR, "x", "kernel") ==
	      kp_frame_make(1, KP_F_ADDR, "x", "kernel"));
	CHECK(kp_frame_make(1, KP_F_ADDR, "x", "kernel") !=
	      kp_frame_make(2, KP_F_ADDR, "x", "kernel"));
}

/* The bytes kp_intern takes of the arena for a string of len bytes. */
static size_t
interned_size(size_t len)
{
	return (sizeof(size_t) + len + 1 + 7) & ~(size_t)7;
}

/*
 * kp_intern_is against its string's end.  A string is put last in an
 * arena chunk (1 MiB, strtab.c), its NUL the chunk's last byte: compared
 * with longer text it must not be read past, which the ASan pass reports
 * as a heap-buffer-overflow when the comparison is a memcmp of the
 * text's length (proc_frame's was, found by fuzz_perf2kp).
 */
static void
test_intern_is(void)
{
	enum { CHUNK = 1 << 20, PIECE = 100000, LAST = 39 };
	static char big[2 * PIECE];
	char text[LAST + 32];
	const char *p, *prev = NULL, *start, *last;
	size_t prev_len = 0, left, b, n;
	unsigned k = 0;

	CHECK(kp_intern_is(kp_intern("abc", 3), "abc", 3));
	CHECK(!kp_intern_is(kp_intern("abc", 3), "abcd", 4));
	CHECK(!kp_intern_is(kp_intern("abc", 3), "ab", 2));
	CHECK(!kp_intern_is(kp_intern("abd", 3), "abc", 3));
	CHECK(kp_intern_is(kp_intern("", 0), "", 0));

	/* distinct strings until one starts a new chunk (it is not where
	 * the one before ended) */
	memset(big, 'x', sizeof(big));
	for (;;) {
		n = (size_t)snprintf(big, 16, "i%u", k++);
		big[n] = 'x';
		p = kp_intern(big, 64);
		if (prev && p != prev + interned_size(prev_len))
			break;
		prev = p;
		prev_len = 64;
	}
	start = p - sizeof(size_t);
	prev = p;
	/* the rest of it but the last string's room, in strings that stay
	 * in the arena (a quarter chunk at most each); each block a
	 * multiple of 8, so a string of b - 9 bytes takes b */
	left = CHUNK - interned_size(64) - interned_size(LAST);
	while (left > 0) {
		b = left > 2 * PIECE ? PIECE : left;
		n = (size_t)snprintf(big, 16, "f%u", k++);
		big[n] = 'y';
		p = kp_intern(big, b - sizeof(size_t) - 1);
		CHECK(p == prev + interned_size(prev_len));
		prev = p;
		prev_len = b - sizeof(size_t) - 1;
		left -= b;
	}
	memset(text, 'z', sizeof(text));
	last = kp_intern(text, LAST);
	CHECK(last == prev + interned_size(prev_len));
	CHECK(last + LAST + 1 == start + CHUNK); /* its NUL ends the chunk */
	CHECK(kp_intern_is(last, text, LAST));
	CHECK(!kp_intern_is(last, text, LAST + 1));
	CHECK(!kp_intern_is(last, text, sizeof(text)));
}

static void
test_agg(void)
{
	struct kp_agg *agg = kp_agg_new();
	const struct kp_frame *s1[2], *s2[1];

	s1[0] = kp_frame_make(0, 0, "leaf", NULL);
	s1[1] = kp_frame_make(0, 0, "root", NULL);
	s2[0] = s1[1];
	CHECK(kp_agg_add(agg, s1, 2, 5) == 0);
	CHECK(kp_agg_add(agg, s2, 1, 1) == 0);
	CHECK(kp_agg_add(agg, s1, 2, 7) == 0);
	CHECK(kp_agg_len(agg) == 2);
	CHECK(kp_agg_get(agg, 0)->count == 12 && kp_agg_get(agg, 0)->n == 2);
	CHECK(kp_agg_get(agg, 1)->count == 1);
	CHECK(kp_agg_total(agg) == 13);
	CHECK(kp_agg_add(agg, s1, 2, UINT64_MAX) < 0);
	CHECK(kp_agg_get(agg, 0)->count == 12);
	kp_agg_free(agg);
}

/* Growth of the index, first-seen order, overflow, the empty stack. */
static void
test_agg_many(void)
{
	struct kp_agg *agg = kp_agg_new();
	const struct kp_frame *a[2], *b[1];
	const struct kp_stack *st;
	size_t i;

	a[0] = kp_frame_make(0, 0, "leaf", NULL);
	a[1] = kp_frame_make(0, 0, "root", NULL);
	b[0] = kp_frame_make(0, 0, "other", NULL);
	for (i = 0; i < 5000; i++) {
		const struct kp_frame *c[1];
		char name[32];

		snprintf(name, sizeof(name), "f%zu", i);
		c[0] = kp_frame_make(0, 0, name, NULL);
		CHECK(kp_agg_add(agg, c, 1, 1) == 0);
		if (i == 10) {
			CHECK(kp_agg_add(agg, a, 2, 3) == 0);
			CHECK(kp_agg_add(agg, b, 1, UINT64_MAX) == 0);
		}
	}
	CHECK(kp_agg_add(agg, a, 2, 4) == 0);
	CHECK(kp_agg_add(agg, b, 1, 1) == -1); /* would overflow */
	CHECK(kp_agg_add(agg, a, 0, 2) == 0);  /* an empty stack */
	CHECK(kp_agg_add(agg, a, 1, 5) == 0);  /* a prefix is another stack */
	CHECK(kp_agg_len(agg) == 5000 + 2 + 2);
	st = kp_agg_get(agg, 0);
	CHECK(st->n == 1 && strcmp(st->frames[0]->sym, "f0") == 0);
	st = kp_agg_get(agg, 11); /* f0..f10, then a: first-seen order */
	CHECK(st->n == 2 && st->frames[0] == a[0] && st->count == 7);
	st = kp_agg_get(agg, 12);
	CHECK(st->n == 1 && st->count == UINT64_MAX);
	st = kp_agg_get(agg, 5002);
	CHECK(st->n == 0 && st->count == 2);
	st = kp_agg_get(agg, 5003);
	CHECK(st->n == 1 && st->frames[0] == a[0] && st->count == 5);
	CHECK(!kp_agg_total_ok(agg) && kp_agg_total(agg) == UINT64_MAX);
	kp_agg_free(agg);
}

static void
test_meta(void)
{
	const char *l = "# event: cpu-clock";

	kp_meta_add_line(l, strlen(l));
	kp_meta_add_line(l, strlen(l));
	CHECK(kp_meta_count() == 1);
	CHECK(strcmp(kp_meta_get("event"), "cpu-clock") == 0);
	kp_meta_set("event", "%s", "cycles");
	CHECK(kp_meta_count() == 1);
	CHECK(strcmp(kp_meta_line(0), "# event: cycles") == 0);
	kp_meta_set("weight", "samples");
	CHECK(kp_meta_count() == 2 && kp_meta_get("nope") == NULL);
}

static void
test_frame_name(void)
{
	char *buf = NULL;
	size_t cap = 0;
	struct kp_frame f;
	const char *why;
	const char *l = " 0xffffffff81000000 [kernel+0x10/0x20]";

	kp_frame_name(kp_frame_make(0x10, KP_F_ADDR, NULL, NULL), false, true,
		      &buf, &cap);
	CHECK(strcmp(buf, "0x10") == 0);
	kp_frame_name(kp_frame_make(0x10, KP_F_ADDR, NULL, NULL), false,
		      false, &buf, &cap);
	CHECK(strcmp(buf, "[unknown]") == 0);
	CHECK(kp_frame_parse(l, strlen(l), &f, &why) == 0);
	kp_frame_name(&f, true, false, &buf, &cap);
	CHECK(strcmp(buf, "[kernel]") == 0);
	CHECK(kp_module_is_kernel("kernel") && kp_module_is_kernel("e1000") &&
	      kp_module_is_kernel("vmlinux-6.1") &&
	      !kp_module_is_kernel("/usr/lib/libc.so.6") &&
	      !kp_module_is_kernel("[vdso]") && !kp_module_is_kernel(NULL));
	free(buf);
}

/* Names that bare would misread: the writer quotes them, the reader
 * gives them back. */
static void
test_quoted_round_trip(void)
{
	static const char *names[] = {
		"vfs_read+179", "f+0x1f/0x20", "a [b]", "a [b", "x (inline)",
		"y (at f.c:3)", "\"quoted\"", " lead", "trail ", "back\\slash",
		"cr\r", "+179", "(inexact)", "(at x:1)", "plain", "operator+", "[unknown]", "a\"b",
	};
	static const char *modules[] = { NULL, "kernel", "/usr/lib/x.so" };
	size_t i, j, k, len;
	char *buf;
	FILE *mem;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (j = 0; j < 3; j++)
			for (k = 0; k < 2; k++) {
				struct kp_frame f, g;
				const char *why;

				memset(&f, 0, sizeof(f));
				f.sym = kp_intern_str(names[i]);
				f.module = kp_intern_str(modules[j]);
				if (k) {
					f.addr = 0xffffffff81000000;
					f.off = 0x10;
					f.size = 0x40;
					f.flags = KP_F_ADDR | KP_F_OFF |
						  KP_F_SIZE;
				}
				mem = open_memstream(&buf, &len);
				kp_write_frame(mem, &f);
				fclose(mem);
				CHECK(len > 0 && buf[len - 1] == '\n');
				CHECK(kp_frame_parse(buf, len - 1, &g, &why) ==
				      0);
				if (memcmp(&f, &g, sizeof(f)) != 0) {
					fprintf(stderr, "no round trip: %s", buf);
					CHECK(!"round trip");
				}
				free(buf);
			}
	/* quoting only where needed */
	mem = open_memstream(&buf, &len);
	kp_write_frame(mem, kp_frame_make(0, 0, "vfs_read+179", NULL));
	kp_write_frame(mem, kp_frame_make(0, 0, "plain", "kernel"));
	fclose(mem);
	CHECK(strcmp(buf, " : \"vfs_read+179\"\n : plain [kernel]\n") == 0);
	free(buf);
}

/* kp_write_stack copies the line of a frame it wrote before: each record,
 * its frames written again and again (and new frames interned between
 * records), must read as kp_write_frame makes each line anew. */
static void
test_write_repeats(void)
{
	static const char *names[] = { "vfs_read", "a [b]", "f+0x1f/0x20",
				       "x (inline)", NULL, "\"q\"", "plain" };
	static const char *modules[] = { NULL, "kernel", "/usr/lib/x.so" };
	const struct kp_frame *fr[300], *st_fr[40];
	struct kp_stack st = { st_fr, 0, 0 };
	char *got, *want;
	size_t i, j, glen, wlen, nfr = 0;
	unsigned seed = 7;
	FILE *g, *w;

	g = open_memstream(&got, &glen);
	w = open_memstream(&want, &wlen);
	for (i = 0; i < 3000; i++) {
		if (nfr < 300 && i % 10 == 0) {
			/* a new frame, interned between records */
			struct kp_frame f;

			memset(&f, 0, sizeof(f));
			f.addr = 0xffffffff81000000ull + nfr * 0x40;
			f.sym = kp_intern_str(names[nfr % 7]);
			f.module = kp_intern_str(modules[nfr % 3]);
			f.flags = KP_F_ADDR;
			if (f.sym && nfr % 2) {
				f.off = nfr;
				f.size = 0x100;
				f.flags |= KP_F_OFF | KP_F_SIZE;
			}
			if (nfr % 5 == 0) {
				f.file = kp_intern_str("src/a.c");
				f.line = (uint32_t)nfr;
			}
			if (nfr % 11 == 0)
				f.flags |= KP_F_INLINE;
			fr[nfr++] = kp_frame_intern(&f);
		}
		st.n = 1 + (seed = seed * 1103515245u + 12345u) % 40;
		for (j = 0; j < st.n; j++)
			st_fr[j] = fr[(seed = seed * 1103515245u + 12345u) %
				      nfr];
		st.count = i + 1;
		kp_write_stack(g, &st);
		fputs("!\n", w);
		for (j = 0; j < st.n; j++)
			kp_write_frame(w, st_fr[j]);
		fprintf(w, "\t%zu\n", i + 1);
	}
	fclose(g);
	fclose(w);
	CHECK(glen == wlen && memcmp(got, want, glen) == 0);
	free(got);
	free(want);
}

/* Whether t holds p under hash h, found by probing from its home. */
static bool
slots_hold(const struct kp_slots *t, uint64_t h, const void *p)
{
	size_t mask = t->cap - 1, j;

	for (j = h & mask; t->tab[j].p; j = (j + 1) & mask)
		if (t->tab[j].p == p && t->tab[j].hash == h)
			return true;
	return false;
}

/* kp_slots_reserve_n: grown once, to the smallest doubling that holds
 * them all, the entries before kept; no growth while they are put */
static void
test_slots_reserve_n(void)
{
	struct kp_slots t = { 0 };
	static int vals[3100];
	size_t i, cap, found = 0;

	kp_slots_reserve_n(&t, 0, 16);
	CHECK(t.cap == 16 && t.n == 0);
	for (i = 0; i < 100; i++) {
		kp_slots_reserve(&t, 16);
		kp_slots_put(&t, kp_hash(&i, sizeof(i)), &vals[i]);
	}
	cap = t.cap;
	kp_slots_reserve_n(&t, 0, 16);
	CHECK(t.cap == cap); /* room for none more: as it was */
	kp_slots_reserve_n(&t, 3000, 16);
	CHECK((t.cap & (t.cap - 1)) == 0 && t.n == 100);
	CHECK((t.n + 3000) * 4 <= t.cap * 3);
	CHECK((t.n + 3000) * 4 > t.cap / 2 * 3); /* half would not hold them */
	cap = t.cap;
	for (i = 100; i < 3100; i++) {
		kp_slots_reserve(&t, 16);
		kp_slots_put(&t, kp_hash(&i, sizeof(i)), &vals[i]);
	}
	CHECK(t.cap == cap && t.n == 3100);
	for (i = 0; i < 3100; i++)
		found += slots_hold(&t, kp_hash(&i, sizeof(i)), &vals[i]);
	CHECK(found == 3100);
	kp_slots_free(&t);
}

/* kp_agg_add_agg: src's stacks after agg's, in src's order; a stack in
 * both summed where agg first had it; an overflowing sum marks the total */
static void
test_agg_add_agg(void)
{
	struct kp_agg *a = kp_agg_new(), *b = kp_agg_new();
	const struct kp_frame *f[4000][1];
	size_t i;

	for (i = 0; i < 4000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "merge%zu", i);
		f[i][0] = kp_frame_make(0, 0, name, NULL);
	}
	/* a: 0..1999 counted 1; b: 3999..1000 counted 2 */
	for (i = 0; i < 2000; i++)
		CHECK(kp_agg_add(a, f[i], 1, 1) == 0);
	for (i = 4000; i-- > 1000;)
		CHECK(kp_agg_add(b, f[i], 1, 2) == 0);
	kp_agg_add_agg(a, b);
	CHECK(kp_agg_len(a) == 4000);
	for (i = 0; i < 2000; i++)
		CHECK(kp_agg_get(a, i)->frames[0] == f[i][0] &&
		      kp_agg_get(a, i)->count == (i >= 1000 ? 3u : 1u));
	/* then b's new ones, in b's order: 3999 down to 2000 */
	for (i = 2000; i < 4000; i++)
		CHECK(kp_agg_get(a, i)->frames[0] == f[5999 - i][0] &&
		      kp_agg_get(a, i)->count == 2);
	CHECK(kp_agg_total(a) == 2000 + 3000 * 2 && kp_agg_total_ok(a));
	kp_agg_free(b);
	b = kp_agg_new();
	kp_agg_add_agg(a, b); /* nothing */
	CHECK(kp_agg_len(a) == 4000);
	CHECK(kp_agg_add(b, f[0], 1, UINT64_MAX - 1) == 0);
	kp_agg_add_agg(a, b);
	CHECK(!kp_agg_total_ok(a));
	kp_agg_free(a);
	kp_agg_free(b);
}

/*
 * kp_agg_late_add: stacks of several lengths into two aggs, in turn,
 * with repeats, give each agg what kp_agg_add gives, in its order, once
 * kp_agg_late_end is called; before it the last two are not added.
 */
static void
test_agg_late(void)
{
	const struct kp_frame *f[300];
	struct kp_agg_late late;
	struct kp_agg *want[2], *got[2];
	const struct kp_stack *x, *y;
	size_t i, k, n;

	for (i = 0; i < 300; i++) {
		char name[32];

		snprintf(name, sizeof(name), "late%zu", i);
		f[i] = kp_frame_make(0, 0, name, NULL);
	}
	for (k = 0; k < 2; k++) {
		want[k] = kp_agg_new();
		got[k] = kp_agg_new();
	}
	memset(&late, 0, sizeof(late));
	for (i = 0; i < 5000; i++) {
		/* 1 to 40 frames from a start that repeats: stacks again */
		k = (i * 7) % 2;
		n = 1 + (i * 13) % 40;
		CHECK(kp_agg_add(want[k], f + (i * 31) % 250, n, 1 + i % 3) ==
		      0);
		kp_agg_late_add(&late, got[k], f + (i * 31) % 250, n, 1 + i % 3);
	}
	kp_agg_late_end(&late);
	for (k = 0; k < 2; k++) {
		CHECK(kp_agg_len(got[k]) == kp_agg_len(want[k]));
		CHECK(kp_agg_total(got[k]) == kp_agg_total(want[k]));
		for (i = 0; i < kp_agg_len(want[k]) &&
			    i < kp_agg_len(got[k]); i++) {
			x = kp_agg_get(want[k], i);
			y = kp_agg_get(got[k], i);
			CHECK(x->n == y->n && x->count == y->count &&
			      memcmp(x->frames, y->frames,
				     x->n * sizeof(*x->frames)) == 0);
		}
	}
	/* the last two wait for the end: here three new stacks */
	kp_agg_late_add(&late, got[0], f + 260, 1, 1);
	kp_agg_late_add(&late, got[0], f + 261, 1, 1);
	kp_agg_late_add(&late, got[0], f + 262, 1, 1);
	CHECK(kp_agg_len(got[0]) == kp_agg_len(want[0]) + 1);
	kp_agg_late_end(&late);
	CHECK(kp_agg_len(got[0]) == kp_agg_len(want[0]) + 3);
	CHECK(kp_agg_get(got[0], kp_agg_len(got[0]) - 1)->frames[0] == f[262]);
	kp_agg_late_end(&late); /* nothing more */
	CHECK(kp_agg_len(got[0]) == kp_agg_len(want[0]) + 3);
	for (k = 0; k < 2; k++) {
		kp_agg_free(want[k]);
		kp_agg_free(got[k]);
	}
	kp_agg_late_free(&late);
	CHECK(late.given == 0 && late.added == 0 && late.q[0].frames == NULL);
}

/* kp_slots: every entry stays findable across growth */
static void
test_slots(void)
{
	struct kp_slots t = { 0 };
	static int vals[5000];
	size_t i, found = 0;

	for (i = 0; i < 5000; i++) {
		uint64_t h = i % 7 == 0 ? 42 : kp_hash(&i, sizeof(i));

		kp_slots_reserve(&t, 16);
		CHECK(t.cap >= 16 && (t.cap & (t.cap - 1)) == 0);
		kp_slots_put(&t, h, &vals[i]);
		/* put takes an empty slot: nothing put before is lost
		 * (every value is found below) */
		CHECK(t.n == i + 1);
		/* at most three quarters full (util.h): an empty slot
		 * always ends a probe */
		CHECK(t.n * 4 <= t.cap * 3 && t.n < t.cap);
	}
	for (i = 0; i < 5000; i++)
		found += slots_hold(&t, i % 7 == 0 ? 42 : kp_hash(&i, sizeof(i)),
				    &vals[i]);
	CHECK(found == 5000);
	kp_slots_free(&t);
	CHECK(t.tab == NULL && t.cap == 0 && t.n == 0);
}

/*
 * kp_pool: 8-byte aligned and packed (a piece follows the one before it
 * in its chunk by that one's length rounded up to 8, not to 16),
 * distinct, large ones too, reusable after a free
 */
static void
test_pool(void)
{
	struct kp_pool pool = { 0 };
	char *p[1000], *big;
	size_t i, packed = 0;
	int round;

	for (round = 0; round < 2; round++) {
		for (i = 0; i < 1000; i++) {
			p[i] = kp_pool_alloc(&pool, i % 97 + 1);
			CHECK((uintptr_t)p[i] % 8 == 0);
			if (i > 0 && p[i] > p[i - 1] && p[i] - p[i - 1] < 4096) {
				CHECK((size_t)(p[i] - p[i - 1]) ==
				      ((i - 1) % 97 + 1 + 7) / 8 * 8);
				packed++;
			}
			memset(p[i], (int)(i & 0xff), i % 97 + 1);
		}
		big = kp_pool_alloc(&pool, 1u << 20);
		memset(big, 0x5a, 1u << 20);
		for (i = 0; i < 1000; i++)
			CHECK(p[i][0] == (char)(i & 0xff) &&
			      p[i][i % 97] == (char)(i & 0xff));
		CHECK(big[0] == 0x5a && big[(1u << 20) - 1] == 0x5a);
		kp_pool_free(&pool);
		CHECK(pool.chunks == NULL);
	}
	CHECK(packed > 1900); /* all but a chunk's first piece */
}

/* kp_input_buffered / kp_input_consume against kp_input_getline */
static void
test_input_buffered(void)
{
	char path[] = "/tmp/kp-test-input-XXXXXX";
	const char text[] = "one\ntwo\n\nthree\nfour";
	struct kp_input *in;
	const char *p;
	char *line;
	size_t n, len;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1));
	close(fd);
	in = kp_input_open(path);
	line = kp_input_getline(in, &len);
	CHECK(line && len == 3 && strcmp(line, "one") == 0);
	n = kp_input_buffered(in, &p);
	CHECK(n == sizeof(text) - 1 - 4 && memcmp(p, "two\n\n", 5) == 0);
	kp_input_consume(in, 5, 2); /* "two", "" */
	CHECK(kp_input_lineno(in) == 3);
	line = kp_input_getline(in, &len);
	CHECK(line && strcmp(line, "three") == 0 && kp_input_lineno(in) == 4);
	line = kp_input_getline(in, &len);
	CHECK(line && strcmp(line, "four") == 0);
	CHECK(kp_input_getline(in, &len) == NULL);
	CHECK(kp_input_buffered(in, &p) == 0);
	kp_input_close(in);
	unlink(path);
}

int
main(void)
{
	test_parse_u64();
	test_hash_bytes();
	test_frame_parse();
	test_annotation_file_line();
	test_intern();
	test_intern_is();
	test_agg();
	test_agg_many();
	test_meta();
	test_frame_name();
	test_quoted_round_trip();
	test_write_repeats();
	test_slots();
	test_slots_reserve_n();
	test_agg_add_agg();
	test_agg_late();
	test_pool();
	test_input_buffered();
	return CHECK_DONE();
}
