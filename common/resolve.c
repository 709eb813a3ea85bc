/*
 * resolve.c - the resolver: kernel and user addresses to kp frames, each
 * source loaded once, each distinct address resolved once.  See
 * resolve.h.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "archive.h"
#include "dwarf_lines.h"
#include "kp.h"
#include "resolve.h"
#include "symtab.h"

#define MAX_INLINE (KP_RES_MAX - 1)

/*
 * A file frames ran in (a DSO, an executable, a vmlinux), as the capture
 * names it: its path and the build-id it had when sampled (when the
 * capture says), one struct for each pair.  What is read is the file at
 * path, or when that is gone or another build since, the copy perf's
 * build-id cache kept (dso_cached).
 */
struct dso {
	const char *path; /* interned: the name its frames carry */
	const char *want; /* interned: the capture's build-id, or NULL */
	char *file;	  /* the cache's copy read instead of path, or NULL */
	char *dwfile;	  /* the file for DWARF when not path */
	struct kp_symtab *st; /* NULL: no symbols to be had */
	struct kp_elf_seg *segs; /* PT_LOAD: file offset -> ELF address */
	size_t nsegs;
	bool dw_tried;
	struct kp_dwarf *dw;
};

/* A kernel module's DWARF (.ko), for lines and inlines. */
struct kmod {
	const char *name; /* interned, as kallsyms has it */
	struct kp_dwarf *dw;
	struct kmod *next;
};

/* A saved module section address: "MODULE SECTION 0xADDRESS". */
struct secline {
	char *mod, *sec;
	uint64_t addr;
};

/*
 * A resolved address, cached: the key and its frames.  Kept small (most
 * are one frame): C_KERNEL's key is its address, in obj; C_FILE's is
 * (dso, offset, address), the last two after the frames.
 */
enum { C_KERNEL, C_FILE, C_FRAME };
struct cent {
	const void *obj; /* C_KERNEL: the address; C_FILE: the dso; C_FRAME:
			  * the frame */
	uint32_t kf;     /* kind << 24 | flags */
	uint32_t n;
	const struct kp_frame *fr[]; /* then C_FILE's offset and address */
};

struct kp_resolver {
	unsigned flags;
	char err[600];
	/* the kernel */
	struct kp_symtab *ks; /* kallsyms: run-time addresses */
	const char *ks_path;
	struct kp_symtab *kimg; /* System.map or vmlinux: link-time */
	const char *kimg_path;
	struct dso *kelf; /* the image when it is a vmlinux */
	uint64_t shift;   /* run-time minus link-time */
	const char *mod_kernel;
	/* kernel modules' .ko files, for lines */
	const char *modules_dir;
	char **ko;
	size_t nko, capko;
	bool ko_scanned, have_secs;
	struct secline *secs;
	size_t nsecs;
	struct kmod *kmods;
	/* user files */
	struct kp_slots dsos; /* interned path -> struct dso */
	struct dso *uelf;     /* the file of frames without a module */
	/* the interned copies of names of the symbol tables, by their own
	 * pointers (direct-mapped: a process that runs again, its addresses
	 * elsewhere, meets the same symbols) */
	struct {
		const char *raw, *interned;
	} names[4096];
	/* results */
	struct kp_slots cache;
	struct kp_pool pool;
	uint64_t distinct, unresolved;
};

static void
seterr(struct kp_resolver *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
seterr(struct kp_resolver *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

struct kp_resolver *
kp_resolver_new(unsigned flags)
{
	struct kp_resolver *r = kp_xcalloc(1, sizeof(*r));

	r->flags = flags;
	r->mod_kernel = kp_intern_str("kernel");
	return r;
}

const char *
kp_resolver_error(const struct kp_resolver *r)
{
	return r->err;
}

/* ---- files ---- */

static uint64_t
ptr_hash(const void *p)
{
	return ((uint64_t)(uintptr_t)p) * 0x9e3779b97f4a7c15ULL;
}

/* The symbols and segments of d from elf, the file at name open on fd
 * (flags: KP_SYMTAB_DEBUGFILE; debug its debug file, open on debug_fd,
 * or NULL); false (and *why) if it has no symbols. */
static bool
dso_read(struct dso *d, struct Elf *elf, int fd, const char *name,
	 unsigned flags, struct Elf *debug, int debug_fd, char *why,
	 size_t whylen)
{
	d->st = kp_symtab_new();
	if (kp_symtab_load_elf_of(d->st, elf, fd, name, flags, debug,
				  debug_fd) < 0) {
		snprintf(why, whylen, "%s", kp_symtab_error(d->st));
		kp_symtab_free(d->st);
		d->st = NULL;
		return false;
	}
	kp_elf_segments_of(elf, &d->segs, &d->nsegs);
	return true;
}

/* The file at path, its build-id in *id (NULL: none) when id is given;
 * -1 (and *why) if it cannot be read as ELF. */
static struct Elf *
elf_at(const char *path, int *fd, char **id, char *why, size_t whylen)
{
	struct Elf *elf;

	*fd = kp_open_regular(path, 0);
	if (*fd < 0) {
		snprintf(why, whylen, "%s: %s", path, kp_open_strerror(errno));
		return NULL;
	}
	if (!(elf = kp_elf_of(*fd))) {
		snprintf(why, whylen, "%s: not an ELF file", path);
		close(*fd);
		return NULL;
	}
	if (id)
		*id = kp_elf_build_id_of(elf);
	return elf;
}

static struct dso *
dso_load(const char *path, bool fatal)
{
	struct dso *d = kp_xcalloc(1, sizeof(*d));
	struct Elf *elf;
	char why[600];
	int fd;

	d->path = kp_intern_str(path);
	elf = elf_at(path, &fd, NULL, why, sizeof(why));
	if (elf) {
		dso_read(d, elf, fd, path, KP_SYMTAB_DEBUGFILE, NULL, -1, why,
			 sizeof(why));
		kp_elf_end(elf);
		close(fd);
	}
	if (!d->st) {
		if (fatal)
			kp_die("%s", why);
		kp_warn("%s; its frames stay addresses", why);
	}
	return d;
}

/* A file the user named (-e, -m): a vmlinux? */
static bool
dso_is_kernel(const struct dso *d)
{
	struct kp_sym sym;

	return d->st && (kp_symtab_find(d->st, "_stext", &sym) ||
			 kp_symtab_find(d->st, "linux_banner", &sym));
}

/*
 * The copy perf's build-id cache holds of d's file (symtab.h,
 * kp_buildid_cache_open: name "elf", or "vdso" for the vDSO), read as
 * perf's dso__load reads it when the file at path is gone or another
 * build: the copy's .symtab, else the one of the debug file perf kept
 * beside it ("debug", of the same build-id), else of the system's
 * (/usr/lib/debug/.build-id), else the copy's .dynsym; frames keep path
 * for their module.  False if there is no copy to be used (one that is
 * there but cannot be is said); a copy without symbols is said here.
 */
static bool
dso_cached(struct dso *d, const char *name)
{
	struct Elf *elf = NULL, *dbg = NULL;
	char *where = NULL, *dwhere = NULL, *id = NULL, why[600];
	int fd, dfd = -1;
	bool ok = false;

	fd = kp_buildid_cache_open(d->path, d->want, name, &where);
	if (fd < 0) {
		if (errno != ENOENT && where)
			kp_warn("%s: %s; not used", where,
				errno == ELOOP ? "a symbolic link"
					       : kp_open_strerror(errno));
		free(where);
		return false;
	}
	if (!(elf = kp_elf_of(fd)) || !(id = kp_elf_build_id_of(elf)) ||
	    strcmp(id, d->want) != 0) {
		kp_warn("%s: %s, not %s's %s; not used", where,
			!elf ? "not an ELF file" : id ? "another build-id"
						      : "no build-id",
			d->path, d->want);
		goto out;
	}
	/* perf's copy of the debug file, or the system's, when the copy
	 * has no .symtab of its own */
	dfd = kp_buildid_cache_open(d->path, d->want, "debug", &dwhere);
	if (dfd < 0 && dwhere) {
		free(dwhere);
		if (asprintf(&dwhere, "/usr/lib/debug/.build-id/%.2s/%s.debug",
			     d->want, d->want + 2) < 0)
			kp_die("out of memory");
		dfd = kp_open_regular(dwhere, 0);
	}
	if (dfd >= 0 && (dbg = kp_elf_of(dfd)) != NULL) {
		free(id);
		id = kp_elf_build_id_of(dbg);
		if (!id || strcmp(id, d->want) != 0) {
			kp_elf_end(dbg);
			dbg = NULL;
		}
	}
	if (!dso_read(d, elf, fd, where, 0, dbg, dbg ? dfd : -1, why,
		      sizeof(why)))
		kp_warn("%s; its frames stay addresses", why);
	ok = true;
	d->file = where;
	where = NULL;
	if (dbg) {
		d->dwfile = dwhere;
		dwhere = NULL;
	}
out:
	kp_elf_end(dbg);
	if (dfd >= 0)
		close(dfd);
	kp_elf_end(elf);
	close(fd);
	free(id);
	free(where);
	free(dwhere);
	return ok;
}

/*
 * d's file when the capture gives its build-id: the file at path if it
 * is that build (or has none to compare), else perf's cached copy; the
 * frames stay addresses (warned once) when neither can be had.
 */
static void
dso_load_want(struct dso *d)
{
	struct Elf *elf;
	char *id = NULL, why[600];
	int fd;

	elf = elf_at(d->path, &fd, &id, why, sizeof(why));
	if (elf && (!id || strcmp(id, d->want) == 0)) {
		if (!dso_read(d, elf, fd, d->path, KP_SYMTAB_DEBUGFILE, NULL,
			      -1, why, sizeof(why)))
			kp_warn("%s; its frames stay addresses", why);
	} else if (!dso_cached(d, "elf")) {
		if (elf)
			kp_warn("%s: build-id %s, not the %s it had when "
				"sampled; its frames stay addresses",
				d->path, id, d->want);
		else
			kp_warn("%s; its frames stay addresses", why);
	}
	if (elf) {
		kp_elf_end(elf);
		close(fd);
	}
	free(id);
}

static void
dso_free(struct dso *d)
{
	if (!d)
		return;
	kp_dwarf_close(d->dw);
	kp_symtab_free(d->st);
	free(d->segs);
	free(d->file);
	free(d->dwfile);
	free(d);
}

/*
 * Names of memory no file backs, never opened: perf's pseudo-files
 * ("[vdso]", "[heap]", "[stack]", "[anon:NAME]"), anonymous memory
 * ("//anon", "/dev/zero", "/anon_hugepage", "/SYSV..." shared memory:
 * util/map.c is_anon_memory, is_no_dso_memory), a memfd ("/memfd:NAME"),
 * a file deleted while mapped ("PATH (deleted)"), and the JIT symbol file
 * perf names code in anonymous memory after ("/tmp/perf-PID.map", a text
 * file perf reads where a JIT wrote one; not read here).
 */
static bool
no_file(const char *path)
{
	return path[0] != '/' || strstr(path, " (deleted)") ||
	       strcmp(path, "//anon") == 0 ||
	       strncmp(path, "/dev/zero", 9) == 0 ||
	       strncmp(path, "/anon_hugepage", 14) == 0 ||
	       strncmp(path, "/SYSV", 5) == 0 ||
	       strncmp(path, "/memfd:", 7) == 0 ||
	       strncmp(path, "/tmp/perf-", 10) == 0;
}

static uint64_t
dso_hash(const char *path, const char *want)
{
	return ptr_hash(path) ^ ptr_hash(want) >> 7;
}

static struct dso *
dso_find(const struct kp_resolver *r, const char *path, const char *want,
	 uint64_t h)
{
	struct dso *d;
	size_t i, mask;

	if (!r->dsos.cap)
		return NULL;
	mask = r->dsos.cap - 1;
	for (i = h & mask; (d = r->dsos.tab[i].p) != NULL; i = (i + 1) & mask)
		if (d->path == path && d->want == want)
			return d;
	return NULL;
}

/* The file at path with build-id want (both interned; want NULL: not
 * known), loaded on first use. */
static struct dso *dso_new(const char *path, const char *want);

static struct dso *
dso_get(struct kp_resolver *r, const char *path, const char *want)
{
	uint64_t h = dso_hash(path, want);
	struct dso *d = dso_find(r, path, want, h);

	if (d)
		return d;
	d = dso_new(path, want);
	kp_slots_reserve(&r->dsos, 64);
	kp_slots_put(&r->dsos, h, d);
	return d;
}

/* The file at path with build-id want (see dso_get), loaded. */
static struct dso *
dso_new(const char *path, const char *want)
{
	struct dso *d;

	if (no_file(path)) {
		d = kp_xcalloc(1, sizeof(*d));
		d->path = path;
		d->want = want;
		/* the vDSO perf kept (it is no file), if it did */
		if (want && strcmp(path, "[vdso]") == 0)
			dso_cached(d, "vdso");
	} else if (want) {
		d = kp_xcalloc(1, sizeof(*d));
		d->path = path;
		d->want = want;
		dso_load_want(d);
	} else {
		d = dso_load(path, false);
	}
	return d;
}

static struct kp_dwarf *
dso_dwarf_open(struct dso *d, bool warn)
{
	char err[512];

	if (!d->dw_tried && d->st) {
		d->dw_tried = true;
		d->dw = kp_dwarf_open(d->dwfile	 ? d->dwfile
				      : d->file ? d->file
						: d->path,
				      err, sizeof(err));
		if (!d->dw && warn)
			kp_warn("%s; no source lines", err);
	}
	return d->dw;
}

static struct kp_dwarf *
dso_dwarf(struct dso *d)
{
	return dso_dwarf_open(d, true);
}

/* ---- kernel modules: .ko files for lines and inlines ---- */

/* nftw has no argument: the list being filled, one per thread (two
 * threads may each fill their resolver's) */
static _Thread_local char ***ko_list;
static _Thread_local size_t *ko_n, *ko_cap;

static int
ko_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *e = strstr(path + ftw->base, ".ko");

	(void)sb;
	if (type != FTW_F || !e)
		return 0;
	if (strcmp(e, ".ko") && strcmp(e, ".ko.xz") && strcmp(e, ".ko.gz") &&
	    strcmp(e, ".ko.bz2") && strcmp(e, ".ko.zst"))
		return 0;
	if (*ko_n == *ko_cap) {
		*ko_cap = *ko_cap ? *ko_cap * 2 : 256;
		*ko_list = kp_xrealloc(*ko_list, *ko_cap * sizeof(**ko_list));
	}
	(*ko_list)[(*ko_n)++] = kp_xstrdup(path);
	return 0;
}

/* kallsyms names modules with '_' where their files may have '-'. */
static bool
ko_matches(const char *path, const char *mod)
{
	const char *b = strrchr(path, '/');
	size_t i;

	b = b ? b + 1 : path;
	for (i = 0; mod[i]; i++)
		if (b[i] != mod[i] && !(b[i] == '-' && mod[i] == '_'))
			return false;
	return strncmp(b + i, ".ko", 3) == 0;
}

/*
 * /sys/module/MOD/sections/SEC of the running kernel, or the copy
 * kp-sample --archive saved:
 *
 *	nf_tables .text 0xffffffffc0a3b000
 */
static int
load_secs(struct kp_resolver *r, const char *path)
{
	FILE *fp;
	char *line = NULL, mod[256], sec[256];
	size_t cap = 0, n = 0;
	uint64_t a;
	int fd = kp_open_regular(path, 0);

	if (fd < 0 || !(fp = fdopen(fd, "r"))) {
		seterr(r, "%s: %s", path, kp_open_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (getline(&line, &cap, fp) > 0) {
		if (sscanf(line, "%255s %255s %" SCNx64, mod, sec, &a) != 3)
			continue;
		if (r->nsecs == n) {
			n = n ? n * 2 : 256;
			r->secs = kp_xrealloc(r->secs, n * sizeof(*r->secs));
		}
		r->secs[r->nsecs].mod = kp_xstrdup(mod);
		r->secs[r->nsecs].sec = kp_xstrdup(sec);
		r->secs[r->nsecs].addr = a;
		r->nsecs++;
	}
	free(line);
	fclose(fp);
	r->have_secs = true;
	return 0;
}

static bool
section_address(const char *mod, const char *sec, uint64_t *addr, void *arg)
{
	struct kp_resolver *r = arg;
	char path[4096], buf[64];
	size_t i;
	FILE *fp;
	bool ok;

	if (r->have_secs) {
		for (i = 0; i < r->nsecs; i++)
			if (strcmp(r->secs[i].mod, mod) == 0 &&
			    strcmp(r->secs[i].sec, sec) == 0) {
				*addr = r->secs[i].addr;
				return true;
			}
		return false;
	}
	snprintf(path, sizeof(path), "/sys/module/%s/sections/%s", mod, sec);
	if (!(fp = fopen(path, "re")))
		return false;
	ok = fgets(buf, sizeof(buf), fp) &&
	     kp_parse_u64(buf, strcspn(buf, "\n"), 16, addr) == 0;
	fclose(fp);
	return ok;
}

static struct kp_dwarf *
kmod_dwarf(struct kp_resolver *r, const char *name)
{
	struct kmod *m;
	char err[512];
	size_t i;

	for (m = r->kmods; m; m = m->next)
		if (m->name == name)
			return m->dw;
	m = kp_xcalloc(1, sizeof(*m));
	m->name = name;
	m->next = r->kmods;
	r->kmods = m;
	if (!r->ko_scanned) {
		r->ko_scanned = true;
		ko_list = &r->ko;
		ko_n = &r->nko;
		ko_cap = &r->capko;
		if (nftw(r->modules_dir, ko_visit, 16, FTW_PHYS) != 0)
			kp_warn("--modules %s:", r->modules_dir);
	}
	for (i = 0; i < r->nko; i++)
		if (ko_matches(r->ko[i], name))
			break;
	if (i == r->nko) {
		kp_warn("no %s.ko under %s: no source lines for it", name,
			r->modules_dir);
		return NULL;
	}
	m->dw = kp_dwarf_open_kmod(r->ko[i], name, section_address, r, err,
				   sizeof(err));
	if (!m->dw)
		kp_warn("%s; no source lines for %s", err, name);
	return m->dw;
}

/* ---- the kernel ---- */

int
kp_resolver_elf(struct kp_resolver *r, const char *path)
{
	struct dso *d = dso_load(path, true);

	if (dso_is_kernel(d)) {
		r->kelf = d;
		return 1;
	}
	r->uelf = d;
	return 0;
}

/* True if path starts with the ELF magic (a vmlinux, not a System.map). */
static bool
is_elf(const char *path)
{
	char m[4];
	int fd = kp_open_regular(path, 0);
	bool yes;

	if (fd < 0)
		return false;
	yes = read(fd, m, 4) == 4 && memcmp(m, "\177ELF", 4) == 0;
	close(fd);
	return yes;
}

static int
load_image(struct kp_resolver *r, const struct kp_kernel_src *src)
{
	struct kp_sym sym;

	if (src->image && r->kelf) {
		seterr(r, "-m and -e with a vmlinux: give one of them");
		return -1;
	}
	if (src->image && is_elf(src->image)) {
		r->kelf = dso_load(src->image, true);
		if (!dso_is_kernel(r->kelf)) {
			seterr(r, "%s: no _stext or linux_banner: not a vmlinux",
			       src->image);
			return -1;
		}
	} else if (src->image) {
		r->kimg = kp_symtab_new();
		r->kimg_path = src->image;
		if (kp_symtab_load_sysmap(r->kimg, src->image) < 0) {
			seterr(r, "%s", kp_symtab_error(r->kimg));
			return -1;
		}
		if (!kp_symtab_find(r->kimg, "_text", &sym) &&
		    !kp_symtab_find(r->kimg, "_stext", &sym)) {
			seterr(r, "%s: no _text or _stext: not a kernel's "
				  "System.map",
			       src->image);
			return -1;
		}
	}
	if (r->kelf) {
		r->kimg = r->kelf->st;
		r->kimg_path = r->kelf->path;
	}
	return 0;
}

/* kallsyms of another boot (or machine) gives wrong names. */
static int
check_kallsyms(struct kp_resolver *r, const struct kp_kernel_src *src,
	       const char *name, bool have, uint64_t want)
{
	struct kp_sym a;

	if (!have || !kp_symtab_find(r->ks, name, &a) || a.addr == want)
		return 0;
	if (!src->force) {
		seterr(r,
		       "%s: %s is 0x%" PRIx64 ", the capture's 0x%" PRIx64
		       ": not the kallsyms of its boot (-k the one saved "
		       "then, or --force)",
		       r->ks_path, name, a.addr, want);
		return -1;
	}
	kp_warn("%s: %s is 0x%" PRIx64 ", the capture's 0x%" PRIx64
		"; used anyway (--force)",
		r->ks_path, name, a.addr, want);
	return 0;
}

/* The KASLR shift of the image, and the checks that it is the right one. */
static int
image_shift(struct kp_resolver *r, const struct kp_kernel_src *src)
{
	const char *how = NULL;
	struct kp_sym a, b;
	char *id, buf[600];

	if (r->kelf && src->build_id &&
	    (id = kp_elf_build_id(r->kelf->path)) != NULL) {
		if (strcmp(id, src->build_id) != 0) {
			if (!src->force) {
				seterr(r,
				       "%s: build-id %s does not match the "
				       "capture's %s (--force to use it anyway)",
				       r->kelf->path, id, src->build_id);
				free(id);
				return -1;
			}
			kp_warn("%s: build-id %s does not match the capture's "
				"%s; used anyway (--force)",
				r->kelf->path, id, src->build_id);
		}
		free(id);
	}
	r->shift = 0;
	if (src->have_shift) {
		r->shift = src->shift;
		how = src->shift_how ? src->shift_how : "the capture";
	} else if (src->have_text) {
		if (!kp_symtab_find(r->kimg, "_text", &b)) {
			seterr(r, "%s: no _text symbol for the capture's _text",
			       r->kimg_path);
			return -1;
		}
		r->shift = src->text - b.addr;
		how = "_text and the capture's _text";
	} else if (src->have_stext) {
		if (!kp_symtab_find(r->kimg, "_stext", &b)) {
			seterr(r, "%s: no _stext symbol for '# stext:'",
			       r->kimg_path);
			return -1;
		}
		r->shift = src->stext - b.addr;
		how = "_stext and # stext: metadata";
	} else if (r->ks) {
		if (!kp_symtab_find(r->ks, "_text", &a) ||
		    !kp_symtab_find(r->kimg, "_text", &b)) {
			seterr(r, "no _text in %s and %s for the KASLR shift",
			       r->ks_path, r->kimg_path);
			return -1;
		}
		r->shift = a.addr - b.addr;
		snprintf(buf, sizeof(buf), "_text in %s", r->ks_path);
		how = buf;
	}
	if (how)
		kp_warn("KASLR shift 0x%" PRIx64 " (from %s)", r->shift, how);
	else
		kp_warn("no KASLR shift known (no --kaslr-offset, '# kaslr:', "
			"'# stext:' or -k): assuming 0");
	/* the image must agree with kallsyms at its other end too */
	if (r->ks && kp_symtab_find(r->ks, "_etext", &a) &&
	    kp_symtab_find(r->kimg, "_etext", &b) &&
	    a.addr - b.addr != r->shift) {
		if (!src->force) {
			seterr(r,
			       "%s does not match %s: _etext is 0x%" PRIx64
			       " there, 0x%" PRIx64 " shifted here "
			       "(--force to use it anyway)",
			       r->kimg_path, r->ks_path, a.addr,
			       b.addr + r->shift);
			return -1;
		}
		kp_warn("%s does not match %s; used anyway (--force)",
			r->kimg_path, r->ks_path);
	}
	return 0;
}

/*
 * /proc/kallsyms is the running kernel's: a capture whose kernel has
 * another build-id ran on another kernel (another build, or another
 * machine), and the same _text says nothing then.  perf report names
 * its frames from /proc/kallsyms only when the build-ids match
 * (util/symbol.c, dso__find_kallsyms).  Not known (no build-id in the
 * capture, no /sys/kernel/notes): used.
 */
static int
check_running(struct kp_resolver *r, const struct kp_kernel_src *src)
{
	char *id;
	int ret = 0;

	if (!src->build_id || !(id = kp_kernel_build_id()))
		return 0;
	if (strcmp(id, src->build_id) == 0) {
		free(id);
		return 0;
	}
	if (!src->force) {
		seterr(r,
		       "/proc/kallsyms is of the running kernel, build-id %s; "
		       "the capture's kernel is %s, another",
		       id, src->build_id);
		ret = -1;
	} else {
		kp_warn("/proc/kallsyms is of the running kernel, build-id %s; "
			"the capture's kernel is %s: used anyway (--force)",
			id, src->build_id);
	}
	free(id);
	return ret;
}

int
kp_resolver_kernel(struct kp_resolver *r, const struct kp_kernel_src *src)
{
	char moddir[600];
	struct utsname un;

	r->err[0] = '\0';
	if (load_image(r, src) < 0)
		return -1;
	if (src->kallsyms || (!src->no_kallsyms && !r->kimg)) {
		if (!src->kallsyms && check_running(r, src) < 0)
			return -1;
		r->ks_path = kp_intern_str(src->kallsyms ? src->kallsyms
							  : "/proc/kallsyms");
		r->ks = kp_symtab_new();
		if (kp_symtab_load_kallsyms(r->ks, r->ks_path) < 0) {
			seterr(r, "%s", kp_symtab_error(r->ks));
			kp_symtab_free(r->ks);
			r->ks = NULL;
			return -1;
		}
		if (check_kallsyms(r, src, "_stext", src->have_stext,
				   src->stext) < 0 ||
		    check_kallsyms(r, src, "_text", src->have_text,
				   src->text) < 0)
			return -1;
	}
	if (src->modules) {
		r->modules_dir = kp_intern_str(src->modules);
	} else {
		snprintf(moddir, sizeof(moddir), "/lib/modules/%s",
			 uname(&un) == 0 ? un.release : "");
		r->modules_dir = kp_intern_str(moddir);
	}
	if (src->sections && (r->flags & (KP_RES_LINES | KP_RES_INLINES)) &&
	    load_secs(r, src->sections) < 0)
		return -1;
	if (r->kimg && image_shift(r, src) < 0)
		return -1;
	return 0;
}

bool
kp_resolver_kernel_sym(const struct kp_resolver *r, const char *name,
		       uint64_t *addr)
{
	struct kp_sym sym;

	if (r->ks && kp_symtab_find(r->ks, name, &sym)) {
		*addr = sym.addr;
		return true;
	}
	if (r->kimg && kp_symtab_find(r->kimg, name, &sym)) {
		*addr = sym.addr + r->shift;
		return true;
	}
	return false;
}

/* ---- frames ---- */

/* A symbol table's string (a name, a module) interned. */
static const char *
intern_name(struct kp_resolver *r, const char *raw)
{
	size_t i = (size_t)(ptr_hash(raw) >> 52);

	if (r->names[i].raw != raw) {
		r->names[i].raw = raw;
		r->names[i].interned = kp_intern_str(raw);
	}
	return r->names[i].interned;
}

/* a and b are the same frame (b interned or not: the frame a caller
 * builds for an address is interned only when it is the answer). */
static bool
same_frame(const struct kp_frame *a, const struct kp_frame *b)
{
	return a == b || memcmp(a, b, KP_FRAME_KEY) == 0;
}

/*
 * The frames of in resolved to sym (NULL: none) and the source of daddr
 * in dw (NULL: none), into out[]: inlined functions first.  A symbol in
 * already has is kept unless KP_RES_FORCE.  Returns how many.
 */
static size_t
make_frames(struct kp_resolver *r, const struct kp_frame *in,
	    const struct kp_sym *sym, const char *module, struct kp_dwarf *dw,
	    uint64_t daddr, const struct kp_frame **out)
{
	bool lines = r->flags & KP_RES_LINES;
	struct kp_srcframe sf[MAX_INLINE];
	struct kp_frame f;
	size_t n = 0, i, k = 0;

	if (dw && (r->flags & (KP_RES_LINES | KP_RES_INLINES)))
		n = kp_dwarf_lookup(dw, daddr, r->flags & KP_RES_INLINES, sf,
				    MAX_INLINE);
	for (i = 0; n > 0 && i + 1 < n; i++) {
		memset(&f, 0, sizeof(f));
		f.addr = in->addr;
		f.flags = KP_F_ADDR | KP_F_INLINE;
		f.sym = kp_intern_str(sf[i].func ? sf[i].func : "??");
		f.module = module;
		if (lines && sf[i].file) {
			f.file = kp_intern_str(sf[i].file);
			f.line = sf[i].line;
		}
		out[k++] = kp_frame_intern(&f);
	}
	memset(&f, 0, sizeof(f));
	f.addr = in->addr;
	f.flags = KP_F_ADDR | (in->flags & KP_F_INEXACT);
	f.module = module;
	if (in->sym && (in->flags & KP_F_OFF) && !(r->flags & KP_RES_FORCE)) {
		/* a symbol of its own, kept: lines and inlines only add */
		f.sym = in->sym;
		f.off = in->off;
		f.size = in->size;
		f.module = in->module ? in->module : module;
		f.flags = in->flags & ~(uint32_t)KP_F_INLINE;
	} else if (sym) {
		f.sym = intern_name(r, sym->name);
		f.off = sym->off;
		f.size = sym->size;
		f.flags |= KP_F_OFF | KP_F_SIZE;
	} else if (n > 0 && sf[n - 1].func) {
		f.sym = kp_intern_str(sf[n - 1].func);
	} else {
		f = *in;
	}
	if (lines && n > 0 && sf[n - 1].file) {
		f.file = kp_intern_str(sf[n - 1].file);
		f.line = sf[n - 1].line;
	}
	out[k++] = kp_frame_intern(&f);
	return k;
}

/*
 * KP_RES_PERF_INLINES: the frames of in as perf names an unwound frame
 * (resolve.h): DWARF's functions at daddr in dw, the outermost replaced
 * by the symbol's frame (made by make_frames) when the names agree.
 */
static size_t
perf_frames(struct kp_resolver *r, const struct kp_frame *in,
	    const struct kp_sym *sym, const char *module, struct kp_dwarf *dw,
	    uint64_t daddr, uint64_t sym_start, const struct kp_frame **out)
{
	struct kp_srcframe sf[MAX_INLINE];
	struct kp_frame f;
	const char *name;
	size_t n = 0, i;

	if (dw && sym) /* perf expands only what a symbol names */
		n = kp_dwarf_lookup(dw, daddr, true, sf, MAX_INLINE);
	for (i = 0; i < n; i++) {
		name = sf[i].func ? sf[i].func : "??";
		/* addr2line (binutils) names a function without a linkage
		 * name by the file's own symbol at its start, if it has a
		 * .symtab (free, not __interceptor_free) */
		if (i + 1 == n && sym && !sf[i].linkage && sf[i].has_entry &&
		    sf[i].entry == sym_start && kp_dwarf_has_symtab(dw))
			name = sym->name;
		if (i + 1 == n && sym && strcmp(name, sym->name) == 0)
			return i + make_frames(r, in, sym, module, NULL, daddr,
					       out + i);
		memset(&f, 0, sizeof(f));
		f.addr = in->addr;
		f.flags = KP_F_ADDR | KP_F_INLINE;
		f.sym = kp_intern_str(name);
		f.module = module;
		out[i] = kp_frame_intern(&f);
	}
	if (n)
		return n;
	return make_frames(r, in, sym, module, NULL, daddr, out);
}

static uint64_t
cent_hash(uint32_t kind, const void *obj, uint64_t a, uint64_t b,
	  uint32_t flags)
{
	uint64_t k[4] = { (uint64_t)(uintptr_t)obj, a, b,
			  (uint64_t)kind << 32 | flags };
	uint64_t h;

	if (kind == C_FILE)
		return kp_hash(k, sizeof(k));
	/* one word: Fibonacci hashing, its high bits folded down */
	h = (k[0] ^ k[3] << 40) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 32;
}

static uint64_t *
cent_keys(struct cent *c)
{
	return (uint64_t *)(c->fr + c->n);
}

static struct cent *
cache_find(struct kp_resolver *r, uint64_t h, uint32_t kind, const void *obj,
	   uint64_t a, uint64_t b, uint32_t flags)
{
	uint32_t kf = kind << 24 | flags;
	struct cent *c;
	size_t i, mask;

	if (!r->cache.cap)
		return NULL;
	mask = r->cache.cap - 1;
	for (i = h & mask; r->cache.tab[i].p; i = (i + 1) & mask) {
		c = r->cache.tab[i].p;
		if (r->cache.tab[i].hash == h && c->obj == obj && c->kf == kf &&
		    (kind != C_FILE ||
		     (cent_keys(c)[0] == a && cent_keys(c)[1] == b)))
			return c;
	}
	return NULL;
}

static struct cent *
cache_add(struct kp_resolver *r, uint64_t h, uint32_t kind, const void *obj,
	  uint64_t a, uint64_t b, uint32_t flags,
	  const struct kp_frame *const *fr, size_t n, bool resolved)
{
	size_t keys = kind == C_FILE ? 2 * sizeof(uint64_t) : 0;
	struct cent *c = kp_pool_alloc(&r->pool, sizeof(*c) +
							 n * sizeof(c->fr[0]) +
							 keys);

	c->obj = obj;
	c->kf = kind << 24 | flags;
	c->n = (uint32_t)n;
	memcpy(c->fr, fr, n * sizeof(c->fr[0]));
	if (keys) {
		cent_keys(c)[0] = a;
		cent_keys(c)[1] = b;
	}
	kp_slots_reserve(&r->cache, 4096);
	kp_slots_put(&r->cache, h, c);
	r->distinct++;
	if (!resolved)
		r->unresolved++;
	return c;
}

/*
 * A kernel address; in is the frame as it stands (its module kept).
 * Fills out[], returns how many and whether a symbol or line named it.
 */
static size_t
kernel_frames(struct kp_resolver *r, const struct kp_frame *in, bool ret,
	      const struct kp_frame **out, bool *ok)
{
	unsigned fl = ret ? KP_SYMTAB_RETADDR : 0;
	bool want_dw = r->flags & (KP_RES_LINES | KP_RES_INLINES);
	const char *module = in->module ? in->module : r->mod_kernel;
	struct kp_dwarf *dw = NULL;
	struct kp_sym sym;
	uint64_t la;
	size_t n;

	*ok = true;
	if (r->kimg) {
		la = in->addr - r->shift;
		if (kp_symtab_lookup(r->kimg, la, fl, &sym))
			return make_frames(r, in, &sym, module,
					   r->kelf && want_dw ?
						   dso_dwarf(r->kelf) :
						   NULL,
					   ret ? la - 1 : la, out);
	}
	if (r->ks && kp_symtab_lookup(r->ks, in->addr, fl, &sym)) {
		if (sym.module) {
			module = intern_name(r, sym.module);
			if (want_dw && strncmp(module, "__builtin", 9) != 0 &&
			    strcmp(module, "bpf") != 0)
				dw = kmod_dwarf(r, module);
		}
		return make_frames(r, in, &sym, module, dw,
				   ret ? in->addr - 1 : in->addr, out);
	}
	if (r->kelf && want_dw && dso_dwarf(r->kelf)) {
		/* no symbol, but the line table may know the address */
		la = in->addr - r->shift;
		n = make_frames(r, in, NULL, module, r->kelf->dw,
				ret ? la - 1 : la, out);
		*ok = n > 1 || !same_frame(out[0], in);
		return n;
	}
	*ok = false;
	out[0] = kp_frame_intern(in);
	return 1;
}

/* The frames of kernel address addr into fr[], their number; *ok when
 * a symbol or line named it. */
static size_t
kernel_addr(struct kp_resolver *r, uint64_t addr, unsigned flags,
	    const struct kp_frame **fr, bool *ok)
{
	struct kp_frame in;

	memset(&in, 0, sizeof(in));
	in.addr = addr;
	in.flags = KP_F_ADDR;
	in.module = r->mod_kernel;
	return kernel_frames(r, &in, flags & KP_SYMTAB_RETADDR, fr, ok);
}

size_t
kp_resolve_kernel(struct kp_resolver *r, uint64_t addr, unsigned flags,
		  const struct kp_frame *const **out)
{
	const struct kp_frame *fr[KP_RES_MAX];
	const void *key = (const void *)(uintptr_t)addr;
	uint64_t h = cent_hash(C_KERNEL, key, 0, 0, flags);
	struct cent *c = cache_find(r, h, C_KERNEL, key, 0, 0, flags);
	size_t n;
	bool ok;

	if (!c) {
		n = kernel_addr(r, addr, flags, fr, &ok);
		c = cache_add(r, h, C_KERNEL, key, 0, 0, flags, fr, n, ok);
	}
	*out = c->fr;
	return c->n;
}

size_t
kp_resolve_kernel_to(struct kp_resolver *r, uint64_t addr, unsigned flags,
		     const struct kp_frame **out)
{
	size_t n;
	bool ok;

	n = kernel_addr(r, addr, flags, out, &ok);
	r->distinct++;
	if (!ok)
		r->unresolved++;
	return n;
}

/*
 * An address of d at ELF address vaddr; in is the frame as it stands.
 * Fills out[], returns how many and whether anything named it.
 */
static size_t
user_frames(struct kp_resolver *r, struct dso *d, const struct kp_frame *in,
	    uint64_t vaddr, unsigned flags, const struct kp_frame **out,
	    bool *ok)
{
	bool want_dw = r->flags & (KP_RES_LINES | KP_RES_INLINES);
	bool ret = flags & KP_SYMTAB_RETADDR;
	const char *module = in->module ? in->module : d->path;
	struct kp_sym sym;
	size_t n;

	*ok = d->st && kp_symtab_lookup(d->st, vaddr,
					ret ? KP_SYMTAB_RETADDR : 0, &sym);
	if ((flags & KP_RES_PERF_INLINES) && (*ok || d->st)) {
		n = perf_frames(r, in, *ok ? &sym : NULL, module,
				dso_dwarf_open(d, false),
				ret && vaddr ? vaddr - 1 : vaddr,
				*ok ? vaddr - sym.off : 0, out);
		if (!*ok)
			*ok = n > 1 || !same_frame(out[0], in);
		return n;
	}
	if (!*ok && !(want_dw && d->st)) {
		out[0] = kp_frame_intern(in);
		return 1;
	}
	n = make_frames(r, in, *ok ? &sym : NULL, module,
			want_dw ? dso_dwarf(d) : NULL,
			ret && vaddr ? vaddr - 1 : vaddr, out);
	if (!*ok)
		*ok = n > 1 || !same_frame(out[0], in);
	return n;
}

/* The frames of file offset off of d (its path interned) into fr[],
 * their number; *ok when anything named it. */
static size_t
file_off(struct kp_resolver *r, struct dso *d, uint64_t off, uint64_t addr,
	 unsigned flags, const struct kp_frame **fr, bool *ok)
{
	struct kp_frame in;
	uint64_t vaddr;

	memset(&in, 0, sizeof(in));
	in.addr = addr;
	in.flags = KP_F_ADDR | KP_F_OFF;
	in.module = d->path;
	in.off = off;
	*ok = false;
	if (kp_elf_off_to_vaddr(d->segs, d->nsegs, off, &vaddr))
		return user_frames(r, d, &in, vaddr,
				   flags & (KP_SYMTAB_RETADDR |
					    KP_RES_PERF_INLINES),
				   fr, ok);
	fr[0] = kp_frame_intern(&in);
	return 1;
}

size_t
kp_resolve_file(struct kp_resolver *r, const char *path, const char *build_id,
		uint64_t off, uint64_t addr, unsigned flags,
		const struct kp_frame *const **out)
{
	const struct kp_frame *fr[KP_RES_MAX];
	struct dso *d;
	struct cent *c;
	uint64_t h;
	size_t n;
	bool ok;

	path = kp_intern_str(path);
	d = dso_get(r, path, build_id ? kp_intern_str(build_id) : NULL);
	h = cent_hash(C_FILE, d, off, addr, flags);
	c = cache_find(r, h, C_FILE, d, off, addr, flags);
	if (!c) {
		n = file_off(r, d, off, addr, flags, fr, &ok);
		c = cache_add(r, h, C_FILE, d, off, addr, flags, fr, n, ok);
	}
	*out = c->fr;
	return c->n;
}

size_t
kp_resolve_user(struct kp_resolver *r, const struct kp_map *map,
		uint64_t addr, unsigned flags,
		const struct kp_frame *const **out)
{
	return kp_resolve_file(r, map->path, map->build_id,
			       addr - map->start + map->pgoff, addr, flags,
			       out);
}

size_t
kp_resolve_user_to(struct kp_resolver *r, const struct kp_map *map,
		   uint64_t addr, unsigned flags, const struct kp_frame **out)
{
	size_t n;
	bool ok;

	n = file_off(r, dso_get(r, map->path, map->build_id),
		     addr - map->start + map->pgoff, addr, flags, out, &ok);
	r->distinct++;
	if (!ok)
		r->unresolved++;
	return n;
}

/* ---- frames read from kp (kp-addr2sym) ---- */

enum target { T_NONE, T_KERNEL, T_USER };

static enum target
frame_target(const struct kp_resolver *r, const struct kp_frame *f)
{
	if (!f->module)
		return r->uelf ? T_USER : T_KERNEL;
	if (kp_module_is_kernel(f->module))
		return T_KERNEL;
	if (f->module[0] == '/')
		return T_USER;
	return T_NONE;
}

bool
kp_resolve_frame_wanted(const struct kp_resolver *r, const struct kp_frame *f)
{
	if (!(f->flags & KP_F_ADDR) || (f->flags & KP_F_INLINE))
		return false;
	if (!f->sym || (r->flags & KP_RES_FORCE))
		return true;
	/* lines and inlines add to frames that keep their symbol */
	if ((r->flags & (KP_RES_LINES | KP_RES_INLINES)) && !f->file)
		return true;
	/*
	 * A symbol without an offset: the old perf converter wrote the
	 * address as the offset, which the reader drops.  Look it up.
	 */
	return !(f->flags & KP_F_OFF);
}

/* The ELF address of a user frame read from kp. */
static uint64_t
frame_vaddr(const struct dso *d, const struct kp_frame *in)
{
	struct kp_sym sym;
	uint64_t v;

	/* [PATH+0xOFF]: the file offset (kp.5) */
	if (!in->sym && (in->flags & KP_F_OFF))
		return kp_elf_off_to_vaddr(d->segs, d->nsegs, in->off, &v) ?
			       v :
			       in->off;
	/* sym+off: where the file has that symbol, wherever it was mapped */
	if (in->sym && (in->flags & KP_F_OFF) && d->st &&
	    kp_symtab_find(d->st, in->sym, &sym))
		return sym.addr + in->off;
	return in->addr;
}

size_t
kp_resolve_frame(struct kp_resolver *r, const struct kp_frame *in,
		 unsigned flags, const struct kp_frame *const **out)
{
	const struct kp_frame *fr[KP_RES_MAX];
	bool ret = flags & KP_SYMTAB_RETADDR, ok = false;
	uint64_t h = cent_hash(C_FRAME, in, 0, 0, flags);
	struct cent *c = cache_find(r, h, C_FRAME, in, 0, 0, flags);
	struct dso *d;
	size_t n = 1;

	if (c) {
		*out = c->fr;
		return c->n;
	}
	fr[0] = in;
	switch (frame_target(r, in)) {
	case T_KERNEL:
		n = kernel_frames(r, in, ret, fr, &ok);
		break;
	case T_USER:
		d = in->module && !(r->uelf && in->module == r->uelf->path) ?
			    dso_get(r, in->module, NULL) :
			    r->uelf;
		if (d->st)
			n = user_frames(r, d, in, frame_vaddr(d, in),
					ret ? KP_SYMTAB_RETADDR : 0, fr,
					&ok);
		break;
	default:
		break;
	}
	if (!ok) {
		fr[0] = in;
		n = 1;
	}
	c = cache_add(r, h, C_FRAME, in, 0, 0, flags, fr, n, ok);
	*out = c->fr;
	return c->n;
}

bool
kp_resolve_is_entry(const struct kp_frame *f)
{
	return f->sym && strncmp(f->sym, "asm_", 4) == 0 && f->module &&
	       kp_module_is_vmlinux(f->module);
}

void
kp_resolver_stats(const struct kp_resolver *r, uint64_t *distinct,
		  uint64_t *unresolved)
{
	*distinct = r->distinct;
	*unresolved = r->unresolved;
}

void
kp_resolver_free(struct kp_resolver *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->dsos.cap; i++)
		dso_free(r->dsos.tab[i].p);
	kp_slots_free(&r->dsos);
	if (r->kelf)
		r->kimg = NULL; /* the vmlinux's own table */
	dso_free(r->kelf);
	dso_free(r->uelf);
	kp_symtab_free(r->kimg);
	kp_symtab_free(r->ks);
	while (r->kmods) {
		struct kmod *m = r->kmods;

		r->kmods = m->next;
		kp_dwarf_close(m->dw);
		free(m);
	}
	while (r->nko)
		free(r->ko[--r->nko]);
	free(r->ko);
	while (r->nsecs) {
		r->nsecs--;
		free(r->secs[r->nsecs].mod);
		free(r->secs[r->nsecs].sec);
	}
	free(r->secs);
	kp_slots_free(&r->cache);
	kp_pool_free(&r->pool);
	free(r);
}
