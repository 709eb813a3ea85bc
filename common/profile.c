/*
 * profile.c - per-key inclusive/exclusive counts, call edges and
 * caller/callee trees over aggregated stacks (profile.h has the rules).
 *
 * Frames are interned, so a frame maps to its key once, through an
 * array by the frame's id; a key is found by its (interned) name and
 * module pointers.  "Once per stack" is a stamp per key (or edge): the
 * number of the stack that last counted it.
 */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "radix.h"

struct kslot {
	const char *name; /* NULL: empty */
	const char *module;
	uint32_t key;
};

/* A key, and the last stack that counted it, side by side: one miss */
struct pkey {
	struct kp_pkey k;
	uint64_t stamp;
};

struct kp_profile {
	enum kp_by by;
	bool with_module;
	struct pkey *keys;
	size_t len, cap;
	uint32_t *fkey; /* frame id -> key + 1 (0: not yet keyed) */
	size_t fcap;
	struct kslot *ktab; /* (name, module) -> key */
	size_t kcap;
	uint64_t total;
	uint64_t epoch;
	uint32_t *kbuf; /* scratch key ids of one stack */
	size_t kbufcap;
	char *nb; /* scratch name */
	size_t ncap;
	const char *unknown; /* interned "[unknown]" */
	const char *last_mod, *last_norm; /* module_norm's last */
	bool last_norm_set;
};

static const char *const by_names[] = {
	[KP_BY_FUNCTION] = "function",
	[KP_BY_MODULE] = "module",
	[KP_BY_ADDRESS] = "address",
	[KP_BY_OFFSET] = "function+offset",
};

int
kp_by_parse(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(by_names) / sizeof(by_names[0]); i++)
		if (strcmp(s, by_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
kp_by_name(enum kp_by by)
{
	return by_names[by];
}

const char *
kp_module_norm(const char *m)
{
	if (!m)
		return NULL;
	if (kp_module_is_vmlinux(m))
		return kp_intern_str(KP_MODULE_KERNEL);
	return kp_intern_str(m);
}

static inline size_t
ptr_hash(const void *a, const void *b)
{
	uint64_t h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h ^ (h >> 29));
}

struct kp_profile *
kp_profile_new(enum kp_by by, bool with_module)
{
	struct kp_profile *p = kp_xcalloc(1, sizeof(*p));

	p->by = by;
	p->with_module = with_module;
	p->kcap = 1024;
	p->ktab = kp_xcalloc(p->kcap, sizeof(*p->ktab));
	p->unknown = kp_intern_str("[unknown]");
	return p;
}

void
kp_profile_free(struct kp_profile *p)
{
	if (!p)
		return;
	free(p->keys);
	free(p->fkey);
	free(p->ktab);
	free(p->kbuf);
	free(p->nb);
	free(p);
}

static void
ktab_grow(struct kp_profile *p)
{
	struct kslot *old = p->ktab;
	size_t oldcap = p->kcap, i, j;

	p->kcap *= 2;
	p->ktab = kp_xcalloc(p->kcap, sizeof(*p->ktab));
	for (i = 0; i < oldcap; i++) {
		if (!old[i].name)
			continue;
		j = ptr_hash(old[i].name, old[i].module) & (p->kcap - 1);
		while (p->ktab[j].name)
			j = (j + 1) & (p->kcap - 1);
		p->ktab[j] = old[i];
	}
	free(old);
}

/* The key id for an interned (name, module), created if new. */
static uint32_t
key_for(struct kp_profile *p, const char *name, const char *module)
{
	size_t j = ptr_hash(name, module) & (p->kcap - 1);
	uint32_t id;

	for (; p->ktab[j].name; j = (j + 1) & (p->kcap - 1))
		if (p->ktab[j].name == name && p->ktab[j].module == module)
			return p->ktab[j].key;
	if (p->len >= KP_KEY_NONE - 1)
		kp_die("more than %u distinct keys", KP_KEY_NONE - 1);
	if (p->len == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->keys = kp_xrealloc(p->keys, p->cap * sizeof(*p->keys));
	}
	id = (uint32_t)p->len++;
	p->keys[id] = (struct pkey){ { name, module, 0, 0 }, 0 };
	p->ktab[j] = (struct kslot){ name, module, id };
	if (p->len * 2 > p->kcap)
		ktab_grow(p);
	return id;
}

static void
reserve(struct kp_profile *p, size_t need)
{
	if (p->ncap < need) {
		p->ncap = need + 64;
		p->nb = kp_xrealloc(p->nb, p->ncap);
	}
}

/* "[MODULE]" or "[unknown]", interned. */
static const char *
bracket_module(struct kp_profile *p, const char *m)
{
	size_t n;

	if (!m)
		return p->unknown;
	n = strlen(m);
	reserve(p, n + 3);
	p->nb[0] = '[';
	memcpy(p->nb + 1, m, n);
	p->nb[n + 1] = ']';
	return kp_intern(p->nb, n + 2);
}

/* "SYMBOL+0xOFF" (or "SYMBOL"), interned; sym must not be NULL. */
static const char *
sym_off(struct kp_profile *p, const struct kp_frame *f)
{
	size_t n;

	if (!(f->flags & KP_F_OFF))
		return f->sym;
	n = strlen(f->sym);
	reserve(p, n + 24);
	memcpy(p->nb, f->sym, n);
	n += (size_t)snprintf(p->nb + n, 24, "+0x%llx",
			      (unsigned long long)f->off);
	return kp_intern(p->nb, n);
}

/*
 * kp_module_norm(m), when a key holds its module (KP_BY_MODULE, or
 * with_module), else NULL.  Frames come module by module, so the last
 * one is kept: the norm interns a string.
 */
static const char *
module_norm(struct kp_profile *p, const char *m)
{
	if (p->by != KP_BY_MODULE && !p->with_module)
		return NULL;
	if (m != p->last_mod || !p->last_norm_set) {
		p->last_mod = m;
		p->last_norm = kp_module_norm(m);
		p->last_norm_set = true;
	}
	return p->last_norm;
}

static uint32_t
make_key(struct kp_profile *p, const struct kp_frame *f)
{
	const char *sym = f->sym == p->unknown ? NULL : f->sym;
	const char *mod = module_norm(p, f->module);
	const char *name, *rest;
	size_t n;

	switch (p->by) {
	case KP_BY_MODULE:
		/* user time (no module) is "[user]", as its frame says */
		name = mod ? mod :
		       sym && strcmp(sym, KP_USER_FRAME) == 0 ? sym :
							      p->unknown;
		return key_for(p, name, mod);
	case KP_BY_ADDRESS:
		if (f->flags & KP_F_ADDR) {
			rest = sym ? sym_off(p, f) : bracket_module(p, f->module);
			n = strlen(rest);
			reserve(p, n + 24);
			n = (size_t)snprintf(p->nb, p->ncap, "0x%llx %s",
					     (unsigned long long)f->addr, rest);
			name = kp_intern(p->nb, n);
			break;
		}
		/* FALLTHROUGH */
	case KP_BY_OFFSET:
		if (sym) {
			name = sym_off(p, f);
		} else if (f->module && (f->flags & KP_F_OFF)) {
			/* SystemTap's "0xADDR [module+0xOFF/0xSIZE]" */
			rest = bracket_module(p, f->module);
			n = strlen(rest);
			reserve(p, n + 24);
			n = (size_t)snprintf(p->nb, p->ncap, "%s+0x%llx", rest,
					     (unsigned long long)f->off);
			name = kp_intern(p->nb, n);
		} else if (f->flags & KP_F_ADDR) {
			reserve(p, 24);
			n = (size_t)snprintf(p->nb, 24, "0x%llx",
					     (unsigned long long)f->addr);
			name = kp_intern(p->nb, n);
		} else
			name = bracket_module(p, f->module);
		break;
	case KP_BY_FUNCTION:
	default:
		name = sym ? sym : bracket_module(p, f->module);
		break;
	}
	return key_for(p, name, mod);
}

/*
 * What make_key reads of a frame: the symbol, and the module where the
 * key names it (no symbol, "[unknown]", KP_BY_MODULE, with_module); the
 * address and offset where the key has them.  KP_BY_ADDRESS falls back
 * to KP_BY_OFFSET's name, which needs the same fields.
 */
const struct kp_frame *
kp_profile_reduce(const struct kp_frame *f, enum kp_by by, bool with_module)
{
	static const char *unknown;
	struct kp_frame g;

	if (!unknown)
		unknown = kp_intern_str("[unknown]");
	memset(&g, 0, sizeof(g));
	g.sym = f->sym;
	if (!f->sym || f->sym == unknown || with_module || by != KP_BY_FUNCTION)
		g.module = f->module;
	if (by == KP_BY_ADDRESS || by == KP_BY_OFFSET) {
		g.flags = f->flags & (KP_F_ADDR | KP_F_OFF);
		if (g.flags & KP_F_ADDR)
			g.addr = f->addr;
		if (g.flags & KP_F_OFF)
			g.off = f->off;
	}
	return kp_frame_intern(&g);
}

/*
 * A frame's key, by the frame's id (an array, not a table keyed by
 * pointer: on a real capture most frames are looked up cold, and the
 * array of 4-byte keys stays in the cache where a table did not).
 */
uint32_t
kp_profile_key(struct kp_profile *p, const struct kp_frame *f)
{
	uint32_t id;

	p->fkey = kp_grow_for(p->fkey, &p->fcap, sizeof(*p->fkey), f->id);
	if (p->fkey[f->id])
		return p->fkey[f->id] - 1;
	id = make_key(p, f);
	p->fkey[f->id] = id + 1;
	return id;
}

void
kp_profile_keys(struct kp_profile *p, const struct kp_frame *const *frames,
		size_t n, uint32_t *keys)
{
	size_t i;

	for (i = 0; i < n; i++)
		keys[i] = kp_profile_key(p, frames[i]);
}

static inline uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void
kp_profile_add(struct kp_profile *p, const struct kp_frame *const *frames,
	       size_t n, uint64_t count)
{
	size_t i;
	uint32_t k;

	p->total = sat_add(p->total, count);
	if (n == 0)
		return;
	p->epoch++;
	for (i = 0; i < n; i++) {
		k = kp_profile_key(p, frames[i]);
		if (p->keys[k].stamp == p->epoch)
			continue;
		p->keys[k].stamp = p->epoch;
		p->keys[k].k.incl = sat_add(p->keys[k].k.incl, count);
	}
	k = kp_profile_key(p, frames[0]);
	p->keys[k].k.excl = sat_add(p->keys[k].k.excl, count);
}

/* kp_profile_key by the frame's id, the frame read only for a new key */
static inline uint32_t
key_of_id(struct kp_profile *p, const struct kp_frame *f, uint32_t id)
{
	if (id < p->fcap && p->fkey[id])
		return p->fkey[id] - 1;
	return kp_profile_key(p, f);
}

void
kp_profile_add_ids(struct kp_profile *p, const struct kp_frame *const *frames,
		   const uint32_t *ids, size_t n, uint64_t count)
{
	size_t i;
	uint32_t k, leaf;

	p->total = sat_add(p->total, count);
	if (n == 0)
		return;
	p->epoch++;
	leaf = key_of_id(p, frames[0], ids[0]);
	for (i = 0; i < n; i++) {
		k = i ? key_of_id(p, frames[i], ids[i]) : leaf;
		if (p->keys[k].stamp == p->epoch)
			continue;
		p->keys[k].stamp = p->epoch;
		p->keys[k].k.incl = sat_add(p->keys[k].k.incl, count);
	}
	p->keys[leaf].k.excl = sat_add(p->keys[leaf].k.excl, count);
}

void
kp_profile_add_agg(struct kp_profile *p, const struct kp_agg *agg)
{
	size_t i, n = kp_agg_len(agg);

	for (i = 0; i < n; i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);

		kp_profile_add(p, st->frames, st->n, st->count);
	}
}

size_t
kp_profile_len(const struct kp_profile *p)
{
	return p->len;
}

const struct kp_pkey *
kp_profile_get(const struct kp_profile *p, uint32_t id)
{
	return &p->keys[id].k;
}

uint64_t
kp_profile_total(const struct kp_profile *p)
{
	return p->total;
}

double
kp_profile_pct(const struct kp_profile *p, uint64_t n)
{
	return p->total ? 100.0 * (double)n / (double)p->total : 0.0;
}

size_t
kp_profile_find(const struct kp_profile *p, const char *name,
		const char *module, uint32_t *ids, size_t max)
{
	size_t i, found = 0;

	for (i = 0; i < p->len; i++) {
		if (strcmp(p->keys[i].k.name, name) != 0)
			continue;
		if (module && (!p->keys[i].k.module ||
			       strcmp(p->keys[i].k.module, module) != 0))
			continue;
		if (found < max)
			ids[found] = (uint32_t)i;
		found++;
	}
	return found;
}

int
kp_strcmp_null(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

static int
cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int
cmp_names(const struct kp_pkey *x, const struct kp_pkey *y)
{
	int c = kp_strcmp_null(x->name, y->name);

	return c ? c : kp_strcmp_null(x->module, y->module);
}

struct sort_ctx {
	const struct kp_profile *p;
	bool by_excl;
};

static int
cmp_key(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *ctx = arg;
	const struct kp_pkey *x = &ctx->p->keys[*(const uint32_t *)a].k;
	const struct kp_pkey *y = &ctx->p->keys[*(const uint32_t *)b].k;
	int c;

	if (ctx->by_excl) {
		c = cmp_u64_desc(x->excl, y->excl);
		if (!c)
			c = cmp_u64_desc(x->incl, y->incl);
	} else {
		c = cmp_u64_desc(x->incl, y->incl);
		if (!c)
			c = cmp_u64_desc(x->excl, y->excl);
	}
	return c ? c : cmp_names(x, y);
}

/* A key to sort: its order as three numbers, the first the weightiest
 * (the counts, greatest first; its name's sort number, kp_prefix8: a
 * NULL name as ""), and its id. */
struct sort_ent {
	uint64_t k[3];
	uint32_t id;
};

/*
 * The keys in the order of cmp_key: a radix sort of the three numbers,
 * then each run of equal numbers by cmp_key.  On perf2kp's real capture
 * kp-inclusive's 8,215 keys, most of them tied on their counts, took
 * 1.5 ms with qsort_r and cmp_key alone (a name compared through its
 * key at each tie); 0.8 ms so.
 */
uint32_t *
kp_profile_sorted(const struct kp_profile *p, bool by_excl)
{
	size_t n = p->len, i, j;
	uint32_t *ids = kp_xmalloc((n ? n : 1) * sizeof(*ids));
	struct sort_ent *v = kp_xmalloc((n ? n : 1) * sizeof(*v)),
			*tmp = kp_xmalloc((n ? n : 1) * sizeof(*tmp));
	struct sort_ctx ctx = { p, by_excl };
	const struct kp_pkey *k;
	int w;

	for (i = 0; i < n; i++) {
		k = &p->keys[i].k;
		v[i].k[0] = ~(by_excl ? k->excl : k->incl);
		v[i].k[1] = ~(by_excl ? k->incl : k->excl);
		v[i].k[2] = k->name ? kp_prefix8(k->name,
						 strnlen(k->name, 8), 0)
				    : 0;
		v[i].id = (uint32_t)i;
	}
	for (w = 2; w >= 0; w--) /* (stable: the weightiest last) */
		kp_radix_sort(v, n, sizeof(*v),
			      offsetof(struct sort_ent, k) +
				      (size_t)w * sizeof(v->k[0]),
			      tmp);
	for (i = 0; i < n; i++)
		ids[i] = v[i].id;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].k[0] == v[i].k[0] &&
				v[j].k[1] == v[i].k[1] && v[j].k[2] == v[i].k[2];
		     j++)
			;
		if (j - i > 1)
			qsort_r(ids + i, j - i, sizeof(*ids), cmp_key, &ctx);
	}
	free(v);
	free(tmp);
	return ids;
}

/* ---- call edges ---- */

struct eslot {
	struct kp_pedge e; /* count 0 and caller KP_KEY_NONE: empty */
	uint64_t stamp;
};

static void
etab_grow(struct eslot **tab, size_t *cap)
{
	struct eslot *old = *tab;
	size_t oldcap = *cap, i, j;

	*cap *= 2;
	*tab = kp_xmalloc(*cap * sizeof(**tab));
	for (i = 0; i < *cap; i++)
		(*tab)[i].e.caller = KP_KEY_NONE;
	for (i = 0; i < oldcap; i++) {
		if (old[i].e.caller == KP_KEY_NONE)
			continue;
		j = ptr_hash((void *)(uintptr_t)old[i].e.caller,
			     (void *)(uintptr_t)old[i].e.callee) &
		    (*cap - 1);
		while ((*tab)[j].e.caller != KP_KEY_NONE)
			j = (j + 1) & (*cap - 1);
		(*tab)[j] = old[i];
	}
	free(old);
}

static void
etab_put(struct eslot **tab, size_t *cap, size_t *len, uint32_t caller,
	 uint32_t callee, uint64_t count, uint64_t epoch)
{
	size_t j = ptr_hash((void *)(uintptr_t)caller,
			    (void *)(uintptr_t)callee) &
		   (*cap - 1);
	struct eslot *s;

	for (; (*tab)[j].e.caller != KP_KEY_NONE; j = (j + 1) & (*cap - 1)) {
		s = &(*tab)[j];
		if (s->e.caller == caller && s->e.callee == callee) {
			if (s->stamp != epoch) {
				s->stamp = epoch;
				s->e.count = sat_add(s->e.count, count);
			}
			return;
		}
	}
	(*tab)[j] = (struct eslot){ { caller, callee, count }, epoch };
	if (++*len * 2 > *cap)
		etab_grow(tab, cap);
}

static int
cmp_edge(const void *a, const void *b)
{
	const struct kp_pedge *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

struct kp_pedge *
kp_profile_edges(struct kp_profile *p, const struct kp_agg *agg, size_t *n)
{
	size_t cap = 1024, len = 0, i, j, out;
	struct eslot *tab = kp_xmalloc(cap * sizeof(*tab));
	struct kp_pedge *edges;
	uint64_t epoch = 0;

	for (i = 0; i < cap; i++)
		tab[i].e.caller = KP_KEY_NONE;
	for (i = 0; i < kp_agg_len(agg); i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);

		epoch++;
		for (j = 0; j + 1 < st->n; j++)
			etab_put(&tab, &cap, &len,
				 kp_profile_key(p, st->frames[j + 1]),
				 kp_profile_key(p, st->frames[j]), st->count,
				 epoch);
	}
	edges = kp_xmalloc((len ? len : 1) * sizeof(*edges));
	for (i = 0, out = 0; i < cap; i++)
		if (tab[i].e.caller != KP_KEY_NONE)
			edges[out++] = tab[i].e;
	free(tab);
	qsort(edges, out, sizeof(*edges), cmp_edge);
	*n = out;
	return edges;
}

/* ---- trees ---- */

struct cslot {
	uint32_t parent; /* KP_KEY_NONE: empty */
	uint32_t key;
	uint32_t node;
};

struct kp_tree {
	struct kp_tnode *nodes;
	size_t len, cap;
	struct cslot *tab; /* (parent, key) -> child node */
	size_t tcap;
};

static uint32_t
tree_new_node(struct kp_tree *t, uint32_t parent, uint32_t key)
{
	struct kp_tnode *n;
	uint32_t id;

	if (t->len >= KP_KEY_NONE - 1)
		kp_die("tree of more than %u nodes", KP_KEY_NONE - 1);
	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->nodes = kp_xrealloc(t->nodes, t->cap * sizeof(*t->nodes));
	}
	id = (uint32_t)t->len++;
	n = &t->nodes[id];
	n->key = key;
	n->parent = parent;
	n->child = KP_KEY_NONE;
	n->next = KP_KEY_NONE;
	n->depth = parent == KP_KEY_NONE ? 0 : t->nodes[parent].depth + 1;
	n->total = 0;
	n->self = 0;
	if (parent != KP_KEY_NONE) {
		n->next = t->nodes[parent].child;
		t->nodes[parent].child = id;
	}
	return id;
}

static void
ctab_grow(struct kp_tree *t)
{
	struct cslot *old = t->tab;
	size_t oldcap = t->tcap, i, j;

	t->tcap *= 2;
	t->tab = kp_xmalloc(t->tcap * sizeof(*t->tab));
	for (i = 0; i < t->tcap; i++)
		t->tab[i].parent = KP_KEY_NONE;
	for (i = 0; i < oldcap; i++) {
		if (old[i].parent == KP_KEY_NONE)
			continue;
		j = ptr_hash((void *)(uintptr_t)old[i].parent,
			     (void *)(uintptr_t)old[i].key) &
		    (t->tcap - 1);
		while (t->tab[j].parent != KP_KEY_NONE)
			j = (j + 1) & (t->tcap - 1);
		t->tab[j] = old[i];
	}
	free(old);
}

static uint32_t
tree_child(struct kp_tree *t, uint32_t parent, uint32_t key)
{
	size_t j = ptr_hash((void *)(uintptr_t)parent,
			    (void *)(uintptr_t)key) &
		   (t->tcap - 1);
	uint32_t id;

	for (; t->tab[j].parent != KP_KEY_NONE; j = (j + 1) & (t->tcap - 1))
		if (t->tab[j].parent == parent && t->tab[j].key == key)
			return t->tab[j].node;
	id = tree_new_node(t, parent, key);
	t->tab[j] = (struct cslot){ parent, key, id };
	if (t->len * 2 > t->tcap)
		ctab_grow(t);
	return id;
}

struct kp_tree *
kp_profile_tree(struct kp_profile *p, const struct kp_agg *agg,
		enum kp_tree_dir dir, uint32_t root, size_t max_depth)
{
	struct kp_tree *t = kp_xcalloc(1, sizeof(*t));
	size_t i, j, n, start, depth;
	uint32_t node, *k;
	bool whole = root == KP_KEY_NONE, found;

	t->tcap = 1024;
	t->tab = kp_xmalloc(t->tcap * sizeof(*t->tab));
	for (i = 0; i < t->tcap; i++)
		t->tab[i].parent = KP_KEY_NONE;
	tree_new_node(t, KP_KEY_NONE, root);
	for (i = 0; i < kp_agg_len(agg); i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);

		n = st->n;
		if (n == 0)
			continue;
		if (p->kbufcap < n) {
			p->kbufcap = n * 2;
			p->kbuf = kp_xrealloc(p->kbuf,
					      p->kbufcap * sizeof(*p->kbuf));
		}
		k = p->kbuf;
		kp_profile_keys(p, st->frames, n, k);
		/*
		 * Walk the path as positions into k (leaf first).  Callees
		 * go from position start towards 0, callers towards n-1.
		 */
		if (whole) {
			/* one before the first position (wraps to 0) */
			start = dir == KP_TREE_CALLEES ? n : SIZE_MAX;
		} else {
			found = false;
			for (start = n; start-- > 0;)
				if (k[start] == root) {
					found = true;
					break;
				}
			if (!found)
				continue;
		}
		node = 0;
		t->nodes[0].total = sat_add(t->nodes[0].total, st->count);
		depth = 0;
		j = start;
		for (;;) {
			if (dir == KP_TREE_CALLEES) {
				if (j == 0)
					break;
				j--;
			} else {
				if (j + 1 >= n)
					break;
				j++;
			}
			if (max_depth && depth == max_depth)
				goto next;
			depth++;
			node = tree_child(t, node, k[j]);
			t->nodes[node].total =
				sat_add(t->nodes[node].total, st->count);
		}
		t->nodes[node].self = sat_add(t->nodes[node].self, st->count);
next:;
	}
	return t;
}

size_t
kp_tree_len(const struct kp_tree *t)
{
	return t->len;
}

const struct kp_tnode *
kp_tree_node(const struct kp_tree *t, uint32_t i)
{
	return &t->nodes[i];
}

struct tsort_ctx {
	const struct kp_tree *t;
	const struct kp_profile *p;
};

static int
cmp_tnode(const void *a, const void *b, void *arg)
{
	const struct tsort_ctx *ctx = arg;
	const struct kp_tnode *x = &ctx->t->nodes[*(const uint32_t *)a];
	const struct kp_tnode *y = &ctx->t->nodes[*(const uint32_t *)b];
	int c = cmp_u64_desc(x->total, y->total);

	if (c)
		return c;
	if (x->key == y->key)
		return 0;
	if (x->key == KP_KEY_NONE || y->key == KP_KEY_NONE)
		return x->key == KP_KEY_NONE ? -1 : 1;
	return cmp_names(&ctx->p->keys[x->key].k, &ctx->p->keys[y->key].k);
}

void
kp_tree_sort(struct kp_tree *t, const struct kp_profile *p)
{
	struct tsort_ctx ctx = { t, p };
	uint32_t *kids = NULL, c;
	size_t cap = 0, n, i, j;

	for (i = 0; i < t->len; i++) {
		n = 0;
		for (c = t->nodes[i].child; c != KP_KEY_NONE;
		     c = t->nodes[c].next) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				kids = kp_xrealloc(kids, cap * sizeof(*kids));
			}
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(kids, n, sizeof(*kids), cmp_tnode, &ctx);
		t->nodes[i].child = kids[0];
		for (j = 0; j + 1 < n; j++)
			t->nodes[kids[j]].next = kids[j + 1];
		t->nodes[kids[n - 1]].next = KP_KEY_NONE;
	}
	free(kids);
}

void
kp_tree_free(struct kp_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->tab);
	free(t);
}

/* ---- folded stacks ---- */

struct kp_folded {
	const struct kp_frame **frames;
	size_t cap;
	struct kp_slots names; /* name -> frame: each name interned once */
};

struct kp_folded *
kp_folded_new(void)
{
	struct kp_folded *fd = kp_xcalloc(1, sizeof(*fd));

	fd->cap = 64;
	fd->frames = kp_xmalloc(fd->cap * sizeof(*fd->frames));
	return fd;
}

void
kp_folded_free(struct kp_folded *fd)
{
	if (!fd)
		return;
	free(fd->frames);
	kp_slots_free(&fd->names);
	free(fd);
}

/*
 * The frame " : NAME" for s[0..len).  Every name reads back: the kp
 * writer quotes those that bare would not (kp(5)).
 */
static const struct kp_frame *
name_frame(struct kp_folded *fd, const char *s, size_t len)
{
	uint64_t h = kp_hash(s, len);
	size_t mask, j;
	const struct kp_frame *fp;
	struct kp_slot *sl;

	kp_slots_reserve(&fd->names, 1024);
	mask = fd->names.cap - 1;
	for (j = h & mask; (fp = fd->names.tab[j].p) != NULL;
	     j = (j + 1) & mask)
		if (fd->names.tab[j].hash == h && kp_intern_is(fp->sym, s, len))
			return fp;
	/* " : NAME": no address, no module */
	fp = kp_frame_make(0, 0, kp_intern(s, len), NULL);
	sl = &fd->names.tab[j];
	sl->hash = h;
	sl->p = (void *)fp;
	fd->names.n++;
	return fp;
}

/*
 * Accepted lines (FlameGraph's stackcollapse-*.pl, inferno, kp-fold):
 *
 *	swapper;start_kernel;rest_init;cpu_idle;default_idle 1168
 *	bash;[unknown];__libc_start_main;main 12
 *	java;Foo::bar(int) const;operator new 3
 *	single_frame 1
 *
 * The count is the text after the last blank; blanks around the line
 * and before the count are ignored, except after a ';' ("a;  1": the
 * leaf is " ").  An empty name ("a;;b 1", "a; 1") is an error.
 */
int
kp_folded_parse(struct kp_folded *fd, const char *s, size_t len,
		const struct kp_frame *const **frames, size_t *n,
		uint64_t *count, const char **why)
{
	const char *e = s + len, *c, *p, *q;
	size_t m = 0, i;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (c = e; c > s && c[-1] != ' ' && c[-1] != '\t'; c--)
		;
	if (c == s) {
		*why = "no count (expected 'frame;frame;... COUNT')";
		return -1;
	}
	if (kp_parse_u64(c, (size_t)(e - c), 10, count) < 0) {
		*why = "the count is not a decimal number of at most 64 bits";
		return -1;
	}
	for (e = c; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	/* "a;  1": the leaf is named " ", as the peers name a frame perf
	 * printed without a symbol; the last blank is the separator */
	if (e > s && e[-1] == ';' && c - e >= 2)
		e = c - 1;
	if (memchr(s, '\0', (size_t)(e - s))) {
		*why = "NUL byte in a frame name";
		return -1;
	}
	for (p = s; p <= e; p = q + 1) {
		q = memchr(p, ';', (size_t)(e - p));
		if (!q)
			q = e;
		if (q == p) {
			*why = "empty frame name (';;', or ';' at an end)";
			return -1;
		}
		if (m == fd->cap) {
			fd->cap *= 2;
			fd->frames = kp_xrealloc(fd->frames,
						 fd->cap * sizeof(*fd->frames));
		}
		fd->frames[m++] = name_frame(fd, p, (size_t)(q - p));
	}
	/* root first in the text, leaf first in kp */
	for (i = 0; i < m / 2; i++) {
		const struct kp_frame *t = fd->frames[i];

		fd->frames[i] = fd->frames[m - 1 - i];
		fd->frames[m - 1 - i] = t;
	}
	*frames = fd->frames;
	*n = m;
	return 0;
}
