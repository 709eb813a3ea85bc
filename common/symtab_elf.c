/*
 * symtab_elf.c - symbol tables from ELF files (libelf), build-ids and
 * separate debug files.  See symtab.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp.h"
#include "symtab.h"
#include "symtab_int.h"

#define DEBUG_ROOT "/usr/lib/debug"

static Elf *
elf_open(const char *path, int *fdp)
{
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		errno = 0;
		return NULL;
	}
	*fdp = fd;
	return elf;
}

static void
elf_close(Elf *elf, int fd)
{
	elf_end(elf);
	close(fd);
}

/* The section of type t, or NULL. */
static Elf_Scn *
find_section(Elf *elf, Elf64_Word t, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, sh) && sh->sh_type == t)
			return scn;
	return NULL;
}

static Elf_Scn *
find_section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* nm(1)'s letter for a symbol, or 0 to leave it out. */
static char
sym_letter(Elf *elf, const GElf_Sym *sym, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);
	int bind = GELF_ST_BIND(sym->st_info);
	GElf_Shdr sh;
	Elf_Scn *scn;
	char c;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_ABS ||
	    sym->st_shndx >= SHN_LORESERVE)
		return 0;
	if (name[0] == '\0' || name[0] == '$' ||
	    (name[0] == '.' && name[1] == 'L'))
		return 0;
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT &&
	    type != STT_NOTYPE)
		return 0;
	scn = elf_getscn(elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return 0;
	if (sh.sh_flags & SHF_EXECINSTR)
		c = 't';
	else if (type == STT_FUNC || type == STT_GNU_IFUNC)
		c = 't';
	else if (sh.sh_type == SHT_NOBITS)
		c = 'b';
	else if (sh.sh_flags & SHF_WRITE)
		c = 'd';
	else
		return 0; /* read-only data: as kallsyms' r, left out */
	if (bind == STB_WEAK)
		return c == 't' ? 'W' : 'V';
	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		return c - 'a' + 'A';
	return c;
}

/* Add the symbols of one symbol table section; returns how many. */
static size_t
add_symbols(struct kp_symtab *st, Elf *elf, Elf_Scn *scn,
	    const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n, added = 0;
	GElf_Sym sym;
	const char *name;
	char c;

	if (!data || !sh->sh_entsize)
		return 0;
	n = data->d_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		c = sym_letter(elf, &sym, name);
		if (!c)
			continue;
		kp_symtab_add(st, sym.st_value, sym.st_size, c, name, NULL);
		added++;
	}
	return added;
}

static int
load_elf(struct kp_symtab *st, const char *path, unsigned flags, int depth)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf *elf;
	char *dbg;
	size_t n0 = st->n, added;
	int fd, ret;

	elf = elf_open(path, &fd);
	if (!elf) {
		if (errno)
			kp_symtab_seterr(st, "%s: %s", path, strerror(errno));
		else
			kp_symtab_seterr(st, "%s: not an ELF file", path);
		return -1;
	}
	scn = find_section(elf, SHT_SYMTAB, &sh);
	if (!scn && (flags & KP_SYMTAB_DEBUGFILE) && depth == 0 &&
	    (dbg = kp_elf_debug_file(path)) != NULL) {
		ret = load_elf(st, dbg, 0, depth + 1);
		free(dbg);
		if (ret == 0) {
			elf_close(elf, fd);
			return 0;
		}
	}
	if (!scn)
		scn = find_section(elf, SHT_DYNSYM, &sh);
	if (!scn) {
		kp_symtab_seterr(st, "%s: no symbol table", path);
		elf_close(elf, fd);
		return -1;
	}
	added = add_symbols(st, elf, scn, &sh);
	elf_close(elf, fd);
	if (!added) {
		st->n = n0;
		kp_symtab_sort(st);
		kp_symtab_seterr(st, "%s: no symbols (corrupt or empty symbol "
				     "table)", path);
		return -1;
	}
	kp_symtab_sort(st);
	st->err[0] = '\0';
	return 0;
}

int
kp_symtab_load_elf(struct kp_symtab *st, const char *path, unsigned flags)
{
	return load_elf(st, path, flags, 0);
}

/* The build-id note's bytes in elf, or NULL; *len is their number. */
static const unsigned char *
build_id_bytes(Elf *elf, size_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	size_t off, name_off, desc_off;
	Elf_Data *data;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		off = 0;
		while (off < data->d_size &&
		       (off = gelf_getnote(data, off, &nh, &name_off,
					   &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) ==
				    0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= 64) {
				*len = nh.n_descsz;
				return (unsigned char *)data->d_buf + desc_off;
			}
		}
	}
	return NULL;
}

static char *
hex(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *s = kp_xmalloc(2 * n + 1);
	size_t i;

	for (i = 0; i < n; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 15];
	}
	s[2 * n] = '\0';
	return s;
}

char *
kp_elf_build_id(const char *path)
{
	const unsigned char *id;
	char *s = NULL;
	size_t len;
	Elf *elf;
	int fd;

	elf = elf_open(path, &fd);
	if (!elf)
		return NULL;
	id = build_id_bytes(elf, &len);
	if (id)
		s = hex(id, len);
	elf_close(elf, fd);
	return s;
}

static bool
is_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

char *
kp_elf_debug_file(const char *path)
{
	const unsigned char *id;
	char *found = NULL, *dir = NULL, *id_hex, *p;
	const char *link;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t len;
	Elf *elf;
	int fd;

	elf = elf_open(path, &fd);
	if (!elf)
		return NULL;
	id = build_id_bytes(elf, &len);
	if (id && len >= 2) {
		id_hex = hex(id, len);
		if (asprintf(&p, DEBUG_ROOT "/.build-id/%.2s/%s.debug", id_hex,
			     id_hex + 2) < 0)
			kp_die("out of memory");
		free(id_hex);
		if (is_file(p)) {
			found = p;
			goto out;
		}
		free(p);
	}
	/*
	 * .gnu_debuglink: a NUL-terminated file name, padding, a CRC32:
	 *	libc.so.6.debug\0 ... crc
	 */
	scn = find_section_named(elf, ".gnu_debuglink", &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_size || !memchr(data->d_buf, '\0', data->d_size))
		goto out;
	link = data->d_buf;
	if (!*link || strchr(link, '/'))
		goto out;
	dir = kp_xstrdup(path);
	p = strrchr(dir, '/');
	if (p)
		p[1] = '\0';
	else
		dir[0] = '\0';
	{
		const char *fmts[] = { "%s%s", "%s.debug/%s",
				       DEBUG_ROOT "%s%s" };
		size_t i;

		for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
			if (i == 2 && dir[0] != '/')
				break;
			if (asprintf(&p, fmts[i], dir, link) < 0)
				kp_die("out of memory");
			if (strcmp(p, path) != 0 && is_file(p)) {
				found = p;
				break;
			}
			free(p);
		}
	}
out:
	free(dir);
	elf_close(elf, fd);
	return found;
}
