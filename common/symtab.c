/*
 * symtab.c - symbol tables: the sorted array, alias choice, lookups,
 * and the kallsyms and System.map loaders.  See symtab.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kp.h"
#include "symtab.h"
#include "symtab_int.h"

#define ARENA_BLOCK (64 * 1024)
#define PAGE 4096ULL
#define NM_BUF (256u << 10)

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

static char *
arena_dup(struct kp_symtab *st, const char *s, size_t len)
{
	struct arena_block *b = st->arena;
	char *p;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;

		b = kp_xmalloc(sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = st->arena;
		st->arena = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

struct kp_symtab *
kp_symtab_new(void)
{
	return kp_xcalloc(1, sizeof(struct kp_symtab));
}

void
kp_symtab_free(struct kp_symtab *st)
{
	struct arena_block *b, *next;
	size_t i;

	if (!st)
		return;
	for (b = st->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	for (i = 0; i < st->nmaps; i++)
		munmap(st->maps[i].p, st->maps[i].len);
	free(st->maps);
	free(st->ents);
	free(st->best);
	free(st->bucket);
	free(st);
}

const char *
kp_symtab_error(const struct kp_symtab *st)
{
	return st->err;
}

void
kp_symtab_seterr(struct kp_symtab *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof(st->err), fmt, ap);
	va_end(ap);
}

size_t
kp_symtab_count(const struct kp_symtab *st)
{
	return st->n;
}


static const char *
module_intern(struct kp_symtab *st, const char *mod, size_t len)
{
	if (!mod)
		return NULL;
	if (st->last_mod && strlen(st->last_mod) == len &&
	    memcmp(st->last_mod, mod, len) == 0)
		return st->last_mod;
	st->last_mod = arena_dup(st, mod, len);
	return st->last_mod;
}

/* A new entry, its name and module unset. */
static struct kp_symtab_ent *
new_ent(struct kp_symtab *st, uint64_t addr, uint64_t size, char type)
{
	struct kp_symtab_ent *e;

	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 4096;
		st->ents = kp_xrealloc(st->ents, st->cap * sizeof(*st->ents));
	}
	e = &st->ents[st->n];
	e->addr = addr;
	e->size = size;
	e->seq = (uint32_t)st->n;
	e->type = type;
	st->n++;
	st->sorted = false;
	return e;
}

static void
add_ent(struct kp_symtab *st, uint64_t addr, uint64_t size, char type,
	const char *name, size_t namelen, const char *mod, size_t modlen)
{
	struct kp_symtab_ent *e = new_ent(st, addr, size, type);

	e->name = arena_dup(st, name, namelen);
	e->module = module_intern(st, mod, modlen);
}

void
kp_symtab_add_kept(struct kp_symtab *st, uint64_t addr, uint64_t size,
		   char type, const char *name)
{
	struct kp_symtab_ent *e = new_ent(st, addr, size, type);

	e->name = name;
	e->module = NULL;
}

void
kp_symtab_add_n(struct kp_symtab *st, uint64_t addr, uint64_t size, char type,
		const char *name, size_t len)
{
	add_ent(st, addr, size, type, name, len, NULL, 0);
}

void
kp_symtab_add(struct kp_symtab *st, uint64_t addr, uint64_t size, char type,
	      const char *name, const char *module)
{
	add_ent(st, addr, size, type, name, strlen(name), module,
		module ? strlen(module) : 0);
}

/*
 * Sort the entries by address, those of one address in load order (by
 * seq: the entries added since the last sort come after the others, and
 * in seq order).  An LSD radix sort, stable, of (address, index) keys,
 * a byte a pass over the bytes in which the addresses differ (an ELF
 * table is in no order: merging, or qsort's comparisons, mispredict
 * every other branch), then the entries moved in place.
 */
struct skey {
	uint64_t addr;
	size_t i;
};

static void
sort_ents(struct kp_symtab *st)
{
	struct skey *a, *b, *t;
	struct kp_symtab_ent tmp;
	uint64_t lo = UINT64_MAX, hi = 0, diff;
	size_t n = st->n, count[256], i, j, k, sh;

	/* in order already (those of one address too: each entry's seq
	 * is above those before it, or a sort put it after them) */
	for (i = 1; i < n && st->ents[i - 1].addr <= st->ents[i].addr; i++)
		;
	if (i >= n)
		return;
	a = kp_xmalloc(n * sizeof(*a));
	b = kp_xmalloc(n * sizeof(*b));
	for (i = 0; i < n; i++) {
		a[i].addr = st->ents[i].addr;
		a[i].i = i;
		lo = a[i].addr < lo ? a[i].addr : lo;
		hi = a[i].addr > hi ? a[i].addr : hi;
	}
	diff = hi - lo;
	for (sh = 0; sh < 64 && diff >> sh; sh += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(a[i].addr - lo) >> sh & 255]++;
		for (i = 0, k = 0; i < 256; i++) {
			j = count[i];
			count[i] = k;
			k += j;
		}
		for (i = 0; i < n; i++)
			b[count[(a[i].addr - lo) >> sh & 255]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	/* entry a[i].i goes to i: in place, a cycle at a time */
	for (i = 0; i < n; i++) {
		if (a[i].i == i)
			continue;
		tmp = st->ents[i];
		for (j = i;; j = k) {
			k = a[j].i;
			a[j].i = j;
			if (k == i) {
				st->ents[j] = tmp;
				break;
			}
			st->ents[j] = st->ents[k];
		}
	}
	free(a);
	free(b);
}

static int
sym_binding(char type)
{
	if (type == 'W' || type == 'w' || type == 'V' || type == 'v')
		return 2; /* weak */
	return isupper((unsigned char)type) ? 1 : 0; /* global : local */
}

static size_t
underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * perf's choose_best_symbol(): true if b is better than a.  esize is
 * the size after the perf-style fixup (0 for all but the last of a run
 * of aliases without a size of their own).
 */
static bool
better(const struct kp_symtab_ent *a, uint64_t asz,
       const struct kp_symtab_ent *b, uint64_t bsz)
{
	int ba = sym_binding(a->type), bb = sym_binding(b->type);
	size_t ua, ub, la, lb;

	if (!asz != !bsz)
		return bsz != 0;
	if ((ba == 2) != (bb == 2))
		return ba == 2;
	if ((ba == 1) != (bb == 1))
		return bb == 1;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ub < ua;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return lb > la;
	return false;
}

static bool
same_module(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return a == b || strcmp(a, b) == 0;
}

/* The size perf gives entry i of the sorted array (symbols__fixup_end). */
static uint64_t
fixup_size(const struct kp_symtab *st, size_t i)
{
	const struct kp_symtab_ent *e = &st->ents[i], *next;

	if (e->size)
		return e->size;
	if (i + 1 == st->n)
		return (e->addr + PAGE) / PAGE * PAGE + PAGE - e->addr;
	next = &st->ents[i + 1];
	if (!same_module(e->module, next->module)) {
		uint64_t end = (e->addr + PAGE + PAGE - 1) / PAGE * PAGE;

		return end - e->addr;
	}
	return next->addr - e->addr;
}

/*
 * A lookup's binary search narrowed to a bucket of addresses: about one
 * bucket a symbol, so that a large table (kallsyms, libLLVM) costs a
 * probe of the bucket array and a search of a few symbols, not twenty
 * steps through memory.
 */
static void
index_buckets(struct kp_symtab *st)
{
	uint64_t span;
	size_t k, i;

	free(st->bucket);
	st->bucket = NULL;
	if (st->nbest < 64 || st->nbest > UINT32_MAX)
		return;
	st->bucket_lo = st->best[0].addr;
	span = st->best[st->nbest - 1].addr - st->bucket_lo;
	for (st->bucket_shift = 0;
	     st->bucket_shift < 63 && span >> st->bucket_shift >= st->nbest;
	     st->bucket_shift++)
		;
	st->nbucket = (size_t)(span >> st->bucket_shift) + 2;
	st->bucket = kp_xmalloc(st->nbucket * sizeof(*st->bucket));
	/* bucket[k]: the first symbol at or after bucket k's start */
	for (k = 0, i = 0; k < st->nbucket; k++) {
		while (i < st->nbest &&
		       (st->best[i].addr - st->bucket_lo) >> st->bucket_shift < k)
			i++;
		st->bucket[k] = (uint32_t)i;
	}
}

void
kp_symtab_sort(struct kp_symtab *st)
{
	size_t i, j, k, nb = 0;

	sort_ents(st);
	free(st->best);
	st->best = kp_xmalloc((st->n ? st->n : 1) * sizeof(*st->best));
	for (i = 0; i < st->n; i = j) {
		size_t win = i;
		uint64_t wsz = fixup_size(st, i);

		for (j = i + 1; j < st->n && st->ents[j].addr == st->ents[i].addr;
		     j++) {
			uint64_t sz = fixup_size(st, j);

			if (better(&st->ents[win], wsz, &st->ents[j], sz)) {
				win = j;
				wsz = sz;
			}
		}
		if (!wsz) {
			/* all aliases sized 0: run to the next address */
			for (k = i; k < j; k++)
				if (fixup_size(st, k) > wsz)
					wsz = fixup_size(st, k);
			if (!wsz)
				wsz = 1;
		}
		st->best[nb].addr = st->ents[win].addr;
		st->best[nb].end = st->ents[win].addr + wsz;
		if (st->best[nb].end < st->best[nb].addr)
			st->best[nb].end = UINT64_MAX;
		st->best[nb].ent = win;
		nb++;
	}
	st->nbest = nb;
	st->sorted = true;
	index_buckets(st);
}

static void
fill(const struct kp_symtab *st, const struct kp_symtab_best *b,
     uint64_t addr, struct kp_sym *sym)
{
	const struct kp_symtab_ent *e = &st->ents[b->ent];

	sym->addr = b->addr;
	sym->size = b->end - b->addr;
	sym->off = addr - b->addr;
	sym->name = e->name;
	sym->module = e->module;
	sym->type = e->type;
}

/* The symbol that holds address a, or NULL. */
static const struct kp_symtab_best *
holding(const struct kp_symtab *st, uint64_t a)
{
	size_t lo = 0, hi = st->nbest, i, tries;

	if (st->bucket && a >= st->bucket_lo) {
		uint64_t k = (a - st->bucket_lo) >> st->bucket_shift;

		/* those before bucket k start at or below a; those after
		 * bucket k above it */
		if (k + 1 < st->nbucket) {
			lo = st->bucket[k];
			hi = st->bucket[k + 1];
		} else {
			lo = st->bucket[st->nbucket - 1];
		}
	}
	/* the last entry with start <= a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->best[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a symbol nested in a larger one may end before a: look back */
	for (i = lo, tries = 0; i-- > 0 && tries < 8; tries++)
		if (a < st->best[i].end)
			return &st->best[i];
	return NULL;
}

bool
kp_symtab_lookup(const struct kp_symtab *st, uint64_t addr, unsigned flags,
		 struct kp_sym *sym)
{
	const struct kp_symtab_best *b;

	if (!st->sorted) {
		/* the caller forgot kp_symtab_sort(): a bug, not bad input */
		kp_die("kp_symtab_lookup on an unsorted table");
	}
	if (!(flags & KP_SYMTAB_RETADDR) || addr == 0) {
		b = holding(st, addr);
	} else {
		/*
		 * A return address is looked up at addr - 1, the call.  But
		 * no call is made from a function's padding (the kernel's
		 * __pfx_NAME, the 16 bytes before NAME): a return address at
		 * NAME's first byte there is a retpoline's (the thunk's
		 * "ret" goes to the target it wrote over its own return
		 * address: write_null from __x86_indirect_thunk_rax), and
		 * names NAME.
		 */
		b = holding(st, addr - 1);
		if (b && b->end == addr &&
		    strncmp(st->ents[b->ent].name, "__pfx_", 6) == 0)
			b = holding(st, addr);
	}
	if (!b)
		return false;
	fill(st, b, addr, sym);
	return true;
}

bool
kp_symtab_find(const struct kp_symtab *st, const char *name,
	       struct kp_sym *sym)
{
	const struct kp_symtab_ent *e, *found = NULL;
	size_t i;

	for (i = 0; i < st->n; i++) {
		e = &st->ents[i];
		if (strcmp(e->name, name) == 0 &&
		    (!found || e->seq < found->seq))
			found = e;
	}
	if (!found)
		return false;
	sym->addr = found->addr;
	sym->size = found->size;
	sym->off = 0;
	sym->name = found->name;
	sym->module = found->module;
	sym->type = found->type;
	if (st->sorted) {
		/* report the size the lookup would use */
		struct kp_sym s;

		if (kp_symtab_lookup(st, found->addr, 0, &s) &&
		    s.addr == found->addr)
			sym->size = s.size;
	}
	return true;
}

static bool
type_wanted(char t)
{
	switch (toupper((unsigned char)t)) {
	case 'T':
	case 'W':
	case 'D':
	case 'B':
		return true;
	}
	return false;
}

/*
 * Hex digits s[0..len), as kp_parse_u64 reads them; at most 16 of them
 * (kallsyms' addresses) without its overflow check, a division a digit.
 */
static int
parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned c;
	size_t i;

	if (len == 0 || len > 16)
		return kp_parse_u64(s, len, 16, out);
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c - '0' < 10)
			v = v << 4 | (c - '0');
		else if ((c | 0x20) - 'a' < 6)
			v = v << 4 | ((c | 0x20) - 'a' + 10);
		else /* "0x...", or not a number */
			return kp_parse_u64(s, len, 16, out);
	}
	*out = v;
	return 0;
}

/*
 * Lines of /proc/kallsyms and System.map, fields separated by one space,
 * the module (kallsyms only) after a tab:
 *
 *	ffffffff81000000 T _stext
 *	ffffffff81e0a7f0 t __pfx_clear_bss
 *	ffffffffc0201000 t ftrace_trampoline	[__builtin__ftrace]
 *	ffffffffc0a3b010 t nft_do_chain	[nf_tables]
 *	0000000000000000 A fixed_percpu_data
 *
 * Addresses are all zero when kptr_restrict hides them.
 */
static int
load_nm(struct kp_symtab *st, const char *path, bool kallsyms)
{
	FILE *fp;
	char *line = NULL, *buf;
	size_t cap = 0, lineno = 0, added = 0, nonzero = 0, n0 = st->n;
	ssize_t len;
	int ret = -1, fd;

	/* a regular file only: a FIFO planted as an archive's kallsyms
	 * would hang the read */
	fd = kp_open_regular(path, 0);
	fp = fd < 0 ? NULL : fdopen(fd, "r");
	if (!fp) {
		kp_symtab_seterr(st, "%s: %s", path, kp_open_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* read in large pieces: stdio's own are the file's block size, a
	 * read(2) every 4 KiB of a 5 MB kallsyms (1,321 of them); glibc
	 * takes a size only with a buffer */
	buf = kp_xmalloc(NM_BUF);
	setvbuf(fp, buf, _IOFBF, NM_BUF);
	while ((len = getline(&line, &cap, fp)) >= 0) {
		char *p = line, *end = line + len, *name, *mod = NULL;
		size_t namelen, modlen = 0;
		uint64_t addr;
		char type;

		lineno++;
		while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
			*--end = '\0';
		if (end == p)
			continue;
		name = memchr(p, ' ', end - p);
		if (!name || parse_hex(p, name - p, &addr) < 0 ||
		    end - name < 4 || name[2] != ' ' || name[3] == ' ' ||
		    name[3] == '\0') {
			kp_symtab_seterr(st, "%s:%zu: not a %s line", path,
					 lineno,
					 kallsyms ? "kallsyms" : "System.map");
			goto out;
		}
		type = name[1];
		name += 3;
		namelen = strcspn(name, "\t ");
		if (name[namelen] == '\t' && kallsyms &&
		    name[namelen + 1] == '[' && end[-1] == ']' &&
		    end - name > (ptrdiff_t)namelen + 3) {
			mod = name + namelen + 2;
			modlen = end - 1 - mod;
		} else if (name + namelen != end) {
			kp_symtab_seterr(st, "%s:%zu: not a %s line", path,
					 lineno,
					 kallsyms ? "kallsyms" : "System.map");
			goto out;
		}
		if (addr)
			nonzero++;
		if (!type_wanted(type))
			continue;
		add_ent(st, addr, 0, type, name, namelen, mod, modlen);
		added++;
	}
	if (ferror(fp)) {
		kp_symtab_seterr(st, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (lineno && !nonzero) {
		kp_symtab_seterr(st,
				 "%s: all addresses are zero (kptr_restrict; "
				 "read it as root)",
				 path);
		goto out;
	}
	if (!added) {
		kp_symtab_seterr(st, "%s: no symbols", path);
		goto out;
	}
	st->err[0] = '\0';
	ret = 0;
out:
	if (ret < 0)
		st->n = n0; /* all of the file or nothing */
	free(line);
	fclose(fp);
	free(buf);
	kp_symtab_sort(st);
	return ret;
}

int
kp_symtab_load_kallsyms(struct kp_symtab *st, const char *path)
{
	return load_nm(st, path ? path : "/proc/kallsyms", true);
}

int
kp_symtab_load_sysmap(struct kp_symtab *st, const char *path)
{
	return load_nm(st, path, false);
}
