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
	struct kp_agg **aggs; /* per event */
	size_t naggs;
	struct kp_agg *direct; /* the caller's, for event direct_ev ... */
	size_t direct_ev;      /* ... or SIZE_MAX: see kp_perfdata_convert */
	struct kp_conv cv;     /* the stack being built (its frames only) */
	struct kp_agg_late late; /* the stacks built, added to their aggs
				  * two later (kp_agg_late_add) */
	struct fent *ftab;     /* the frames of each address: see fent_get */
	size_t fcap, fn;
	struct kp_slots mkeys; /* of struct mkey (see there) */
	struct kp_slots paths; /* of struct pathent (see path_of) */
	struct want *wants;    /* the addresses of the stack being built */
	size_t nwants, capwants;
	struct name *names;    /* symbol -> name as perf2kp writes it */
	size_t capnames, nnames;
	struct kp_pool pool;
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
	/* progress */
	bool tty;
	unsigned long nrec;
	struct timespec last;
	bool progress_shown;
	/* the halves (see "halves") */
	int cut;	/* the halves' (CUT_*): where the second begins */
	uint64_t cut_at; /* the first's, while cs is set: its guard */
	struct cutter *cs; /* the cut being chosen (see "balance") */
	uint64_t seen_max; /* the second's: the latest sample time read */
	unsigned long seen; /* and how many samples */
	unsigned long nsamples; /* converted here */
	struct half *self; /* the second half's converter: its half */
	struct {
		bool have_text;
		uint64_t text;
		char *build_id;
	} kload; /* what the kernel's symbols were loaded for */
};

struct half;
static void kernel_said(struct half *h, bool on);

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
	s = kp_conv_tmp(&c->cv, n);
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
 * capture's kernel MMAP record.
 */
static void
load_kernel(struct pdc *c)
{
	const struct kp_pd_info *info = kp_pd_info(c->pd);
	int fd;

	c->kernel_tried = true;
	c->kload.have_text = c->ksrc.have_text;
	c->kload.text = c->ksrc.text;
	if (info->kernel_build_id)
		c->kload.build_id = kp_xstrdup(info->kernel_build_id);
	if (c->self)
		kernel_said(c->self, true);
	c->ksrc.kallsyms = c->o->kallsyms;
	c->ksrc.build_id = info->kernel_build_id;
	if (!c->ksrc.kallsyms && info->kernel_build_id) {
		/* found as perf keeps it (no symbolic link followed), then
		 * read by its name */
		fd = kp_buildid_cache_open("[kernel.kallsyms]",
					   info->kernel_build_id, "kallsyms",
					   &c->kallsyms);
		if (fd >= 0) {
			close(fd);
			c->ksrc.kallsyms = c->kallsyms;
		} else if (errno != ENOENT && c->kallsyms) {
			kp_warn("%s: %s; not used", c->kallsyms,
				errno == ELOOP ? "a symbolic link"
					       : kp_open_strerror(errno));
		}
	}
	if (kp_resolver_kernel(c->res, &c->ksrc) < 0)
		kp_warn("%s: %s; kernel frames stay addresses (--kallsyms "
			"names a saved copy)", kp_input_name(c->in),
			kp_resolver_error(c->res));
	if (c->self)
		kernel_said(c->self, false);
}

enum { SP_KERNEL, SP_USER, SP_OTHER };

/*
 * The frames of an address, named and tidied, as perf2kp writes them: a
 * table of every address met, keyed by what names it (a kernel address
 * by itself; a user address by its file, the file's build-id, where the
 * file is mapped and how it is looked up; an address no mapping holds
 * by itself), so that each is resolved once and then costs one probe.
 * A stack's probes are made together, each slot prefetched first: a
 * sample's ten or so frames wait for memory once, not ten times.
 *
 * With --functions a user address is keyed by its place in the file
 * (the address less the mapping's base), not by where the file was
 * mapped: its frames are then the function's, the same in every
 * process, and a library mapped by many processes (each at its own
 * base) is named once per address, not once per process (on a
 * system-wide capture of a test suite, half as many lookups).  A frame
 * that keeps its address (one no symbol names) depends on where the
 * file was mapped: that entry is a mark (FENT_ABS, no frames) that
 * sends the address to an entry keyed by where it was mapped.
 */
#define FENT_ABS (1u << 31) /* in a key's kind: keyed where mapped */

/*
 * The mapping part of a user address's key: the file, its build-id and
 * the mapping's start less its offset (0 when keyed in the file), one
 * interned copy per converter, so that an entry holds one pointer for
 * the three and is 32 bytes: two to a cache line, none across two.  A
 * mapping keeps its two keys (kp_map.key) once made.
 */
struct mkey {
	uint64_t base;
	const char *path; /* interned; NULL: none */
	const char *bid;  /* interned build-id, or NULL */
};

struct fent {
	uint64_t ip;		 /* the address, or with --functions its
				  * place in the file (see above) */
	const struct mkey *mk;	 /* user: its mapping's key; NULL: none */
	uint32_t kind;		 /* (space + 1) << 16 | resolver flags,
				  * or'd with FENT_ABS; 0: free */
	uint32_t n;		 /* frames; 0: a mark (see above) */
	union {
		const struct kp_frame *one;   /* n == 1 */
		const struct kp_frame **many; /* n > 1 */
	} fr;
};
_Static_assert(sizeof(struct fent) == 32, "a frame table entry: 32 bytes");

/* An address of a stack being built, and its key in the table. */
struct want {
	uint64_t ip, h;
	const struct kp_map *m; /* user: its mapping, if any */
	uint32_t kind;
	uint64_t kip;		 /* the key's ip */
	const struct mkey *mk;	 /* the key's mapping */
	uint32_t kkind;		 /* the key's kind */
	bool rel;		 /* keyed by its place in the file */
};

static uint64_t
fent_hash(uint64_t ip, const struct mkey *mk, uint32_t kind)
{
	uint64_t h = ip ^ (uint64_t)(uintptr_t)mk * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)kind << 40;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ h >> 32;
}

/* m's key: where it is mapped, or (rel) in the file; made (interned
 * in c) and kept in m the first time. */
static const struct mkey *
mkey_of(struct pdc *c, const struct kp_map *m, bool rel)
{
	struct kp_map *mm = (struct kp_map *)(uintptr_t)m; /* the converter's */
	struct mkey want = { rel ? 0 : m->start - m->pgoff, m->path,
			     m->build_id };
	const struct mkey *k;
	struct mkey *nk;
	struct kp_slot *sl;
	uint64_t h;
	size_t mask, i;

	if (m->key[rel])
		return m->key[rel];
	h = kp_hash(&want, sizeof(want));
	kp_slots_reserve(&c->mkeys, 64);
	mask = c->mkeys.cap - 1;
	for (i = h & mask; (sl = &c->mkeys.tab[i])->p; i = (i + 1) & mask) {
		k = sl->p;
		if (sl->hash == h && memcmp(k, &want, sizeof(want)) == 0) {
			mm->key[rel] = k;
			return k;
		}
	}
	nk = kp_pool_alloc(&c->pool, sizeof(*nk));
	*nk = want;
	sl->hash = h;
	sl->p = nk;
	c->mkeys.n++;
	mm->key[rel] = nk;
	return nk;
}

static void
ftab_grow(struct pdc *c)
{
	struct fent *old = c->ftab, *e;
	size_t cap = c->fcap, i, j, mask;

	c->fcap = cap ? cap * 2 : 1u << 14;
	/* on a cache line's start (malloc's of 512 KiB, a mapping's), so
	 * that no entry crosses one */
	c->ftab = kp_table_alloc(c->fcap * sizeof(*c->ftab));
	mask = c->fcap - 1;
	for (i = 0; i < cap; i++) {
		e = &old[i];
		if (!e->kind)
			continue;
		j = fent_hash(e->ip, e->mk, e->kind) & mask;
		while (c->ftab[j].kind)
			j = (j + 1) & mask;
		c->ftab[j] = *e;
	}
	kp_table_free(old, cap * sizeof(*old));
}

/* A new entry for w's key, holding fr[0..n) (none: a mark). */
static const struct fent *
fent_put(struct pdc *c, const struct want *w,
	 const struct kp_frame *const *fr, size_t n)
{
	size_t mask = c->fcap - 1, i;
	struct fent *e;

	if ((c->fn + 1) * 4 > c->fcap * 3) {
		ftab_grow(c);
		mask = c->fcap - 1;
	}
	for (i = w->h & mask; c->ftab[i].kind; i = (i + 1) & mask)
		;
	e = &c->ftab[i];
	e->ip = w->kip;
	e->mk = w->mk;
	e->kind = w->kkind;
	e->n = (uint32_t)n;
	if (n == 1) {
		e->fr.one = fr[0];
	} else if (n > 1) {
		e->fr.many = kp_pool_alloc(&c->pool, n * sizeof(*fr));
		memcpy(e->fr.many, fr, n * sizeof(*fr));
	}
	c->fn++;
	return e;
}

/* w's key: the address where mapped, or (--functions) in its file. */
static void
want_key(struct pdc *c, struct want *w, bool abs)
{
	const struct kp_map *m = w->m;
	uint64_t base = m ? m->start - m->pgoff : 0;

	w->kip = w->ip;
	w->kkind = w->kind;
	w->rel = false;
	if (abs) {
		w->kkind |= FENT_ABS;
	} else if (m && m->path && c->po->functions) {
		w->kip = w->ip - base;
		w->rel = true;
	}
	w->mk = m ? mkey_of(c, m, w->rel) : NULL;
	w->h = fent_hash(w->kip, w->mk, w->kkind);
}

/* w's entry, made (resolved) if new; a mark if one. */
static const struct fent *
fent_find(struct pdc *c, const struct want *w)
{
	const struct kp_frame *fr[KP_RES_MAX];
	size_t mask = c->fcap - 1, i, k, n;
	struct fent *e;
	struct want a;

	for (i = w->h & mask; (e = &c->ftab[i])->kind; i = (i + 1) & mask)
		if (e->ip == w->kip && e->mk == w->mk && e->kind == w->kkind)
			return e;
	if (w->kind >> 16 == SP_KERNEL + 1) {
		if (!c->kernel_tried)
			load_kernel(c);
		n = kp_resolve_kernel_to(c->res, w->ip, 0, fr);
	} else if (w->m) {
		n = kp_resolve_user_to(c->res, w->m, w->ip, w->kind & 0xffff,
				       fr);
	} else {
		fr[0] = kp_frame_make(w->ip, KP_F_ADDR, NULL, NULL);
		n = 1;
	}
	for (k = 0; k < n; k++)
		fr[k] = tidy(c, fr[k]);
	if (w->rel)
		for (k = 0; k < n; k++)
			if (fr[k]->flags & KP_F_ADDR) {
				/* named by where it was mapped: a mark here,
				 * the frames under that key */
				fent_put(c, w, NULL, 0);
				a = *w;
				want_key(c, &a, true);
				return fent_put(c, &a, fr, n);
			}
	return fent_put(c, w, fr, n);
}

/* w's entry (resolved if new), past a mark. */
static const struct fent *
fent_get(struct pdc *c, const struct want *w)
{
	const struct fent *e = fent_find(c, w);
	struct want a;

	if (e->n)
		return e;
	a = *w;
	want_key(c, &a, true);
	return fent_find(c, &a);
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

/* The frames of the wanted addresses of sample r to c->cv, in order. */
static void
push_wants(struct pdc *c, const struct kp_pd_rec *r)
{
	const struct kp_proc *p = NULL;
	const struct fent *e;
	struct want *w;
	bool found = false;
	size_t i, k;

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
		want_key(c, w, false);
		__builtin_prefetch(&c->ftab[w->h & (c->fcap - 1)]);
	}
	for (i = 0; i < c->nwants; i++) {
		e = fent_get(c, &c->wants[i]);
		if (e->n == 1)
			kp_conv_push(&c->cv, e->fr.one);
		else
			for (k = 0; k < e->n; k++)
				kp_conv_push(&c->cv, e->fr.many[k]);
	}
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
	kp_conv_push(&c->cv, kp_conv_intern(&(struct kp_frame){
					     .sym = kp_intern(t, k + n) }));
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
		if (c->self)
			kp_unwind_watch(c->uw);
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
			c->aggs[c->naggs] = c->naggs == c->direct_ev
						    ? c->direct
						    : kp_agg_new();
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
		kp_conv_push(&c->cv, kp_frame_make(0, 0, KP_USER_FRAME, NULL));
	if (c->po->proc != KP_PROC_NONE)
		push_proc(c, r);
	if (c->cv.n == 0) /* all its frames filtered out, as perf2kp says */
		kp_conv_push(&c->cv, kp_frame_make(0, 0, "[no stack]", NULL));
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
		kp_conv_push(&c->cv, kp_frame_make(0, 0, name, NULL));
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
 * build-id table and two in the shared string table (under its lock,
 * with the halves' two threads): now a hash and a look-up in a table of
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

/* ---- halves ----
 *
 * A big perf.data file is converted by two threads at once.  Its
 * samples, in the order the reader delivers them (time order), are cut
 * in two at the first sample taken after a time, chosen as both run
 * (see "balance" below; PERF2KP_SPLIT=1: the middle of the capture, the
 * header's first and last sample times; without them, the first read
 * past the middle of the data section): this thread converts the
 * samples before it and stops there; a second thread reads the whole
 * file again with a reader of its own (kp_pd_open_again, by pread) into
 * a process model, a resolver, a frame table, an unwinder and
 * aggregations of its own: it takes in every record before the cut as
 * this one does (MMAP, COMM, FORK, EXIT ...: the same process model at
 * every record) but builds no stack for the samples there, then
 * converts the samples after it.  Both read the same records the same
 * way, so where the cut falls is the same for both.  Names and frames
 * are interned in the shared tables (kp_intern_shared).  At the end the
 * second's stacks are added after this one's, event by event, in their
 * order (the order of first sight in the whole capture), and what it
 * would have said is said after what this one said: its kp_warn lines,
 * kept by a kp_trap, but for those of a file (or of the kernel's
 * symbols) this one had loaded already, which one thread would not have
 * said again.  The end (the event kept, metadata, the samples of no
 * event, a reading error) is the second reader's, which read it all.
 *
 * What a sample becomes depends on the samples before it in three ways
 * only, each checked at the end: when the kernel's symbols are loaded
 * (the first kernel frame: what the capture had said of the kernel by
 * then), the modules an unwinder kept for a program (kp_unwind_agrees),
 * and a total that overflows 64 bits (a stack's count is then left as
 * it was).  If any of these may differ, or the second thread met a
 * fatal error (kp_die: out of memory ...), its work is dropped and this
 * thread converts the rest itself, as one thread does.  Output, messages
 * and exit status are those of one thread (tests/perf2kp-data/halves.sh
 * and fuzz_perfdata compare them).
 */

/* ---- balance ----
 *
 * Where the cut falls is chosen while both threads run, so that they
 * end together: the first thread pays for loading most symbol tables
 * and the second reads the first's part again before its own, so the
 * middle of the capture is seldom the cut that balances them (on a
 * system-wide capture of a test suite, cut at the middle, the second
 * ended 25-45 ms before the first, of 130-180 ms).  The first converts
 * samples up to a time it has said (its guard, a step of 1/512 of the
 * capture ahead of it, kept in its cut_at) and says how far it has read
 * each time it moves its guard on.  The second, reading the
 * first's part again, sets the cut where what is left of the first's
 * part is as many bytes as what is left of the file after it: at the
 * latest sample time it has read (every sample read so far is then the
 * first's, the one it is at the first of its own), if the first's guard
 * is not past it; the first stops at that sample, as it stops at a cut
 * fixed before.  So the cut is still the first sample after a time,
 * read the same way by both, only now chosen later, and all that the
 * halves keep (see above) holds wherever it falls.  If the first's
 * guard passes the last sample time first (the second slow to start),
 * the second stops reading and the first converts every sample.
 * PERF2KP_SPLIT=1 keeps the middle, where the tests put their edits.
 */
struct cutter {
	pthread_mutex_t mu;
	uint64_t guard;	/* the first converts samples up to this time
			 * (set under mu, atomic) */
	uint64_t step;
	uint64_t first_at; /* how far the first had read (atomic) */
	uint64_t end;	   /* the data section's end */
	uint64_t last;	   /* the last sample time (the header's) */
	bool decided;
	uint64_t cut_at;   /* decided: the cut */
};

/* The first thread (c->cs set) at a sample of time t, read up to done:
 * past its guard, the cut if chosen, else a guard further on. */
static void
balance_first(struct pdc *c, uint64_t t, uint64_t done)
{
	struct cutter *cs = c->cs;

	pthread_mutex_lock(&cs->mu);
	if (cs->decided) {
		c->cut_at = cs->cut_at;
		c->cs = NULL;
	} else {
		c->cut_at = t > UINT64_MAX - cs->step ? UINT64_MAX
						      : t + cs->step;
		__atomic_store_n(&cs->guard, c->cut_at, __ATOMIC_RELAXED);
		__atomic_store_n(&cs->first_at, done, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&cs->mu);
}

/* The second (c->cs set) at a sample of time t, read up to done: the
 * cut set here if the rest balances, the first's guard not past it;
 * false when no cut can be set any more (the first converts it all). */
static bool
balance_second(struct pdc *c, uint64_t t, uint64_t done)
{
	struct cutter *cs = c->cs;
	uint64_t first_at;

	/* every 64th sample */
	if ((c->seen & 63) == 0) {
		if (__atomic_load_n(&cs->guard, __ATOMIC_RELAXED) >= cs->last)
			return false;
		first_at = __atomic_load_n(&cs->first_at, __ATOMIC_RELAXED);
		if (c->seen && t > c->seen_max && done >= first_at &&
		    done - first_at >= cs->end - done) {
			pthread_mutex_lock(&cs->mu);
			if (cs->guard <= c->seen_max) {
				cs->decided = true;
				cs->cut_at = c->cut_at = c->seen_max;
				c->cs = NULL;
			}
			pthread_mutex_unlock(&cs->mu);
			if (!c->cs)
				return true;
		}
	}
	if (!c->seen || t > c->seen_max)
		c->seen_max = t;
	c->seen++;
	return true;
}

enum { KEY_NONE, KEY_FILE, KEY_KERNEL };
/* Where the second half begins: at the first sample taken after a time,
 * or read past an offset. */
enum { CUT_NONE, CUT_TIME, CUT_OFFSET };

/* A message of the second half, and what it was said of. */
struct said {
	int key;
	const char *path, *build_id; /* KEY_FILE's */
	char *msg;
};

struct half {
	struct kp_trap trap; /* first: the trap is the half */
	struct pdc c;
	struct kp_pd_rec r;
	pthread_t th;
	jmp_buf died_at;
	bool died;
	int st;	/* its reader's end: 0, or -1 (kp_pd_error) */
	int key; /* what is being loaded */
	const char *path, *build_id;
	struct said *said;
	size_t nsaid;
	struct cutter cs; /* the cut being chosen (CUT_TIME; not with
			   * PERF2KP_SPLIT=1): step 0 if not */
};

static void
kernel_said(struct half *h, bool on)
{
	h->key = on ? KEY_KERNEL : KEY_NONE;
}

static void
file_said(void *arg, const char *path, const char *build_id)
{
	struct half *h = arg;

	h->key = path ? KEY_FILE : KEY_NONE;
	h->path = path;
	h->build_id = build_id;
}

static void
half_warn(struct kp_trap *t, char *msg)
{
	struct half *h = (struct half *)t;
	struct said *s;

	if ((h->nsaid & (h->nsaid - 1)) == 0)
		h->said = kp_xrealloc(h->said, (h->nsaid ? h->nsaid * 2 : 1) *
						       sizeof(*h->said));
	s = &h->said[h->nsaid++];
	s->key = h->key;
	s->path = h->path;
	s->build_id = h->build_id;
	s->msg = msg;
}

static void
half_die(struct kp_trap *t)
{
	struct half *h = (struct half *)t;

	kp_intern_release();
	longjmp(h->died_at, 1);
}

/*
 * The records of c->pd to their end (0), an error (-1), or (1) the
 * first sample of the second half, in *r, when c converts the first.
 */
static int
records(struct pdc *c, struct kp_pd_rec *r)
{
	uint64_t done, total;
	int st;

	while ((st = kp_pd_next(c->pd, r)) > 0) {
		if (c->cut && r->type == PERF_RECORD_SAMPLE) {
			kp_pd_progress(c->pd, &done, &total);
			if (c->cs && c->self) {
				if (!balance_second(c, r->time,
						    kp_pd_delivered(c->pd)))
					return 0; /* the first's, all */
			} else if (c->cs && r->time > c->cut_at) {
				balance_first(c, r->time,
					      kp_pd_delivered(c->pd));
			}
			if (c->cut == CUT_TIME ? r->time > c->cut_at
					       : done > c->cut_at) {
				if (!c->self)
					return 1;
				c->cut = CUT_NONE; /* the second's own now */
			} else if (c->self) {
				continue; /* the first's */
			}
		}
		if (r->time > c->last_time)
			c->last_time = r->time;
		c->nsamples += r->type == PERF_RECORD_SAMPLE;
		record(c, r);
		progress(c, false);
	}
	return st;
}

/* records(), its stacks all added to its aggs (see sample()). */
static int
convert_records(struct pdc *c, struct kp_pd_rec *r)
{
	int st = records(c, r);

	kp_agg_late_end(&c->late);
	return st;
}

/* The caches of a converter, when its stacks are all counted; its
 * unwinder too unless keep_unwinder (what kp_unwind_agrees compares). */
static void
drop_caches(struct pdc *c, bool keep_unwinder)
{
	if (!keep_unwinder) {
		kp_unwind_free(c->uw);
		c->uw = NULL;
		free(c->pcs);
		c->pcs = NULL;
	}
	kp_table_free(c->ftab, c->fcap * sizeof(*c->ftab));
	c->ftab = NULL;
	c->fcap = c->fn = 0;
	free(c->wants);
	c->wants = NULL;
	c->nwants = c->capwants = 0;
	free(c->names);
	c->names = NULL;
	c->capnames = c->nnames = 0;
	kp_pool_free(&c->pool);
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

	drop_caches(c, false);
	kp_offcpu_free(c->off);
	free(c->words);
	for (i = 0; i < c->naggs; i++)
		if (c->aggs[i] != agg)
			kp_agg_free(c->aggs[i]);
	if (c->direct && c->direct != agg && c->direct_ev >= c->naggs)
		kp_agg_free(c->direct); /* a half's, its event not met */
	free(c->aggs);
	kp_conv_free(&c->cv);
	kp_agg_late_free(&c->late);
	free(c->kallsyms);
	free(c->kload.build_id);
	kp_pd_close(c->pd);
}

static void *
half_main(void *arg)
{
	struct half *h = arg;

	kp_trap = &h->trap;
	if (setjmp(h->died_at) == 0) {
		h->st = convert_records(&h->c, &h->r);
		drop_caches(&h->c, true);
	} else {
		h->died = true;
	}
	kp_trap = NULL;
	return NULL;
}

/*
 * One event but perf's dummy, the one kept if it has samples: its
 * stacks go to the caller's aggregation as they come (in the order
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

/* Start the second half's thread if c's file is worth it. */
static bool
split(struct pdc *c, struct half *h)
{
	const struct kp_pd_opts *o = c->o;
	const struct kp_pd_info *info;
	uint64_t from, total, end;
	struct kp_pd *pd2;

	if (!o->split_min || c->off || kp_pd_pipe(c->pd))
		return false;
	kp_pd_progress(c->pd, &from, &total);
	end = kp_pd_data_end(c->pd);
	if (end <= from || (o->split_min > 1 && (end - from < o->split_min ||
						  kp_cpus() < 2)))
		return false;
	if (!(pd2 = kp_pd_open_again(c->pd)))
		return false;
	memset(h, 0, sizeof(*h));
	h->trap.warn = half_warn;
	h->trap.die = half_die;
	h->c.o = c->o;
	h->c.po = c->po;
	h->c.event = c->event;
	h->c.in = c->in;
	h->c.pd = pd2;
	h->c.self = h;
	/* the first reader's calls that name the events, made again */
	h->c.direct_ev = direct_event(&h->c);
	if (h->c.direct_ev != SIZE_MAX)
		h->c.direct = kp_agg_new();
	h->c.res = kp_resolver_new(0);
	kp_resolver_share(c->res, h->c.res);
	kp_resolver_on_load(h->c.res, file_said, h);
	h->c.procs = kp_procs_new();
	kp_conv_init(&h->c.cv, NULL, c->in);
	/* the cut: the middle, or chosen as they run (see "balance") */
	info = kp_pd_info(c->pd);
	c->cut = CUT_OFFSET;
	c->cut_at = from + (end - from) / 2;
	if (info->last_time > info->first_time) {
		c->cut = CUT_TIME;
		c->cut_at = info->first_time +
			    (info->last_time - info->first_time) / 2;
	}
	h->c.cut = c->cut;
	h->c.cut_at = c->cut_at;
	if (c->cut == CUT_TIME && !o->split_middle) {
		h->cs.step = (info->last_time - info->first_time) / 512 + 1;
		h->cs.guard = info->first_time + h->cs.step;
		h->cs.first_at = from;
		h->cs.end = end;
		h->cs.last = info->last_time;
		pthread_mutex_init(&h->cs.mu, NULL);
		c->cs = h->c.cs = &h->cs;
		c->cut_at = h->cs.guard;
		h->c.cut_at = UINT64_MAX;
	}
	kp_intern_shared = true;
	if (pthread_create(&h->th, NULL, half_main, h) != 0) {
		kp_intern_shared = false;
		c->cut = CUT_NONE;
		if (c->cs)
			pthread_mutex_destroy(&h->cs.mu);
		c->cs = NULL;
		pdc_free(&h->c, NULL);
		return false;
	}
	return true;
}

/* c's aggregation of event i, made if new (see stack()). */
static struct kp_agg *
agg_of(struct pdc *c, size_t i)
{
	if (i >= c->naggs) {
		c->aggs = kp_xrealloc(c->aggs, (i + 1) * sizeof(*c->aggs));
		for (; c->naggs <= i; c->naggs++)
			c->aggs[c->naggs] = c->naggs == c->direct_ev
						    ? c->direct
						    : kp_agg_new();
	}
	return c->aggs[i];
}

/* Would the second half's stacks, added to c's, be what one thread
 * counts?  Not if a total overflows (see "halves"). */
static bool
totals_fit(struct pdc *c, const struct pdc *c2)
{
	const struct kp_agg *a, *b;
	size_t i;

	for (i = 0; i < c2->naggs; i++) {
		b = c2->aggs[i];
		if (!kp_agg_len(b))
			continue;
		a = i < c->naggs ? c->aggs[i]
		    : i == c->direct_ev ? c->direct : NULL;
		if (!kp_agg_total_ok(b) ||
		    (a && (!kp_agg_total_ok(a) ||
			   kp_agg_total(a) > UINT64_MAX - kp_agg_total(b))))
			return false;
	}
	return true;
}

/* The second half converted what one thread would have: NULL, else
 * why not. */
static const char *
half_differs(struct pdc *c, struct half *h)
{
	const struct pdc *c2 = &h->c;

	if (h->died)
		return "a fatal error";
	if (c->kernel_tried && c2->kernel_tried &&
	    (c->kload.have_text != c2->kload.have_text ||
	     c->kload.text != c2->kload.text ||
	     !c->kload.build_id != !c2->kload.build_id ||
	     (c->kload.build_id &&
	      strcmp(c->kload.build_id, c2->kload.build_id) != 0)))
		return "the kernel's symbols";
	if (!kp_unwind_agrees(c->uw, c2->uw))
		return "an unwinder's modules";
	if (!totals_fit(c, c2))
		return "a total";
	return NULL;
}

static void
half_free(struct half *h)
{
	size_t i;

	for (i = 0; i < h->nsaid; i++)
		free(h->said[i].msg);
	free(h->said);
	if (h->cs.step)
		pthread_mutex_destroy(&h->cs.mu);
	pdc_free(&h->c, NULL);
}

/*
 * The second half joined to c (its first): its messages said, its
 * stacks added, its reader's end taken; *st its reader's status.  False
 * (and nothing of it kept) when c must convert the rest itself.
 */
static bool
join(struct pdc *c, struct half *h, int *st)
{
	const struct said *s;
	struct pdc *c2 = &h->c;
	const char *why;
	size_t i;

	pthread_join(h->th, NULL);
	kp_intern_shared = false;
	if ((why = half_differs(c, h)) != NULL) {
		if (c->o->split_trace)
			fprintf(stderr, "%s: %s: halves: %lu + %lu samples; "
				"the second's again here (%s)\n", kp_progname,
				kp_input_name(c->in), c->nsamples,
				c2->nsamples, why);
		half_free(h);
		return false;
	}
	if (c->o->split_trace)
		fprintf(stderr, "%s: %s: halves: %lu + %lu samples\n",
			kp_progname, kp_input_name(c->in), c->nsamples,
			c2->nsamples);
	for (i = 0; i < h->nsaid; i++) {
		s = &h->said[i];
		/* what the first said too, one thread says once */
		if ((s->key == KEY_KERNEL && c->kernel_tried) ||
		    (s->key == KEY_FILE &&
		     kp_resolver_has_file(c->res, s->path, s->build_id)))
			continue;
		if (s->msg)
			kp_warn("%s", s->msg);
		else
			kp_warn("out of memory");
	}
	drop_caches(c, false);
	/* joined as they are written (kp_agg_adopt), the second's owned
	 * by the first's */
	for (i = 0; i < c2->naggs; i++)
		if (kp_agg_len(c2->aggs[i])) {
			kp_agg_adopt(agg_of(c, i), c2->aggs[i]);
			if (c2->direct == c2->aggs[i])
				c2->direct = NULL;
			c2->aggs[i] = NULL;
		}
	if (!c->not_unwound)
		c->not_unwound_why = c2->not_unwound_why;
	c->not_unwound += c2->not_unwound;
	/* the end is the second reader's */
	kp_pd_close(c->pd);
	c->pd = c2->pd;
	c2->pd = NULL;
	*st = h->st;
	half_free(h);
	return true;
}

int
kp_perfdata_convert(struct kp_agg *agg, struct kp_input *in,
		    const struct kp_pd_opts *o, struct kp_perf_events *evs,
		    const char **why)
{
	struct pdc c;
	struct kp_pd_rec r;
	struct half *h;
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
	if (c.o->offcpu) {
		c.off = kp_offcpu_new();
		c.sw_ev = -1;
	}
	h = kp_xmalloc(sizeof(*h));
	if (!split(&c, h)) {
		free(h);
		h = NULL;
	}
	st = convert_records(&c, &r);
	if (h) {
		c.cut = CUT_NONE;
		c.cs = NULL;
		if (st <= 0) {
			/* the cut not reached: the second converted nothing */
			if (c.o->split_trace)
				fprintf(stderr, "%s: %s: halves: %lu samples, "
					"the cut not reached\n", kp_progname,
					kp_input_name(in), c.nsamples);
			pthread_join(h->th, NULL);
			kp_intern_shared = false;
			half_free(h);
		} else if (!join(&c, h, &st)) {
			/* the rest here, from the record the first stopped at */
			record(&c, &r);
			progress(&c, false);
			st = convert_records(&c, &r);
		}
		free(h);
	}
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
	finish(&c, agg);
	pdc_free(&c, agg);
	return 0;
}
