/*
 * dwarf_lines.c - source lines and inline chains through libdwfl, as elfutils'
 * addr2line -f -i and eu-stack find them (dwfl_module_getsrc for the
 * line, dwarf_getscopes for the inlined_subroutine scopes and their
 * DW_AT_call_file/DW_AT_call_line).  See dwarf_lines.h.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"
#include "dwarf_lines.h"
#include "symtab.h"

/*
 * The function-like DIEs of one CU (subprogram, inlined_subroutine,
 * entry_point) and their address ranges, read once: dwarf_getscopes()
 * walks the whole CU again for every address, which is most of the
 * time of eu-addr2line -i on a vmlinux.
 */
struct scope_die {
	Dwarf_Die die;
	int parent; /* the enclosing function-like DIE, or -1 */
};

struct scope_range {
	Dwarf_Addr lo, hi; /* [lo, hi), DWARF addresses */
	int die;
	int depth;
};

struct cu_index {
	Dwarf_Off cuoff;
	struct scope_die *dies;
	size_t ndies;
	struct scope_range *ranges; /* by lo, then depth */
	size_t nranges;
	bool bad; /* could not be read: use dwarf_getscopes */
};

/* A section of a kernel module: where it was loaded, where libdwfl put it. */
struct kmod_sec {
	uint64_t rt, size, layout;
};

struct kp_dwarf {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* dwfl address = file address + bias */
	struct cu_index **cus; /* open addressing on cuoff */
	size_t ncus, cap;
	struct kmod_sec *secs; /* a kernel module: run-time placement */
	size_t nsecs;
};

static char *debuginfo_path; /* NULL: elfutils' default, /usr/lib/debug */

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static struct kp_dwarf *open_as(const char *path, const char *name,
				 char *err, size_t errlen);

struct kp_dwarf *
kp_dwarf_open(const char *path, char *err, size_t errlen)
{
	return open_as(path, path, err, errlen);
}

struct kp_dwarf *
kp_dwarf_open_kmod(const char *path, const char *modname,
		   bool (*secaddr)(const char *mod, const char *sec,
				   uint64_t *addr, void *arg),
		   void *arg, char *err, size_t errlen)
{
	struct kp_dwarf *dw = open_as(path, modname, err, errlen);
	GElf_Addr bias;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	size_t shstrndx, cap = 0;
	const char *name;
	uint64_t rt;
	Elf *elf;

	if (!dw)
		return NULL;
	/*
	 * libdwfl lays the sections of a relocatable file out one after
	 * the other (sh_addr in its copy of the headers); map each to the
	 * address the kernel loaded it at.
	 */
	elf = dwfl_module_getelf(dw->mod, &bias);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		goto bad;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !secaddr(modname, name, &rt, arg))
			continue;
		if (dw->nsecs == cap) {
			cap = cap ? cap * 2 : 16;
			dw->secs = kp_xrealloc(dw->secs, cap * sizeof(*dw->secs));
		}
		dw->secs[dw->nsecs].rt = rt;
		dw->secs[dw->nsecs].size = sh.sh_size;
		dw->secs[dw->nsecs].layout = sh.sh_addr + bias;
		dw->nsecs++;
	}
	if (dw->nsecs)
		return dw;
	snprintf(err, errlen, "%s: no section of it is loaded", path);
	kp_dwarf_close(dw);
	return NULL;
bad:
	snprintf(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
	kp_dwarf_close(dw);
	return NULL;
}

static struct kp_dwarf *
open_as(const char *path, const char *name, char *err, size_t errlen)
{
	struct kp_dwarf *dw;
	Dwarf_Addr dbias;
	int fd;

	/* for the reason of a failure; libdwfl opens the file itself (given
	 * a descriptor, it leaves it open when the file is not ELF) */
	fd = kp_open_regular(path, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, kp_open_strerror(errno));
		return NULL;
	}
	close(fd);
	dw = kp_xcalloc(1, sizeof(*dw));
	dw->dwfl = dwfl_begin(&offline_callbacks);
	if (!dw->dwfl)
		goto fail;
	dw->mod = dwfl_report_offline(dw->dwfl, name, path, -1);
	if (!dw->mod || dwfl_report_end(dw->dwfl, NULL, NULL) != 0)
		goto fail;
	if (!dwfl_module_getelf(dw->mod, &dw->bias))
		goto fail;
	if (!dwfl_module_getdwarf(dw->mod, &dbias)) {
		snprintf(err, errlen, "%s: no DWARF debugging information",
			 path);
		kp_dwarf_close(dw);
		return NULL;
	}
	return dw;
fail:
	snprintf(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
	kp_dwarf_close(dw);
	return NULL;
}

bool
kp_dwarf_has_symtab(struct kp_dwarf *dw)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(dw->mod, &bias);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

void
kp_dwarf_close(struct kp_dwarf *dw)
{
	size_t i;

	if (!dw)
		return;
	for (i = 0; i < dw->cap; i++) {
		if (!dw->cus[i])
			continue;
		free(dw->cus[i]->dies);
		free(dw->cus[i]->ranges);
		free(dw->cus[i]);
	}
	free(dw->cus);
	free(dw->secs);
	if (dw->dwfl)
		dwfl_end(dw->dwfl);
	free(dw);
}

/* A DIE's name as eu-addr2line shows it: linkage name, else name. */
static const char *
die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(
		dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	return name;
}

static int
cmp_range(const void *a, const void *b)
{
	const struct scope_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return 0;
}

static bool
is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* DIEs whose children may hold code: walk into them. */
static bool
may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return true;
	}
	return false;
}

#define MAX_DEPTH 256

static void
cu_index_build(struct cu_index *ci, Dwarf_Die *cudie)
{
	/* the path from the CU to the current DIE, and for each level the
	 * innermost function-like DIE at or above it */
	Dwarf_Die stack[MAX_DEPTH];
	int fn[MAX_DEPTH];
	size_t dcap = 0, rcap = 0;
	int depth = 0, r;

	if (dwarf_child(cudie, &stack[0]) != 0)
		return;
	fn[0] = -1;
	for (;;) {
		Dwarf_Die *die = &stack[depth];
		int tag = dwarf_tag(die), self = fn[depth];

		if (is_function(tag)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			if (ci->ndies == dcap) {
				dcap = dcap ? dcap * 2 : 64;
				ci->dies = kp_xrealloc(ci->dies,
						       dcap * sizeof(*ci->dies));
			}
			self = (int)ci->ndies++;
			ci->dies[self].die = *die;
			ci->dies[self].parent = fn[depth];
			while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				if (ci->nranges == rcap) {
					rcap = rcap ? rcap * 2 : 64;
					ci->ranges = kp_xrealloc(
						ci->ranges,
						rcap * sizeof(*ci->ranges));
				}
				ci->ranges[ci->nranges].lo = lo;
				ci->ranges[ci->nranges].hi = hi;
				ci->ranges[ci->nranges].die = self;
				ci->ranges[ci->nranges].depth = depth;
				ci->nranges++;
			}
		}
		if (may_hold_code(tag) && depth + 1 < MAX_DEPTH &&
		    dwarf_haschildren(die) > 0 &&
		    dwarf_child(die, &stack[depth + 1]) == 0) {
			fn[depth + 1] = self;
			depth++;
			continue;
		}
		/* next sibling, or up */
		while ((r = dwarf_siblingof(&stack[depth], &stack[depth])) != 0) {
			if (r < 0) {
				ci->bad = true;
				return;
			}
			if (depth == 0)
				goto done;
			depth--;
		}
	}
done:
	if (ci->nranges)
		qsort(ci->ranges, ci->nranges, sizeof(*ci->ranges), cmp_range);
}

static struct cu_index *
cu_index_get(struct kp_dwarf *dw, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	struct cu_index *ci;
	size_t i;

	if (dw->ncus * 2 >= dw->cap) {
		struct cu_index **old = dw->cus;
		size_t n = dw->cap;

		dw->cap = n ? n * 2 : 256;
		dw->cus = kp_xcalloc(dw->cap, sizeof(*dw->cus));
		for (i = 0; i < n; i++) {
			size_t j;

			if (!old[i])
				continue;
			j = (old[i]->cuoff * 0x9e3779b97f4a7c15ULL >> 32) &
			    (dw->cap - 1);
			while (dw->cus[j])
				j = (j + 1) & (dw->cap - 1);
			dw->cus[j] = old[i];
		}
		free(old);
	}
	i = (off * 0x9e3779b97f4a7c15ULL >> 32) & (dw->cap - 1);
	while (dw->cus[i]) {
		if (dw->cus[i]->cuoff == off)
			return dw->cus[i];
		i = (i + 1) & (dw->cap - 1);
	}
	ci = kp_xcalloc(1, sizeof(*ci));
	ci->cuoff = off;
	cu_index_build(ci, cudie);
	dw->cus[i] = ci;
	dw->ncus++;
	return ci;
}

/*
 * The innermost function-like DIE of ci that contains pc, or -1.  The
 * ranges nest, so it is the containing range with the greatest start:
 * look back from the last range that starts at or before pc.
 */
static int
cu_index_find(const struct cu_index *ci, Dwarf_Addr pc)
{
	size_t lo = 0, hi = ci->nranges, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->ranges[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;)
		if (pc < ci->ranges[i].hi)
			return ci->ranges[i].die;
	return -1;
}

/* The chain of function-like DIEs from the innermost out, as scopes. */
static int
chain_from_index(struct kp_dwarf *dw, Dwarf_Die *cudie, Dwarf_Addr pc,
		 Dwarf_Die **scopes)
{
	struct cu_index *ci = cu_index_get(dw, cudie);
	int d, n = 0;

	if (ci->bad)
		return -2;
	d = cu_index_find(ci, pc);
	if (d < 0)
		return 0;
	for (int k = d; k >= 0 && n < MAX_DEPTH; k = ci->dies[k].parent)
		n++;
	*scopes = kp_xmalloc((size_t)n * sizeof(**scopes));
	n = 0;
	for (int k = d; k >= 0 && n < MAX_DEPTH; k = ci->dies[k].parent)
		(*scopes)[n++] = ci->dies[k].die;
	return n;
}

size_t
kp_dwarf_lookup(struct kp_dwarf *dw, uint64_t addr, bool inlines,
		struct kp_srcframe *out, size_t max)
{
	Dwarf_Addr a = addr + dw->bias, cubias;
	Dwarf_Die *cudie, *scopes = NULL;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute attr;
	Dwarf_Word w;
	Dwfl_Line *ln;
	size_t n = 0, nfiles = 0;
	const char *file = NULL;
	int line = 0, nscopes, i;

	if (!max)
		return 0;
	if (dw->secs) {
		size_t k;

		for (k = 0; k < dw->nsecs; k++)
			if (addr - dw->secs[k].rt < dw->secs[k].size)
				break;
		if (k == dw->nsecs)
			return 0;
		a = addr - dw->secs[k].rt + dw->secs[k].layout;
	}
	ln = dwfl_module_getsrc(dw->mod, a);
	if (ln)
		file = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL);
	if (line < 0)
		line = 0;
	/* no inline chain asked for, or no DWARF unit: the line alone */
	if (!inlines ||
	    (cudie = dwfl_module_addrdie(dw->mod, a, &cubias)) == NULL) {
		if (!file)
			return 0;
		out[0].func = NULL;
		out[0].file = file;
		out[0].line = (unsigned)line;
		return 1;
	}
	/*
	 * The physical nesting (inline in inline in function), innermost
	 * first, from the CU's index; if the CU could not be indexed, from
	 * dwarf_getscopes(), which follows an inlined_subroutine into its
	 * abstract definition, then dwarf_getscopes_die() on the innermost
	 * scope for the physical chain, as eu-addr2line does.
	 */
	nscopes = chain_from_index(dw, cudie, a - cubias, &scopes);
	if (nscopes == -2) {
		nscopes = dwarf_getscopes(cudie, a - cubias, &scopes);
		if (nscopes > 0) {
			Dwarf_Die inner = scopes[0];

			free(scopes);
			scopes = NULL;
			nscopes = dwarf_getscopes_die(&inner, &scopes);
		}
	}
	for (i = 0; i < nscopes && n < max; i++) {
		Dwarf_Die *die = &scopes[i];
		int tag = dwarf_tag(die);

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram && tag != DW_TAG_entry_point)
			continue;
		out[n].func = die_name(die);
		out[n].file = file;
		out[n].line = (unsigned)line;
		out[n].linkage = false;
		out[n].has_entry = false;
		n++;
		if (tag != DW_TAG_inlined_subroutine) {
			Dwarf_Attribute la;
			Dwarf_Addr lo;

			out[n - 1].linkage =
				dwarf_attr_integrate(die, DW_AT_linkage_name,
						     &la) ||
				dwarf_attr_integrate(die,
						     DW_AT_MIPS_linkage_name,
						     &la);
			if (dwarf_lowpc(die, &lo) == 0 && !dw->secs) {
				out[n - 1].has_entry = true;
				out[n - 1].entry = lo + cubias - dw->bias;
			}
			break;
		}
		/* where the caller called it: the next level's line */
		file = NULL;
		line = 0;
		if (!files && dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
			files = NULL;
		if (files &&
		    dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr),
				    &w) == 0 &&
		    w < nfiles)
			file = dwarf_filesrc(files, w, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr),
				    &w) == 0 &&
		    w <= 0x7fffffff)
			line = (int)w;
	}
	free(scopes);
	if (n == 0 && file) {
		out[0].func = NULL;
		out[0].file = file;
		out[0].line = (unsigned)line;
		n = 1;
	}
	return n;
}
