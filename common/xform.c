/*
 * xform.c - kp-grep's record filters and frame rewrites (xform.h).
 * Regexes run once per distinct name: their results are kept by the
 * key id common/profile.c gives each frame's name.
 */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "profile.h"
#include "xform.h"

struct kp_xform {
	regex_t re[KP_XRE_N];
	bool has[KP_XRE_N];
	bool invert, on_module, clones, collapse, no_idle;
	int ctx;
	const char *merge_mod; /* interned, or NULL */
	const struct kp_frame *merged; /* its frame: "[M]" of module M */
	struct kp_profile *fn, *mod; /* function and module keys */
	/* per key id of the matched profile: bit 2w "known", 2w+1 "match" */
	uint8_t *memo;
	size_t memocap;
	const struct kp_frame **buf;
	size_t cap;
};

struct kp_xform *
kp_xform_new(void)
{
	struct kp_xform *x = kp_xcalloc(1, sizeof(*x));

	x->ctx = -1;
	x->fn = kp_profile_new(KP_BY_FUNCTION, false);
	x->mod = kp_profile_new(KP_BY_MODULE, false);
	return x;
}

void
kp_xform_free(struct kp_xform *x)
{
	int i;

	if (!x)
		return;
	for (i = 0; i < KP_XRE_N; i++)
		if (x->has[i])
			regfree(&x->re[i]);
	kp_profile_free(x->fn);
	kp_profile_free(x->mod);
	free(x->memo);
	free(x->buf);
	free(x);
}

int
kp_xform_regex(struct kp_xform *x, enum kp_xre which, const char *re,
	       char *err, size_t errlen)
{
	int rc;

	if (x->has[which])
		regfree(&x->re[which]);
	x->has[which] = false;
	rc = regcomp(&x->re[which], re, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &x->re[which], err, errlen);
		return -1;
	}
	x->has[which] = true;
	return 0;
}

void
kp_xform_invert(struct kp_xform *x, bool on)
{
	x->invert = on;
}

void
kp_xform_modules(struct kp_xform *x, bool on)
{
	x->on_module = on;
}

void
kp_xform_context(struct kp_xform *x, int ctx, bool no_idle)
{
	x->ctx = ctx;
	x->no_idle = no_idle;
}

void
kp_xform_merge_clones(struct kp_xform *x, bool on)
{
	x->clones = on;
}

void
kp_xform_merge_module(struct kp_xform *x, const char *module)
{
	char *name;

	x->merge_mod = NULL;
	if (!module)
		return;
	x->merge_mod = kp_intern_str(module);
	name = kp_xmalloc(strlen(module) + 3);
	sprintf(name, "[%s]", module);
	x->merged = kp_frame_make(0, 0, kp_intern_str(name), x->merge_mod);
	free(name);
}

void
kp_xform_collapse_recursion(struct kp_xform *x, bool on)
{
	x->collapse = on;
}

/* Does frame f match regex w? */
static bool
matches(struct kp_xform *x, enum kp_xre w, const struct kp_frame *f)
{
	struct kp_profile *p = x->on_module ? x->mod : x->fn;
	uint32_t id = kp_profile_key(p, f);
	uint8_t known = (uint8_t)(1u << (2 * w)), hit = (uint8_t)(known << 1);

	x->memo = kp_grow_for(x->memo, &x->memocap, 1, id);
	if (!(x->memo[id] & known)) {
		x->memo[id] |= known;
		if (regexec(&x->re[w], kp_profile_get(p, id)->name, 0, NULL,
			    0) == 0)
			x->memo[id] |= hit;
	}
	return x->memo[id] & hit;
}

static bool
keep_record(struct kp_xform *x, const struct kp_stack *st)
{
	enum kp_context c;
	size_t i;
	bool any = false;

	if (x->ctx >= 0 || x->no_idle) {
		c = kp_context_of(st->frames, st->n);
		if ((x->ctx >= 0 && (int)c != x->ctx) ||
		    (x->no_idle && c == KP_CTX_IDLE))
			return false;
	}
	if (!x->has[KP_XRE_MATCH])
		return true;
	for (i = 0; i < st->n && !any; i++)
		any = matches(x, KP_XRE_MATCH, st->frames[i]);
	return any != x->invert;
}

static const struct kp_frame *
clone_base(const struct kp_frame *f)
{
	struct kp_frame g;
	size_t n;

	if (!f->sym || (n = kp_clone_base_len(f->sym)) == strlen(f->sym))
		return f;
	g = *f;
	g.sym = kp_intern(f->sym, n);
	g.flags &= ~(uint32_t)(KP_F_OFF | KP_F_SIZE);
	g.off = g.size = 0;
	return kp_frame_intern(&g);
}

static bool
in_module(const struct kp_xform *x, const struct kp_frame *f)
{
	return f->module &&
	       (f->module == x->merge_mod ||
		kp_module_norm(f->module) == x->merge_mod);
}

bool
kp_xform_apply(struct kp_xform *x, const struct kp_stack *st,
	       const struct kp_frame *const **frames, size_t *n)
{
	size_t lo = 0, hi = st->n, i, m = 0;
	const struct kp_frame *f;

	if (!keep_record(x, st))
		return false;
	if (x->cap < st->n + 1) {
		x->cap = 2 * st->n + 1;
		x->buf = kp_xrealloc(x->buf, x->cap * sizeof(*x->buf));
	}
	/* focus: frames[0 .. outermost match] */
	if (x->has[KP_XRE_FOCUS]) {
		for (hi = st->n; hi > 0; hi--)
			if (matches(x, KP_XRE_FOCUS, st->frames[hi - 1]))
				break;
		if (hi == 0)
			return false;
	}
	/* prune: frames[innermost match .. hi) */
	if (x->has[KP_XRE_PRUNE])
		for (i = 0; i < hi; i++)
			if (matches(x, KP_XRE_PRUNE, st->frames[i])) {
				lo = i;
				break;
			}
	/* root first, so that each frame is compared with its caller */
	for (i = hi; i-- > lo;) {
		f = st->frames[i];
		if (x->has[KP_XRE_HIDE] && matches(x, KP_XRE_HIDE, f))
			continue;
		if (x->clones)
			f = clone_base(f);
		if (x->merge_mod && in_module(x, f)) {
			f = x->merged;
			if (m && x->buf[m - 1] == f)
				continue;
		}
		if (x->collapse && m &&
		    kp_profile_key(x->fn, x->buf[m - 1]) ==
			    kp_profile_key(x->fn, f))
			continue;
		x->buf[m++] = f;
	}
	/* a record with every frame hidden keeps its samples (kp has no
	 * empty record) */
	if (m == 0)
		x->buf[m++] = kp_frame_make(0, 0, kp_intern_str("[hidden]"), NULL);
	/* back to leaf first */
	for (i = 0; i < m / 2; i++) {
		f = x->buf[i];
		x->buf[i] = x->buf[m - 1 - i];
		x->buf[m - 1 - i] = f;
	}
	*frames = x->buf;
	*n = m;
	return true;
}
