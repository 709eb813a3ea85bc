/*
 * kp-addr2sym - fill in or correct the symbols of kp frames from
 * addresses: kernel frames from /proc/kallsyms (or a saved copy), a
 * System.map or a vmlinux, user frames from the ELF file named in their
 * module field; with -l the source line and with -i the inlined
 * functions, from DWARF.
 *
 *	 0xffffffff81001040 [kernel]
 * becomes
 *	 0xffffffff81001040 : x86_64_start_reservations+0x30/0x30 [kernel]
 *
 * Any frame but the innermost holds a return address, looked up at
 * pc - 1 (the call), as eu-stack does; perf does not, and names the
 * next symbol where a function ends in a call that never returns.  The
 * first user frame under kernel frames is the interrupted pc, looked up
 * as it is.
 */
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dwarf_lines.h"
#include "kp.h"
#include "symtab.h"

#define MAX_INLINE 32

static const char *opt_kallsyms, *opt_sysmap, *opt_elf, *opt_modules;
static bool opt_lines, opt_inlines, opt_force, opt_have_shift;
static uint64_t opt_shift;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-addr2sym [-fhil] [-k kallsyms] [-m System.map] "
		"[-e elf]\n"
		"                   [--kaslr-offset N] [--modules DIR] "
		"[file ...]\n"
		"Read kp and give each frame the symbol of its address; write "
		"kp.\n"
		"Kernel frames (no module, kernel, vmlinux or a module name) "
		"are looked up\n"
		"in kallsyms (default: the capture's '# archive:' copy, else "
		"/proc/kallsyms),\n"
		"or a System.map or vmlinux shifted by the KASLR offset; user "
		"frames (a path\n"
		"as module) in that ELF file or its debug file under "
		"/usr/lib/debug.\n"
		"With no file, or '-', read standard input.\n"
		"  -k, --kallsyms FILE    kernel and module symbols from a "
		"saved kallsyms\n"
		"  -m, --system-map FILE  kernel symbols from a System.map\n"
		"  -e, --elf FILE         symbols (and DWARF) from a vmlinux, "
		"or from an\n"
		"                         executable for frames without a "
		"module\n"
		"  -l, --lines            add the source line: (at FILE:LINE)\n"
		"  -i, --inlines          add inlined functions as frames of "
		"their own\n"
		"  -f, --force            replace symbols the frames already "
		"have\n"
		"      --kaslr-offset N   the KASLR shift (run-time minus "
		"link-time address)\n"
		"      --modules DIR      kernel modules' .ko files, for -l and "
		"-i (default\n"
		"                         /lib/modules/$(uname -r)); placed "
		"as /sys/module/*/\n"
		"                         sections says, or the capture's "
		"'# archive:' copy\n"
		"  -h, --help             show this help\n"
		"The KASLR shift is, in this order: --kaslr-offset, '# kaslr:' "
		"metadata,\n"
		"'# stext:' metadata, or _text of -k FILE; which one is said "
		"on stderr.\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/*
 * --kaslr-offset: decimal or 0x-hex, and negative for a kernel loaded
 * below its link address.
 */
static uint64_t
parse_shift(const char *arg)
{
	const char *p = arg[0] == '-' ? arg + 1 : arg;
	bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	uint64_t v;

	if (kp_parse_u64(p, strlen(p), hex ? 16 : 10, &v) < 0)
		kp_usage_error("--kaslr-offset: not a number: '%s'", arg);
	return arg[0] == '-' ? -v : v;
}

/* An ELF file (vmlinux, an executable, a DSO) and what it gave. */
struct source {
	const char *path; /* interned */
	struct kp_symtab *st;
	struct kp_dwarf *dw;
	bool dw_tried, failed, is_kernel;
	struct source *next;
};

static struct kp_symtab *ks;       /* kallsyms: run-time addresses */
static struct kp_symtab *kimg;     /* System.map or vmlinux: link-time */
static const char *kimg_path;
static struct source *kelf;        /* -e when it is a vmlinux */
static struct source *uelf;        /* -e when it is not */
static struct source *dsos;        /* user files met in module fields */
static uint64_t shift;             /* run-time minus link-time */
static bool setup_done;
static const char *mod_kernel;
static unsigned long n_distinct, n_unresolved;

/* ---- sources ---- */

static struct source *
source_new(const char *path, bool fatal)
{
	struct source *s = kp_xcalloc(1, sizeof(*s));
	struct kp_sym sym;

	s->path = kp_intern_str(path);
	s->st = kp_symtab_new();
	if (kp_symtab_load_elf(s->st, path, KP_SYMTAB_DEBUGFILE) < 0) {
		if (fatal)
			kp_die("%s", kp_symtab_error(s->st));
		kp_warn("%s; its frames stay addresses",
			kp_symtab_error(s->st));
		s->failed = true;
	}
	s->is_kernel = !s->failed && (kp_symtab_find(s->st, "_stext", &sym) ||
				      kp_symtab_find(s->st, "linux_banner", &sym));
	return s;
}

static struct kp_dwarf *
source_dwarf(struct source *s)
{
	char err[512];

	if (!s->dw_tried) {
		s->dw_tried = true;
		s->dw = kp_dwarf_open(s->path, err, sizeof(err));
		if (!s->dw)
			kp_warn("%s; no source lines", err);
	}
	return s->dw;
}

static struct source *
dso_get(const char *path)
{
	struct source *s;

	for (s = dsos; s; s = s->next)
		if (s->path == path)
			return s;
	s = source_new(path, false);
	s->next = dsos;
	dsos = s;
	return s;
}

/* ---- kernel modules: .ko files for -l and -i ---- */

struct kmod {
	const char *name; /* interned, as kallsyms has it */
	struct kp_dwarf *dw;
	struct kmod *next;
};

static struct kmod *kmods;
static char **ko_paths; /* every .ko file under --modules */
static size_t n_ko, cap_ko;
static bool ko_scanned;

/* Saved section addresses: "MODULE SECTION 0xADDRESS" lines. */
struct secline {
	char *mod, *sec;
	uint64_t addr;
};

static struct secline *secs;
static size_t n_secs;
static const char *secs_file;

static int
ko_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *b = path + ftw->base;

	(void)sb;
	if (type == FTW_F && (strstr(b, ".ko") != NULL)) {
		const char *e = strstr(b, ".ko");

		if (strcmp(e, ".ko") && strcmp(e, ".ko.xz") &&
		    strcmp(e, ".ko.gz") && strcmp(e, ".ko.bz2") &&
		    strcmp(e, ".ko.zst"))
			return 0;
		if (n_ko == cap_ko) {
			cap_ko = cap_ko ? cap_ko * 2 : 256;
			ko_paths = kp_xrealloc(ko_paths,
					       cap_ko * sizeof(*ko_paths));
		}
		ko_paths[n_ko++] = kp_xstrdup(path);
	}
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
 * kp-sample --archive saved (DIR/sections):
 *
 *	nf_tables .text 0xffffffffc0a3b000
 */
static void
load_secs(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL, mod[256], sec[256];
	size_t cap = 0, n = 0;
	uint64_t a;

	if (!fp)
		kp_die("%s:", path);
	while (getline(&line, &cap, fp) > 0) {
		if (sscanf(line, "%255s %255s %" SCNx64, mod, sec, &a) != 3)
			continue;
		if (n_secs == n) {
			n = n ? n * 2 : 256;
			secs = kp_xrealloc(secs, n * sizeof(*secs));
		}
		secs[n_secs].mod = kp_xstrdup(mod);
		secs[n_secs].sec = kp_xstrdup(sec);
		secs[n_secs].addr = a;
		n_secs++;
	}
	free(line);
	fclose(fp);
}

static bool
section_address(const char *mod, const char *sec, uint64_t *addr, void *arg)
{
	char path[4096], buf[64];
	size_t i;
	FILE *fp;
	bool ok;

	(void)arg;
	if (secs_file) {
		for (i = 0; i < n_secs; i++)
			if (strcmp(secs[i].mod, mod) == 0 &&
			    strcmp(secs[i].sec, sec) == 0) {
				*addr = secs[i].addr;
				return true;
			}
		return false;
	}
	snprintf(path, sizeof(path), "/sys/module/%s/sections/%s", mod, sec);
	if (!(fp = fopen(path, "r")))
		return false;
	ok = fgets(buf, sizeof(buf), fp) &&
	     kp_parse_u64(buf, strcspn(buf, "\n"), 16, addr) == 0;
	fclose(fp);
	return ok;
}

static struct kp_dwarf *
kmod_dwarf(const char *name)
{
	struct kmod *m;
	char err[512];
	size_t i;

	for (m = kmods; m; m = m->next)
		if (m->name == name)
			return m->dw;
	m = kp_xcalloc(1, sizeof(*m));
	m->name = name;
	m->next = kmods;
	kmods = m;
	if (!ko_scanned) {
		ko_scanned = true;
		if (nftw(opt_modules, ko_visit, 16, FTW_PHYS) != 0)
			kp_warn("--modules %s:", opt_modules);
	}
	for (i = 0; i < n_ko; i++)
		if (ko_matches(ko_paths[i], name))
			break;
	if (i == n_ko) {
		kp_warn("no %s.ko under %s: no source lines for it", name,
			opt_modules);
		return NULL;
	}
	m->dw = kp_dwarf_open_kmod(ko_paths[i], name, section_address, NULL,
				   err, sizeof(err));
	if (!m->dw)
		kp_warn("%s; no source lines for %s", err, name);
	return m->dw;
}

/*
 * The KASLR shift and the build-id check, once the metadata before the
 * first record is known.
 *
 *	# kaslr: 0x1e000000
 *	# stext: 0xffffffff9f000000
 *	# build-id: 48dc540c8b76393804ca8088dbfa7d42911a9444
 */
static void
setup_kernel(void)
{
	const char *v, *how = NULL;
	struct kp_sym a, b;
	char *id, buf[600];

	setup_done = true;
	if (!ks && !kimg && !uelf) {
		/*
		 * No source given: the kallsyms kp-sample --archive saved
		 * with the capture, else the running kernel's.
		 *
		 *	# archive: /var/tmp/kp-archive
		 */
		static char path[4096];

		opt_kallsyms = "/proc/kallsyms";
		if ((v = kp_meta_get("archive")) != NULL) {
			snprintf(path, sizeof(path), "%s/kallsyms", v);
			if (access(path, R_OK) == 0) {
				opt_kallsyms = path;
				kp_warn("kernel symbols from %s (# archive:)",
					path);
			}
		}
		ks = kp_symtab_new();
		if (kp_symtab_load_kallsyms(ks, opt_kallsyms) < 0) {
			/* implicit: user frames may still resolve */
			kp_warn("%s; kernel frames stay addresses",
				kp_symtab_error(ks));
			kp_symtab_free(ks);
			ks = NULL;
		}
	}
	if ((opt_lines || opt_inlines) && (v = kp_meta_get("archive")) != NULL) {
		snprintf(buf, sizeof(buf), "%s/sections", v);
		secs_file = kp_intern_str(buf);
		load_secs(secs_file);
	}
	/* kallsyms of another boot (or machine) gives wrong names */
	if (ks && (v = kp_meta_get("stext")) != NULL &&
	    kp_parse_u64(v, strlen(v), 16, &shift) == 0 &&
	    kp_symtab_find(ks, "_stext", &a) && a.addr != shift) {
		if (!opt_force)
			kp_die("%s: _stext is 0x%" PRIx64 ", the capture's "
			       "0x%" PRIx64 ": not the kallsyms of its boot "
			       "(-k the one saved then, or --force)",
			       opt_kallsyms, a.addr, shift);
		kp_warn("%s: _stext is 0x%" PRIx64 ", the capture's 0x%" PRIx64
			"; used anyway (--force)",
			opt_kallsyms, a.addr, shift);
	}
	shift = 0;
	if (!kimg)
		return;
	if (kelf && (v = kp_meta_get("build-id")) != NULL &&
	    (id = kp_elf_build_id(kelf->path)) != NULL) {
		if (strcmp(id, v) != 0) {
			if (!opt_force)
				kp_die("%s: build-id %s does not match the "
				       "capture's %s (--force to use it anyway)",
				       kelf->path, id, v);
			kp_warn("%s: build-id %s does not match the capture's "
				"%s; used anyway (--force)",
				kelf->path, id, v);
		}
		free(id);
	}
	if (opt_have_shift) {
		shift = opt_shift;
		how = "--kaslr-offset";
	} else if ((v = kp_meta_get("kaslr")) != NULL) {
		if (kp_parse_u64(v, strlen(v), strncmp(v, "0x", 2) ? 10 : 16,
				 &shift) < 0)
			kp_die("bad '# kaslr: %s' metadata", v);
		how = "# kaslr: metadata";
	} else if ((v = kp_meta_get("stext")) != NULL) {
		uint64_t stext;

		if (kp_parse_u64(v, strlen(v), 16, &stext) < 0)
			kp_die("bad '# stext: %s' metadata", v);
		if (!kp_symtab_find(kimg, "_stext", &b))
			kp_die("%s: no _stext symbol for '# stext:'",
			       kimg_path);
		shift = stext - b.addr;
		how = "_stext and # stext: metadata";
	} else if (ks) {
		if (!kp_symtab_find(ks, "_text", &a) ||
		    !kp_symtab_find(kimg, "_text", &b))
			kp_die("no _text in %s and %s for the KASLR shift",
			       opt_kallsyms, kimg_path);
		shift = a.addr - b.addr;
		snprintf(buf, sizeof(buf), "_text in %s", opt_kallsyms);
		how = buf;
	}
	if (how)
		kp_warn("KASLR shift 0x%" PRIx64 " (from %s)", shift, how);
	else
		kp_warn("no KASLR shift known (no --kaslr-offset, '# kaslr:', "
			"'# stext:' or -k): assuming 0");
	/* the image must agree with kallsyms at its other end too */
	if (ks && kp_symtab_find(ks, "_etext", &a) &&
	    kp_symtab_find(kimg, "_etext", &b) && a.addr - b.addr != shift) {
		if (!opt_force)
			kp_die("%s does not match %s: _etext is 0x%" PRIx64
			       " there, 0x%" PRIx64 " shifted here "
			       "(--force to use it anyway)",
			       kimg_path, opt_kallsyms, a.addr, b.addr + shift);
		kp_warn("%s does not match %s; used anyway (--force)",
			kimg_path, opt_kallsyms);
	}
}

/* ---- resolving, each distinct (frame, return address) once ---- */

struct cent {
	const struct kp_frame *key;
	uint32_t start;
	uint16_t n;
	uint8_t ret;
};

static struct cent *cache;
static size_t cache_cap, cache_len;
static const struct kp_frame **pool;
static size_t pool_len, pool_cap;

static size_t
cache_slot(const struct kp_frame *key, bool ret)
{
	/* Fibonacci hashing: the high bits of the product are well mixed */
	uint64_t h = ((uint64_t)(uintptr_t)key + ret) * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 32) & (cache_cap - 1);

	while (cache[i].key && (cache[i].key != key || cache[i].ret != ret))
		i = (i + 1) & (cache_cap - 1);
	return i;
}

static void
cache_grow(void)
{
	struct cent *old = cache;
	size_t i, n = cache_cap;

	cache_cap = n ? n * 2 : 4096;
	cache = kp_xcalloc(cache_cap, sizeof(*cache));
	for (i = 0; i < n; i++)
		if (old[i].key)
			cache[cache_slot(old[i].key, old[i].ret)] = old[i];
	free(old);
}

static void
pool_push(const struct kp_frame *f)
{
	if (pool_len == pool_cap) {
		pool_cap = pool_cap ? pool_cap * 2 : 4096;
		pool = kp_xrealloc(pool, pool_cap * sizeof(*pool));
	}
	pool[pool_len++] = f;
}

enum target { T_NONE, T_KERNEL, T_USER };

static enum target
frame_target(const struct kp_frame *f)
{
	if (!f->module)
		return uelf ? T_USER : T_KERNEL;
	if (kp_module_is_kernel(f->module))
		return T_KERNEL;
	if (f->module[0] == '/')
		return T_USER;
	return T_NONE;
}

static bool
wants_resolving(const struct kp_frame *f)
{
	if (!(f->flags & KP_F_ADDR) || (f->flags & KP_F_INLINE))
		return false;
	if (!f->sym || opt_force)
		return true;
	/* -l and -i add to frames that keep their symbol */
	if ((opt_lines || opt_inlines) && !f->file)
		return true;
	/*
	 * A symbol without an offset: the old perf converter wrote the
	 * address as the offset, which the reader drops.  Look it up.
	 */
	return !(f->flags & KP_F_OFF);
}

/* Push the frames of f resolved to sym (+ DWARF) onto the pool. */
static void
push_resolved(const struct kp_frame *in, const struct kp_sym *sym,
	      const char *module, struct kp_dwarf *dw, uint64_t daddr)
{
	struct kp_srcframe sf[MAX_INLINE];
	struct kp_frame f;
	size_t n = 0, i;

	if (dw && (opt_lines || opt_inlines))
		n = kp_dwarf_lookup(dw, daddr, opt_inlines, sf, MAX_INLINE);
	for (i = 0; n > 0 && i + 1 < n; i++) {
		memset(&f, 0, sizeof(f));
		f.addr = in->addr;
		f.flags = KP_F_ADDR | KP_F_INLINE;
		f.sym = kp_intern_str(sf[i].func ? sf[i].func : "??");
		f.module = module;
		if (opt_lines && sf[i].file) {
			f.file = kp_intern_str(sf[i].file);
			f.line = sf[i].line;
		}
		pool_push(kp_frame_intern(&f));
	}
	memset(&f, 0, sizeof(f));
	f.addr = in->addr;
	f.flags = KP_F_ADDR | (in->flags & KP_F_INEXACT);
	f.module = module;
	if (in->sym && (in->flags & KP_F_OFF) && !opt_force) {
		/* a symbol of its own, kept: -l and -i only add to it */
		f.sym = in->sym;
		f.off = in->off;
		f.size = in->size;
		f.module = in->module ? in->module : module;
		f.flags = in->flags & ~(uint32_t)KP_F_INLINE;
	} else if (sym) {
		f.sym = kp_intern_str(sym->name);
		f.off = sym->off;
		f.size = sym->size;
		f.flags |= KP_F_OFF | KP_F_SIZE;
	} else if (n > 0 && sf[n - 1].func) {
		f.sym = kp_intern_str(sf[n - 1].func);
	} else {
		f = *in;
	}
	if (opt_lines && n > 0 && sf[n - 1].file) {
		f.file = kp_intern_str(sf[n - 1].file);
		f.line = sf[n - 1].line;
	}
	pool_push(kp_frame_intern(&f));
}

static bool
resolve_kernel(const struct kp_frame *in, bool ret)
{
	unsigned fl = ret ? KP_SYMTAB_RETADDR : 0;
	const char *module = in->module ? in->module : mod_kernel;
	struct kp_sym sym;
	uint64_t la;

	if (kimg) {
		la = in->addr - shift;
		if (kp_symtab_lookup(kimg, la, fl, &sym)) {
			push_resolved(in, &sym, module,
				      kelf ? source_dwarf(kelf) : NULL,
				      ret ? la - 1 : la);
			return true;
		}
	}
	if (ks && kp_symtab_lookup(ks, in->addr, fl, &sym)) {
		struct kp_dwarf *dw = NULL;

		if (sym.module) {
			module = kp_intern_str(sym.module);
			if ((opt_lines || opt_inlines) &&
			    strncmp(module, "__builtin", 9) != 0 &&
			    strcmp(module, "bpf") != 0)
				dw = kmod_dwarf(module);
		}
		push_resolved(in, &sym, module, dw,
			      ret ? in->addr - 1 : in->addr);
		return true;
	}
	if (kelf && (opt_lines || opt_inlines) && source_dwarf(kelf)) {
		/* no symbol, but the line table may know the address */
		la = in->addr - shift;
		push_resolved(in, NULL, module, kelf->dw, ret ? la - 1 : la);
		return pool[pool_len - 1] != in;
	}
	return false;
}

static bool
resolve_user(const struct kp_frame *in, bool ret)
{
	unsigned fl = ret ? KP_SYMTAB_RETADDR : 0;
	struct source *s;
	struct kp_sym sym;
	const char *module = in->module;
	uint64_t a = in->addr;
	bool found;

	if (!in->module || (uelf && in->module == uelf->path)) {
		s = uelf;
		if (!module)
			module = uelf->path;
	} else {
		s = dso_get(in->module);
	}
	if (s->failed)
		return false;
	/* SystemTap's module-relative offset: 0x7f.. [/lib/libc.so.6+0x1234] */
	if (!in->sym && (in->flags & KP_F_OFF))
		a = in->off;
	found = kp_symtab_lookup(s->st, a, fl, &sym);
	if (!found && !(opt_lines || opt_inlines))
		return false;
	push_resolved(in, found ? &sym : NULL, module,
		      (opt_lines || opt_inlines) ? source_dwarf(s) : NULL,
		      ret && a ? a - 1 : a);
	return found || pool[pool_len - 1] != in;
}

/* Resolve one frame; returns its frames in pool[*start..*start+n). */
static size_t
resolve(const struct kp_frame *in, bool ret, size_t *start)
{
	size_t i, mark;
	bool ok;

	if (cache_len * 2 >= cache_cap)
		cache_grow();
	i = cache_slot(in, ret);
	if (cache[i].key) {
		*start = cache[i].start;
		return cache[i].n;
	}
	mark = pool_len;
	switch (frame_target(in)) {
	case T_KERNEL:
		ok = resolve_kernel(in, ret);
		break;
	case T_USER:
		ok = resolve_user(in, ret);
		break;
	default:
		ok = false;
	}
	n_distinct++;
	if (!ok) {
		n_unresolved++;
		pool_len = mark;
		pool_push(in);
	}
	cache[i].key = in;
	cache[i].ret = ret;
	cache[i].start = (uint32_t)mark;
	cache[i].n = (uint16_t)(pool_len - mark);
	cache_len++;
	*start = mark;
	return pool_len - mark;
}

/* ---- main ---- */

static void
source_free(struct source *s)
{
	if (!s)
		return;
	kp_symtab_free(s->st);
	kp_dwarf_close(s->dw);
	free(s);
}

static void
free_all(void)
{
	struct source *s, *next;

	for (s = dsos; s; s = next) {
		next = s->next;
		source_free(s);
	}
	if (kelf)
		kimg = NULL; /* kelf's table */
	source_free(kelf);
	source_free(uelf);
	kp_symtab_free(kimg);
	kp_symtab_free(ks);
	free(cache);
	free(pool);
	while (kmods) {
		struct kmod *m = kmods;

		kmods = m->next;
		kp_dwarf_close(m->dw);
		free(m);
	}
	while (n_ko)
		free(ko_paths[--n_ko]);
	free(ko_paths);
	while (n_secs) {
		n_secs--;
		free(secs[n_secs].mod);
		free(secs[n_secs].sec);
	}
	free(secs);
}

static void
load_sources(void)
{
	struct kp_sym sym;

	mod_kernel = kp_intern_str("kernel");
	/* the default, /proc/kallsyms or the archive's: at the first record */
	if (opt_kallsyms) {
		ks = kp_symtab_new();
		if (kp_symtab_load_kallsyms(ks, opt_kallsyms) < 0)
			kp_die("%s", kp_symtab_error(ks));
	}
	if (opt_elf) {
		struct source *s = source_new(opt_elf, true);

		if (s->is_kernel) {
			kelf = s;
			kimg = s->st;
			kimg_path = opt_elf;
			if (opt_sysmap)
				kp_usage_error("-m and -e with a vmlinux: "
					       "give one of them");
		} else {
			uelf = s;
		}
	}
	if (opt_sysmap) {
		kimg = kp_symtab_new();
		kimg_path = opt_sysmap;
		if (kp_symtab_load_sysmap(kimg, opt_sysmap) < 0)
			kp_die("%s", kp_symtab_error(kimg));
		if (!kp_symtab_find(kimg, "_text", &sym) &&
		    !kp_symtab_find(kimg, "_stext", &sym))
			kp_die("%s: no _text or _stext: not a kernel's "
			       "System.map",
			       opt_sysmap);
	}
	if ((opt_lines || opt_inlines) && !kelf && !uelf)
		kp_warn("no -e vmlinux: -l and -i add lines to module and "
			"user frames only");
}

int
main(int argc, char **argv)
{
	enum { OPT_KASLR = 256, OPT_MODULES };
	static char moddir[600];
	struct utsname un;
	static const struct option longopts[] = {
		{ "elf", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "kaslr-offset", required_argument, NULL, OPT_KASLR },
		{ "lines", no_argument, NULL, 'l' },
		{ "modules", required_argument, NULL, OPT_MODULES },
		{ "system-map", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const struct kp_frame **out = NULL;
	size_t ocap = 0, on, i, j, n, start;
	const struct kp_stack *st;
	struct kp_reader *rd;
	struct kp_agg *agg;
	int ch, k;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "e:fhik:lm:", longopts, NULL)) !=
	       -1)
		switch (ch) {
		case 'e':
			opt_elf = optarg;
			break;
		case 'f':
			opt_force = true;
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'i':
			opt_inlines = true;
			break;
		case 'k':
			opt_kallsyms = optarg;
			break;
		case 'l':
			opt_lines = true;
			break;
		case 'm':
			opt_sysmap = optarg;
			break;
		case OPT_MODULES:
			opt_modules = optarg;
			break;
		case OPT_KASLR:
			opt_shift = parse_shift(optarg);
			opt_have_shift = true;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	if (!opt_modules) {
		snprintf(moddir, sizeof(moddir), "/lib/modules/%s",
			 uname(&un) == 0 ? un.release : "");
		opt_modules = moddir;
	}
	load_sources();
	agg = kp_agg_new();
	for (k = 0; k < (argc ? argc : 1); k++) {
		rd = kp_reader_open(argc ? argv[k] : "-");
		while ((st = kp_reader_next(rd)) != NULL) {
			bool prev_kernel = false;
			size_t real = 0;

			if (!setup_done)
				setup_kernel();
			on = 0;
			for (i = 0; i < st->n; i++) {
				const struct kp_frame *f = st->frames[i];
				enum target t = frame_target(f);
				bool ret;

				if (!wants_resolving(f)) {
					n = 1;
					start = SIZE_MAX;
				} else {
					/* the first user frame under kernel
					 * frames is the interrupted pc */
					ret = real > 0 &&
					      !(prev_kernel && t == T_USER);
					n = resolve(f, ret, &start);
				}
				if (!(f->flags & KP_F_INLINE)) {
					real++;
					prev_kernel = t == T_KERNEL;
				}
				if (on + n > ocap) {
					ocap = (on + n) * 2;
					out = kp_xrealloc(out,
							  ocap * sizeof(*out));
				}
				for (j = 0; j < n; j++)
					out[on++] = start == SIZE_MAX ?
							    f :
							    pool[start + j];
			}
			if (kp_agg_add(agg, out, on, st->count) < 0)
				kp_input_skip(kp_reader_input(rd),
					      "count overflows 64 bits when "
					      "added to an identical stack; "
					      "record dropped");
		}
		kp_reader_close(rd);
	}
	kp_write_agg(stdout, agg);
	if (n_unresolved)
		kp_warn("%lu of %lu distinct addresses not resolved",
			n_unresolved, n_distinct);
	free(out);
	kp_agg_free(agg);
	free_all();
	return kp_finish();
}
