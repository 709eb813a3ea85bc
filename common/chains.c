/*
 * chains.c - perf callchains to kp stacks, named at the end.  See
 * chains.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chains.h"

struct kp_chains {
	struct kp_procs *procs;
	unsigned flags;
	struct kp_agg *raw; /* stacks of raw frames */
	/* kernel raw frames: most samples are a few hundred addresses */
	struct kp_slots kcache;
	const char *str_kraw, *str_uraw; /* the modules of raw frames */
	const struct kp_frame *fr_user, *fr_unknown;
	const struct kp_frame **stack;
	size_t stack_cap;
	struct kp_slots comms; /* struct kp_proc -> struct comm_frame */
};

struct kp_chains *
kp_chains_new(struct kp_procs *procs, unsigned flags)
{
	struct kp_chains *c = kp_xcalloc(1, sizeof(*c));

	c->procs = procs;
	c->flags = flags;
	c->raw = kp_agg_new();
	c->str_kraw = kp_intern_str("[kernel-raw]");
	c->str_uraw = kp_intern_str("[user-raw]");
	c->fr_user = kp_frame_make(0, 0, KP_USER_FRAME, NULL);
	c->fr_unknown = kp_frame_make(0, 0, "[unknown]", NULL);
	return c;
}

/*
 * A raw frame: its address, whether it is a return address (in size)
 * and for a user frame the program it ran in (a struct kp_proc, in
 * off), named at the end.
 */
static const struct kp_frame *
raw_frame(const char *module, uint64_t addr, bool ret, struct kp_proc *p)
{
	struct kp_frame f;

	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.flags = KP_F_ADDR;
	f.module = module;
	f.size = ret;
	f.off = (uint64_t)(uintptr_t)p;
	return kp_frame_intern(&f);
}

static const struct kp_frame *
kernel_raw(struct kp_chains *c, uint64_t addr, bool ret)
{
	uint64_t h = ((addr ^ ret) * 0x9e3779b97f4a7c15ULL) >> 16;
	const struct kp_frame *f;
	size_t i, mask;

	kp_slots_reserve(&c->kcache, 4096);
	mask = c->kcache.cap - 1;
	for (i = h & mask; (f = c->kcache.tab[i].p) != NULL;
	     i = (i + 1) & mask)
		if (f->addr == addr && f->size == ret)
			return f;
	f = raw_frame(c->str_kraw, addr, ret, NULL);
	kp_slots_put(&c->kcache, h, (void *)f);
	return f;
}

static const struct kp_frame *
user_raw(struct kp_chains *c, struct kp_proc *p, uint64_t addr, bool ret)
{
	if (!p->maps_known)
		kp_procs_scan(c->procs, p->pid, KP_PROCS_MAPS);
	return raw_frame(c->str_uraw, addr, ret, p);
}

/* The outermost frame of KP_CHAINS_COMM ("comm"), KP_CHAINS_PID
 * ("comm-pid"), made again when the process changes its name. */
struct comm_frame {
	const struct kp_proc *p;
	const char *comm;
	const struct kp_frame *f;
};

static const struct kp_frame *
comm_frame(struct kp_chains *c, struct kp_proc *p)
{
	uint64_t h = ((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL) >> 16;
	struct comm_frame *cf = NULL;
	size_t i, mask;
	char buf[64];

	if (!p->comm)
		kp_procs_scan(c->procs, p->pid, KP_PROCS_COMM);
	kp_slots_reserve(&c->comms, 256);
	mask = c->comms.cap - 1;
	for (i = h & mask; (cf = c->comms.tab[i].p) != NULL; i = (i + 1) & mask)
		if (cf->p == p)
			break;
	if (!cf) {
		cf = kp_xcalloc(1, sizeof(*cf));
		cf->p = p;
		kp_slots_put(&c->comms, h, cf);
	}
	if (cf->comm != p->comm) {
		cf->comm = p->comm;
		snprintf(buf, sizeof(buf),
			 (c->flags & KP_CHAINS_PID) ? "%s-%u" : "%s", p->comm,
			 p->pid);
		cf->f = kp_frame_make(0, 0, buf, NULL);
	}
	return cf->f;
}

static void
push(struct kp_chains *c, size_t *n, const struct kp_frame *f)
{
	if (*n == c->stack_cap) {
		c->stack_cap = c->stack_cap ? c->stack_cap * 2 : 256;
		c->stack = kp_xrealloc(c->stack,
				       c->stack_cap * sizeof(*c->stack));
	}
	c->stack[(*n)++] = f;
}

int
kp_chains_add(struct kp_chains *c, const struct kp_perfev_sample *s,
	      uint64_t count)
{
	return kp_chains_add_outer(c, s, count, NULL, 0);
}

int
kp_chains_add_outer(struct kp_chains *c, const struct kp_perfev_sample *s,
		    uint64_t count, const struct kp_frame *const *outer,
		    size_t nouter)
{
	bool user = c->flags & KP_CHAINS_USER;
	struct kp_proc *pr = NULL;
	uint64_t a, i, ctx, nr = s->nr;
	size_t n = 0, k = 0; /* k: frames so far in this context */

	if (c->procs)
		pr = kp_procs_get(c->procs, s->pid);
	ctx = s->mode == PERF_RECORD_MISC_USER ? PERF_CONTEXT_USER
						: PERF_CONTEXT_KERNEL;
	if (s->mode == PERF_RECORD_MISC_USER && !user) {
		push(c, &n, c->fr_user);
		nr = 0;
	}
	for (i = 0; i < nr; i++) {
		a = kp_perfev_sample_ip(s, i);
		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			k = 0;
		} else if (ctx == PERF_CONTEXT_KERNEL) {
			push(c, &n, kernel_raw(c, a, k++ > 0));
		} else if (ctx == PERF_CONTEXT_USER && user) {
			push(c, &n, user_raw(c, pr, a, k++ > 0));
		}
	}
	if (n == 0) {
		/* no callchain: the sampled instruction alone */
		if (s->mode == PERF_RECORD_MISC_KERNEL)
			push(c, &n, kernel_raw(c, s->ip, false));
		else if (s->mode == PERF_RECORD_MISC_USER && user)
			push(c, &n, user_raw(c, pr, s->ip, false));
		else if (s->mode == PERF_RECORD_MISC_USER)
			push(c, &n, c->fr_user);
		else
			push(c, &n, c->fr_unknown);
	}
	if (c->flags & (KP_CHAINS_COMM | KP_CHAINS_PID))
		push(c, &n, comm_frame(c, pr));
	while (nouter > 0)
		push(c, &n, outer[--nouter]);
	return kp_agg_add(c->raw, c->stack, n, count);
}

/* The frames of a raw frame (*one), in *out. */
static size_t
resolve_raw(struct kp_chains *c, struct kp_resolver *r, bool exact,
	    const struct kp_frame **one, const struct kp_frame *const **out)
{
	const struct kp_frame *f = *one;
	unsigned fl = f->size && !exact ? KP_SYMTAB_RETADDR : 0;
	const struct kp_map *m;

	if (f->module == c->str_kraw)
		return kp_resolve_kernel(r, f->addr, fl, out);
	if (f->module == c->str_uraw) {
		m = kp_proc_map((const struct kp_proc *)(uintptr_t)f->off,
				f->addr);
		if (m)
			return kp_resolve_user(r, m, f->addr, fl, out);
		/* no mapping held it: its address alone */
		*one = kp_frame_make(f->addr, KP_F_ADDR, NULL, NULL);
	}
	*out = one;
	return 1;
}

static int
cmp_count(const void *a, const void *b)
{
	const struct kp_stack *x = *(const struct kp_stack *const *)a;
	const struct kp_stack *y = *(const struct kp_stack *const *)b;

	return x->count > y->count ? -1 : x->count < y->count;
}

struct kp_agg *
kp_chains_resolve(struct kp_chains *c, struct kp_resolver *r)
{
	struct kp_agg *agg = kp_agg_new();
	const struct kp_frame **fr = NULL, *const *rf, *one;
	size_t i, j, k, m, nfr, n = kp_agg_len(c->raw), cap = 0;

	for (i = 0; i < n; i++) {
		const struct kp_stack *st = kp_agg_get(c->raw, i);

		for (j = 0, nfr = 0; j < st->n; j++) {
			one = st->frames[j];
			/* the frame an interrupt stopped: an exact pc */
			m = resolve_raw(c, r,
					nfr > 0 && kp_resolve_is_entry(fr[nfr - 1]),
					&one, &rf);
			if (nfr + m > cap) {
				cap = (nfr + m) * 2;
				fr = kp_xrealloc(fr, cap * sizeof(*fr));
			}
			for (k = 0; k < m; k++)
				fr[nfr++] = rf[k];
		}
		if (kp_agg_add(agg, fr, nfr, st->count) < 0)
			kp_die("a stack's count overflows 64 bits");
	}
	kp_agg_sort(agg, cmp_count);
	free(fr);
	return agg;
}

void
kp_chains_free(struct kp_chains *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->comms.cap; i++)
		free(c->comms.tab[i].p);
	kp_slots_free(&c->comms);
	kp_slots_free(&c->kcache);
	kp_agg_free(c->raw);
	free(c->stack);
	free(c);
}
