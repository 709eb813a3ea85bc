/* test_profile.c - unit tests of common/profile.c: keys, counts, edges, trees */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#include "check.h"

static const struct kp_frame *
fr(const char *sym, const char *mod)
{
	return kp_frame_make(0, 0, sym, mod);
}

/* Add a stack given root first as "a;b;c" (like the folded format). */
static void
add(struct kp_agg *agg, const char *folded, uint64_t count)
{
	const struct kp_frame *f[32];
	char buf[256], *s, *save = NULL;
	size_t n = 0, i;

	snprintf(buf, sizeof(buf), "%s", folded);
	for (s = strtok_r(buf, ";", &save); s; s = strtok_r(NULL, ";", &save))
		f[n++] = fr(s, "kernel");
	for (i = 0; i < n / 2; i++) {
		const struct kp_frame *t = f[i];

		f[i] = f[n - 1 - i];
		f[n - 1 - i] = t;
	}
	kp_agg_add(agg, f, n, count);
}

static const struct kp_pkey *
get(struct kp_profile *p, const char *name)
{
	uint32_t id;

	if (kp_profile_find(p, name, NULL, &id, 1) != 1)
		return NULL;
	return kp_profile_get(p, id);
}

static void
test_counts(void)
{
	struct kp_agg *agg = kp_agg_new();
	struct kp_profile *p = kp_profile_new(KP_BY_FUNCTION, false);
	const struct kp_pkey *k;
	uint32_t *ids;

	add(agg, "main;f;f;f;g", 3); /* recursion counts once */
	add(agg, "main;g", 2);
	add(agg, "main;f", 5);
	kp_profile_add_agg(p, agg);
	CHECK(kp_profile_total(p) == 10);
	CHECK(kp_profile_len(p) == 3);
	k = get(p, "main");
	CHECK(k && k->incl == 10 && k->excl == 0);
	k = get(p, "f");
	CHECK(k && k->incl == 8 && k->excl == 5);
	k = get(p, "g");
	CHECK(k && k->incl == 5 && k->excl == 5);
	CHECK(kp_profile_pct(p, 5) == 50.0);
	CHECK(get(p, "nope") == NULL);

	ids = kp_profile_sorted(p, false);
	CHECK(strcmp(kp_profile_get(p, ids[0])->name, "main") == 0);
	CHECK(strcmp(kp_profile_get(p, ids[1])->name, "f") == 0);
	CHECK(strcmp(kp_profile_get(p, ids[2])->name, "g") == 0);
	free(ids);
	ids = kp_profile_sorted(p, true); /* f and g tie at 5: incl breaks it */
	CHECK(strcmp(kp_profile_get(p, ids[0])->name, "f") == 0);
	CHECK(strcmp(kp_profile_get(p, ids[1])->name, "g") == 0);
	CHECK(strcmp(kp_profile_get(p, ids[2])->name, "main") == 0);
	free(ids);
	kp_profile_free(p);
	kp_agg_free(agg);
}

static void
test_keys(void)
{
	struct kp_profile *fn = kp_profile_new(KP_BY_FUNCTION, false);
	struct kp_profile *fm = kp_profile_new(KP_BY_FUNCTION, true);
	struct kp_profile *mod = kp_profile_new(KP_BY_MODULE, false);
	struct kp_profile *addr = kp_profile_new(KP_BY_ADDRESS, false);
	struct kp_profile *off = kp_profile_new(KP_BY_OFFSET, false);
	struct kp_frame f;
	const struct kp_frame *a, *b, *u, *n, *v;

	memset(&f, 0, sizeof(f));
	f.addr = 0xffffffff81000010;
	f.off = 0x10;
	f.flags = KP_F_ADDR | KP_F_OFF;
	f.sym = kp_intern_str("vfs_read");
	f.module = kp_intern_str("[kernel.kallsyms]");
	a = kp_frame_intern(&f);
	f.addr = 0x401000;
	f.sym = kp_intern_str("main");
	f.module = kp_intern_str("/bin/a");
	b = kp_frame_intern(&f);
	f.module = kp_intern_str("/bin/b");
	v = kp_frame_intern(&f);
	u = kp_frame_make(0x4ce8, KP_F_ADDR, "[unknown]", "/usr/bin/perf");
	n = kp_frame_make(0, 0, NULL, NULL);

	CHECK(strcmp(kp_profile_get(fn, kp_profile_key(fn, a))->name,
		     "vfs_read") == 0);
	CHECK(kp_profile_get(fn, kp_profile_key(fn, a))->module == NULL);
	CHECK(kp_profile_key(fn, b) == kp_profile_key(fn, v));
	CHECK(kp_profile_key(fm, b) != kp_profile_key(fm, v));
	CHECK(strcmp(kp_profile_get(fm, kp_profile_key(fm, a))->module,
		     "kernel") == 0);
	CHECK(strcmp(kp_profile_get(fn, kp_profile_key(fn, u))->name,
		     "[/usr/bin/perf]") == 0);
	CHECK(strcmp(kp_profile_get(fn, kp_profile_key(fn, n))->name,
		     "[unknown]") == 0);
	CHECK(strcmp(kp_profile_get(mod, kp_profile_key(mod, a))->name,
		     "kernel") == 0);
	CHECK(strcmp(kp_profile_get(mod, kp_profile_key(mod, b))->name,
		     "/bin/a") == 0);
	CHECK(strcmp(kp_profile_get(mod, kp_profile_key(mod, n))->name,
		     "[unknown]") == 0);
	CHECK(strcmp(kp_profile_get(addr, kp_profile_key(addr, a))->name,
		     "0xffffffff81000010 vfs_read+0x10") == 0);
	CHECK(strcmp(kp_profile_get(addr, kp_profile_key(addr, u))->name,
		     "0x4ce8 [/usr/bin/perf]") == 0);
	CHECK(strcmp(kp_profile_get(addr, kp_profile_key(addr, n))->name,
		     "[unknown]") == 0);
	CHECK(strcmp(kp_profile_get(off, kp_profile_key(off, a))->name,
		     "vfs_read+0x10") == 0);
	CHECK(strcmp(kp_profile_get(off, kp_profile_key(off, u))->name,
		     "0x4ce8") == 0);
	CHECK(kp_by_parse("function+offset") == KP_BY_OFFSET);
	CHECK(kp_by_parse("stack") == -1);
	CHECK(strcmp(kp_by_name(KP_BY_ADDRESS), "address") == 0);
	kp_profile_free(fn);
	kp_profile_free(fm);
	kp_profile_free(mod);
	kp_profile_free(addr);
	kp_profile_free(off);
}

static const struct kp_tnode *
child(const struct kp_tree *t, const struct kp_profile *p,
      const struct kp_tnode *parent, const char *name)
{
	uint32_t c;

	for (c = parent->child; c != KP_KEY_NONE; c = kp_tree_node(t, c)->next)
		if (strcmp(kp_profile_get(p, kp_tree_node(t, c)->key)->name,
			   name) == 0)
			return kp_tree_node(t, c);
	return NULL;
}

static void
test_trees(void)
{
	struct kp_agg *agg = kp_agg_new();
	struct kp_profile *p = kp_profile_new(KP_BY_FUNCTION, false);
	struct kp_tree *t;
	const struct kp_tnode *r, *c, *d;
	struct kp_pedge *e;
	uint32_t f;
	size_t n;

	add(agg, "main;f;f;g", 3);
	add(agg, "main;g", 2);
	add(agg, "main;f", 5);
	add(agg, "f", 1);
	kp_profile_add_agg(p, agg);
	CHECK(kp_profile_find(p, "f", NULL, &f, 1) == 1);

	/* callees of f: outermost f; f -> f -> g (3), f (5 + 1 self) */
	t = kp_profile_tree(p, agg, KP_TREE_CALLEES, f, 0);
	kp_tree_sort(t, p);
	r = kp_tree_node(t, 0);
	CHECK(r->total == 9 && r->self == 6 && r->key == f);
	c = child(t, p, r, "f");
	CHECK(c && c->total == 3 && c->self == 0 && c->depth == 1);
	d = c ? child(t, p, c, "g") : NULL;
	CHECK(d && d->total == 3 && d->self == 3 && d->depth == 2);
	kp_tree_free(t);

	/* depth 1: only the direct callees, no self below the cut */
	t = kp_profile_tree(p, agg, KP_TREE_CALLEES, f, 1);
	CHECK(kp_tree_len(t) == 2);
	kp_tree_free(t);

	/* callers of f: main (8), and 1 sample where f is outermost */
	t = kp_profile_tree(p, agg, KP_TREE_CALLERS, f, 0);
	r = kp_tree_node(t, 0);
	CHECK(r->total == 9 && r->self == 1);
	c = child(t, p, r, "main");
	CHECK(c && c->total == 8 && c->self == 8);
	kp_tree_free(t);

	/* the whole top-down tree, sorted: main (10) before f (1) */
	t = kp_profile_tree(p, agg, KP_TREE_CALLEES, KP_KEY_NONE, 0);
	kp_tree_sort(t, p);
	r = kp_tree_node(t, 0);
	CHECK(r->total == 11 && r->key == KP_KEY_NONE);
	c = kp_tree_node(t, r->child);
	CHECK(strcmp(kp_profile_get(p, c->key)->name, "main") == 0 &&
	      c->total == 10);
	c = kp_tree_node(t, c->next);
	CHECK(strcmp(kp_profile_get(p, c->key)->name, "f") == 0 &&
	      c->total == 1 && c->self == 1 && c->next == KP_KEY_NONE);
	kp_tree_free(t);

	/* edges: f->f counts once per stack, like inclusive */
	e = kp_profile_edges(p, agg, &n);
	CHECK(n == 4); /* main->f, f->f, f->g, main->g */
	for (size_t i = 0; i < n; i++) {
		const char *a = kp_profile_get(p, e[i].caller)->name;
		const char *b = kp_profile_get(p, e[i].callee)->name;

		if (!strcmp(a, "main") && !strcmp(b, "f"))
			CHECK(e[i].count == 8);
		else if (!strcmp(a, "f") && !strcmp(b, "f"))
			CHECK(e[i].count == 3);
		else if (!strcmp(a, "f") && !strcmp(b, "g"))
			CHECK(e[i].count == 3);
		else
			CHECK(!strcmp(a, "main") && !strcmp(b, "g") &&
			      e[i].count == 2);
	}
	free(e);
	kp_profile_free(p);
	kp_agg_free(agg);
}

static void
test_saturate(void)
{
	struct kp_agg *agg = kp_agg_new();
	struct kp_profile *p = kp_profile_new(KP_BY_FUNCTION, false);

	add(agg, "a;b", UINT64_MAX - 1);
	add(agg, "a;c", 5);
	kp_profile_add_agg(p, agg);
	CHECK(kp_profile_total(p) == UINT64_MAX);
	CHECK(get(p, "a")->incl == UINT64_MAX);
	kp_profile_free(p);
	kp_agg_free(agg);
}

/*
 * kp_profile_reduce keeps what a key is made of: under every key, a frame
 * and its reduced frame get the same name and module, for frames with
 * and without each field.
 */
static void
test_reduce(void)
{
	static const char *const syms[] = { NULL, "f", "[unknown]", "[user]" };
	static const char *const mods[] = { NULL, "kernel", "vmlinux",
					    "/usr/lib/libc.so.6" };
	static const unsigned flags[] = { 0, KP_F_ADDR, KP_F_OFF,
					  KP_F_ADDR | KP_F_OFF | KP_F_SIZE,
					  KP_F_ADDR | KP_F_INLINE,
					  KP_F_INEXACT };
	enum kp_by by;
	size_t a, b, c, m;
	struct kp_frame f;
	const struct kp_frame *g, *r;
	const struct kp_pkey *x, *y;
	struct kp_profile *p;

	for (by = KP_BY_FUNCTION; by <= KP_BY_OFFSET; by++)
		for (m = 0; m < 2; m++) {
			p = kp_profile_new(by, m);
			for (a = 0; a < 4; a++)
				for (b = 0; b < 4; b++)
					for (c = 0; c < 6; c++) {
						memset(&f, 0, sizeof(f));
						f.sym = kp_intern_str(syms[a]);
						f.module = kp_intern_str(mods[b]);
						f.flags = flags[c];
						f.addr = 0x1000 + c;
						f.off = 0x10 + c;
						f.size = 0x40;
						g = kp_frame_intern(&f);
						r = kp_profile_reduce(&f, by, m);
						x = kp_profile_get(p,
							kp_profile_key(p, g));
						y = kp_profile_get(p,
							kp_profile_key(p, r));
						CHECK(x == y);
						CHECK(kp_profile_reduce(g, by, m) ==
						      r);
					}
			kp_profile_free(p);
		}
}

int
main(void)
{
	kp_progname = "test_profile";
	test_counts();
	test_keys();
	test_trees();
	test_saturate();
	test_reduce();
	return CHECK_DONE();
}
