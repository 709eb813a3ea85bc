/*
 * dwarf_lines.h - source lines and inline chains from DWARF, through libdwfl,
 * for kp-addr2sym -l and -i.
 *
 * A struct kp_dwarf is one ELF file (vmlinux, an executable, a DSO)
 * opened offline, with its separate debug file found as elfutils finds
 * it (build-id or .gnu_debuglink under /usr/lib/debug).  Addresses are
 * the file's own (st_value, link-time for vmlinux): the caller removes
 * any KASLR shift and does the "pc - 1" of return addresses itself.
 * Strings returned belong to the kp_dwarf and live until
 * kp_dwarf_close().  The library prints nothing.
 */
#ifndef KP_DWARF_LINES_H
#define KP_DWARF_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_dwarf;

/* One level of source: a function and where in it. */
struct kp_srcframe {
	const char *func; /* DWARF name (linkage name if any), or NULL */
	const char *file; /* as the line table has it, or NULL */
	unsigned line;    /* 0 if unknown */
	/* with inlines, the function it is all inlined into (the last
	 * entry): whether func is a linkage name, and where the function
	 * begins (its low pc, a file address) if has_entry */
	bool linkage, has_entry;
	uint64_t entry;
};

/*
 * Open path.  NULL on failure with the reason in err ("FILE: No such
 * file or directory", "FILE: no DWARF debugging information").
 */
struct kp_dwarf *kp_dwarf_open(const char *path, char *err, size_t errlen);

/*
 * The source of addr, innermost first, in out[0..max): without inlines
 * one entry (the line of addr, in the innermost inlined function); with
 * inlines one entry for each inlined function that contains addr (its
 * name, and the line in it: of addr for the first, of the call to the
 * previous one for the others), then one for the function it is all
 * inlined into, as "eu-addr2line -f -i" prints them.  Returns the
 * number of entries (at most max), 0 if DWARF says nothing of addr.
 */
size_t kp_dwarf_lookup(struct kp_dwarf *dw, uint64_t addr, bool inlines,
		       struct kp_srcframe *out, size_t max);

/*
 * A Linux kernel module: its .ko (plain, or compressed as libdwfl reads
 * it: xz, gzip, bzip2) with each section placed where it was loaded;
 * secaddr(modname, section, &addr, arg) gives that address (from
 * /sys/module/MOD/sections/SECTION, or a copy saved with the capture)
 * and returns false for a section that is not loaded.  Lookups then
 * take run-time addresses.
 */
struct kp_dwarf *kp_dwarf_open_kmod(const char *path, const char *modname,
				    bool (*secaddr)(const char *mod,
						    const char *sec,
						    uint64_t *addr, void *arg),
				    void *arg, char *err, size_t errlen);

/* Whether the file itself (not its debug file) has a .symtab. */
bool kp_dwarf_has_symtab(struct kp_dwarf *dw);

void kp_dwarf_close(struct kp_dwarf *dw);

#endif /* KP_DWARF_LINES_H */
