/*
 * perfdata_conv.c - perf.data to kp stacks, in one pass: the records of
 * common/perfdata.c feed the process model (procs.h), each sample's
 * callchain is named through the resolver (resolve.h), and the stacks
 * of each event are counted apart, so that the event with the most
 * samples can be kept at the end.
 *
 * The stacks are those perf report and perf script build: the callchain
 * entries in order (the PERF_CONTEXT_* marks switch between kernel and
 * user and are not frames), each address named as perf names it (at the
 * address itself, not at pc - 1: perf 6.1 looks return addresses up as
 * they are), a sample without a callchain counted by its IP.  A sample
 * with a user stack copy (--call-graph dwarf: REGS_USER and STACK_USER)
 * has its user frames unwound from it (common/unwind), after the
 * callchain's, named as perf names unwound frames (its pcs less 1 but
 * the first, with inlined functions: KP_RES_PERF_INLINES).
 */
#include <errno.h>
#include <libiberty/demangle.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conv.h"
#include "internal.h"
#include "offcpu.h"
#include "perfdata.h"
#include "procs.h"
#include "resolve.h"
#include "symtab.h"
#include "unwind.h"

struct fent;
struct namer;

struct pdc {
	const struct kp_pd_opts *o;
	const struct kp_perf_opts *po;
	const char *event; /* the event to keep (NULL: the most samples') */
	struct kp_perf_events *evs; /* the caller's: the event kept */
	struct kp_input *in;
	struct kp_pd *pd;
	struct kp_resolver *res;
	struct kp_procs *procs;
	struct kp_kernel_src ksrc;
	bool kernel_tried;
	char *kallsyms; /* the build-id cache's copy, if used */
	/* what the capture had said of the kernel at its first address,
	 * which its symbols are loaded for (see "naming") */
	bool ksnap_taken;
	struct kp_kernel_src ksnap;
	char *ksnap_build_id;
	/* per event: the stacks of addresses (see "the stacks"), then of
	 * frames */
	struct kp_agg **aggs;
	size_t naggs;
	struct kp_agg *direct; /* the caller's, for event direct_ev ... */
	size_t direct_ev;      /* ... or SIZE_MAX: see kp_perfdata_convert */
	struct kp_conv cv;     /* the stack being built (its addresses) */
	struct kp_agg_late late; /* the stacks built, added to their aggs
				  * two later (kp_agg_late_add) */
	/* the addresses (see "the frame table") */
	struct fslot *ftab;
	size_t fcap, fn;
	struct fent **fchunks;
	struct kp_slots special; /* frame -> its address entry */
	struct kp_slots mkeys; /* of struct mkey (see there) */
	struct kp_slots paths; /* of struct pathent (see path_of) */
	struct want *wants;    /* the addresses of the stack being built */
	size_t nwants, capwants;
	struct name *names;    /* symbol -> name as perf2kp writes it */
	size_t capnames, nnames;
	struct kp_pool pool;   /* the reading side's */
	struct kp_pool npool;  /* the naming side's */
	struct kp_conv ncv;    /* the naming side's scratch (kp_conv_tmp) */
	struct namer *nm;      /* the naming thread, if there is one */
	bool two;	       /* there was one (to_frames takes two too) */
	/* the naming side's: each frame's entry + 1, by frame id, and
	 * whether a frame was two entries' (see to_frames) */
	uint32_t *owner;
	size_t ocap;
	bool shared;
	bool user_dropped; /* --kernel-only left out user frames */
	/* --call-graph dwarf: the user stack copies unwound */
	struct kp_unwind *uw;
	uint64_t *pcs;
	uint64_t not_unwound; /* samples with a stack copy not unwound */
	const char *not_unwound_why; /* the first one's reason */
	/* --off-cpu */
	struct kp_offcpu *off;
	struct kp_sched_switch sw; /* its RAW layout, from tracefs */
	bool sw_loaded;
	int sw_ev;	 /* sched:sched_switch's index, -1 not seen yet */
	uint64_t *words; /* a switch-out's frames, for kp_offcpu_out */
	size_t nwords;
	uint64_t nfed, nbad, last_time;
	unsigned long nsamples; /* samples read */
	/* progress */
	bool tty;
	unsigned long nrec;
	struct timespec last;
	bool progress_shown;
};

/* ---- naming ---- */

/*
 * A frame as perf2kp names perf script's: a C++ symbol of a user file
 * demangled as perf demangles it (libiberty's cplus_demangle without
 * DMGL_PARAMS: "ns::f", not "ns::f(int)"; unless --no-demangle), then
 * cut as stackcollapse-perf.pl cuts it (unless --raw-names).  The name
 * depends on the symbol and on whether the module is the kernel's only:
 * it is made once for each (c->names, keyed by the interned symbol);
 * each frame of an address is made once too (the frame table, below).
 */
struct name {
	const char *sym; /* interned; NULL: a free slot */
	bool kernel;
	const char *to; /* the name written, interned (NULL: none) */
	/* the last frame tidy() made of it, if that was the frame asked
	 * for: with --functions, every address of a function asks for the
	 * same one */
	const struct kp_frame *made;
};

static struct name *
tidy_name(struct pdc *c, const char *sym, bool kernel)
{
	struct name *t;
	uint64_t h = ((uint64_t)(uintptr_t)sym ^ kernel) * 0x9e3779b97f4a7c15ull;
	size_t mask, i, n;
	char *s, *d = NULL;

	if (c->nnames * 4 >= c->capnames * 3) {
		struct name *old = c->names;
		size_t cap = c->capnames;

		c->capnames = cap ? cap * 2 : 4096;
		c->names = kp_xmalloc(c->capnames * sizeof(*c->names));
		memset(c->names, 0, c->capnames * sizeof(*c->names));
		mask = c->capnames - 1;
		for (i = 0; i < cap; i++) {
			size_t j;

			if (!old[i].sym)
				continue;
			j = (((uint64_t)(uintptr_t)old[i].sym ^ old[i].kernel) *
			     0x9e3779b97f4a7c15ull) >> 20 & mask;
			while (c->names[j].sym)
				j = (j + 1) & mask;
			c->names[j] = old[i];
		}
		free(old);
	}
	mask = c->capnames - 1;
	for (i = h >> 20 & mask; (t = &c->names[i])->sym; i = (i + 1) & mask)
		if (t->sym == sym && t->kernel == kernel)
			return t;
	if (!c->o->no_demangle && strncmp(sym, "_Z", 2) == 0 && !kernel)
		d = cplus_demangle(sym, DMGL_NO_OPTS);
	n = strlen(d ? d : sym);
	s = kp_conv_tmp(&c->ncv, n);
	memcpy(s, d ? d : sym, n + 1);
	free(d);
	if (!c->po->raw_names)
		n = kp_conv_tidy_generic(s, n);
	t->sym = sym;
	t->kernel = kernel;
	t->to = n ? kp_intern(s, n) : NULL;
	t->made = NULL;
	c->nnames++;
	return t;
}

static const struct kp_frame *
tidy(struct pdc *c, const struct kp_frame *f)
{
	const struct kp_frame *made;
	struct name *nm;
	struct kp_frame g;

	if (!f->sym || (!c->po->functions && c->po->raw_names &&
			!(f->flags & KP_F_INLINE) &&
			(c->o->no_demangle || strncmp(f->sym, "_Z", 2) != 0)))
		return f;
	g = *f;
	if (c->po->functions)
		kp_conv_function_level(&g);
	if (f->flags & KP_F_INLINE) {
		/* perf script's "(inlined)" frame, as the text path reads it:
		 * no dso, inline only with --inline */
		g.module = NULL;
		if (!c->po->inline_flag)
			g.flags &= ~(uint32_t)KP_F_INLINE;
	}
	nm = tidy_name(c, f->sym, kp_module_is_kernel(f->module));
	g.sym = nm->to;
	if (g.sym == f->sym && g.module == f->module && g.flags == f->flags &&
	    g.addr == f->addr)
		return f;
	if (nm->made && memcmp(nm->made, &g, KP_FRAME_KEY) == 0)
		return nm->made;
	made = kp_conv_intern(&g);
	if (memcmp(made, &g, KP_FRAME_KEY) == 0)
		nm->made = made;
	return made;
}

/*
 * The kernel's symbols, loaded at the first kernel address: --kallsyms,
 * else the copy perf saved in its build-id cache when it recorded
 * (~/.debug/[kernel.kallsyms]/BUILDID/kallsyms, what perf report reads),
 * else /proc/kallsyms; the resolver checks it against the _text of the
 * capture's kernel MMAP record.  What the capture had said of its
 * kernel by then (its _text, its build-id) is what the reading side saw
 * when it met that address (c->ksnap, kernel_snap): the naming side
 * names it later, when the reading side has read on.
 */
static void
kernel_snap(struct pdc *c)
{
	const struct kp_pd_info *info = kp_pd_info(c->pd);

	c->ksnap_taken = true;
	c->ksnap = c->ksrc;
	c->ksnap.kallsyms = c->o->kallsyms;
	if (info->kernel_build_id)
		c->ksnap_build_id = kp_xstrdup(info->kernel_build_id);
	c->ksnap.build_id = c->ksnap_build_id;
}

static void
load_kernel(struct pdc *c)
{
	const char *bid = c->ksnap.build_id;
	int fd;

	c->kernel_tried = true;
	if (!c->ksnap.kallsyms && bid) {
		/* found as perf keeps it (no symbolic link followed), then
		 * read by its name */
		fd = kp_buildid_cache_open("[kernel.kallsyms]", bid,
					   "kallsyms", &c->kallsyms);
		if (fd >= 0) {
			close(fd);
			c->ksnap.kallsyms = c->kallsyms;
		} else if (errno != ENOENT && c->kallsyms) {
			kp_warn("%s: %s; not used", c->kallsyms,
				errno == ELOOP ? "a symbolic link"
					       : kp_open_strerror(errno));
		}
	}
	if (kp_resolver_kernel(c->res, &c->ksnap) < 0)
		kp_warn("%s: %s; kernel frames stay addresses (--kallsyms "
			"names a saved copy)", kp_input_name(c->in),
			kp_resolver_error(c->res));
}

enum { SP_KERNEL, SP_USER, SP_OTHER };

/*
 * ---- the frame table ----
 *
 * The frames of an address, named and tidied, as perf2kp writes them: a
 * table of every address met, keyed by what names it (a kernel address
 * by itself; a user address by its file, the file's build-id and where
 * the file is mapped; an address no mapping holds by itself), so that
 * each is named once and then costs one probe.  A stack's probes are
 * made together, each slot prefetched first: a sample's ten or so
 * frames wait for memory once, not ten times.
 *
 * The reading side (the records, the process model, the stacks) makes
 * an entry for each new address and goes on; the naming side (the
 * resolver: symbol tables, the kernel's, the frames) names the entries
 * in the order they were made, on a second thread when there is one
 * (see "the naming thread"), else at once.  So a stack is first a list
 * of entries (their numbers: see "the stacks"), made frames at the end.
 * An entry is written by the reading side before it is published and
 * its frames by the naming side after: the entries lie in chunks that
 * never move, the table that finds them (slots of key and number) is
 * the reading side's own.  Frames that are not an address's (a process
 * frame, [user], [no stack], an --off-cpu state) have entries too,
 * named when made.
 */

/*
 * The mapping part of a user address's key: the file, its build-id and
 * the mapping's start less its offset, one interned copy per converter,
 * so that a slot holds one pointer for the three and is 32 bytes: two
 * to a cache line, none across two.  A mapping keeps its key
 * (kp_map.key) once made.
 */
struct mkey {
	uint64_t base;
	const char *path; /* interned; NULL: none */
	const char *bid;  /* interned build-id, or NULL */
	uint32_t num;	  /* the converter's 1, 2, 3 ... */
};

#define FENT_NAMED (1u << 31) /* in an entry's kind: frames given */

struct fent {
	uint64_t ip;		/* the address */
	const struct mkey *mk;	/* user: its mapping's key; NULL: none */
	uint32_t kind;		/* (space + 1) << 16 | resolver flags, or
				 * FENT_NAMED */
	uint32_t n;		/* frames (the naming side's) */
	union {
		const struct kp_frame *one;   /* n == 1 */
		const struct kp_frame **many; /* n > 1 */
	} fr;
};
_Static_assert(sizeof(struct fent) == 32, "a frame table entry: 32 bytes");

/* A slot: the address, and its mapping's key and kind in 32 bits (see
 * slot_key): 16 bytes, four to a cache line, the table of perfdata-
 * check.data's 178,000 addresses 4 MiB, not 8. */
struct fslot {
	uint64_t ip;
	uint32_t key; /* 0: free */
	uint32_t id;
};
_Static_assert(sizeof(struct fslot) == 16, "a frame table slot: 16 bytes");

/* Entries by number: chunks of 2^16, at most 2^16 of them (the chunk
 * array made once, so that the naming side reads it while it grows). */
#define FCHUNK_SHIFT 16
#define FCHUNK ((size_t)1 << FCHUNK_SHIFT)
#define FCHUNKS ((size_t)1 << 16)

static inline struct fent *
fent_at(const struct pdc *c, uint32_t id)
{
	return &c->fchunks[id >> FCHUNK_SHIFT][id & (FCHUNK - 1)];
}

/* An address of a stack being built, and its key in the table. */
struct want {
	uint64_t ip, h;
	const struct kp_map *m; /* user: its mapping, if any */
	uint32_t kind;
	uint32_t key;		 /* slot_key's */
	const struct mkey *mk;	 /* the key's mapping */
};

/*
 * A slot's key of an address's mapping key and kind: the mapping's
 * number (0: none) in 24 bits, the space and resolver flags in 8 (the
 * kinds are (space + 1) << 16 with KP_RES_PERF_INLINES or not), never 0.
 */
static inline uint32_t
slot_key(const struct mkey *mk, uint32_t kind)
{
	return (mk ? mk->num : 0) << 8 | (kind >> 16) << 1 |
	       !!(kind & KP_RES_PERF_INLINES);
}

static uint64_t
fent_hash(uint64_t ip, uint32_t key)
{
	uint64_t h = ip ^ (uint64_t)key * 0x9e3779b97f4a7c15ull;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ h >> 32;
}

/* m's key, made (interned in c) and kept in m the first time. */
static const struct mkey *
mkey_of(struct pdc *c, const struct kp_map *m)
{
	struct kp_map *mm = (struct kp_map *)(uintptr_t)m; /* the converter's */
	struct mkey want = { m->start - m->pgoff, m->path, m->build_id, 0 };
	const struct mkey *k;
	struct mkey *nk;
	struct kp_slot *sl;
	uint64_t h;
	size_t mask, i;

	if (m->key[0])
		return m->key[0];
	h = kp_hash(&want, offsetof(struct mkey, num));
	kp_slots_reserve(&c->mkeys, 64);
	mask = c->mkeys.cap - 1;
	for (i = h & mask; (sl = &c->mkeys.tab[i])->p; i = (i + 1) & mask) {
		k = sl->p;
		if (sl->hash == h && k->base == want.base &&
		    k->path == want.path && k->bid == want.bid) {
			mm->key[0] = k;
			return k;
		}
	}
	nk = kp_pool_alloc(&c->pool, sizeof(*nk));
	*nk = want;
	if (c->mkeys.n >= (1u << 24) - 1)
		kp_die("more than %u mappings of files", (1u << 24) - 2);
	nk->num = (uint32_t)c->mkeys.n + 1;
	sl->hash = h;
	sl->p = nk;
	c->mkeys.n++;
	mm->key[0] = nk;
	return nk;
}

static void
ftab_grow(struct pdc *c)
{
	struct fslot *old = c->ftab, *e;
	size_t cap = c->fcap, i, j, mask;

	c->fcap = cap ? cap * 2 : 1u << 14;
	/* on a cache line's start (malloc's of 512 KiB, a mapping's), so
	 * that no slot crosses one */
	c->ftab = kp_table_alloc(c->fcap * sizeof(*c->ftab));
	mask = c->fcap - 1;
	for (i = 0; i < cap; i++) {
		e = &old[i];
		if (!e->key)
			continue;
		j = fent_hash(e->ip, e->key) & mask;
		while (c->ftab[j].key)
			j = (j + 1) & mask;
		c->ftab[j] = *e;
	}
	kp_table_free(old, cap * sizeof(*old));
}

static void name_fent(struct pdc *c, struct fent *e, uint32_t id);
static void namer_publish(struct pdc *c);

/* A new entry, numbered c->fn: the key of w's, or (w NULL) named f. */
static uint32_t
fent_new(struct pdc *c, const struct want *w, const struct kp_frame *f)
{
	uint32_t id = (uint32_t)c->fn;
	struct fent *e;

	if (c->fn >= FCHUNK * FCHUNKS)
		kp_die("more than %zu distinct addresses", FCHUNK * FCHUNKS);
	if ((c->fn & (FCHUNK - 1)) == 0 && !c->fchunks[c->fn >> FCHUNK_SHIFT])
		c->fchunks[c->fn >> FCHUNK_SHIFT] =
			kp_xmalloc(FCHUNK * sizeof(struct fent));
	e = fent_at(c, id);
	if (w) {
		e->ip = w->ip;
		e->mk = w->mk;
		e->kind = w->kind;
		if (w->kind >> 16 == SP_KERNEL + 1 && !c->ksnap_taken)
			kernel_snap(c);
	} else {
		e->ip = 0;
		e->mk = NULL;
		e->kind = FENT_NAMED;
		e->n = 1;
		e->fr.one = f;
	}
	c->fn++;
	if (!c->nm) {
		if (w)
			name_fent(c, e, id); /* one thread: at once */
	} else if ((c->fn & 63) == 0) {
		namer_publish(c);
	}
	return id;
}

/* The entry of frame f (no address's: see above). */
static uint32_t
special(struct pdc *c, const struct kp_frame *f)
{
	uint64_t h = (uint64_t)(uintptr_t)f * 0x9e3779b97f4a7c15ull;
	struct kp_slot *sl;
	size_t mask, i;

	h ^= h >> 29;
	kp_slots_reserve(&c->special, 64);
	mask = c->special.cap - 1;
	for (i = h & mask; (sl = &c->special.tab[i])->p; i = (i + 1) & mask)
		if (sl->hash == h)
			return (uint32_t)(uintptr_t)sl->p - 1;
	sl->hash = h;
	sl->p = (void *)(uintptr_t)(fent_new(c, NULL, f) + 1);
	c->special.n++;
	return (uint32_t)(uintptr_t)sl->p - 1;
}

/* w's key: the address, and its mapping's key if user. */
static void
want_key(struct pdc *c, struct want *w)
{
	w->mk = w->m ? mkey_of(c, w->m) : NULL;
	w->key = slot_key(w->mk, w->kind);
	w->h = fent_hash(w->ip, w->key);
}

/* w's entry number, made (to be named) if new. */
static uint32_t
fent_find(struct pdc *c, const struct want *w)
{
	size_t mask = c->fcap - 1, i;
	struct fslot *e;

	for (i = w->h & mask; (e = &c->ftab[i])->key; i = (i + 1) & mask)
		if (e->ip == w->ip && e->key == w->key)
			return e->id;
	if ((c->fn + 1) * 4 > c->fcap * 3) {
		ftab_grow(c);
		mask = c->fcap - 1;
		for (i = w->h & mask; c->ftab[i].key; i = (i + 1) & mask)
			;
		e = &c->ftab[i];
	}
	e->ip = w->ip;
	e->key = w->key;
	e->id = fent_new(c, w, NULL);
	return e->id;
}

/*
 * The naming side: the frames of entry e, resolved and tidied.  The
 * kernel's symbols are loaded at the first kernel address (load_kernel,
 * with what the capture had said by then: kernel_snap).
 */
/* Frame f is entry id's: noted, and whether another's was f too. */
static void
own(struct pdc *c, const struct kp_frame *f, uint32_t id)
{
	c->owner = kp_grow_for(c->owner, &c->ocap, sizeof(*c->owner), f->id);
	if (!c->owner[f->id])
		c->owner[f->id] = id + 1;
	else if (c->owner[f->id] != id + 1)
		c->shared = true;
}

static void
name_fent(struct pdc *c, struct fent *e, uint32_t id)
{
	const struct kp_frame *fr[KP_RES_MAX];
	struct kp_map m;
	size_t k, n;

	if (e->kind >> 16 == SP_KERNEL + 1) {
		if (!c->kernel_tried)
			load_kernel(c);
		n = kp_resolve_kernel_to(c->res, e->ip, 0, fr);
	} else if (e->mk) {
		memset(&m, 0, sizeof(m));
		m.start = e->mk->base;
		m.end = UINT64_MAX;
		m.path = e->mk->path;
		m.build_id = e->mk->bid;
		n = kp_resolve_user_to(c->res, &m, e->ip, e->kind & 0xffff,
				       fr);
	} else {
		fr[0] = kp_frame_make(e->ip, KP_F_ADDR, NULL, NULL);
		n = 1;
	}
	for (k = 0; k < n; k++) {
		fr[k] = tidy(c, fr[k]);
		own(c, fr[k], id);
	}
	e->n = (uint32_t)n;
	if (n == 1) {
		e->fr.one = fr[0];
	} else {
		e->fr.many = kp_pool_alloc(&c->npool, n * sizeof(*fr));
		memcpy(e->fr.many, fr, n * sizeof(*fr));
	}
}

/* Address ip of space sp (rflags 0, or KP_RES_PERF_INLINES for a user
 * frame unwound from a stack copy) to the stack being built. */
static void
want(struct pdc *c, int sp, uint64_t ip, unsigned rflags)
{
	struct want *w;

	if (c->po->space == KP_SPACE_KERNEL && sp != SP_KERNEL) {
		c->user_dropped |= sp == SP_USER;
		return;
	}
	if (c->po->space == KP_SPACE_USER && sp == SP_KERNEL)
		return;
	if (c->nwants == c->capwants) {
		c->capwants = c->capwants ? c->capwants * 2 : 256;
		c->wants = kp_xrealloc(c->wants,
				       c->capwants * sizeof(*c->wants));
	}
	w = &c->wants[c->nwants++];
	w->ip = ip;
	w->kind = (uint32_t)(sp + 1) << 16 | rflags;
	w->m = NULL;
}

/*
 * ---- the stacks ----
 *
 * A stack is built as the numbers of its entries (each one more, as a
 * pointer: a kp_agg holds pointers and never reads what they point to),
 * counted in the event's aggregation as they come; at the end each is
 * made its frames, the entries' in order, and counted again in an
 * aggregation of frames, in the order first met (two lists of entries
 * can name the same frames: --functions names every address of a
 * function alike).
 */
static inline void
push_id(struct pdc *c, uint32_t id)
{
	kp_conv_push(&c->cv, (const struct kp_frame *)(uintptr_t)(id + 1));
}

/* The entries of the wanted addresses of sample r to c->cv, in order. */
static void
push_wants(struct pdc *c, const struct kp_pd_rec *r)
{
	const struct kp_proc *p = NULL;
	struct want *w;
	bool found = false;
	size_t i;

	if (!c->fcap)
		ftab_grow(c);
	for (i = 0; i < c->nwants; i++) {
		w = &c->wants[i];
		if (w->kind >> 16 == SP_USER + 1) {
			if (!found) {
				p = kp_procs_find(c->procs, r->pid);
				found = true;
			}
			w->m = p ? kp_proc_map_back(p, w->ip) : NULL;
		}
		want_key(c, w);
		__builtin_prefetch(&c->ftab[w->h & (c->fcap - 1)]);
	}
	for (i = 0; i < c->nwants; i++)
		push_id(c, fent_find(c, &c->wants[i]));
	c->nwants = 0;
}

/* The process frame of --comm, --pid, --tid: "comm-PID/TID". */
static void
push_proc(struct pdc *c, const struct kp_pd_rec *r)
{
	struct kp_proc *p = kp_procs_find(c->procs, r->pid);
	/* perf's name of the idle task, which no COMM record names */
	const char *comm = p && p->comm ? p->comm
			   : r->pid == 0 ? "swapper" : "[unknown]";
	char buf[64];
	size_t n, k, i;
	char *t;

	n = c->po->proc == KP_PROC_TID   ? (size_t)snprintf(buf, sizeof(buf),
					     "-%u/%u", r->pid, r->tid)
	    : c->po->proc == KP_PROC_PID ? (size_t)snprintf(buf, sizeof(buf),
							    "-%u", r->pid)
					 : 0;
	k = strlen(comm);
	t = kp_conv_tmp(&c->cv, k + n);
	memcpy(t, comm, k);
	for (i = 0; i < k; i++)
		if (t[i] == ' ' || t[i] == '\t')
			t[i] = '_';
	memcpy(t + k, buf, n);
	push_id(c, special(c, kp_conv_intern(&(struct kp_frame){
				      .sym = kp_intern(t, k + n) })));
}

/*
 * The user frames of a sample with a stack copy, unwound from it as perf
 * unwinds them; false if there are none.
 */
static bool
push_unwound(struct pdc *c, const struct kp_pd_rec *r)
{
	struct kp_unwind_regs u = {
		.pid = r->pid, .abi = r->regs_abi,
		.mask = kp_pd_attr(c->pd, (size_t)r->ev)->sample_regs_user,
		.regs = r->regs, .nregs = r->nregs,
		.stack = r->stack, .size = r->stack_dyn,
	};
	const char *why;
	size_t n, i;

	if (c->po->space == KP_SPACE_KERNEL) {
		c->user_dropped = true;
		return false;
	}
	if (!c->uw) {
		c->uw = kp_unwind_new(c->procs, kp_pd_info(c->pd)->arch);
		c->pcs = kp_xmalloc(KP_UNWIND_MAX * sizeof(*c->pcs));
	}
	n = kp_unwind_user(c->uw, &u, c->pcs, KP_UNWIND_MAX, &why);
	if (n == 0) {
		if (!c->not_unwound++)
			c->not_unwound_why = why;
		return false;
	}
	for (i = 0; i < n; i++)
		want(c, SP_USER, c->pcs[i], KP_RES_PERF_INLINES);
	return true;
}

/* The stack of sample r in c->cv, as perf names it. */
static void
stack(struct pdc *c, const struct kp_pd_rec *r)
{
	uint64_t i, ip;
	int sp, first;
	bool any = false;

	if ((size_t)r->ev >= c->naggs) {
		c->aggs = kp_xrealloc(c->aggs, ((size_t)r->ev + 1) *
						       sizeof(*c->aggs));
		for (; c->naggs <= (size_t)r->ev; c->naggs++)
			c->aggs[c->naggs] = kp_agg_new();
	}
	first = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
				PERF_RECORD_MISC_KERNEL
			? SP_KERNEL
		: (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
				PERF_RECORD_MISC_USER
			? SP_USER
			: SP_OTHER;
	sp = first;
	c->cv.n = 0;
	c->nwants = 0;
	c->user_dropped = false;
	for (i = 0; i < r->nchain; i++) {
		ip = r->chain[i];
		if (ip < PERF_CONTEXT_MAX) {
			want(c, sp, ip, 0);
			any = true;
			continue;
		}
		if (ip == PERF_CONTEXT_KERNEL)
			sp = SP_KERNEL;
		else if (ip == PERF_CONTEXT_USER)
			sp = SP_USER;
		else if (ip == PERF_CONTEXT_HV || ip == PERF_CONTEXT_GUEST ||
			 ip == PERF_CONTEXT_GUEST_KERNEL ||
			 ip == PERF_CONTEXT_GUEST_USER)
			sp = SP_OTHER;
		else {
			/* a chain perf cannot parse: counted by its IP */
			c->nwants = 0;
			any = false;
			break;
		}
	}
	if (i == r->nchain && r->regs_abi && r->stack_dyn)
		any |= push_unwound(c, r);
	if (!any)
		want(c, first, r->ip, 0);
	push_wants(c, r);
	if (c->cv.n == 0 && c->user_dropped) /* user time, as kp-sample names it */
		push_id(c, special(c, kp_frame_make(0, 0, KP_USER_FRAME, NULL)));
	if (c->po->proc != KP_PROC_NONE)
		push_proc(c, r);
	if (c->cv.n == 0) /* all its frames filtered out, as perf2kp says */
		push_id(c, special(c, kp_frame_make(0, 0, "[no stack]", NULL)));
}

static void
sample(struct pdc *c, const struct kp_pd_rec *r)
{
	uint64_t weight;

	if (r->ev < 0)
		return;
	stack(c, r);
	weight = c->po->period ? (r->has_period ? r->period : 1) : 1;
	if (weight == 0) {
		c->cv.n = 0;
		return;
	}
	kp_agg_late_add(&c->late, c->aggs[r->ev], c->cv.frames, c->cv.n,
			weight);
	c->cv.n = 0;
}

/* ---- --off-cpu: sched:sched_switch samples to waits ---- */

/* A wait ended: the frames its task left with count its nanoseconds. */
static void
on_span(const struct kp_offcpu_span *sp, void *arg)
{
	struct pdc *c = arg;
	char name[8];
	size_t i;

	c->cv.n = 0;
	if (sp->ns == 0)
		return;
	for (i = 0; i < sp->n; i++)
		kp_conv_push(&c->cv,
			     (const struct kp_frame *)(uintptr_t)sp->ips[i]);
	if (c->o->state) {
		snprintf(name, sizeof(name), "[%c]", sp->state ? sp->state : '?');
		push_id(c, special(c, kp_frame_make(0, 0, name, NULL)));
	}
	kp_agg_late_add(&c->late, c->aggs[c->sw_ev], c->cv.frames, c->cv.n,
			sp->ns);
	c->cv.n = 0;
}

/*
 * A sched:sched_switch sample: prev left the CPU with the sample's
 * stack (named now, while its maps are those of the switch, and kept as
 * frame pointers in kp_offcpu's words) and next ran.  Without -a the
 * capture holds only the followed tasks' switch-outs, so a task's own
 * next switch-out, or its EXIT, is also when it ran again.  The reader
 * gives records in time order: every event before this one is fed.
 */
static void
offcpu_sample(struct pdc *c, const struct kp_pd_rec *r)
{
	struct kp_pd_event *e;
	char err[512];
	uint32_t prev, next;
	uint64_t state;
	size_t i;

	if (c->sw_ev < 0 && r->ev >= 0) {
		e = kp_pd_event(c->pd, (size_t)r->ev);
		if (e->attr.type == PERF_TYPE_TRACEPOINT &&
		    strcmp(e->name, "sched:sched_switch") == 0)
			c->sw_ev = r->ev;
	}
	if (r->ev < 0 || r->ev != c->sw_ev)
		return;
	if (!c->sw_loaded) {
		if (kp_sched_switch_layout(&c->sw, err, sizeof(err)) < 0)
			kp_die("--off-cpu: %s", err);
		c->sw_loaded = true;
	}
	if (!r->raw || kp_sched_switch_decode(&c->sw, r->raw, r->raw_size,
					      &prev, &state, &next) < 0) {
		c->nbad++;
		return;
	}
	stack(c, r);
	if (c->cv.n > c->nwords) {
		c->nwords = c->cv.n;
		c->words = kp_xrealloc(c->words, c->nwords * sizeof(*c->words));
	}
	for (i = 0; i < c->cv.n; i++)
		c->words[i] = (uintptr_t)c->cv.frames[i];
	kp_offcpu_in(c->off, r->time, prev);
	kp_offcpu_out(c->off, r->time, r->pid, prev, kp_offcpu_state(state),
		      c->words, c->cv.n);
	c->cv.n = 0;
	if (next != 0)
		kp_offcpu_in(c->off, r->time, next);
	if (++c->nfed % 4096 == 0)
		kp_offcpu_flush(c->off, r->time, on_span, c);
}

/* ---- the records ---- */

static void
progress(struct pdc *c, bool end)
{
	struct timespec now;
	uint64_t done, total;

	if (!c->tty || (!end && ++c->nrec % 16384))
		return;
	if (end) {
		if (c->progress_shown)
			fprintf(stderr, "\r\033[K");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - c->last.tv_sec < 1 && c->progress_shown)
		return;
	if (!c->progress_shown)
		c->last = now;
	if (now.tv_sec == c->last.tv_sec && !c->progress_shown &&
	    c->nrec < 65536)
		return;
	c->last = now;
	c->progress_shown = true;
	kp_pd_progress(c->pd, &done, &total);
	if (total)
		fprintf(stderr, "\r%s: %s: %llu%% (%lu records)", kp_progname,
			kp_input_name(c->in),
			(unsigned long long)(done * 100 / total), c->nrec);
	else
		fprintf(stderr, "\r%s: %s: %llu MB (%lu records)", kp_progname,
			kp_input_name(c->in),
			(unsigned long long)(done >> 20), c->nrec);
}

/*
 * An executable mapping of memory no file backs, as perf's map__new
 * (util/map.c) tells it: anonymous memory (is_anon_memory: "//anon",
 * "/dev/zero...", "/anon_hugepage...", or MAP_HUGETLB) or the heap, the
 * stack and SysV shared memory (is_no_dso_memory: "[heap]", "[stack...",
 * "/SYSV...").  perf names such a mapping after the JIT symbol file of
 * the process that made it, "/tmp/perf-PID.map", and looks its
 * addresses up as they are (identity__map_ip): perf script prints
 * "55f2cee001c8 [unknown] (/tmp/perf-27524.map)".  A memfd, a file
 * deleted while mapped ("... (deleted)") and "[anon:NAME]" are not such
 * memory to perf: they keep their names and file offsets.
 */
static bool
perf_anon(const char *p)
{
	return strcmp(p, "//anon") == 0 || strncmp(p, "/dev/zero", 9) == 0 ||
	       strncmp(p, "/anon_hugepage", 14) == 0 ||
	       strncmp(p, "[stack", 6) == 0 || strncmp(p, "/SYSV", 5) == 0 ||
	       strcmp(p, "[heap]") == 0;
}

/*
 * A mapping's path as its MMAP record names it, and what record() makes
 * of it: the path and its build-id (the header's) interned, or that the
 * path maps nothing (none, or a name that would not stay one kp line: a
 * control character) or names memory no file backs (perf_anon).  A
 * system-wide capture maps the same files again and again
 * (perfdata-check.data: 55,766 MMAP2 records of 265 paths), and each
 * record took a scan of its path, perf_anon's compares, a look-up in the
 * build-id table and two in the shared string table (under its lock
 * while two threads run): now a hash and a look-up in a table of
 * this converter's.
 */
enum { PATH_FILE, PATH_NONE, PATH_ANON };

struct pathent {
	const char *path; /* interned */
	const char *bid;  /* interned; NULL: none in the header */
	size_t nbid;	  /* kp_pd_nbuild_ids when bid was looked up */
	int kind;	  /* PATH_* */
};

static const struct pathent *
path_of(struct pdc *c, const char *path)
{
	size_t len = strlen(path), mask, i;
	uint64_t h = kp_hash(path, len);
	struct pathent *e;
	struct kp_slot *sl;
	const char *t, *bid;

	kp_slots_reserve(&c->paths, 256);
	mask = c->paths.cap - 1;
	for (i = h & mask; (sl = &c->paths.tab[i])->p; i = (i + 1) & mask) {
		e = sl->p;
		if (sl->hash == h && kp_intern_is(e->path, path, len))
			goto found;
	}
	e = kp_pool_alloc(&c->pool, sizeof(*e));
	e->path = kp_intern(path, len);
	e->bid = NULL;
	e->nbid = SIZE_MAX;
	e->kind = len ? PATH_FILE : PATH_NONE;
	for (t = path; *t; t++)
		if ((unsigned char)*t < 0x20)
			e->kind = PATH_NONE;
	if (e->kind == PATH_FILE && perf_anon(path))
		e->kind = PATH_ANON;
	sl->hash = h;
	sl->p = e;
	c->paths.n++;
found:
	/* a pipe's build-ids come as records: asked again after more */
	if (e->kind == PATH_FILE && e->nbid != kp_pd_nbuild_ids(c->pd)) {
		e->nbid = kp_pd_nbuild_ids(c->pd);
		bid = kp_pd_build_id(c->pd, path);
		e->bid = bid ? kp_intern_str(bid) : NULL;
	}
	return e;
}

static void
record(struct pdc *c, const struct kp_pd_rec *r)
{
	const struct pathent *pe;
	char jit[32];

	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		if (c->off)
			offcpu_sample(c, r);
		else
			sample(c, r);
		break;
	case PERF_RECORD_COMM:
		kp_procs_comm(c->procs, r->pid, r->tid, r->comm, r->comm_len,
			      r->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_FORK:
		kp_procs_fork(c->procs, r->pid, r->ppid, r->tid, r->ptid);
		break;
	case PERF_RECORD_EXIT:
		if (c->off && r->time)
			kp_offcpu_in(c->off, r->time, r->tid);
		kp_procs_exit(c->procs, r->pid, r->tid);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (r->pid == (uint32_t)-1) {
			/* the kernel: "[kernel.kallsyms]_text", pgoff _text */
			if (strncmp(r->path, "[kernel.kallsyms]", 17) == 0 &&
			    !c->ksrc.have_text) {
				c->ksrc.have_text = true;
				c->ksrc.text = r->pgoff;
			}
			break;
		}
		if (r->type == PERF_RECORD_MMAP2 ? !(r->prot & 4 /* PROT_EXEC */)
		    : (r->misc & PERF_RECORD_MISC_MMAP_DATA))
			break;
		/* a name that would not stay one kp line, or none (not a
		 * file perf could name either), maps nothing */
		pe = path_of(c, r->path);
		if (pe->kind == PATH_NONE)
			break;
		if (pe->kind == PATH_ANON ||
		    (r->type == PERF_RECORD_MMAP2 && (r->flags & 0x40000))) {
			/* perf's name for code in memory no file backs (a
			 * JIT's, or MAP_HUGETLB), at the address itself */
			snprintf(jit, sizeof(jit), "/tmp/perf-%d.map",
				 (int)r->pid);
			kp_procs_mmap(c->procs, r->pid, r->start, r->len,
				      r->start, jit, NULL);
			break;
		}
		kp_procs_mmap_interned(c->procs, r->pid, r->start, r->len,
				       r->pgoff, pe->path,
				       r->build_id[0] ? kp_intern_str(r->build_id)
						      : pe->bid);
		break;
	default:
		break;
	}
}

/* ---- the end: the event kept, metadata ---- */

static bool
event_is(const char *name, const char *want)
{
	size_t n = strlen(want);

	/* "cpu-clock" names "cpu-clock:pppH" too */
	return strcmp(name, want) == 0 ||
	       (strncmp(name, want, n) == 0 && name[n] == ':' &&
		!strchr(want, ':'));
}

/*
 * Without --event, the event kept is the one with the most samples (the
 * first of equals), but perf's dummy event, which cannot sample (a
 * malformed file may say it did), never before one that did.
 */
static bool
prefer(const struct kp_pd_event *e, const struct kp_pd_event *keep)
{
	if (!keep)
		return true;
	if (e->dummy != keep->dummy && e->nsamples && keep->nsamples)
		return !e->dummy;
	return e->nsamples > keep->nsamples;
}

static void
finish(struct pdc *c, struct kp_agg *agg)
{
	const struct kp_pd_info *info = kp_pd_info(c->pd);
	struct kp_pd_event *e, *keep = NULL;
	char *list = NULL;
	size_t i, len = 0, nlisted = 0;
	int ik = -1;

	kp_agg_late_end(&c->late); /* --off-cpu's last waits */
	for (i = 0; i < kp_pd_nevents(c->pd); i++) {
		e = kp_pd_event(c->pd, i);
		if (e->dummy && e->nsamples == 0)
			continue;
		if (c->event ? event_is(e->name, c->event) : prefer(e, keep)) {
			if (!c->event || !keep) {
				keep = e;
				ik = (int)i;
			}
		}
	}
	for (i = 0; i < kp_pd_nevents(c->pd); i++) {
		char buf[64];

		e = kp_pd_event(c->pd, i);
		if (e->dummy && e->nsamples == 0)
			continue;
		/* "cpu-clock 9406 samples, page-faults 1733" */
		snprintf(buf, sizeof(buf), " %llu%s",
			 (unsigned long long)e->nsamples,
			 nlisted ? "" : e->nsamples == 1 ? " sample" : " samples");
		list = kp_xrealloc(list, len + strlen(e->name) + strlen(buf) + 3);
		len += (size_t)sprintf(list + len, "%s%s%s", len ? ", " : "",
				       e->name, buf);
		nlisted++;
	}
	if (c->event && !keep)
		kp_warn("%s: no event %s in it (%s)", kp_input_name(c->in),
			c->event, list ? list : "no events");
	else if (nlisted > 1 && keep)
		kp_warn("%s: %s: kept %s%s", kp_input_name(c->in), list,
			keep->name, c->event ? "" : "; --event to choose");
	free(list);
	if (keep && (size_t)ik < c->naggs && c->aggs[ik] != agg)
		kp_agg_add_agg(agg, c->aggs[ik]);
	if (keep) {
		kp_perf_kept(c->evs, keep->name, keep->nsamples, agg);
		kp_meta_set("samples", "%llu",
			    (unsigned long long)keep->nsamples);
		if (keep->attr.freq)
			kp_meta_set("frequency", "%llu",
				    (unsigned long long)keep->attr.sample_freq);
		else
			kp_meta_set("period", "%llu",
				    (unsigned long long)keep->attr.sample_period);
	}
	kp_meta_set("source", "perf.data");
	if (info->hostname && *info->hostname)
		kp_meta_set("hostname", "%s", info->hostname);
	if (info->osrelease && *info->osrelease)
		kp_meta_set("kernel", "%s", info->osrelease);
	if (info->kernel_build_id && *info->kernel_build_id)
		kp_meta_set("build-id", "%s", info->kernel_build_id);
	if (info->nrcpus_online)
		kp_meta_set("cpus", "%u", info->nrcpus_online);
	if (info->cmdline && *info->cmdline)
		kp_meta_set("command", "%s", info->cmdline);
	kp_meta_set("lost", "%llu",
		    (unsigned long long)(info->lost + info->lost_samples));
	kp_meta_set("throttled", "%llu", (unsigned long long)info->throttled);
	if (kp_pd_unknown(c->pd))
		kp_warn("%s: %llu samples of no event the header names "
			"(skipped, as perf skips them)", kp_input_name(c->in),
			(unsigned long long)kp_pd_unknown(c->pd));
}

/*
 * ---- the naming thread ----
 *
 * A big capture is read and named at once on two threads: this one (the
 * reading side) reads the records, keeps the process model and builds
 * the stacks of entries (see "the frame table"), and a second (the
 * naming side) names each new entry as it is made, in the order made,
 * loading the symbol tables and the kernel's as they are first wanted.
 * Neither waits for the other but at the end, when the stacks are made
 * frames (see "the stacks").  On a system-wide capture of a test suite
 * (perfdata-check.data) the reading side is the slower, the naming side
 * busy a third of its time: perf2kp takes 0.69 of one thread's time,
 * where two halves of the capture, each read and named on a thread of
 * its own (the second reading the first's part again to know its
 * processes), took 0.74.  Handing the stacks to the naming side to
 * count took longer (the 21 MB of them moving between the two CPUs'
 * caches).
 *
 * Output, messages and exit status are one thread's, which names an
 * entry as soon as it is made: the messages of both sides (kp_warn
 * while they run) are kept, each with where it was said (the naming
 * side's at the entry it names, the reading side's after the entries
 * made by then), and said in that order at the end; a fatal error of
 * either (kp_die) ends it all there, what came later not said.
 */
struct said {
	uint64_t at; /* entry << 1, | 1 for the naming side's */
	size_t seq;
	char *msg;   /* NULL: out of memory */
};

struct namer {
	struct kp_trap trap;  /* the naming thread's (first: its address) */
	struct kp_trap rtrap; /* the reading side's while the two run */
	struct pdc *c;
	pthread_t th;
	size_t published; /* entries made, for the naming side (atomic) */
	size_t named;	  /* entries named (the naming side's) */
	bool over;	  /* the reading side has made its last (atomic) */
	bool died, rdied; /* a side met kp_die ... */
	uint64_t died_at, rdied_at; /* ... there (as said.at) */
	jmp_buf died_jmp, rdied_jmp;
	pthread_mutex_t mu; /* the messages */
	struct said *said;
	size_t nsaid;
};

static void
keep_said(struct namer *nm, uint64_t at, char *msg)
{
	pthread_mutex_lock(&nm->mu);
	if ((nm->nsaid & (nm->nsaid - 1)) == 0)
		nm->said = kp_xrealloc(nm->said, (nm->nsaid ? nm->nsaid * 2 : 1) *
							 sizeof(*nm->said));
	nm->said[nm->nsaid].at = at;
	nm->said[nm->nsaid].seq = nm->nsaid;
	nm->said[nm->nsaid++].msg = msg;
	pthread_mutex_unlock(&nm->mu);
}

static void
namer_warn(struct kp_trap *t, char *msg)
{
	struct namer *nm = (struct namer *)t;

	keep_said(nm, (uint64_t)nm->named << 1 | 1, msg);
}

static void
namer_die(struct kp_trap *t)
{
	struct namer *nm = (struct namer *)t;

	nm->died = true;
	nm->died_at = (uint64_t)nm->named << 1 | 1;
	kp_frame_release();
	longjmp(nm->died_jmp, 1);
}

static void
reader_warn(struct kp_trap *t, char *msg)
{
	struct namer *nm = (struct namer *)((char *)t -
					    offsetof(struct namer, rtrap));

	keep_said(nm, (uint64_t)nm->c->fn << 1, msg);
}

static void
reader_die(struct kp_trap *t)
{
	struct namer *nm = (struct namer *)((char *)t -
					    offsetof(struct namer, rtrap));

	nm->rdied = true;
	nm->rdied_at = (uint64_t)nm->c->fn << 1;
	kp_frame_release();
	longjmp(nm->rdied_jmp, 1);
}

/* The entries made so far, for the naming side. */
static void
namer_publish(struct pdc *c)
{
	__atomic_store_n(&c->nm->published, c->fn, __ATOMIC_RELEASE);
}

static inline void
cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* The naming side's loop: each entry named as it is published. */
static void
name_all(struct namer *nm)
{
	struct pdc *c = nm->c;
	struct fent *e;
	unsigned spins = 0;
	size_t n;

	for (;;) {
		n = __atomic_load_n(&nm->published, __ATOMIC_ACQUIRE);
		if (nm->named < n) {
			for (; nm->named < n; nm->named++) {
				e = fent_at(c, (uint32_t)nm->named);
				if (!(e->kind & FENT_NAMED))
					name_fent(c, e, (uint32_t)nm->named);
			}
			spins = 0;
			continue;
		}
		if (__atomic_load_n(&nm->over, __ATOMIC_ACQUIRE) &&
		    nm->named == __atomic_load_n(&nm->published,
						 __ATOMIC_ACQUIRE))
			break;
		/* caught up: spin a while, then let the reading side run */
		if (++spins < 2000)
			cpu_pause();
		else
			sched_yield();
	}
}

static void *
namer_main(void *arg)
{
	struct namer *nm = arg;

	kp_trap = &nm->trap;
	if (setjmp(nm->died_jmp) == 0)
		name_all(nm);
	kp_trap = NULL;
	return NULL;
}

/* A naming thread for c, if its input is worth one (and the machine
 * has a second CPU): true if it runs. */
static bool
namer_start(struct pdc *c)
{
	const struct kp_pd_opts *o = c->o;
	uint64_t from, total;
	struct namer *nm;

	if (!o->split_min || (o->split_min > 1 && kp_cpus() < 2))
		return false;
	kp_pd_progress(c->pd, &from, &total);
	if (!kp_pd_pipe(c->pd) && o->split_min > 1 &&
	    kp_pd_data_end(c->pd) - from < o->split_min)
		return false;
	nm = kp_xcalloc(1, sizeof(*nm));
	nm->trap.warn = namer_warn;
	nm->trap.die = namer_die;
	nm->rtrap.warn = reader_warn;
	nm->rtrap.die = reader_die;
	nm->c = c;
	pthread_mutex_init(&nm->mu, NULL);
	c->nm = nm;
	c->two = true;
	kp_intern_shared = true;
	if (pthread_create(&nm->th, NULL, namer_main, nm) != 0) {
		kp_intern_shared = false;
		pthread_mutex_destroy(&nm->mu);
		free(nm);
		c->nm = NULL;
		c->two = false;
		return false;
	}
	return true;
}

static int
said_order(const void *a, const void *b)
{
	const struct said *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The naming thread joined: what both sides said, said in order (to a
 * fatal error, which ends the program there). */
static void
namer_end(struct pdc *c)
{
	struct namer *nm = c->nm;
	uint64_t stop = UINT64_MAX;
	size_t i;

	namer_publish(c);
	__atomic_store_n(&nm->over, true, __ATOMIC_RELEASE);
	pthread_join(nm->th, NULL);
	kp_intern_shared = false;
	if (nm->died)
		stop = nm->died_at;
	if (nm->rdied && nm->rdied_at < stop)
		stop = nm->rdied_at;
	if (nm->nsaid)
		qsort(nm->said, nm->nsaid, sizeof(*nm->said), said_order);
	for (i = 0; i < nm->nsaid; i++) {
		if (nm->said[i].at <= stop) {
			if (nm->said[i].msg)
				kp_warn("%s", nm->said[i].msg);
			else
				kp_warn("out of memory");
		}
		free(nm->said[i].msg);
	}
	free(nm->said);
	if (c->o->split_trace)
		fprintf(stderr, "%s: %s: %zu addresses named on a second "
			"thread\n", kp_progname, kp_input_name(c->in),
			nm->named);
	if (stop != UINT64_MAX)
		exit(KP_EXIT_FATAL); /* what kp_die would have done */
	pthread_mutex_destroy(&nm->mu);
	free(nm);
	c->nm = NULL;
}

/* The records of c->pd to their end (0) or an error (-1). */
static int
records(struct pdc *c, struct kp_pd_rec *r)
{
	int st;

	while ((st = kp_pd_next(c->pd, r)) > 0) {
		if (r->time > c->last_time)
			c->last_time = r->time;
		c->nsamples += r->type == PERF_RECORD_SAMPLE;
		record(c, r);
		progress(c, false);
	}
	kp_agg_late_end(&c->late);
	return st;
}

/* records() with the naming thread, if there is one, to its end. */
static int
scan(struct pdc *c, struct kp_pd_rec *r)
{
	struct namer *nm = c->nm;
	volatile int st = -1;

	if (!nm)
		return records(c, r);
	if (setjmp(nm->rdied_jmp) == 0) {
		kp_trap = &nm->rtrap;
		st = records(c, r);
	}
	kp_trap = NULL;
	namer_end(c);
	return st;
}

/*
 * Each event's stacks of entries made stacks of frames (see "the
 * stacks"), the kept event's into the caller's aggregation.  Where no
 * frame was two entries' (a special one too, checked here), distinct
 * lists of entries make distinct stacks (each frame tells its entry),
 * and each is added without a look-up (kp_agg_append): on perfdata-
 * check.data, 117,000 stacks of 178,000 entries, a third of the time.
 */
/* Stacks [from, to) of ids made frames (cv's scratch) and counted in
 * fr, each appended (distinct) or looked up (late: l). */
static void
frames_of(const struct pdc *c, const struct kp_agg *ids, size_t from,
	  size_t to, struct kp_agg *fr, bool distinct, struct kp_conv *cv,
	  struct kp_agg_late *l)
{
	const struct kp_stack *st;
	const struct fent *e;
	size_t k, j, m;

	for (k = from; k < to; k++) {
		st = kp_agg_get(ids, k);
		cv->n = 0;
		for (j = 0; j < st->n; j++) {
			e = fent_at(c, (uint32_t)((uintptr_t)st->frames[j] - 1));
			if (e->n == 1)
				kp_conv_push(cv, e->fr.one);
			else
				for (m = 0; m < e->n; m++)
					kp_conv_push(cv, e->fr.many[m]);
		}
		if (distinct)
			kp_agg_append(fr, cv->frames, cv->n, st->count);
		else
			kp_agg_late_add(l, fr, cv->frames, cv->n, st->count);
	}
	cv->n = 0;
}

/* The second half of an event's stacks made frames on a thread of its
 * own (see to_frames). */
struct tail {
	const struct pdc *c;
	const struct kp_agg *ids;
	size_t from, to;
	struct kp_agg *fr;
	struct kp_conv cv;
};

static void *
tail_main(void *arg)
{
	struct tail *t = arg;

	frames_of(t->c, t->ids, t->from, t->to, t->fr, true, &t->cv, NULL);
	return NULL;
}

/*
 * Each event's stacks of entries made stacks of frames (see "the
 * stacks"), the kept event's into the caller's aggregation.  Where no
 * frame was two entries' (a special one too, checked here), distinct
 * lists of entries make distinct stacks (each frame tells its entry),
 * and each is added without a look-up (kp_agg_append): on perfdata-
 * check.data, 117,000 stacks of 178,000 entries, half of the time; and
 * with two threads the second half of them on a second (its stacks
 * then put after the first's: kp_agg_append_all).
 */
static void
to_frames(struct pdc *c)
{
	const struct fent *e;
	struct kp_agg *ids, *fr;
	struct tail t;
	pthread_t th;
	size_t i, n, half;
	bool distinct, two;

	for (i = 0; i < c->special.cap && !c->shared; i++)
		if (c->special.tab[i].p) {
			e = fent_at(c, (uint32_t)(uintptr_t)c->special.tab[i].p - 1);
			if (e->fr.one->id < c->ocap && c->owner[e->fr.one->id])
				c->shared = true;
		}
	for (i = 0; i < c->naggs; i++) {
		ids = c->aggs[i];
		fr = i == c->direct_ev ? c->direct : kp_agg_new();
		distinct = !c->shared && kp_agg_len(fr) == 0;
		n = kp_agg_len(ids);
		half = n;
		two = false;
		if (distinct && c->two && n >= 16384) {
			half = n / 2;
			memset(&t, 0, sizeof(t));
			t.c = c;
			t.ids = ids;
			t.from = half;
			t.to = n;
			t.fr = kp_agg_new();
			kp_conv_init(&t.cv, NULL, c->in);
			two = pthread_create(&th, NULL, tail_main, &t) == 0;
			if (!two) {
				kp_agg_free(t.fr);
				kp_conv_free(&t.cv);
				half = n;
			}
		}
		frames_of(c, ids, 0, half, fr, distinct, &c->cv, &c->late);
		kp_agg_late_end(&c->late);
		if (two) {
			pthread_join(th, NULL);
			kp_agg_append_all(fr, t.fr);
			kp_conv_free(&t.cv);
		}
		if (!kp_agg_total_ok(ids))
			kp_agg_overflowed(fr);
		kp_agg_free(ids);
		c->aggs[i] = fr;
	}
}

/* The caches of a converter, when its stacks are all counted. */
static void
drop_caches(struct pdc *c)
{
	size_t i;

	kp_unwind_free(c->uw);
	c->uw = NULL;
	free(c->pcs);
	c->pcs = NULL;
	kp_table_free(c->ftab, c->fcap * sizeof(*c->ftab));
	c->ftab = NULL;
	c->fcap = 0;
	if (c->fchunks) {
		for (i = 0; i < FCHUNKS && c->fchunks[i]; i++)
			free(c->fchunks[i]);
		free(c->fchunks);
		c->fchunks = NULL;
	}
	c->fn = 0;
	kp_slots_free(&c->special);
	free(c->wants);
	c->wants = NULL;
	c->nwants = c->capwants = 0;
	free(c->names);
	c->names = NULL;
	c->capnames = c->nnames = 0;
	kp_pool_free(&c->pool);
	kp_pool_free(&c->npool);
	free(c->owner);
	c->owner = NULL;
	c->ocap = 0;
	kp_slots_free(&c->mkeys);
	kp_slots_free(&c->paths);
	kp_procs_free(c->procs);
	c->procs = NULL;
	kp_resolver_free(c->res);
	c->res = NULL;
}

static void
pdc_free(struct pdc *c, struct kp_agg *agg)
{
	size_t i;

	drop_caches(c);
	kp_offcpu_free(c->off);
	free(c->words);
	for (i = 0; i < c->naggs; i++)
		if (c->aggs[i] != agg)
			kp_agg_free(c->aggs[i]);
	free(c->aggs);
	kp_conv_free(&c->cv);
	kp_conv_free(&c->ncv);
	kp_agg_late_free(&c->late);
	free(c->kallsyms);
	free(c->ksnap_build_id);
	kp_pd_close(c->pd);
}

/*
 * One event but perf's dummy, the one kept if it has samples: its
 * stacks go to the caller's aggregation when made frames (in the order
 * finish() would add them), not to one of their own copied there at
 * the end.  A pipe may name more events later; --event may name none.
 */
static size_t
direct_event(struct pdc *c)
{
	size_t i, ev = SIZE_MAX;

	if (kp_pd_pipe(c->pd) || c->event)
		return SIZE_MAX;
	for (i = 0; i < kp_pd_nevents(c->pd); i++)
		if (!kp_pd_event(c->pd, i)->dummy)
			ev = ev == SIZE_MAX ? i : SIZE_MAX - 1;
	return ev < SIZE_MAX - 1 ? ev : SIZE_MAX;
}

int
kp_perfdata_convert(struct kp_agg *agg, struct kp_input *in,
		    const struct kp_pd_opts *o, struct kp_perf_events *evs,
		    const char **why)
{
	struct pdc c;
	struct kp_pd_rec r;
	int st;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.po = o->perf;
	c.event = o->offcpu ? "sched:sched_switch" : c.po->event;
	c.evs = evs;
	c.in = in;
	if (!(c.pd = kp_pd_open(in, why)))
		return -1;
	c.direct_ev = direct_event(&c);
	if (c.direct_ev != SIZE_MAX)
		c.direct = agg;
	c.res = kp_resolver_new(0);
	c.procs = kp_procs_new();
	c.tty = isatty(2) && !kp_quiet;
	kp_conv_init(&c.cv, NULL, in); /* its stacks go in by c.late */
	kp_conv_init(&c.ncv, NULL, in);
	c.fchunks = kp_xcalloc(FCHUNKS, sizeof(*c.fchunks));
	if (c.o->offcpu) {
		c.off = kp_offcpu_new();
		c.sw_ev = -1;
	}
	namer_start(&c);
	st = scan(&c, &r);
	progress(&c, true);
	if (st < 0) {
		if (!c.o->keep_going)
			kp_die("%s: %s", kp_input_name(in), kp_pd_error(c.pd));
		kp_warn("%s: %s", kp_input_name(in), kp_pd_error(c.pd));
		kp_skipped++;
	}
	if (c.off) {
		if (c.sw_ev < 0)
			kp_die("%s: no sched:sched_switch samples in it, which "
			       "--off-cpu reads: record them with 'perf record "
			       "-e sched:sched_switch -g -a' (or '... -g "
			       "COMMAND')", kp_input_name(in));
		kp_offcpu_finish(c.off, c.last_time, on_span, &c);
		kp_agg_late_end(&c.late);
		kp_meta_set("off-cpu", "%llu waits, %llu still waiting at the "
			    "end", (unsigned long long)kp_offcpu_stats(c.off)->spans,
			    (unsigned long long)kp_offcpu_stats(c.off)->open);
		if (c.nbad)
			kp_warn("%s: %llu sched_switch samples without the "
				"fields of this machine's tracefs format "
				"skipped", kp_input_name(in),
				(unsigned long long)c.nbad);
		kp_skipped += c.nbad;
	}
	if (c.not_unwound)
		kp_warn("%s: %llu sample%s with a user stack copy not "
			"unwound (%s%s): counted by their IP and kernel frames",
			kp_input_name(in), (unsigned long long)c.not_unwound,
			c.not_unwound == 1 ? "" : "s", c.not_unwound_why,
			c.not_unwound == 1 ? "" : ", the first");
	to_frames(&c);
	finish(&c, agg);
	pdc_free(&c, agg);
	return 0;
}
