/*
 * symtab_elf.c - symbol tables from ELF files (libelf), build-ids and
 * separate debug files.  See symtab.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp.h"
#include "symtab.h"
#include "symtab_int.h"

#define DEBUG_ROOT "/usr/lib/debug"

/* The ELF file open on fd (the descriptor stays the caller's), or NULL
 * with errno 0 (not ELF). */
static Elf *
elf_of(int fd)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		errno = 0;
		return NULL;
	}
	return elf;
}

static Elf *
elf_open(const char *path, int *fdp)
{
	Elf *elf;
	int fd;

	fd = kp_open_regular(path, 0);
	if (fd < 0)
		return NULL;
	elf = elf_of(fd);
	if (!elf) {
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

/* What sym_letter reads of a section, read once for all symbols. */
enum { SC_ALLOC = 1, SC_EXEC = 2, SC_WRITE = 4, SC_NOBITS = 8 };

static unsigned char *
section_classes(Elf *elf, size_t *n)
{
	unsigned char *cls;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t i;

	if (elf_getshdrnum(elf, n) < 0)
		*n = 0;
	cls = kp_xcalloc(*n ? *n : 1, 1);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		i = elf_ndxscn(scn);
		if (i >= *n || !gelf_getshdr(scn, &sh))
			continue;
		cls[i] = (sh.sh_flags & SHF_ALLOC ? SC_ALLOC : 0) |
			 (sh.sh_flags & SHF_EXECINSTR ? SC_EXEC : 0) |
			 (sh.sh_flags & SHF_WRITE ? SC_WRITE : 0) |
			 (sh.sh_type == SHT_NOBITS ? SC_NOBITS : 0);
	}
	return cls;
}

/* nm(1)'s letter for a symbol (its section's class in cls[], n of
 * them), or 0 to leave it out. */
static char
sym_letter(const unsigned char *cls, size_t n, const GElf_Sym *sym,
	   const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);
	int bind = GELF_ST_BIND(sym->st_info);
	unsigned k;
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
	if (sym->st_shndx >= n || !((k = cls[sym->st_shndx]) & SC_ALLOC))
		return 0;
	if (k & SC_EXEC)
		c = 't';
	else if (type == STT_FUNC || type == STT_GNU_IFUNC)
		c = 't';
	else if (k & SC_NOBITS)
		c = 'b';
	else if (k & SC_WRITE)
		c = 'd';
	else
		return 0; /* read-only data: as kallsyms' r, left out */
	if (bind == STB_WEAK)
		return c == 't' ? 'W' : 'V';
	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		return c - 'a' + 'A';
	return c;
}

/*
 * The string table ssh of the file open on fd, mapped for st to keep
 * (unmapped with it), so that the names of its symbols are not copied
 * one by one, nor read at all until a lookup or an alias choice asks for
 * one: on a system-wide capture perf2kp loads a hundred files' tables,
 * and finding the ends of their names and copying them took 4% of its
 * time (0.152 -> 0.147 s).  NULL when it
 * cannot be: no descriptor, not within the file, or not ending in a NUL
 * (which ends every name in it).  The file is the one libelf read, its
 * pages the page cache's; as with libelf's own mapping, a file cut short
 * while it is mapped would fault on a read past its new end.
 */
static const char *
map_strings(struct kp_symtab *st, int fd, const GElf_Shdr *ssh)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t off, len;
	struct stat sb;
	char *m;

	if (fd < 0 || pg <= 0 || ssh->sh_size == 0 || fstat(fd, &sb) < 0 ||
	    !S_ISREG(sb.st_mode) || ssh->sh_offset > (uint64_t)sb.st_size ||
	    ssh->sh_size > (uint64_t)sb.st_size - ssh->sh_offset)
		return NULL;
	off = ssh->sh_offset & ~(uint64_t)(pg - 1);
	len = ssh->sh_offset + ssh->sh_size - off;
	if (len > SIZE_MAX || off > (uint64_t)INT64_MAX)
		return NULL;
	m = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, (off_t)off);
	if (m == MAP_FAILED)
		return NULL;
	if (m[len - 1] != '\0') {
		munmap(m, (size_t)len);
		return NULL;
	}
	st->maps = kp_xrealloc(st->maps, (st->nmaps + 1) * sizeof(*st->maps));
	st->maps[st->nmaps].p = m;
	st->maps[st->nmaps++].len = (size_t)len;
	return m + (ssh->sh_offset - off);
}

/* Add the symbols of one symbol table section (of the file open on fd,
 * or -1); returns how many. */
static size_t
add_symbols(struct kp_symtab *st, Elf *elf, int fd, Elf_Scn *scn,
	    const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL), *sdata = NULL;
	const Elf64_Sym *s64 = NULL;
	const char *strs = NULL, *kept = NULL, *name, *e;
	size_t i, n, nstr = 0, ncls, added = 0;
	unsigned char *cls;
	Elf_Scn *strscn;
	GElf_Shdr ssh;
	GElf_Sym sym;
	char c;

	if (!data || !sh->sh_entsize)
		return 0;
	n = data->d_size / sh->sh_entsize;
	/* the string table read directly, as elf_strptr reads it (a
	 * compressed one through it) */
	strscn = elf_getscn(elf, sh->sh_link);
	if (strscn && gelf_getshdr(strscn, &ssh) && ssh.sh_type == SHT_STRTAB &&
	    !(ssh.sh_flags & SHF_COMPRESSED) &&
	    (sdata = elf_getdata(strscn, NULL)) != NULL &&
	    sdata->d_size == ssh.sh_size) {
		strs = sdata->d_buf;
		nstr = sdata->d_size;
		kept = map_strings(st, fd, &ssh);
	}
	/* the symbols of a 64-bit file read directly (libelf has made them
	 * this machine's) */
	if (gelf_getclass(elf) == ELFCLASS64 && data->d_type == ELF_T_SYM &&
	    sh->sh_entsize == sizeof(Elf64_Sym) &&
	    (uintptr_t)data->d_buf % _Alignof(Elf64_Sym) == 0)
		s64 = data->d_buf;
	cls = section_classes(elf, &ncls);
	for (i = 1; i < n; i++) {
		if (s64) {
			sym.st_name = s64[i].st_name;
			sym.st_info = s64[i].st_info;
			sym.st_other = s64[i].st_other;
			sym.st_shndx = s64[i].st_shndx;
			sym.st_value = s64[i].st_value;
			sym.st_size = s64[i].st_size;
		} else if (!gelf_getsym(data, (int)i, &sym)) {
			break;
		}
		/* what sym_letter leaves out whatever its name: first */
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= ncls ||
		    !(cls[sym.st_shndx] & SC_ALLOC))
			continue;
		if (kept) {
			/* (a NUL ends the table: every name ends in it) */
			if (sym.st_name >= nstr)
				continue;
			name = kept + sym.st_name;
			e = NULL;
		} else if (strs) {
			if (sym.st_name >= nstr ||
			    !(e = memchr(strs + sym.st_name, '\0',
					 nstr - sym.st_name)))
				continue;
			name = strs + sym.st_name;
		} else {
			name = elf_strptr(elf, sh->sh_link, sym.st_name);
			if (!name)
				continue;
			e = name + strlen(name);
		}
		c = sym_letter(cls, ncls, &sym, name);
		if (!c)
			continue;
		if (kept)
			kp_symtab_add_kept(st, sym.st_value, sym.st_size, c,
					   name);
		else
			kp_symtab_add_n(st, sym.st_value, sym.st_size, c, name,
					(size_t)(e - name));
		added++;
	}
	free(cls);
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

void
kp_elf_segments_of(Elf *elf, struct kp_elf_seg **segs, size_t *n)
{
	GElf_Phdr ph;
	size_t i, nph;

	*segs = NULL;
	*n = 0;
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

/*
 * The symbols of one ELF file, named name in messages: its .symtab, else
 * its .dynsym; with plt, its PLT entries too.
 */
static int
load_table(struct kp_symtab *st, Elf *elf, int fd, const char *name, bool plt)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t n0 = st->n, added;

	scn = find_section(elf, SHT_SYMTAB, &sh);
	if (!scn)
		scn = find_section(elf, SHT_DYNSYM, &sh);
	if (!scn) {
		kp_symtab_seterr(st, "%s: no symbol table", name);
		return -1;
	}
	added = add_symbols(st, elf, fd, scn, &sh);
	if (added && plt)
		add_plt(st, elf);
	if (!added) {
		st->n = n0;
		kp_symtab_sort(st);
		kp_symtab_seterr(st, "%s: no symbols (corrupt or empty symbol "
				     "table)", name);
		return -1;
	}
	kp_symtab_sort(st);
	st->err[0] = '\0';
	return 0;
}

static char *debug_file_of(Elf *elf, const char *path);

int
kp_symtab_load_elf_of(struct kp_symtab *st, Elf *elf, int fd,
		      const char *path, unsigned flags, Elf *debug,
		      int debug_fd)
{
	GElf_Shdr sh;
	char *dbg = NULL;
	Elf *own = NULL;
	int ret = -1;

	/* a file without a .symtab (stripped): its debug file's, and the
	 * file's own PLT entries */
	if (!find_section(elf, SHT_SYMTAB, &sh)) {
		if (!debug && (flags & KP_SYMTAB_DEBUGFILE) &&
		    (dbg = debug_file_of(elf, path)) != NULL)
			debug = own = elf_open(dbg, &debug_fd);
		if (debug)
			ret = load_table(st, debug, debug_fd,
					 dbg ? dbg : path, false);
		if (own)
			elf_close(own, debug_fd);
		free(dbg);
		if (ret == 0) {
			if (add_plt(st, elf))
				kp_symtab_sort(st);
			return 0;
		}
	}
	return load_table(st, elf, fd, path, true);
}

int
kp_symtab_load_elf(struct kp_symtab *st, const char *path, unsigned flags)
{
	Elf *elf;
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
	ret = kp_symtab_load_elf_of(st, elf, fd, path, flags, NULL, -1);
	elf_close(elf, fd);
	return ret;
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

/* kp_elf_debug_file of the file at path, open as elf. */
static char *
debug_file_of(Elf *elf, const char *path)
{
	const unsigned char *id;
	char *found = NULL, *dir = NULL, *id_hex, *p;
	const char *link;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t len;

	id = build_id_bytes(elf, &len);
	if (id && len >= 2) {
		id_hex = hex(id, len);
		if (asprintf(&p, DEBUG_ROOT "/.build-id/%.2s/%s.debug", id_hex,
			     id_hex + 2) < 0)
			kp_die("out of memory");
		free(id_hex);
		if (is_file(p))
			return p;
		free(p);
	}
	/*
	 * .gnu_debuglink: a NUL-terminated file name, padding, a CRC32:
	 *	libc.so.6.debug\0 ... crc
	 */
	scn = find_section_named(elf, ".gnu_debuglink", &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_size || !memchr(data->d_buf, '\0', data->d_size))
		return NULL;
	link = data->d_buf;
	if (!*link || strchr(link, '/'))
		return NULL;
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
	free(dir);
	return found;
}

char *
kp_elf_debug_file(const char *path)
{
	char *found;
	Elf *elf;
	int fd;

	elf = elf_open(path, &fd);
	if (!elf)
		return NULL;
	found = debug_file_of(elf, path);
	elf_close(elf, fd);
	return found;
}

struct Elf *
kp_elf_of(int fd)
{
	return elf_of(fd);
}

void
kp_elf_end(struct Elf *elf)
{
	if (elf)
		elf_end(elf);
}

/* Lowercase hex of at least two digits (a build-id of the capture). */
static bool
is_hex_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n >= 2 && n <= 128 && s[n] == '\0';
}

/* Directory name under dir, not following a symbolic link: -1, errno
 * ELOOP if it is one. */
static int
open_dir_at(int dir, const char *name)
{
	struct stat sb;
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				       O_CLOEXEC);

	if (fd < 0 && errno != ENOENT &&
	    fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode))
		errno = ELOOP;
	return fd;
}

/* A relative name of plain components ("a/b/c": none empty, "." or
 * "..", none longer than a file name). */
static bool
plain_rel(const char *rel, size_t len)
{
	const char *p = rel, *e, *end = rel + len;

	if (len == 0)
		return false;
	for (;; p = e + 1) {
		e = memchr(p, '/', (size_t)(end - p));
		if (!e)
			e = end;
		if (e == p || e - p > NAME_MAX || (e - p == 1 && p[0] == '.') ||
		    (e - p == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (e == end)
			return true;
	}
}

/*
 * rel/build_id/name below top (the cache's top directory), through
 * directories that are no symbolic links; a build_id that is itself a
 * regular file is the copy of perf's old layout ("elf" only).
 */
static int
walk(int top, const char *rel, size_t len, const char *build_id,
     const char *name)
{
	const char *p = rel, *e, *end = rel + len;
	char comp[NAME_MAX + 1];
	int dir, next, fd, err;

	if ((dir = dup(top)) < 0)
		return -1;
	for (;; p = e + 1) {
		e = memchr(p, '/', (size_t)(end - p));
		if (!e)
			e = end;
		memcpy(comp, p, (size_t)(e - p));
		comp[e - p] = '\0';
		next = open_dir_at(dir, comp);
		err = errno;
		close(dir);
		if (next < 0) {
			errno = err;
			return -1;
		}
		dir = next;
		if (e == end)
			break;
	}
	next = open_dir_at(dir, build_id);
	if (next < 0) {
		fd = errno == ENOTDIR && strcmp(name, "elf") == 0
			     ? kp_open_regular_at(dir, build_id, O_NOFOLLOW)
			     : -1;
		err = errno;
		close(dir);
		errno = err;
		return fd;
	}
	close(dir);
	fd = kp_open_regular_at(next, name, O_NOFOLLOW);
	err = errno;
	close(next);
	errno = err;
	return fd;
}

/*
 * Where perf's link for build_id, .build-id/XX/REST, points below top:
 * "../../PATH/BUILD_ID" gives PATH (malloc'ed), if it is a plain name.
 */
static char *
linked(int top, const char *build_id)
{
	char sub[8], target[PATH_MAX], *rel = NULL;
	size_t n, idlen = strlen(build_id);
	ssize_t len;
	int dir, two;

	if ((dir = open_dir_at(top, ".build-id")) < 0)
		return NULL;
	snprintf(sub, sizeof(sub), "%.2s", build_id);
	two = open_dir_at(dir, sub);
	close(dir);
	if (two < 0)
		return NULL;
	len = readlinkat(two, build_id + 2, target, sizeof(target) - 1);
	close(two);
	if (len <= 6 + (ssize_t)idlen + 1)
		return NULL;
	target[len] = '\0';
	n = (size_t)len - 6 - idlen - 1;
	if (strncmp(target, "../../", 6) != 0 || target[6 + n] != '/' ||
	    strcmp(target + 6 + n + 1, build_id) != 0 ||
	    !plain_rel(target + 6, n))
		return NULL;
	rel = kp_xmalloc(n + 1);
	memcpy(rel, target + 6, n);
	rel[n] = '\0';
	return rel;
}

int
kp_buildid_cache_open(const char *path, const char *build_id,
		      const char *name, char **where)
{
	const char *home = getenv("HOME"), *rel;
	char *top, *other;
	int dir, fd, err;

	*where = NULL;
	rel = path[0] == '/' ? path + 1 : path;
	if (!home || !*home ||
	    (path[0] != '/' && (path[0] != '[' || strchr(path, '/'))) ||
	    !plain_rel(rel, strlen(rel)) || !is_hex_id(build_id)) {
		errno = ENOENT;
		return -1;
	}
	if (asprintf(where, "%s/.debug/%s/%s/%s", home, rel, build_id,
		     name) < 0)
		kp_die("out of memory");
	/* $HOME/.debug itself is the user's: it may be a link elsewhere */
	if (asprintf(&top, "%s/.debug", home) < 0)
		kp_die("out of memory");
	dir = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(top);
	if (dir < 0)
		return -1;
	fd = walk(dir, rel, strlen(rel), build_id, name);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR) &&
	    (other = linked(dir, build_id)) != NULL) {
		/* perf finds a copy by its build-id alone, through the link
		 * it made to where it kept it: under another name, maybe */
		if (strcmp(other, rel) != 0) {
			free(*where);
			if (asprintf(where, "%s/.debug/%s/%s/%s", home, other,
				     build_id, name) < 0)
				kp_die("out of memory");
			fd = walk(dir, other, strlen(other), build_id, name);
		}
		free(other);
	}
	err = errno;
	close(dir);
	errno = err;
	return fd;
}
