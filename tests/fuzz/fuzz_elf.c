/*
 * fuzz_elf.c - libFuzzer target for the ELF and DWARF paths of
 * kp-addr2sym: common/symtab_elf.c (symbol table, build-id, debug-file
 * search) and common/dwarf_lines.c (lines and inline chains through
 * libdwfl) on an arbitrary, usually corrupt, ELF file.  They must fail
 * cleanly, never crash.  Seeds in tests/fuzz/corpus/fuzz_elf/ are small
 * ELF files built with -g -O2 (a program with inline functions, a
 * shared library, an object file) and truncated or mutated copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_lines.h"
#include "kp.h"
#include "symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

/*
 * libdw 0.188 leaks a scope array inside dwarf_getscopes() on some
 * corrupt DWARF (an error path of its own, nothing kp holds): not ours.
 */
/*
 * libdw and libc are built without frame pointers: with the fast
 * unwinder a leak's stack ends at libc's vasprintf, so the suppressions
 * below never saw libdw in it (a CI run failed on such a leak, its stack
 * "<unknown module>").  The slow unwinder reads .eh_frame: the whole
 * stack, libdw's frames included, and ours when a leak is kp's.
 */
const char *
__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

const char *
__lsan_default_suppressions(void)
{
	return "leak:dwarf_getscopes\n"
	       "leak:libdw.so\n";
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/kp-fuzz-elf-XXXXXX";
	struct kp_srcframe sf[32];
	struct kp_symtab *st;
	struct kp_dwarf *dw;
	struct kp_sym sym;
	char err[512], *s;
	uint64_t addrs[16];
	size_t i, n = 0;
	int fd = mkstemp(path);

	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	kp_progname = "fuzz_elf";

	st = kp_symtab_new();
	if (kp_symtab_load_elf(st, path, KP_SYMTAB_DEBUGFILE) == 0) {
		if (kp_symtab_count(st) == 0)
			abort(); /* success means symbols */
		/* some addresses: those of symbols found by name and by lookup */
		if (kp_symtab_find(st, "main", &sym))
			addrs[n++] = sym.addr + 4;
		for (i = 0; i < 8; i++) {
			uint64_t a = (uint64_t)i * 0x40 + 0x1000;

			if (kp_symtab_lookup(st, a, i & 1 ? KP_SYMTAB_RETADDR : 0,
					     &sym)) {
				if (sym.size == 0 || sym.name == NULL ||
				    (sym.off > sym.size && !(i & 1)))
					abort();
				addrs[n++] = a;
			}
		}
	} else if (kp_symtab_error(st)[0] == '\0') {
		abort(); /* a failure must say why */
	}
	addrs[n++] = 0;
	addrs[n++] = UINT64_MAX;
	s = kp_elf_build_id(path);
	free(s);
	s = kp_elf_debug_file(path);
	free(s);
	dw = kp_dwarf_open(path, err, sizeof(err));
	if (dw) {
		for (i = 0; i < n; i++) {
			size_t k = kp_dwarf_lookup(dw, addrs[i], true, sf, 32);

			if (k > 32)
				abort();
			kp_dwarf_lookup(dw, addrs[i], false, sf, 1);
		}
		kp_dwarf_close(dw);
	} else if (err[0] == '\0') {
		abort();
	}
	kp_symtab_free(st);
	unlink(path);
	return 0;
}
