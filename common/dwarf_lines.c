/*
 * dwarf_lines.c - source lines and inline chains through libdwfl, as elfutils'
 * addr2line -f -i and eu-stack find them (dwfl_module_getsrc for the
 * line, dwarf_getscopes for the inlined_subroutine scopes and their
 * DW_AT_call_file/DW_AT_call_line).  See dwarf_lines.h.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"
#include "dwarf_lines.h"

struct kp_dwarf {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* dwfl address = file address + bias */
};

static char *debuginfo_path; /* NULL: elfutils' default, /usr/lib/debug */

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct kp_dwarf *
kp_dwarf_open(const char *path, char *err, size_t errlen)
{
	struct kp_dwarf *dw;
	Dwarf_Addr dbias;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	dw = kp_xcalloc(1, sizeof(*dw));
	dw->dwfl = dwfl_begin(&offline_callbacks);
	if (!dw->dwfl) {
		close(fd);
		goto fail;
	}
	/* dwfl takes the descriptor */
	dw->mod = dwfl_report_offline(dw->dwfl, path, path, fd);
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

void
kp_dwarf_close(struct kp_dwarf *dw)
{
	if (!dw)
		return;
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
	ln = dwfl_module_getsrc(dw->mod, a);
	if (ln)
		file = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL);
	if (line < 0)
		line = 0;
	if (!inlines) {
		if (!file)
			return 0;
		out[0].func = NULL;
		out[0].file = file;
		out[0].line = (unsigned)line;
		return 1;
	}
	cudie = dwfl_module_addrdie(dw->mod, a, &cubias);
	if (!cudie) {
		if (!file)
			return 0;
		out[0].func = NULL;
		out[0].file = file;
		out[0].line = (unsigned)line;
		return 1;
	}
	/*
	 * dwarf_getscopes() follows an inlined_subroutine into its abstract
	 * definition; the physical nesting (inline in inline in function)
	 * comes from dwarf_getscopes_die() on the innermost scope.
	 */
	nscopes = dwarf_getscopes(cudie, a - cubias, &scopes);
	if (nscopes > 0) {
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
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
		n++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
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
