/*
 * test_frame_reread.c - kp_frame_reread (common/frame.c), the rule that
 * says from a frame's fields what the reader reads back from the line
 * the writer prints, against its definition: printing the line with
 * kp_write_frame and parsing it with kp_frame_parse (the oracle, kept
 * here only).  Frames are generated from the characters and pieces that
 * the writer's quoting and the parser's splitting turn on: blanks, tab,
 * brackets, '+', parentheses, quotes, backslash, CR, newline, hex digits,
 * '/', ':', and whole "(inline)", "(at ", "+0x1f", " [" pieces, with
 * every flag and the address, offset, size and line variations.
 *
 * Checked for each frame: the rule gives exactly the oracle's frame (or
 * both say the line reads as no frame); kp_conv_intern, which iterates
 * the rule to a fixed point, gives what the same iteration of the oracle
 * gives; and its result is a fixed point: written and read back, it is
 * itself.
 *
 *	test_frame_reread [COUNT [SEED]]	(default 200000 frames, seed 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "kp.h"

#include "check.h"

/* The oracle: print the line, read it back. */
static bool
oracle(const struct kp_frame *f, struct kp_frame *g)
{
	char *buf = NULL;
	size_t len = 0;
	const char *why;
	FILE *mem = open_memstream(&buf, &len);
	bool ok;

	if (!mem)
		abort();
	kp_write_frame(mem, f);
	if (fclose(mem) != 0)
		abort();
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	ok = kp_frame_parse(buf, len, g, &why) == 0;
	free(buf);
	return ok;
}

/* kp_conv_intern as it was: the same gate, the oracle iterated (at most
 * 4 times), the same fallback. */
static bool
risky(const char *s, bool is_module)
{
	size_t n;
	const char *p;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' ||
	    s[n - 1] == '\t' || s[n - 1] == ')' || s[n - 1] == '\r')
		return true;
	for (p = s; *p; p++)
		if (*p == '[' || *p == ']' || *p == '+' || *p == '\n' ||
		    (is_module && (*p == ' ' || *p == '\t' || *p == '(')))
			return true;
	return false;
}

static void
oracle_canon(const struct kp_frame *f, struct kp_frame *out)
{
	struct kp_frame g = *f, h;
	int i;

	if ((g.flags & KP_F_ADDR) && (g.flags & KP_F_OFF) && g.addr &&
	    g.off == g.addr) {
		g.flags &= ~(uint32_t)(KP_F_OFF | KP_F_SIZE);
		g.off = g.size = 0;
	}
	if (!risky(g.sym, false) && !risky(g.module, true) &&
	    !risky(g.file, true)) {
		*out = g;
		return;
	}
	for (i = 0; i < 4; i++) {
		if (!oracle(&g, &h))
			break;
		if (memcmp(&g, &h, KP_FRAME_KEY) == 0) {
			*out = g;
			return;
		}
		g = h;
	}
	memset(out, 0, sizeof(*out));
	out->flags = f->flags & KP_F_ADDR;
	out->addr = out->flags ? f->addr : 0;
	if (!out->flags)
		out->sym = kp_intern("[bad name]", 10);
}

static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static unsigned
pick(unsigned n)
{
	return (unsigned)(rng() % n);
}

/* The pieces strings are made of. */
static const char *const pieces[] = {
	" ",  "\t", "[",  "]",	"+",	    "(",	 ")",	   "\"",
	"\\", "\r", "\n", "x",	"0",	    "/",	 ":",	   "a",
	"f",  " [", ":7", "+0x1f", "/0x10", "(inline)", "(inexact)", "(at ",
	"+1", "()", "[]", " (",
};

/* NULL sometimes, else an interned string of 0-7 pieces. */
static const char *
gen_str(unsigned null_in)
{
	char buf[128];
	size_t n = 0, k, i, npieces;

	if (pick(null_in) == 0)
		return NULL;
	npieces = pick(8);
	for (i = 0; i < npieces; i++) {
		/* single characters more often than whole pieces */
		const char *p = pieces[pick(3) ? pick(15) : pick(
					 sizeof(pieces) / sizeof(*pieces))];

		k = strlen(p);
		memcpy(buf + n, p, k);
		n += k;
	}
	return kp_intern(buf, n);
}

static uint64_t
gen_num(uint64_t other)
{
	switch (pick(6)) {
	case 0:
		return 0;
	case 1:
		return 0x1f;
	case 2:
		return other;
	case 3:
		return 0xffffffff81000000ull + pick(4096);
	case 4:
		return UINT64_MAX;
	default:
		return pick(1 << 20);
	}
}

static void
gen_frame(struct kp_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->flags = (uint32_t)pick(64); /* the five flags and one unknown */
	f->addr = gen_num(0);
	f->off = gen_num(f->addr);
	f->size = gen_num(0);
	f->sym = gen_str(5);
	f->module = gen_str(2);
	f->file = gen_str(3);
	switch (pick(4)) {
	case 0:
		f->line = 0;
		break;
	case 1:
		f->line = UINT32_MAX;
		break;
	default:
		f->line = (uint32_t)pick(100);
	}
}

static void
show(const char *what, const struct kp_frame *f)
{
	fprintf(stderr, "  %s: ", what);
	kp_write_frame(stderr, f);
}

static int shown;

static void
mismatch(const char *what, const struct kp_frame *f, const struct kp_frame *a,
	 const struct kp_frame *b)
{
	if (shown++ >= 10)
		return;
	fprintf(stderr, "%s differs for flags %#x addr %#llx off %#llx size "
			"%#llx line %u\n",
		what, f->flags, (unsigned long long)f->addr,
		(unsigned long long)f->off, (unsigned long long)f->size,
		f->line);
	show("frame", f);
	if (a)
		show("rule", a);
	if (b)
		show("oracle", b);
}

/* Frames that the rule's comment names, each against the oracle too. */
static void
test_named(void)
{
	static const struct {
		const char *sym, *module, *file;
		uint32_t line, flags;
	} cases[] = {
		{ "vfs_read+179", "kernel", NULL, 0, 0 },
		{ "foo (inline)", NULL, NULL, 0, 0 },
		{ "f\n", NULL, NULL, 0, 0 },
		{ "f (inline)\n", NULL, NULL, 0, 0 },
		{ "f", "a [b", NULL, 0, 0 },
		{ "f", "", NULL, 0, 0 },
		{ "f", "m", "a(b", 5, KP_F_INLINE },
		{ "f", "m", "x) (inline", 0, 0 },
		{ "f", NULL, "a.c:12", 0, 0 },
		{ "f", NULL, "", 3, 0 },
		{ "f", NULL, "", 0, 0 },
		{ NULL, "lib+0x10", NULL, 0, KP_F_ADDR },
	};
	struct kp_frame f, a, b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		memset(&f, 0, sizeof(f));
		f.addr = 0xffffffff81000000ull;
		f.flags = cases[i].flags | KP_F_ADDR;
		f.sym = kp_intern_str(cases[i].sym);
		f.module = kp_intern_str(cases[i].module);
		f.file = kp_intern_str(cases[i].file);
		f.line = cases[i].line;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		CHECK(kp_frame_reread(&f, &a) == oracle(&f, &b) &&
		      memcmp(&a, &b, KP_FRAME_KEY) == 0);
	}
	/* what some of them read back as */
	memset(&f, 0, sizeof(f));
	f.sym = kp_intern_str("f (inline)\n");
	CHECK(kp_frame_reread(&f, &a) && a.sym == kp_intern_str("f") &&
	      a.flags == KP_F_INLINE);
	f.sym = kp_intern_str("f");
	f.module = kp_intern_str("a [b");
	CHECK(kp_frame_reread(&f, &a) && a.sym == kp_intern_str("f [a") &&
	      a.module == kp_intern_str("b"));
	f.module = NULL;
	f.file = kp_intern_str("a.c:12");
	CHECK(kp_frame_reread(&f, &a) && a.file == kp_intern_str("a.c") &&
	      a.line == 12);
	f.file = kp_intern_str("");
	f.line = 3;
	CHECK(kp_frame_reread(&f, &a) && a.file == kp_intern_str(":3") &&
	      a.line == 0);
	memset(&f, 0, sizeof(f));
	f.module = kp_intern_str("m");
	CHECK(!kp_frame_reread(&f, &a)); /* " [m]": no address, no symbol */
}

int
main(int argc, char **argv)
{
	unsigned long count = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	struct kp_frame f, a, b, c;
	const struct kp_frame *ci;
	unsigned long i, same = 0, risky_n = 0, unreadable = 0;
	bool ra, rb;

	kp_progname = "test_frame_reread";
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	if (!rng_state)
		rng_state = 1;
	test_named();
	for (i = 0; i < count; i++) {
		gen_frame(&f);
		/* one step: the rule is the oracle */
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = kp_frame_reread(&f, &a);
		rb = oracle(&f, &b);
		CHECK(ra == rb && (!ra || memcmp(&a, &b, KP_FRAME_KEY) == 0));
		if (ra != rb || (ra && memcmp(&a, &b, KP_FRAME_KEY) != 0))
			mismatch("one step", &f, ra ? &a : NULL, rb ? &b : NULL);
		if (!rb)
			unreadable++;
		else if (memcmp(&f, &b, KP_FRAME_KEY) == 0)
			same++;
		/* iterated: kp_conv_intern is the old print-and-reparse one */
		oracle_canon(&f, &c);
		ci = kp_conv_intern(&f);
		CHECK(memcmp(ci, &c, KP_FRAME_KEY) == 0);
		if (memcmp(ci, &c, KP_FRAME_KEY) != 0)
			mismatch("kp_conv_intern", &f, ci, &c);
		if (risky(f.sym, false) || risky(f.module, true) ||
		    risky(f.file, true)) {
			risky_n++;
			/* and a fixed point: written and read, itself */
			memset(&b, 0, sizeof(b));
			rb = oracle(ci, &b);
			CHECK(rb && memcmp(&b, ci, KP_FRAME_KEY) == 0);
			if (!rb || memcmp(&b, ci, KP_FRAME_KEY) != 0)
				mismatch("fixed point", &f, ci, rb ? &b : NULL);
		}
	}
	printf("%lu frames (%lu risky): %lu read back as themselves, "
	       "%lu as no frame\n",
	       count, risky_n, same, unreadable);
	return CHECK_DONE();
}
