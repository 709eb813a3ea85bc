/* test_symtab.c - unit tests of common/symtab.c: kallsyms, System.map, lookups */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"
#include "symtab.h"
#include "symtab_int.h"

#include "check.h"

static char *
write_tmp(const char *text)
{
	char *path = kp_xstrdup("/tmp/kp-test-symtab-XXXXXX");
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	return path;
}

/* A kallsyms excerpt in the shape of this machine's (6.18, x86_64). */
static const char kallsyms[] =
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81001000 t __pfx_x86_64_start_reservations\n"
	"ffffffff81001010 T x86_64_start_reservations\n"
	"ffffffff81001040 t __pfx_clear_bss\n"
	"ffffffff81001050 t clear_bss\n"
	"ffffffff81001080 r some_rodata\n"
	"ffffffff81001100 W weak_fn\n"
	"ffffffff81001100 t local_fn\n"
	"ffffffff81001200 T __do_sys_x\n"
	"ffffffff81001200 T do_sys_x\n"
	"ffffffff81001300 T last_kernel\n"
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"ffffffffc0a3b010 t nft_do_chain\t[nf_tables]\n"
	"ffffffffc0a3b200 T nft_other\t[nf_tables]\n"
	"ffffffffc0a50000 t e1000_probe\t[e1000]\n";

static void
test_kallsyms(void)
{
	char *path = write_tmp(kallsyms);
	struct kp_symtab *st = kp_symtab_new();
	struct kp_sym s;

	CHECK(kp_symtab_load_kallsyms(st, path) == 0);
	CHECK(kp_symtab_error(st)[0] == '\0');
	CHECK(kp_symtab_count(st) == 16); /* no r, no A */

	/* aliases: the last listed wins (perf gives the others no size) */
	CHECK(kp_symtab_lookup(st, 0xffffffff81000005, 0, &s));
	CHECK(strcmp(s.name, "_text") == 0 && s.off == 5 && s.size == 0x1000 &&
	      s.module == NULL && s.type == 'T');

	/* sizes from the next symbol, skipped types do not end a symbol */
	CHECK(kp_symtab_lookup(st, 0xffffffff8100103f, 0, &s));
	CHECK(strcmp(s.name, "x86_64_start_reservations") == 0 &&
	      s.off == 0x2f && s.size == 0x30);
	CHECK(kp_symtab_lookup(st, 0xffffffff81001090, 0, &s));
	CHECK(strcmp(s.name, "clear_bss") == 0 && s.size == 0xb0);

	/* a call at the very end: the return address is the next symbol */
	CHECK(kp_symtab_lookup(st, 0xffffffff81001040, 0, &s));
	CHECK(strcmp(s.name, "__pfx_clear_bss") == 0 && s.off == 0);
	CHECK(kp_symtab_lookup(st, 0xffffffff81001040, KP_SYMTAB_RETADDR, &s));
	CHECK(strcmp(s.name, "x86_64_start_reservations") == 0 &&
	      s.off == 0x30 && s.size == 0x30);
	/* a retpoline's return address, a function's first byte: not its
	 * padding before (no call is made from __pfx_clear_bss) */
	CHECK(kp_symtab_lookup(st, 0xffffffff81001050, KP_SYMTAB_RETADDR, &s));
	CHECK(strcmp(s.name, "clear_bss") == 0 && s.off == 0);
	CHECK(kp_symtab_lookup(st, 0xffffffff8100104f, KP_SYMTAB_RETADDR, &s));
	CHECK(strcmp(s.name, "__pfx_clear_bss") == 0 && s.off == 0xf);

	/* the last alias listed is the one with a size, whatever its type */
	CHECK(kp_symtab_lookup(st, 0xffffffff81001100, 0, &s));
	CHECK(strcmp(s.name, "local_fn") == 0);
	CHECK(kp_symtab_lookup(st, 0xffffffff81001201, 0, &s));
	CHECK(strcmp(s.name, "do_sys_x") == 0);

	/* the last kernel symbol ends at the end of its page + 1 page */
	CHECK(kp_symtab_lookup(st, 0xffffffff81002fff, 0, &s));
	CHECK(strcmp(s.name, "last_kernel") == 0 && s.size == 0x1d00);
	CHECK(!kp_symtab_lookup(st, 0xffffffff81003000, 0, &s));

	/* modules */
	CHECK(kp_symtab_lookup(st, 0xffffffffc0201010, 0, &s));
	CHECK(strcmp(s.name, "ftrace_trampoline") == 0 &&
	      strcmp(s.module, "__builtin__ftrace") == 0);
	CHECK(kp_symtab_lookup(st, 0xffffffffc0a3b0ff, 0, &s));
	CHECK(strcmp(s.name, "nft_do_chain") == 0 &&
	      strcmp(s.module, "nf_tables") == 0 && s.size == 0x1f0);
	CHECK(kp_symtab_lookup(st, 0xffffffffc0a3c000, 0, &s));
	CHECK(strcmp(s.name, "nft_other") == 0 && s.size == 0x1e00);
	CHECK(!kp_symtab_lookup(st, 0xffffffffc0a3d000, 0, &s));
	CHECK(kp_symtab_lookup(st, 0xffffffffc0a50001, 0, &s));
	CHECK(strcmp(s.name, "e1000_probe") == 0 &&
	      strcmp(s.module, "e1000") == 0);

	/* below the first symbol */
	CHECK(!kp_symtab_lookup(st, 0xffffffff80ffffff, 0, &s));
	CHECK(!kp_symtab_lookup(st, 0, KP_SYMTAB_RETADDR, &s));

	/* by name */
	CHECK(kp_symtab_find(st, "_stext", &s) && s.addr == 0xffffffff81000000);
	CHECK(kp_symtab_find(st, "nft_other", &s) &&
	      strcmp(s.module, "nf_tables") == 0 && s.size == 0x1e00);
	CHECK(!kp_symtab_find(st, "fixed_percpu_data", &s));
	CHECK(!kp_symtab_find(st, "nope", &s));

	kp_symtab_free(st);
	unlink(path);
	free(path);
}

static void
test_bad(void)
{
	struct kp_symtab *st = kp_symtab_new();
	char *path;

	CHECK(kp_symtab_load_kallsyms(st, "/nonexistent/kallsyms") < 0);
	CHECK(strcmp(kp_symtab_error(st),
		     "/nonexistent/kallsyms: No such file or directory") == 0);

	path = write_tmp("ffffffff81000000 T _text\nhello world\n");
	CHECK(kp_symtab_load_kallsyms(st, path) < 0);
	CHECK(strstr(kp_symtab_error(st), ":2: not a kallsyms line") != NULL);
	CHECK(kp_symtab_count(st) == 0);
	unlink(path);
	free(path);

	path = write_tmp("0000000000000000 T _text\n"
			 "0000000000000000 T _stext\n");
	CHECK(kp_symtab_load_kallsyms(st, path) < 0);
	CHECK(strstr(kp_symtab_error(st), "all addresses are zero") != NULL);
	unlink(path);
	free(path);

	path = write_tmp("ffffffff81000000 T\n");
	CHECK(kp_symtab_load_kallsyms(st, path) < 0);
	unlink(path);
	free(path);

	path = write_tmp("ffffffff81000000 T _text\t[mod\n");
	CHECK(kp_symtab_load_kallsyms(st, path) < 0);
	unlink(path);
	free(path);

	path = write_tmp("");
	CHECK(kp_symtab_load_kallsyms(st, path) < 0);
	CHECK(strstr(kp_symtab_error(st), "no symbols") != NULL);
	unlink(path);
	free(path);

	/* System.map has no module column */
	path = write_tmp("ffffffff81000000 T _text\t[mod]\n");
	CHECK(kp_symtab_load_sysmap(st, path) < 0);
	CHECK(strstr(kp_symtab_error(st), "not a System.map line") != NULL);
	unlink(path);
	free(path);
	kp_symtab_free(st);
	kp_symtab_free(NULL);
}

static void
test_add(void)
{
	struct kp_symtab *st = kp_symtab_new();
	struct kp_sym s;

	/* ELF-like: explicit sizes, nested symbol, gap after a sized one */
	kp_symtab_add(st, 0x1000, 0x100, 'T', "outer", NULL);
	kp_symtab_add(st, 0x1010, 0x10, 't', "inner", NULL);
	kp_symtab_add(st, 0x1200, 0x10, 'W', "weak_alias", "m");
	kp_symtab_add(st, 0x1200, 0x10, 't', "__local_alias", "m");
	kp_symtab_add(st, 0x1200, 0x10, 't', "local_alias", "m");
	kp_symtab_add(st, 0x1300, 0x10, 'T', "g", NULL);
	kp_symtab_add(st, 0x1300, 0x10, 'T', "gg", NULL);
	kp_symtab_add(st, 0x1300, 0x10, 'T', "hh", NULL);
	kp_symtab_sort(st);
	CHECK(kp_symtab_lookup(st, 0x1015, 0, &s) &&
	      strcmp(s.name, "inner") == 0 && s.off == 5 && s.size == 0x10);
	CHECK(kp_symtab_lookup(st, 0x1020, 0, &s) &&
	      strcmp(s.name, "outer") == 0 && s.off == 0x20);
	CHECK(!kp_symtab_lookup(st, 0x1100, 0, &s));
	/* perf: not weak, then global, then fewer underscores */
	CHECK(kp_symtab_lookup(st, 0x1200, 0, &s) &&
	      strcmp(s.name, "local_alias") == 0 &&
	      strcmp(s.module, "m") == 0);
	/* then the longer name, then the first */
	CHECK(kp_symtab_lookup(st, 0x1300, 0, &s) &&
	      strcmp(s.name, "gg") == 0);
	CHECK(!kp_symtab_lookup(st, 0x1310, 0, &s));
	kp_symtab_free(st);
}

/*
 * A large table (its lookups narrowed to a bucket of addresses) answers
 * as a plain search of it does: symbols of pseudo-random addresses and
 * sizes, some nested, some sharing an address, added out of order;
 * every address around each looked up with and without RETADDR.
 */
static void
test_large(void)
{
	struct kp_symtab *st = kp_symtab_new();
	struct kp_sym s, r;
	uint64_t x = 88172645463325252ull, addr[3000], size[3000], a;
	char name[32];
	size_t i, j, k, bad = 0;
	bool found;

	for (i = 0; i < 3000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		addr[i] = i % 7 == 3 ? addr[i - 1] : 0x400000 + x % 0x100000;
		size[i] = i % 5 == 0 ? 0 : 1 + x % 0x300;
		snprintf(name, sizeof(name), "f%zu", i);
		kp_symtab_add(st, addr[i], size[i], i % 3 ? 't' : 'T', name,
			      NULL);
	}
	kp_symtab_add(st, 0xffffffff81000000ull, 0, 'T', "far", NULL);
	kp_symtab_sort(st);
	for (i = 0; i < 3000; i++) {
		for (k = 0; k < 6; k++) {
			a = addr[i] + k * 97 - 1;
			for (j = 0; j < 2; j++) {
				found = kp_symtab_lookup(st, a, (unsigned)j, &s);
				/* the reference: a table of one bucket */
				{
					struct kp_symtab copy = *st;

					copy.bucket = NULL;
					if (found != kp_symtab_lookup(&copy, a,
								      (unsigned)j,
								      &r) ||
					    (found && (s.addr != r.addr ||
						       s.name != r.name ||
						       s.size != r.size)))
						bad++;
				}
			}
		}
	}
	CHECK(bad == 0);
	CHECK(kp_symtab_lookup(st, 0x300000, 0, &s) == false);
	CHECK(kp_symtab_lookup(st, 0xffffffff81000010ull, 0, &s) &&
	      strcmp(s.name, "far") == 0);
	kp_symtab_free(st);
}

/*
 * An ELF file's symbols read with its descriptor keep their names in its
 * mapped string table (not copied one by one): the same names, at the
 * same addresses, as read without one (copied), and readable after the
 * file is closed, until the table is freed.
 */
static void
test_elf_kept(void)
{
	char path[4096], *slash;
	struct kp_symtab *a = kp_symtab_new(), *b = kp_symtab_new();
	struct kp_sym s1, s2;
	struct Elf *elf;
	const char *lo, *hi;
	size_t i;
	int fd;

	/* a program with a .symtab, kept with the fuzz inputs */
	snprintf(path, sizeof(path), "%s", __FILE__);
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path,
		 sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
		 "../fuzz/corpus/fuzz_elf/seed-prog");
	if (access(path, R_OK) != 0) {
		printf("test_elf_kept: skipped: no %s\n", path);
		kp_symtab_free(a);
		kp_symtab_free(b);
		return;
	}
	CHECK(kp_symtab_load_elf(a, path, 0) == 0);
	CHECK(a->nmaps == 1);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && (elf = kp_elf_of(fd)) != NULL);
	CHECK(kp_symtab_load_elf_of(b, elf, -1, path, 0, NULL, -1) == 0);
	kp_elf_end(elf);
	close(fd);
	CHECK(b->nmaps == 0);
	CHECK(a->n == b->n && a->n > 10);
	lo = a->maps[0].p;
	hi = lo + a->maps[0].len;
	for (i = 0; i < a->n && i < b->n; i++) {
		CHECK(a->ents[i].addr == b->ents[i].addr &&
		      strcmp(a->ents[i].name, b->ents[i].name) == 0);
		/* in the mapped table, but the PLT's (made: name@plt) */
		if (!strstr(a->ents[i].name, "@plt"))
			CHECK(a->ents[i].name >= lo && a->ents[i].name < hi);
	}
	CHECK(kp_symtab_find(a, "main", &s1) && kp_symtab_find(b, "main", &s2) &&
	      s1.addr == s2.addr && s1.size == s2.size);
	CHECK(kp_symtab_lookup(a, s1.addr + 1, 0, &s2) &&
	      strcmp(s2.name, "main") == 0);
	kp_symtab_free(a);
	kp_symtab_free(b);
}

int
main(void)
{
	kp_progname = "test_symtab";
	test_kallsyms();
	test_bad();
	test_add();
	test_large();
	test_elf_kept();
	return CHECK_DONE();
}
