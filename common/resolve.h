/*
 * resolve.h - one resolver: kernel and user addresses to kp frames, for
 * kp-sample, kp-addr2sym and the perf.data reader.
 *
 * An opaque handle in the style of bcc's ksyms__load/syms__map_addr: the
 * kernel's symbols (kallsyms, a saved copy, a System.map or a vmlinux,
 * with the KASLR shift and the build-id check), its modules, and every
 * user file (executable, DSO) met, each loaded once, on first use, with
 * its build-id, .symtab or .dynsym (or the separate debug file's, under
 * /usr/lib/debug/.build-id/), @plt entries, and with KP_RES_LINES /
 * KP_RES_INLINES its source lines and inline chains through libdw.
 *
 *	struct kp_resolver *r = kp_resolver_new(0);
 *	struct kp_kernel_src ksrc = { 0 };     (NULL: /proc/kallsyms)
 *	const struct kp_frame *const *fr;
 *	size_t n;
 *
 *	if (kp_resolver_kernel(r, &ksrc) < 0)
 *		kp_warn("%s; kernel frames stay addresses",
 *			kp_resolver_error(r));
 *	n = kp_resolve_kernel(r, pc, leaf ? 0 : KP_SYMTAB_RETADDR, &fr);
 *	n = kp_resolve_user(r, &map, pc, KP_SYMTAB_RETADDR, &fr);
 *	...
 *	kp_resolver_free(r);
 *
 * Every resolve call gives the frames of one address, innermost first:
 * with KP_RES_INLINES one (inline) frame per inlined function, then the
 * function itself; otherwise exactly one frame.  It always gives at
 * least one frame: an address no symbol covers stays an address frame
 * (user: "[PATH+0xFILEOFF]").  Frames are interned (kp_frame_intern)
 * and the array stays valid until kp_resolver_free(); each distinct
 * (address, flags) is resolved once and then served from a cache.
 *
 * Return addresses.  Any frame but the innermost of a callchain holds
 * a return address: pass KP_SYMTAB_RETADDR (symtab.h) and the symbol
 * and source line are those of pc - 1, the call, as eu-stack does, so
 * that a call at the very end of a function names that function and
 * not the next symbol (x86_64_start_reservations, not __pfx_clear_bss
 * after it).  Every program does this for every non-leaf frame but the
 * first of each context (the user pc the kernel was entered from) and
 * the frame an interrupt stopped (kp_resolve_is_entry).  The offset
 * written stays relative to pc.
 *
 * [PATH+0xOFF].  A user frame with no symbol is written with the FILE
 * OFFSET of its address in PATH (addr - map start + map pgoff), as perf
 * and pprof do, never an address of the ELF file's own: for a -no-pie
 * executable the two differ.  Readers (kp_resolve_frame) turn the file
 * offset back into an ELF address through the file's PT_LOAD headers.
 * man/kp.5 says so.
 *
 * Files.  A path named in the input (a module field, a mapping) is
 * opened only if it is a regular file: a FIFO, a device or a directory
 * is refused with a warning and its frames stay addresses; the opens
 * use O_NONBLOCK so a FIFO planted between the check and the open
 * cannot hang the program.  A mapping whose build-id is known (the
 * capture's) and whose file is gone or another build is read from the
 * copy perf record kept in its build-id cache, as perf report reads it
 * (symtab.h, kp_buildid_cache_open), its frames keeping the mapping's
 * path; so is the vDSO.  Names of memory no file backs ("[heap]",
 * "//anon", "/memfd:NAME", "PATH (deleted)", "/tmp/perf-PID.map", ...)
 * are never opened, and nothing is said of them.
 *
 * Messages.  Loading problems that leave frames unresolved are said
 * once per file with kp_warn ("FILE: reason; its frames stay
 * addresses"); the choice of KASLR shift is said with kp_warn too.
 * Errors a caller must decide about return -1 with kp_resolver_error()
 * set.  Out of memory is fatal (exit 2), as everywhere in common/.
 */
#ifndef KP_RESOLVE_H
#define KP_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kp.h"
#include "symtab.h"

struct kp_resolver;

/* kp_resolver_new flags. */
enum {
	KP_RES_LINES = 1 << 0,   /* source lines: (at FILE:LINE) */
	KP_RES_INLINES = 1 << 1, /* inlined functions as frames of their own */
	/* kp_resolve_frame: replace symbols the frames already have */
	KP_RES_FORCE = 1 << 2,
};

/*
 * kp_resolve_user / kp_resolve_file flag (beside KP_SYMTAB_RETADDR): the
 * frames of an address as perf 6.1 names a frame it unwound from a
 * --call-graph dwarf stack copy (machine.c append_inlines, with
 * addr2line's names): one frame per function DWARF places the address
 * in, innermost first, named by its linkage name or else its name; the
 * outermost is the symbol's own frame when the two names are equal,
 * else one more inlined frame in its place ("__libc_start_main_impl
 * (inlined)" where the symbol is __libc_start_main).  Without DWARF
 * for the file (no debug file), the symbol's frame alone, silently.
 */
#define KP_RES_PERF_INLINES (1u << 8)

/*
 * A mapping of a file into a process: [start, end) holds the file from
 * byte pgoff on (what MMAP/MMAP2 records and /proc/PID/maps give).
 * path is interned (kp_intern_str); build_id is lowercase hex or NULL.
 */
struct kp_map {
	uint64_t start, end, pgoff;
	const char *path;
	const char *build_id;
	/* the perf.data converter's two keys of it (perfdata_conv.c,
	 * struct mkey), made when first wanted: NULL until then */
	const void *key[2];
};

struct kp_resolver *kp_resolver_new(unsigned flags);
void kp_resolver_free(struct kp_resolver *r);
/* Why the last failing call failed, e.g. "/proc/kallsyms: Permission
 * denied".  Empty if nothing failed. */
const char *kp_resolver_error(const struct kp_resolver *r);

/*
 * Where the kernel's symbols come from, and what the capture says of
 * the kernel it ran on.  Zero-initialise and fill what is known.
 */
struct kp_kernel_src {
	/* a kallsyms file: /proc/kallsyms when NULL and no image is given */
	const char *kallsyms;
	bool no_kallsyms;    /* not even /proc/kallsyms: image only */
	const char *image;   /* a System.map or a vmlinux (told apart) */
	const char *modules; /* .ko files for lines (default
			      * /lib/modules/$(uname -r)) */
	const char *sections; /* saved "MOD SECTION 0xADDR" lines (an
			       * archive's), else /sys/module */
	/* what the capture says (NULL / false: not known) */
	const char *build_id; /* the kernel's build-id (# build-id:) */
	bool have_stext, have_text, have_shift;
	uint64_t stext; /* run-time _stext (# stext:) */
	/* run-time _text: a kernel MMAP record's pgoff (perf's ref-reloc
	 * symbol "[kernel.kallsyms]_text") */
	uint64_t text;
	uint64_t shift; /* the KASLR shift itself (--kaslr-offset, # kaslr:) */
	const char *shift_how; /* where shift came from, for the message */
	bool force;     /* use a mismatching source anyway, with a warning */
};

/*
 * Load the kernel's symbols.  A kallsyms of another boot than the
 * capture's (its _stext or _text differ) or an image whose build-id or
 * _etext disagrees is an error unless src->force.  The KASLR shift of an
 * image is, in this order: src->shift, src->text - _text,
 * src->stext - _stext, kallsyms' _text - the image's, else 0; which
 * one is said with kp_warn.  Returns 0, or -1 with kp_resolver_error()
 * set (then nothing of the kernel is loaded and kernel frames stay
 * addresses).  Call it at most once.
 */
int kp_resolver_kernel(struct kp_resolver *r, const struct kp_kernel_src *src);

/* The run-time address of a kernel symbol (e.g. "_stext"), if loaded. */
bool kp_resolver_kernel_sym(const struct kp_resolver *r, const char *name,
			    uint64_t *addr);

/*
 * A kernel address (run-time, as sampled).  flags: KP_SYMTAB_RETADDR.
 * The frame's module is "kernel" or the module's name from kallsyms.
 */
size_t kp_resolve_kernel(struct kp_resolver *r, uint64_t addr,
			 unsigned flags, const struct kp_frame *const **out);

/*
 * A user address in map (which must hold it).  The frame is named by
 * the file's symbol where it has one, else "[PATH+0xFILEOFF]"; if
 * map->build_id is given and the file's differs (or the file is gone),
 * perf's cached copy of that build is read instead, and if there is
 * none the file is not used (warned once) and the frame is the file
 * offset.
 */
size_t kp_resolve_user(struct kp_resolver *r, const struct kp_map *map,
		       uint64_t addr, unsigned flags,
		       const struct kp_frame *const **out);

/*
 * kp_resolve_kernel and kp_resolve_user for a caller that keeps the
 * frames of each address itself (the perf.data reader): they go to
 * out[], room for KP_RES_MAX, and the resolver keeps nothing of them
 * (the files and their symbols aside).  map->path and map->build_id
 * must be interned, as the process model's (procs.h) are.
 */
#define KP_RES_MAX 33
size_t kp_resolve_kernel_to(struct kp_resolver *r, uint64_t addr,
			    unsigned flags, const struct kp_frame **out);
size_t kp_resolve_user_to(struct kp_resolver *r, const struct kp_map *map,
			  uint64_t addr, unsigned flags,
			  const struct kp_frame **out);

/*
 * The same by file offset: an address in PATH at file offset off (for
 * "[PATH+0xOFF]" frames, or a mapping the caller computed).  addr is
 * what the frame's address field shows.
 */
size_t kp_resolve_file(struct kp_resolver *r, const char *path,
		       const char *build_id, uint64_t off, uint64_t addr,
		       unsigned flags, const struct kp_frame *const **out);

/*
 * An ELF file given by the user (kp-addr2sym -e): a vmlinux becomes the
 * kernel image of kp_resolver_kernel(); any other file the file of
 * frames without a module.  Returns 1 for a vmlinux, 0 for another
 * file; a file that cannot be read is fatal (exit 2).
 */
int kp_resolver_elf(struct kp_resolver *r, const char *path);

/*
 * A frame read from kp (kp-addr2sym): a kernel frame (module kernel,
 * vmlinux, a kernel module, or none) by its address; a user frame
 * (module a path) by its "+0xOFF" file offset when it has no symbol; by
 * its symbol's address in the file plus its offset when it has one
 * (wherever the file was mapped); else by its address taken as an
 * address of the file's own (a DSO loaded at 0).  A frame that already
 * has a symbol and offset keeps it unless KP_RES_FORCE (lines and
 * inlines are still added).  A frame the resolver has nothing for is
 * given back as it is.
 */
size_t kp_resolve_frame(struct kp_resolver *r, const struct kp_frame *in,
			unsigned flags, const struct kp_frame *const **out);
/*
 * Whether kp_resolve_frame has anything to do for f: an address and no
 * symbol, or KP_RES_FORCE, or lines/inlines not there yet.
 */
bool kp_resolve_frame_wanted(const struct kp_resolver *r,
			     const struct kp_frame *f);

/*
 * True when f (named) is a kernel entry stub of an interrupt or an
 * exception (x86-64: asm_sysvec_*, asm_exc_*, asm_common_interrupt):
 * the frame after it in a callchain is the instruction the interrupt
 * stopped, an exact pc, not a return address, and is looked up without
 * KP_SYMTAB_RETADDR (as the first frame of a chain is).
 */
bool kp_resolve_is_entry(const struct kp_frame *f);

/* Distinct addresses looked up, and how many of them no symbol named. */
void kp_resolver_stats(const struct kp_resolver *r, uint64_t *distinct,
		       uint64_t *unresolved);

#endif /* KP_RESOLVE_H */
