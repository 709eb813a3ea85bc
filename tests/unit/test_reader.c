/*
 * test_reader.c - unit tests of common/reader.c: its fast paths (lines
 * read in place, some ahead; with a key that ignores addresses, the
 * lean path's frame lines looked up by name where they lie) against the
 * path that reads any line (kp_reader_fast false).  Every input is read
 * both ways, with no key and with the keys of name_key.h (the name
 * cache), and must give the same trace: each record's frames, ids,
 * count and line number, the skipped lines, the metadata and the
 * messages.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"
#include "../fuzz/name_key.h"

#include "check.h"

static char path[] = "/tmp/kp-test-reader-XXXXXX";
static char errpath[] = "/tmp/kp-test-reader-err-XXXXXX";

static void
put_file(const char *p, const char *data, size_t len)
{
	FILE *fp = fopen(p, "wb");

	if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0) {
		perror(p);
		exit(2);
	}
}

/* What the reader made of the input at path, read fast or plainly. */
static char *
trace(bool fast)
{
	char *buf = NULL, *err;
	size_t len = 0, i, elen;
	FILE *out = open_memstream(&buf, &len), *ef;
	struct kp_reader *rd;
	const struct kp_stack *st;
	const uint32_t *ids;
	unsigned long nrec;
	int saved, fd;

	if (!out)
		abort();
	kp_reader_fast = fast;
	kp_skipped = 0;
	kp_meta_clear();
	/* the messages, as the user would see them */
	fflush(stderr);
	saved = dup(2);
	fd = open(errpath, O_WRONLY | O_TRUNC);
	if (saved < 0 || fd < 0 || dup2(fd, 2) < 0)
		abort();
	close(fd);
	rd = kp_reader_open(path);
	name_key_set(rd);
	for (nrec = 1; (st = kp_reader_next(rd)) != NULL; nrec++) {
		ids = kp_reader_ids(rd);
		fprintf(out, "line %lu: count %" PRIu64 ":",
			kp_input_lineno(kp_reader_input(rd)), st->count);
		for (i = 0; i < st->n; i++) {
			fprintf(out, " %p/%u", (const void *)st->frames[i],
				ids[i]);
			CHECK(ids[i] == st->frames[i]->id);
		}
		fputc('\n', out);
		name_key_after(rd, nrec);
	}
	fprintf(out, "end at line %lu, %lu skipped, %zu metadata lines\n",
		kp_input_lineno(kp_reader_input(rd)), kp_skipped,
		kp_meta_count());
	kp_reader_close(rd);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ef = fopen(errpath, "rb");
	if (!ef)
		abort();
	err = kp_xmalloc(1 << 16);
	elen = fread(err, 1, 1 << 16, ef);
	fclose(ef);
	fputs("stderr:\n", out);
	fwrite(err, 1, elen, out);
	free(err);
	fclose(out);
	kp_reader_fast = true;
	return buf;
}

static int shown;

/* Read data both ways, with each key: the traces must be equal. */
static void
both_ways(const char *data, size_t len)
{
	char *a, *b;

	put_file(path, data, len);
	for (name_keyed = 0; name_keyed < NAME_KEYS; name_keyed++) {
		a = trace(true);
		b = trace(false);
		CHECK(strcmp(a, b) == 0);
		if (strcmp(a, b) != 0 && shown++ < 3) {
			fprintf(stderr, "input (%zu bytes), key %d:\n", len,
				name_keyed);
			fwrite(data, 1, len > 2000 ? 2000 : len, stderr);
			fprintf(stderr, "\nfast:\n%s\nplain:\n%s\n", a, b);
		}
		free(a);
		free(b);
	}
	name_keyed = 0;
}

#define CASE(s) both_ways(s, sizeof(s) - 1)

#define F1 " 0xffffffff81000001 : a+0x1/0x2 [kernel]"
#define F2 " 0xffffffff81000002 : b+0x2/0x4 [kernel]"
#define F3 " 0xffffffff81000003 : c+0x3/0x8 [kernel]"

/* Hand-made cases: each holds a line the guess would take if it could. */
static void
test_cases(void)
{
	/* bare addresses after the same frame, of the kernel and not in
	 * turn, each where the guess is the other kind's name (key 5: read
	 * by kind); the kernel's from 0xffff800000000000 on, in either
	 * case of hex digit */
	CASE("!\n" F1 "\n 0xffffffff81000010\n\t1\n!\n" F1
	     "\n 0x00007f0000001000\n\t2\n!\n" F1
	     "\n 0xffffffff81000020\n\t3\n!\n" F1
	     "\n 0xffff7fffffffffff\n\t4\n!\n" F1
	     "\n 0xFFFF800000000000\n\t5\n!\n" F1
	     "\n 0x0000000000000000\n\t6\n!\n" F1
	     "\n 0xffff800000000000\n" F2 "\n\t7\n!\n" F1
	     "\n 0x0000000000000001\n" F2 "\n\t8\n!\n 0x8\n\t9\n!\n"
	     " 0xfffffffffffffff\n\t10\n");
	/* the lean path's guess of a name: the same module with an offset
	 * and then without one, where the module ends like an offset
	 * ("[lib+0x1]" is module lib at offset 1, not module lib+0x1) */
	CASE("!\n" F1 "\n 0x0000000000001000 [lib+0x1+0x2]\n\t1\n!\n" F1
	     "\n 0x0000000000002000 [lib+0x1]\n\t2\n!\n" F1
	     "\n 0x0000000000003000 [lib+0x1/0x8]\n\t3\n!\n" F1
	     "\n 0x0000000000004000 [lib+0x1+0x2/0x8]\n\t4\n");
	/* a symbol that ends like an offset, then the line with one more */
	CASE("!\n" F1 "\n 0x0000000000001000 : a+0x1+0x2 [m]\n\t1\n!\n" F1
	     "\n 0x0000000000002000 : a+0x1 [m]\n\t2\n!\n" F1
	     "\n 0x0000000000003000 : a+0x1+0x2/0x3 [m]\n\t3\n!\n" F1
	     "\n 0x0000000000004000 : a+0x1+0x2+0x3 [m]\n\t4\n");
	/* learn F1 F2 F3, then read them again: predicted */
	CASE("!\n" F1 "\n" F2 "\n" F3 "\n\t1\n!\n" F1 "\n" F2 "\n" F3
	     "\n\t2\n");
	/* lines that share a prefix with the predicted line */
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n" F2 " (inexact)\n\t2\n"
	     "!\n" F1 "\n 0xffffffff81000002 : b+0x2/0x4 [kerne\n\t3\n"
	     "!\n" F1 "\n 0xffffffff81000002 : b+0x2/0x4 [kernel]x\n\t4\n");
	/* the predicted line, then \r\n, blanks, a tab, \r\t */
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n" F2 "\r\n\t2\n!\n" F1
	     "\n" F2 " \n\t3\n!\n" F1 "\n" F2 "\t\n\t4\n!\n" F1 "\n" F2
	     "\r\t\n\t5\n!\n" F1 "\n" F2 "\r\r\n\t6\n");
	/* other blanks before it; blank lines between frames */
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n\t\t" F2 "\n\t2\n!\n" F1
	     "\n" "0xffffffff81000002 : b+0x2/0x4 [kernel]\n\t3\n!\n" F1
	     "\n\n" F2 "\n\t4\n!\n" F1 "\n \t \n" F2 "\n\t5\n");
	/* the predicted line last, without its newline */
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n" F2);
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n" F2 "\n\t7");
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n" F2 "\n\t7\r");
	CASE("!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n" F2 "\n!");
	/* NUL bytes: in a frame line, in metadata, in a count */
	CASE("!\n : a\0b\n : c\n\t1\n!\n : a\0b\n : c\n\t2\n");
	CASE("!\n : a\n : c\n\t1\n!\n : a\n : c\0\n\t2\n");
	CASE("# event: a\0b\n!\n : a\n\t1\0\n!\n : a\n\t2\n");
	/* counts as writers print them and otherwise */
	CASE("!\n : a\n\t0\n!\n : a\n\t18446744073709551615\n!\n : a\n"
	     "\t18446744073709551616\n!\n : a\n\t1234567890123456789\n"
	     "!\n : a\n\t12345678901234567890\n!\n : a\n 42 \n!\n : a\n"
	     "\t42\r\n!\n : a\n\t+1\n!\n : a\n\t1x\n!\n : a\n\t\t007\n"
	     "!\n : a\n\t00000000000000000000001\n");
	/* counts without frames, frames without counts, a bad line */
	CASE("\t1\n!\n : a\n!\n : a\n : b\n\t3\n\t4\n!\n : a\n : b\n");
	CASE("!\n : a\n x\n : b\n\t1\n!\n : a\n : b\n\t2\n!\n : a\n x\n"
	     " : b\n\t3\n");
	/* "!" and its look-alikes */
	CASE("!\r\n : a\n\t1\n !\n : a\n\t2\n!!\n : a\n\t3\n! \n : a\n\t4\n"
	     "!\t\n : a\n\t5\n!x\n : a\n\t6\n");
	/* SystemTap's hex lists, between frame lines */
	CASE("0x1 0x2 0x3\n\t1\n!\n : a\n0x1 0x2\n : b\n\t2\n!\n : a\n"
	     "0x1 0x2\n : b\n\t3\n");
	/* metadata inside records */
	CASE("!\n : a\n# x: y\n : b\n\t1\n!\n : a\n : b\n\t2\n");
	/* brackets near the end, where the name cache looks for the
	 * module's a word at a time: the last " [" is the module's (a
	 * symbol "f+0x1 [a" has no offset, and "f+0x1/0x2 [ab" is not "f"
	 * in module "ab [c"), a module starting with 'Z'
	 * ('[' ^ 'Z' is 1), more than one in a word, and past 16 bytes */
	CASE("!\n 0xffffffff81000001 : f+0x1 [a [b]\n\t1\n"
	     "!\n 0xffffffff81000001 : f+0x1/0x2 [Z]\n"
	     " 0xffffffff81000002 : f+0x1/0x2 [Zk]\n"
	     " 0xffffffff81000003 : f[Z+0x1/0x2 [[Z]\n\t2\n"
	     "!\n 0xffffffff81000004 : g+0x1/0x2 [x] [kernel]\n"
	     " 0xffffffff81000005 : g+0x1/0x2 [x [y] [z]\n"
	     " 0xffffffff81000006 : h [i+0x1/0x2 [a_long_module_name]\n"
	     " 0xffffffff81000007 : h+0x1/0x2 [a [long_module_name_]\n"
	     " 0xffffffff81000008 : f+0x1/0x2 [ab [c]\n"
	     " 0xffffffff81000009 : f+0x3/0x4 [ab [c]\n\t3\n"
	     "!\n 0xffffffff81000001 : f+0x1 [a [b]\n\t4\n");
	/* a line the cache does not keep (4096 bytes or more) */
	{
		size_t n = 6000, k = 0;
		char *s = kp_xmalloc(3 * n + 200);
		int r, i;

		for (r = 0; r < 3; r++) {
			k += (size_t)sprintf(s + k, "!\n : a\n : ");
			for (i = 0; i < (int)n - r * 2000; i++)
				s[k++] = 'x';
			k += (size_t)sprintf(s + k, "\n : b\n\t%d\n", r + 1);
		}
		both_ways(s, k);
		free(s);
	}
}

/*
 * Lines the guess may meet, put together at random: frame lines that
 * differ in a byte or an end from another, counts, "!"s, metadata,
 * blank lines, odd line ends.
 */
static const char *const pieces[] = {
	F1, F2, F3, F1 " (inexact)", " 0xffffffff81000001 : a+0x1/0x2 [kerne",
	" : a", " : ab", ": a", "\t: a", " : a ", " : a\r", "0x1", "0x1 0x2",
	"0x1 0x2 0x3", " : x y", " : [unknown] [m]",
	"ffffffff81039e37 : s+ffffffff81039e37", "\t1", "\t42", " 7 ", "1",
	"\t18446744073709551615", "\t18446744073709551616",
	"\t12345678901234567890", "\t1x", "!", " !", "!!", "", " ", "\t",
	"\r", "# event: x", "#", "x", "0", "0x",
	/* the name cache's shapes (reader.c) and lines that miss one */
	" 0x1 : a+0x1 [m]", " 0x2 : a+0x2 [m]", " 0x3 : a+0x3/0x9 [m]",
	" 0x1 [m+0x10]", " 0x2 [m+0x20/0x30]", " 0x3 [m]", " 0x4 [n]",
	" 0x5", " 0x6", " 0x1 [a+b]", " 0x1 [m+]", " 0x1 [+0x1]", " 0x1 []",
	" 0x1 [libstdc++.so.6]", " 0x1 [a+0x1/0x2/0x3]", " 0x1 [a/+0x1]",
	" 0x12345678901234567 : a+0x1 [m]", " 0x1234567890abcdef : a+0x1 [m]",
	" 0X1 : a+0x1 [m]", " 0x1 : a+0X1 [m]", " 0xAbC : a+0xF/0xE [m]",
	" 0x1 : a+0x1/0x2/0x3 [m]", " 0x1 : a+0x1 [m] (inexact)",
	" 0x1 : \"a\"+0x1 [m]", " 0x1 :  a+0x1 [m]", " 0x1 : a+0x1  [m]",
	" 0x1 : a+0x1 [m [n]", " 0x1 : a [b]+0x1 [m]", " 0x1 : +0x1 [m]",
	" 0x1 : a+0x1 []", " 0x1 : a+0x1 [m]]", " 0x1 : a+0x1 [[m]",
	" 0x1 : a+0x10000000000000000 [m]", " 0x1 : a+0x1/ [m]",
	" 0x1 : a+/0x1 [m]", " 0x1 : a+0x [m]", " 0x1 : a\t+0x1 [m]",
	" 0x1 : a+b+0x1 [m]", " 0x1 : a+0x1 [m+0x2]", " 0x1 :a+0x1 [m]",
	" 0x1: a+0x1 [m]", " 0x1 : a+0x1 [ m ]", " 0x1 : a+0x1 [m]x",
	" 0x1 : a+0x1+0x2 [m]", " 0x1 : a+0x1 [\tm]", " 0x1 ; a+0x1 [m]",
	/* as a writer pads them, where the lean path guesses a name (by
	 * the line before, by the address): one address, other names */
	" 0x0000000000000001 : a+0x1 [m]", " 0x0000000000000001 : a+0x2 [m]",
	" 0x0000000000000001 : a+0x1/0x2 [m]", " 0x0000000000000001 : b+0x1 [m]",
	" 0x0000000000000001 : a+0x1 [n]", " 0x0000000000000001 [m]",
	" 0x0000000000000001 [m+0x1]", " 0x0000000000000001 [m+0x1/0x2]",
	" 0x0000000000000001", " 0x0000000000000001 [a+0x1+0x2]",
	" 0x0000000000000001 [a+0x1]", " 0x0000000000000001 [a+0x1/0x2]",
	" 0x0000000000000001 : a+0x1+0x2 [m]", " 0x0000000000000001 : a+0x1",
	" 0x000000000000000g : a+0x1 [m]", " 0x0000000000000002 : a+0x1 [m]",
	" 0x0000000000000001 : a+0x10000000000000001 [m]",
	" 0x0000000000000001 : a+0x1/0x10000000000000002 [m]",
	" 0x0000000000000001 [m+0x10000000000000001]",
	"\t1234567890123456789", "\t0000000000000000001",
};
#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static void
test_random(void)
{
	char buf[8192];
	unsigned stack[8], depth, r, i, j;
	size_t len;

	for (r = 0; r < 4000; r++) {
		len = 0;
		/* a few records of one stack and its variants, so that
		 * lines come again after the same line */
		depth = 1 + rnd(8);
		for (i = 0; i < depth; i++)
			stack[i] = rnd(NPIECES);
		for (j = 0; j < 1 + rnd(6); j++) {
			len += (size_t)sprintf(buf + len, "%s", rnd(4) ? "!\n"
							: "");
			for (i = 0; i < depth && len < sizeof(buf) - 200; i++) {
				const char *p = rnd(6) ? pieces[stack[i]]
						       : pieces[rnd(NPIECES)];

				if (!rnd(12))
					buf[len++] = rnd(2) ? ' ' : '\t';
				len += (size_t)sprintf(buf + len, "%s", p);
				if (!rnd(30))
					buf[len++] = '\0';
				if (!rnd(15))
					buf[len++] = "\r \t"[rnd(3)];
				buf[len++] = '\n';
			}
			if (rnd(5))
				len += (size_t)sprintf(buf + len, "\t%u\n",
						       rnd(100));
		}
		/* the end: whole, or a line cut short */
		if (len && !rnd(5))
			len -= 1 + rnd(len < 4 ? (unsigned)len : 4);
		both_ways(buf, len);
	}
}

/*
 * A guess across the end of the input buffer (1 MiB): the same records
 * over and over, shifted by a first line of every length, so that the
 * buffer ends at every byte of a frame line, a count and a "!".
 */
static void
test_refill(void)
{
	size_t cap = (1u << 20) + 4096, len, shift;
	char *s = kp_xmalloc(cap);

	for (shift = 0; shift < 48; shift++) {
		len = 0;
		len += (size_t)sprintf(s + len, "# pad: %.*s\n", (int)shift,
				       "................................"
				       "................");
		while (len < cap - 200)
			len += (size_t)sprintf(s + len,
					       "!\n" F1 "\n" F2 "\n" F3 "\n"
					       "\t%zu\n",
					       len % 1000);
		both_ways(s, len);
	}
	free(s);
}

/*
 * Every byte in every place of lines of the name cache's shapes, read
 * with each key: the fast path takes a line for a shape only where the
 * parser reads it so.
 */
static void
test_name_bytes(void)
{
	static const char *const lines[] = {
		"0xffffffff81000001 : a_b+0x1c/0x2f0 [kernel]",
		"0x00007f0c042e6353 : _Fork+0x23 [/usr/lib/libc.so.6]",
		"0x00007f0c042e6353 [/usr/lib/chromium/chromium+0x1a2b]",
		"0x00007f0c042e6353 [/usr/bin/perf]",
		"0x00007f0c042e6353",
	};
	static char buf[1 << 16];
	char line[128];
	size_t i, pos, len, n, k;
	int c, r;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		n = strlen(lines[i]);
		for (pos = 0; pos <= n; pos++) {
			len = (size_t)sprintf(buf, "!\n %s\n\t1\n", lines[i]);
			for (c = 1; c < 256; c++) {
				if (c == '\n')
					continue;
				memcpy(line, lines[i], n);
				line[pos] = (char)c; /* pos n: a byte more */
				k = pos < n ? n : n + 1;
				/* twice: the second found in the cache */
				for (r = 0; r < 2; r++) {
					memcpy(buf + len, "!\n ", 3);
					len += 3;
					memcpy(buf + len, line, k);
					len += k;
					len += (size_t)sprintf(buf + len, "\n\t%d\n",
							       c);
				}
			}
			both_ways(buf, len);
		}
	}
}

/* A frame line longer than the input buffer, between guessed lines. */
static void
test_long_line(void)
{
	size_t n = (3u << 19), len = 0;
	char *s = kp_xmalloc(n + 400);

	len += (size_t)sprintf(s, "!\n" F1 "\n" F2 "\n\t1\n!\n" F1 "\n : ");
	memset(s + len, 'y', n);
	len += n;
	len += (size_t)sprintf(s + len, "\n" F2 "\n\t2\n!\n" F1 "\n" F2
				       "\n\t3\n");
	both_ways(s, len);
	free(s);
}

int
main(void)
{
	int fd = mkstemp(path), efd = mkstemp(errpath);

	if (fd < 0 || efd < 0) {
		perror("mkstemp");
		return 2;
	}
	close(fd);
	close(efd);
	kp_progname = "test_reader";
	kp_refuse_foreign = false;
	test_cases();
	test_random();
	test_refill();
	test_long_line();
	test_name_bytes();
	unlink(path);
	unlink(errpath);
	return CHECK_DONE();
}
