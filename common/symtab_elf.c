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
	fd = kp_open_regular(path, 0);
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

int
kp_open_regular(const char *path, int flags)
{
	struct stat sb;
	int fd, fl;

	/* O_NONBLOCK: a FIFO swapped in after a check cannot hang open() */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0) {
		fl = errno;
		close(fd);
		errno = fl;
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

const char *
kp_open_strerror(int err)
{
	return err == EINVAL ? "not a regular file" : strerror(err);
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

/*
 * "name@plt" symbols for the PLT entries of an x86-64 executable or DSO,
 * as perf synthesizes them: entry i of .plt.sec (IBT), or of .plt after
 * its 16-byte header, calls the function of relocation i of .rela.plt.
 * Returns how many were added.
 */
static size_t
add_plt(struct kp_symtab *st, Elf *elf)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rscn, *pscn, *dscn;
	Elf_Data *rdata, *ddata;
	GElf_Ehdr eh;
	GElf_Rela rela;
	GElf_Sym sym;
	uint64_t start;
	size_t i, n, added = 0;
	const char *name;
	char buf[512];

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	rscn = find_section_named(elf, ".rela.plt", &rsh);
	if (!rscn || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	pscn = find_section_named(elf, ".plt.sec", &psh);
	start = psh.sh_addr;
	if (!pscn || psh.sh_type != SHT_PROGBITS) {
		pscn = find_section_named(elf, ".plt", &psh);
		if (!pscn || psh.sh_type != SHT_PROGBITS)
			return 0;
		start = psh.sh_addr + 16;
	}
	dscn = elf_getscn(elf, rsh.sh_link);
	if (!dscn || !gelf_getshdr(dscn, &dsh) || dsh.sh_type != SHT_DYNSYM)
		return 0;
	rdata = elf_getdata(rscn, NULL);
	ddata = elf_getdata(dscn, NULL);
	if (!rdata || !ddata)
		return 0;
	n = rdata->d_size / rsh.sh_entsize;
	for (i = 0; i < n; i++) {
		if (start + (i + 1) * 16 > psh.sh_addr + psh.sh_size)
			break;
		if (!gelf_getrela(rdata, (int)i, &rela) ||
		    !gelf_getsym(ddata, (int)GELF_R_SYM(rela.r_info), &sym))
			continue;
		name = elf_strptr(elf, dsh.sh_link, sym.st_name);
		if (!name) /* perf names an IRELATIVE slot (no name) "@plt" */
			continue;
		snprintf(buf, sizeof(buf), "%s@plt", name);
		kp_symtab_add(st, start + i * 16, 16, 't', buf, NULL);
		added++;
	}
	return added;
}

int
kp_elf_segments(const char *path, struct kp_elf_seg **segs, size_t *n)
{
	GElf_Phdr ph;
	size_t i, nph;
	Elf *elf;
	int fd;

	*segs = NULL;
	*n = 0;
	elf = elf_open(path, &fd);
	if (!elf)
		return -1;
	if (elf_getphdrnum(elf, &nph) == 0 && nph > 0) {
		*segs = kp_xcalloc(nph, sizeof(**segs));
		for (i = 0; i < nph; i++)
			if (gelf_getphdr(elf, (int)i, &ph) &&
			    ph.p_type == PT_LOAD) {
				(*segs)[*n].off = ph.p_offset;
				(*segs)[*n].vaddr = ph.p_vaddr;
				(*segs)[*n].filesz = ph.p_filesz;
				(*n)++;
			}
	}
	elf_close(elf, fd);
	return 0;
}

bool
kp_elf_off_to_vaddr(const struct kp_elf_seg *segs, size_t n, uint64_t off,
		    uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (off >= segs[i].off && off - segs[i].off < segs[i].filesz) {
			*vaddr = off - segs[i].off + segs[i].vaddr;
			return true;
		}
	return false;
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
			kp_symtab_seterr(st, "%s: %s", path,
					 kp_open_strerror(errno));
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
			if (add_plt(st, elf))
				kp_symtab_sort(st);
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
	if (added && depth == 0)
		add_plt(st, elf);
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
kp_elf_build_id_of(Elf *elf)
{
	const unsigned char *id;
	size_t len;

	id = build_id_bytes(elf, &len);
	return id ? hex(id, len) : NULL;
}

char *
kp_elf_build_id(const char *path)
{
	char *s;
	Elf *elf;
	int fd;

	elf = elf_open(path, &fd);
	if (!elf)
		return NULL;
	s = kp_elf_build_id_of(elf);
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
