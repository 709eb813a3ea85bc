/*
 * symtab.h - symbol tables: address to symbol, for kp-addr2sym,
 * kp-sample and the converters.
 *
 * A struct kp_symtab is a sorted array of symbols with their names in
 * one string arena, searched by binary search (as bcc's ksyms__load and
 * ksyms__map_addr do).  Load it from /proc/kallsyms or a saved copy, a
 * System.map, or an ELF file's symbol table (symtab_elf.c), or fill it
 * symbol by symbol.
 *
 *	struct kp_symtab *ks = kp_symtab_new();
 *	struct kp_sym sym;
 *
 *	if (kp_symtab_load_kallsyms(ks, NULL) < 0)
 *		kp_die("%s", kp_symtab_error(ks));
 *	if (kp_symtab_lookup(ks, pc, leaf ? 0 : KP_SYMTAB_RETADDR, &sym))
 *		printf("%s+0x%" PRIx64 "/0x%" PRIx64 "\n", sym.name, sym.off,
 *		       sym.size);
 *	kp_symtab_free(ks);
 *
 * Sizes come from the symbol table when it has them (ELF st_size), else
 * they run to the next symbol, as perf computes them: the last symbol of
 * the kernel or of a module runs to the end of its page and one more.
 * Among aliases (several names at one address) the lookup returns the
 * one perf shows: a symbol with a size before one without, then not
 * weak, then global, then fewer leading underscores, then the longer
 * name, then the first loaded.  For kallsyms this is the last alias
 * listed (perf gives the earlier ones no size).
 *
 * The library prints nothing: a load error returns -1, and
 * kp_symtab_error() says what went wrong ("FILE: reason" or
 * "FILE:LINE: reason").  Out of memory is fatal (exit 2), as everywhere
 * in common/.  Strings returned by a lookup belong to the table and stay
 * valid until kp_symtab_free().  After loading, a table is read-only and
 * may be shared between threads.
 */
#ifndef KP_SYMTAB_H
#define KP_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_symtab;

/* The result of a lookup. */
struct kp_sym {
	uint64_t addr;      /* start of the symbol */
	uint64_t size;      /* its size (see above), never 0 */
	uint64_t off;       /* the address looked up minus addr */
	const char *name;   /* owned by the table */
	const char *module; /* kallsyms "[mod]" column, or NULL */
	char type;          /* nm(1) type letter: T t W w D d B b ... */
};

/* Lookup flags. */
enum {
	/*
	 * The address is a return address (any frame but the innermost):
	 * find the symbol of addr - 1, the call instruction, as eu-stack
	 * does, so that a call at the very end of a function that never
	 * returns names its caller and not the next symbol.  The offset is
	 * still reported relative to addr.
	 */
	KP_SYMTAB_RETADDR = 1 << 0,
};

/* An empty table.  Never NULL (out of memory is fatal). */
struct kp_symtab *kp_symtab_new(void);
/* Free the table and every string it returned; NULL is allowed. */
void kp_symtab_free(struct kp_symtab *st);

/*
 * Why the last load failed, e.g. "/proc/kallsyms: Permission denied".
 * Empty if nothing failed.
 */
const char *kp_symtab_error(const struct kp_symtab *st);

/*
 * Add the symbols of a kallsyms file (NULL means /proc/kallsyms): text,
 * weak, data and bss symbols (types T W D B, either case), with their
 * module from the "[mod]" column.  Returns 0, or -1 if the file cannot
 * be read, holds a line that is not a kallsyms line, or has only zero
 * addresses (kptr_restrict: read it as root).  On error nothing of the
 * file is added.
 */
int kp_symtab_load_kallsyms(struct kp_symtab *st, const char *path);

/* The same for a System.map (the same line format, no modules). */
int kp_symtab_load_sysmap(struct kp_symtab *st, const char *path);

/*
 * Add one symbol; size 0 means "up to the next symbol".  name and
 * module (NULL for none) are copied.  Call kp_symtab_sort() after the
 * last kp_symtab_add() and before any lookup; the load functions sort
 * by themselves.
 */
void kp_symtab_add(struct kp_symtab *st, uint64_t addr, uint64_t size,
		   char type, const char *name, const char *module);
void kp_symtab_sort(struct kp_symtab *st);

/*
 * Find the symbol that contains addr (see KP_SYMTAB_RETADDR).  Returns
 * true and fills *sym, or false if no symbol covers the address.
 */
bool kp_symtab_lookup(const struct kp_symtab *st, uint64_t addr,
		      unsigned flags, struct kp_sym *sym);

/*
 * Find a symbol by name (the first loaded with that name, aliases
 * included), e.g. "_text" for the KASLR shift.  sym->off is 0.
 */
bool kp_symtab_find(const struct kp_symtab *st, const char *name,
		    struct kp_sym *sym);

/* Number of symbols loaded (aliases included). */
size_t kp_symtab_count(const struct kp_symtab *st);

/* ---- symtab_elf.c: ELF files through libelf ---- */

/* kp_symtab_load_elf flags. */
enum {
	/*
	 * When the file has no .symtab (a stripped DSO), read the one of
	 * its separate debug file (kp_elf_debug_file) if there is one.
	 */
	KP_SYMTAB_DEBUGFILE = 1 << 0,
};

/*
 * Add the symbols of an ELF file (vmlinux, a DSO, an executable): its
 * .symtab, else its .dynsym, and "name@plt" for the PLT entries of an
 * x86-64 file (as perf names them).  Functions and code labels become T/t/W,
 * data objects D/d/V or B/b; addresses are the file's own (st_value,
 * link-time for vmlinux), sizes st_size.  Returns 0, or -1 with
 * kp_symtab_error() set ("FILE: not an ELF file", "FILE: no symbol
 * table", a truncated or corrupt file ...).  Never crashes on a corrupt
 * file.
 */
int kp_symtab_load_elf(struct kp_symtab *st, const char *path,
		       unsigned flags);

/*
 * The GNU build-id of an ELF file as lowercase hex, or NULL (none, or
 * the file cannot be read).  The caller frees it.
 */
char *kp_elf_build_id(const char *path);
/* The same of an ELF file already open (libelf's Elf). */
struct Elf;
char *kp_elf_build_id_of(struct Elf *elf);

/*
 * An ELF file open on fd, read through libelf (the descriptor stays the
 * caller's and must outlive the Elf), or NULL if it is not one; end it
 * with kp_elf_end (NULL is allowed).  For reading one file once: its
 * build-id, symbols and segments from one open (kp_*_of).
 */
struct Elf *kp_elf_of(int fd);
void kp_elf_end(struct Elf *elf);

/*
 * kp_symtab_load_elf of an ELF file already open, on descriptor fd (or
 * -1), path naming it (in messages, and where KP_SYMTAB_DEBUGFILE looks
 * for its debug file).  debug, if not NULL, is its debug file, open (on
 * debug_fd, or -1): read when the file has no .symtab instead of looking
 * for one.  With a descriptor, the names stay in the file's string table,
 * mapped until kp_symtab_free (the descriptor may be closed after this
 * call); without one they are copied.
 */
int kp_symtab_load_elf_of(struct kp_symtab *st, struct Elf *elf, int fd,
			  const char *path, unsigned flags, struct Elf *debug,
			  int debug_fd);

/*
 * perf's build-id cache.  perf record keeps a copy of each file it
 * sampled (util/build-id.c, build_id_cache__add_s) as
 * $HOME/.debug/PATH/BUILD_ID/elf (PATH the file's absolute name), of
 * its separate debug file as .../debug, and perf report reads those when
 * the file at PATH is gone or rebuilt; the vDSO is kept as
 * $HOME/.debug/[vdso]/BUILD_ID/vdso (PATH "[vdso]", NAME "vdso"), the
 * kernel's symbols as [kernel.kallsyms]/BUILD_ID/kallsyms.  Open
 * $HOME/.debug/PATH/BUILD_ID/NAME as kp_open_regular opens a file, going through
 * directories only, none of them a symbolic link below $HOME/.debug (a
 * name the capture gives leads nowhere else), the file itself not one
 * either.  Returns the descriptor, or -1 with errno: ENOENT when there
 * is no such entry (or PATH is neither absolute nor one "[NAME]", holds
 * "." or "..", or BUILD_ID is not lowercase hex; or no HOME), ELOOP for
 * a symbolic link
 * met, EINVAL for a file that is not regular.  *where is set to the
 * name (malloc'ed, the caller frees it; NULL when PATH or BUILD_ID is
 * refused), for messages.
 */
int kp_buildid_cache_open(const char *path, const char *build_id,
			  const char *name, char **where);

/*
 * The separate debug file of an ELF file, looked for as gdb and
 * elfutils do: /usr/lib/debug/.build-id/xx/yyyy.debug, then the
 * .gnu_debuglink name in the file's directory, its .debug/ and
 * /usr/lib/debug/DIR/.  NULL if none is found.  The caller frees it.
 */
char *kp_elf_debug_file(const char *path);

/* A PT_LOAD segment: file bytes [off, off + filesz) at ELF address vaddr. */
struct kp_elf_seg {
	uint64_t off, vaddr, filesz;
};

/*
 * The PT_LOAD segments of an ELF file open (kp_elf_of), in *segs
 * (malloc'ed, the caller frees it; NULL if none) and *n.
 */
void kp_elf_segments_of(struct Elf *elf, struct kp_elf_seg **segs,
			size_t *n);
/* The ELF address of file offset off, if a segment holds it. */
bool kp_elf_off_to_vaddr(const struct kp_elf_seg *segs, size_t n,
			 uint64_t off, uint64_t *vaddr);

#endif /* KP_SYMTAB_H */
