/* frame.c - the frame model: interning, the frame-line grammar, names */
#include <string.h>

#include "internal.h"

/* The frames, in the arena, in open-addressing tables (see strtab.c);
 * their ids from one count. */
static struct kp_shard frames[KP_SHARDS];
static size_t nframes;

const struct kp_frame *
kp_frame_intern(const struct kp_frame *f)
{
	uint64_t h = kp_hash(f, KP_FRAME_KEY);
	struct kp_shard *sh = &frames[KP_SHARD_OF(h)];
	size_t mask, j, id;
	struct kp_frame *e;

	kp_shard_lock(sh);
	kp_slots_reserve(&sh->t, 4096 / KP_SHARDS);
	mask = sh->t.cap - 1;
	for (j = h & mask; (e = sh->t.tab[j].p) != NULL; j = (j + 1) & mask)
		if (sh->t.tab[j].hash == h && memcmp(e, f, KP_FRAME_KEY) == 0)
			goto out;
	id = __atomic_fetch_add(&nframes, 1, __ATOMIC_RELAXED);
	if (id >= UINT32_MAX)
		kp_die("more than %u distinct frames", UINT32_MAX);
	e = kp_arena_alloc(sizeof(*e));
	*e = *f;
	e->id = (uint32_t)id;
	sh->t.tab[j].hash = h;
	sh->t.tab[j].p = e;
	sh->t.n++;
out:
	kp_shard_unlock(sh);
	return e;
}

const struct kp_frame *
kp_frame_make(uint64_t addr, unsigned flags, const char *sym,
	      const char *module)
{
	struct kp_frame f;

	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.flags = flags;
	f.sym = kp_intern_str(sym);
	f.module = kp_intern_str(module);
	return kp_frame_intern(&f);
}

size_t
kp_frame_count(void)
{
	return __atomic_load_n(&nframes, __ATOMIC_RELAXED);
}

static inline bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool
is_hex(char c)
{
	return kp_digit_value[(unsigned char)c] >= 0;
}

/*
 * "+OFF" or "+OFF/SIZE" at the end of [s, e): hex, each with or without
 * 0x.  On success *plus points at the '+'.
 */
static bool
parse_offsize(const char *s, const char *e, const char **plus,
	      struct kp_frame *f)
{
	const char *p = e, *slash = NULL;
	uint64_t off, size;

	while (p > s && p[-1] != '+') {
		if (p[-1] == '/' && !slash)
			slash = p - 1;
		else if (!is_hex(p[-1]) && p[-1] != 'x' && p[-1] != 'X')
			return false;
		p--;
	}
	if (p == s)
		return false;
	if (kp_parse_u64(p, (size_t)((slash ? slash : e) - p), 16, &off) < 0)
		return false;
	if (slash && kp_parse_u64(slash + 1, (size_t)(e - slash - 1), 16,
				  &size) < 0)
		return false;
	*plus = p - 1;
	f->off = off;
	f->flags |= KP_F_OFF;
	if (slash) {
		f->size = size;
		f->flags |= KP_F_SIZE;
	}
	return true;
}

/* Trailing "(inexact)", "(inline)" and "(at FILE:LINE)", any order. */
static const char *
strip_annotations(const char *s, const char *e, struct kp_frame *f,
		  bool at_start)
{
	const char *open, *colon;
	uint64_t line;

	for (;;) {
		if (e - s < 3 || e[-1] != ')')
			return e;
		open = e - 1;
		while (open > s && *open != '(')
			open--;
		/* at_start: s follows a blank, as a symbol after " : " does */
		if (*open != '(' || (open == s ? !at_start : !is_blank(open[-1])))
			return e;
		if (e - open == 9 && memcmp(open, "(inexact)", 9) == 0) {
			f->flags |= KP_F_INEXACT;
		} else if (e - open == 8 && memcmp(open, "(inline)", 8) == 0) {
			f->flags |= KP_F_INLINE;
		} else if (e - open > 5 && memcmp(open, "(at ", 4) == 0) {
			colon = e - 1;
			while (colon > open + 4 && *colon != ':')
				colon--;
			if (colon > open + 4 &&
			    kp_parse_u64(colon + 1, (size_t)(e - 1 - colon - 1),
					 10, &line) == 0 &&
			    line <= UINT32_MAX) {
				f->file = kp_intern(open + 4,
						    (size_t)(colon - open - 4));
				f->line = (uint32_t)line;
			} else {
				f->file = kp_intern(open + 4,
						    (size_t)(e - 1 - open - 4));
			}
		} else {
			return e;
		}
		e = open;
		while (e > s && is_blank(e[-1]))
			e--;
	}
}

/* "[module]", "[module" (no ']') or "[module+0xOFF/0xSIZE]". */
static void
parse_module(const char *p, const char *e, bool with_off, struct kp_frame *f)
{
	const char *plus;

	p++; /* '[' */
	if (e > p && e[-1] == ']')
		e--;
	if (with_off && parse_offsize(p, e, &plus, f))
		e = plus;
	if (e > p)
		f->module = kp_intern(p, (size_t)(e - p));
}

/* The end (after the closing quote) of a quoted symbol at p, or NULL. */
static const char *
quoted_end(const char *p, const char *e)
{
	for (p++; p < e; p++) {
		if (*p == '\\' && p + 1 < e)
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Intern the text of the quoted symbol [p, q), without its escapes. */
static const char *
intern_unquoted(const char *p, const char *q)
{
	static char *buf;
	static size_t cap;
	size_t n = 0;

	if (cap < (size_t)(q - p)) {
		cap = (size_t)(q - p) + 64;
		buf = kp_xrealloc(buf, cap);
	}
	for (p++, q--; p < q; p++) {
		if (*p == '\\' && p + 1 < q)
			p++;
		buf[n++] = *p;
	}
	return kp_intern(buf, n);
}

/*
 * What follows a quoted symbol (q is after its closing quote) up to e:
 * "+OFF/SIZE [MODULE]", each optional.  (The writer quotes a symbol that,
 * bare, would not read back as itself.)
 */
static int
parse_after_quote(const char *q, const char *e, struct kp_frame *f,
		  const char **why)
{
	const char *mod, *plus;

	for (mod = e - 1; mod > q; mod--)
		if (*mod == '[' && is_blank(mod[-1]))
			break;
	if (mod > q && !(e - mod == 1 || (e - mod == 2 && e[-1] == ']'))) {
		parse_module(mod, e, false, f);
		e = mod;
		while (e > q && is_blank(e[-1]))
			e--;
	}
	if (e > q && !(parse_offsize(q, e, &plus, f) && plus == q)) {
		*why = "text after a quoted symbol that is not +OFFSET/SIZE";
		return -1;
	}
	return 0;
}

/* A bare symbol from p to e: "SYMBOL+OFF/SIZE [MODULE]". */
static int
parse_bare(const char *p, const char *e, struct kp_frame *f, const char **why)
{
	const char *mod, *plus;

	/*
	 * MODULE: the last " [" with something in it; an empty "[" or "[]"
	 * stays part of the symbol, so that a writer that leaves out an
	 * absent module cannot expose an earlier " [" of the symbol.
	 */
	for (mod = e - 1; mod > p; mod--)
		if (*mod == '[' && is_blank(mod[-1]))
			break;
	if (mod > p && !(e - mod == 1 || (e - mod == 2 && e[-1] == ']'))) {
		parse_module(mod, e, false, f);
		e = mod;
		while (e > p && is_blank(e[-1]))
			e--;
	}
	if (e > p && parse_offsize(p, e, &plus, f) && plus > p) {
		e = plus;
	} else {
		/* " : +179" is a symbol: drop what parse_offsize set */
		f->flags &= ~(uint32_t)(KP_F_OFF | KP_F_SIZE);
		f->off = 0;
		f->size = 0;
	}
	if (e > p)
		f->sym = kp_intern(p, (size_t)(e - p));
	if (!f->sym && !(f->flags & KP_F_ADDR)) {
		*why = "frame has neither address nor symbol";
		return -1;
	}
	return 0;
}

/* The symbol part of a line, after ": " and its blanks, to e. */
static int
parse_symbol(const char *p, const char *e, struct kp_frame *f,
	     const char **why)
{
	const char *q;

	if (p < e && *p == '"' && (q = quoted_end(p, e)) != NULL) {
		if (parse_after_quote(q, e, f, why) < 0)
			return -1;
		f->sym = intern_unquoted(p, q);
		return 0;
	}
	return parse_bare(p, e, f, why);
}

/*
 * The old perf converter printed the address as the offset: not an
 * offset.  Its size goes with it: a size without an offset is not
 * printed, so two frames would print as one.
 */
static void
drop_addr_offset(struct kp_frame *f)
{
	if ((f->flags & KP_F_ADDR) && (f->flags & KP_F_OFF) && f->addr &&
	    f->off == f->addr) {
		f->flags &= ~(uint32_t)(KP_F_OFF | KP_F_SIZE);
		f->off = 0;
		f->size = 0;
	}
}

bool
kp_sym_needs_quote(const char *s)
{
	struct kp_frame tmp;
	const char *e, *plus, *p;
	size_t n = strlen(s);

	if (n == 0 || s[0] == '"' || is_blank(s[0]) || is_blank(s[n - 1]) ||
	    s[n - 1] == '\r')
		return true;
	for (p = s + 1; (p = strchr(p, '[')) != NULL; p++)
		if (is_blank(p[-1]))
			return true;
	e = s + n;
	memset(&tmp, 0, sizeof(tmp));
	if (parse_offsize(s, e, &plus, &tmp) && plus > s)
		return true;
	if (e[-1] == ')' && strip_annotations(s, e, &tmp, true) != e)
		return true;
	return false;
}

int
kp_frame_parse(const char *s, size_t len, struct kp_frame *f,
	       const char **why)
{
	const char *e = s + len, *p, *tok;
	size_t n;

	memset(f, 0, sizeof(*f));
	while (s < e && is_blank(*s))
		s++;
	while (e > s && (is_blank(e[-1]) || e[-1] == '\r'))
		e--;
	if (s == e) {
		*why = "empty frame line";
		return -1;
	}
	if (memchr(s, '\0', (size_t)(e - s))) {
		*why = "NUL byte in frame line";
		return -1;
	}
	e = strip_annotations(s, e, f, false);
	p = s;
	if (*p != ':') {
		/* ADDRESS: 0xHEX, or bare HEX when a ':' follows */
		bool has0x = e - p > 2 && p[0] == '0' &&
			     (p[1] == 'x' || p[1] == 'X');
		const char *q;

		tok = p;
		if (has0x)
			p += 2;
		while (p < e && is_hex(*p))
			p++;
		n = (size_t)(p - tok);
		for (q = p; q < e && is_blank(*q); q++)
			;
		if ((p < e && !is_blank(*p)) || n == 0 ||
		    kp_parse_u64(tok, n, 16, &f->addr) < 0 ||
		    (!has0x && (q == e || *q != ':'))) {
			*why = "not a frame line (expected 'ADDRESS : SYMBOL' "
			       "or ': SYMBOL')";
			return -1;
		}
		f->flags |= KP_F_ADDR;
		while (p < e && is_blank(*p))
			p++;
		if (p == e)
			return 0;
		if (*p == '[') {
			parse_module(p, e, true, f);
			return 0;
		}
		if (*p != ':') {
			*why = "expected ':' or '[' after the address";
			return -1;
		}
	}
	p++; /* ':' */
	while (p < e && is_blank(*p))
		p++;
	if (parse_symbol(p, e, f, why) < 0)
		return -1;
	drop_addr_offset(f);
	return 0;
}

/*
 * ---- the frame a line reads back as ----
 *
 * kp_frame_reread says, from the fields of a frame, what the reader
 * makes of the line kp_write_frame prints for it.  The writer's line is
 *
 *	[ 0xADDR][ : SYM[+0xOFF[/0xSIZE]]][ [MODULE]][ (inexact)][ (inline)]
 *	[ (at FILE[:LINE])]
 *
 * with SYM quoted when kp_sym_needs_quote says so (the offset goes
 * inside the brackets when there is no symbol), and the reader takes
 * it apart from the end: annotations, then the module, then the offset.
 * So a field reads back as itself unless its text runs into the next
 * one's:
 *
 *   - SYM: always (quoted when it must be);
 *   - MODULE after a symbol: unless empty or holding a blank followed by
 *     '[' (the reader takes the last " [" for the module's start); with
 *     no symbol (after an address) it does, but an empty one reads as
 *     none and one that ends in "+HEX" or "+HEX/HEX" without an offset of
 *     the frame gives those as the offset; with neither symbol nor
 *     address the line does not read at all;
 *   - (at FILE:LINE): unless FILE holds a '(' (the reader takes the last
 *     '(' for the annotation's start) or FILE and LINE are both empty;
 *     LINE 0 is not printed, so a FILE ending in ":DIGITS" gives those as
 *     the line, and an empty FILE with a line reads as the file ":LINE";
 *   - OFF and SIZE: when printed (OFF with a symbol, or a module and no
 *     symbol; SIZE with OFF), and the reader drops an offset equal to the
 *     address (the old perf converter's mistake) when there is a symbol;
 *     LINE without FILE and flags of no annotation are not printed;
 *   - a newline in SYM, MODULE or FILE ends the line: the reader reads
 *     what is before it (its blanks and carriage returns at the end
 *     dropped) as the whole line, and what follows as lines of their own
 *     (blank ones are passed over; others break the record), so the
 *     frame is what that first line reads as.
 *
 * Where text runs together (the annotations that do not read back, and
 * the module or symbol before them), the run is joined and read with the
 * reader's own functions below.  The rule equals printing the line and
 * parsing it as the reader does: tests/unit/test_frame_reread.c checks it
 * against exactly that on many generated frames of the characters that
 * matter.
 */

/* Scratch text of a run, one buffer per use. */
struct run {
	char *p;
	size_t n, cap;
};

static void
run_add(struct run *r, const char *s, size_t n)
{
	if (r->cap < r->n + n + 1) {
		r->cap = 2 * (r->n + n) + 64;
		r->p = kp_xrealloc(r->p, r->cap);
	}
	memcpy(r->p + r->n, s, n);
	r->n += n;
	r->p[r->n] = '\0';
}

static void
run_addf(struct run *r, const char *fmt, unsigned long long v)
{
	char t[32];
	int n = snprintf(t, sizeof(t), fmt, v);

	run_add(r, t, (size_t)n);
}

/* The writer's "+0xOFF" or "+0xOFF/0xSIZE". */
static void
run_offsize(struct run *r, const struct kp_frame *f)
{
	run_addf(r, "+0x%llx", (unsigned long long)f->off);
	if (f->flags & KP_F_SIZE)
		run_addf(r, "/0x%llx", (unsigned long long)f->size);
}

/* The symbol as the writer prints it, up to a newline in it. */
static void
run_sym(struct run *r, const char *s)
{
	size_t n = strcspn(s, "\n");

	if (!kp_sym_needs_quote(s)) {
		run_add(r, s, n);
		return;
	}
	run_add(r, "\"", 1);
	for (; n--; s++) {
		if (*s == '"' || *s == '\\')
			run_add(r, "\\", 1);
		run_add(r, s, 1);
	}
	if (!*s)
		run_add(r, "\"", 1);
}

/* The end of a line at e: the parser drops its blanks and CRs. */
static const char *
line_end(const char *s, const char *e)
{
	while (e > s && (is_blank(e[-1]) || e[-1] == '\r'))
		e--;
	return e;
}

/* "(at FILE:LINE)" with FILE free of '(' and not both empty: as printed. */
static void
reread_at(const struct kp_frame *f, struct kp_frame *g)
{
	const char *colon;
	uint64_t line;
	size_t n = strlen(f->file);
	char t[16];

	if (f->line) {
		if (n) {
			g->file = f->file;
			g->line = f->line;
		} else {
			g->file = kp_intern(t, (size_t)snprintf(t, sizeof(t),
								":%u",
								f->line));
		}
		return;
	}
	g->file = f->file;
	colon = strrchr(f->file, ':');
	if (colon && colon > f->file &&
	    kp_parse_u64(colon + 1, n - (size_t)(colon + 1 - f->file), 10,
			 &line) == 0 &&
	    line <= UINT32_MAX) {
		g->file = kp_intern(f->file, (size_t)(colon - f->file));
		g->line = (uint32_t)line;
	}
}

/* "[MODULE+0xOFF/0xSIZE]" after an address, no annotation after it. */
static void
reread_module(const struct kp_frame *f, struct kp_frame *g)
{
	const char *m = f->module, *plus, *e = m + strlen(m);

	if (f->flags & KP_F_OFF) {
		g->flags |= f->flags & (KP_F_OFF | KP_F_SIZE);
		g->off = f->off;
		g->size = f->flags & KP_F_SIZE ? f->size : 0;
	} else if (parse_offsize(m, e, &plus, g)) {
		e = plus;
	}
	if (e > m)
		g->module = *e ? kp_intern(m, (size_t)(e - m)) : f->module;
}

/* A module after a symbol reads back as itself. */
static bool
module_alone(const char *m)
{
	const char *p;

	if (!*m)
		return false;
	for (p = m + 1; (p = strchr(p, '[')) != NULL; p++)
		if (is_blank(p[-1]))
			return false;
	return true;
}

static bool
has_newline(const char *s)
{
	return s && strchr(s, '\n');
}

static bool
reread(const struct kp_frame *f, struct kp_frame *g)
{
	static struct run ann, rest;
	const uint32_t notes = KP_F_INEXACT | KP_F_INLINE;
	const char *left = "", *e, *why;
	size_t nleft = 0;
	bool off = f->flags & KP_F_OFF;
	/* where a newline in a field ends the line */
	bool cut_sym = has_newline(f->sym);
	bool cut_mod = !cut_sym && has_newline(f->module);
	bool cut_file = !cut_sym && !cut_mod && has_newline(f->file);
	bool cut = cut_sym || cut_mod; /* before the annotations */

	memset(g, 0, sizeof(*g));
	if (cut) {
		/* the annotations are after the end of the line */
	} else if (!f->file) {
		g->flags |= f->flags & notes;
	} else if (!cut_file && (*f->file || f->line) &&
		   !strchr(f->file, '(')) {
		g->flags |= f->flags & notes;
		reread_at(f, g);
	} else {
		/* the annotations stop reading back: what is left of them
		 * joins the module, or the symbol */
		ann.n = 0;
		if (f->flags & KP_F_INEXACT)
			run_add(&ann, " (inexact)", 10);
		if (f->flags & KP_F_INLINE)
			run_add(&ann, " (inline)", 9);
		run_add(&ann, " (at ", 5);
		run_add(&ann, f->file, strcspn(f->file, "\n"));
		if (f->line && !cut_file)
			run_addf(&ann, ":%llu", f->line);
		if (!cut_file)
			run_add(&ann, ")", 1);
		e = line_end(ann.p, ann.p + ann.n);
		left = ann.p;
		nleft = (size_t)(strip_annotations(ann.p, e, g, false) - ann.p);
	}
	if (!f->sym && !(f->flags & KP_F_ADDR))
		return false; /* the line starts with '[', '(', or is empty */
	if (f->flags & KP_F_ADDR) {
		g->addr = f->addr;
		g->flags |= KP_F_ADDR;
	}
	if (!f->sym) {
		if (!f->module)
			return nleft == 0; /* else '(' after the address */
		if (!nleft && !cut) {
			reread_module(f, g);
			return true;
		}
		rest.n = 0;
		run_add(&rest, "[", 1);
		run_add(&rest, f->module, strcspn(f->module, "\n"));
		if (!cut) {
			if (off)
				run_offsize(&rest, f);
			run_add(&rest, "]", 1);
		}
		run_add(&rest, left, nleft);
		e = rest.p + rest.n;
		if (cut)
			e = strip_annotations(rest.p, line_end(rest.p, e), g,
					      true);
		parse_module(rest.p, e, true, g);
		return true;
	}
	if (!cut && !nleft && (!f->module || module_alone(f->module))) {
		g->sym = f->sym;
		g->module = f->module;
		if (off) {
			g->flags |= f->flags & (KP_F_OFF | KP_F_SIZE);
			g->off = f->off;
			g->size = f->flags & KP_F_SIZE ? f->size : 0;
		}
		drop_addr_offset(g);
		return true;
	}
	/* the run from the symbol to the end of the line */
	rest.n = 0;
	run_sym(&rest, f->sym);
	if (!cut_sym) {
		if (off)
			run_offsize(&rest, f);
		if (f->module) {
			run_add(&rest, " [", 2);
			run_add(&rest, f->module, strcspn(f->module, "\n"));
			if (!cut_mod)
				run_add(&rest, "]", 1);
		}
		run_add(&rest, left, nleft);
	}
	e = rest.p + rest.n;
	if (cut)
		e = strip_annotations(rest.p, line_end(rest.p, e), g, true);
	if (parse_symbol(rest.p, e, g, &why) < 0)
		return false;
	drop_addr_offset(g);
	return true;
}

/*
 * reread keeps its work in static buffers (and intern_unquoted, which
 * it reaches, in one more): while two threads intern at once
 * (kp_intern_shared), one rereads at a time.
 */
static pthread_mutex_t reread_mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool rereading;

bool
kp_frame_reread(const struct kp_frame *f, struct kp_frame *g)
{
	bool shared = kp_intern_shared, ok;

	if (shared) {
		pthread_mutex_lock(&reread_mu);
		rereading = true;
	}
	ok = reread(f, g);
	if (shared) {
		rereading = false;
		pthread_mutex_unlock(&reread_mu);
	}
	return ok;
}

void
kp_frame_release(void)
{
	kp_intern_release();
	if (rereading) {
		rereading = false;
		pthread_mutex_unlock(&reread_mu);
	}
}

bool
kp_module_is_vmlinux(const char *m)
{
	return m && (strcmp(m, "kernel") == 0 || strncmp(m, "vmlinux", 7) == 0 ||
		     strcmp(m, "[kernel.kallsyms]") == 0 ||
		     strcmp(m, "kernel.kallsyms") == 0);
}

bool
kp_module_is_kernel(const char *m)
{
	size_t n;

	if (!m || !*m)
		return false;
	if (kp_module_is_vmlinux(m))
		return true;
	if (m[0] == '/' || m[0] == '[' || strchr(m, '/'))
		return false;
	n = strlen(m);
	if (n > 3 && strcmp(m + n - 3, ".so") == 0)
		return false;
	if (strstr(m, ".so."))
		return false;
	return true;
}

static void
reserve(char **buf, size_t *cap, size_t need)
{
	if (*cap < need + 1) {
		*cap = need + 64;
		*buf = kp_xrealloc(*buf, *cap);
	}
}

size_t
kp_frame_name(const struct kp_frame *f, bool want_off, bool want_addr,
	      char **buf, size_t *cap)
{
	size_t n;

	if (f->sym) {
		n = strlen(f->sym);
		reserve(buf, cap, n + 24);
		memcpy(*buf, f->sym, n);
		if (want_off && (f->flags & KP_F_OFF))
			n += (size_t)snprintf(*buf + n, 24, "+0x%llx",
					      (unsigned long long)f->off);
		(*buf)[n] = '\0';
		return n;
	}
	if (want_addr && (f->flags & KP_F_ADDR)) {
		reserve(buf, cap, 24);
		return (size_t)snprintf(*buf, 24, "0x%llx",
					(unsigned long long)f->addr);
	}
	if (f->module) {
		n = strlen(f->module);
		reserve(buf, cap, n + 2);
		(*buf)[0] = '[';
		memcpy(*buf + 1, f->module, n);
		(*buf)[n + 1] = ']';
		(*buf)[n + 2] = '\0';
		return n + 2;
	}
	reserve(buf, cap, 10);
	memcpy(*buf, "[unknown]", 10);
	return 9;
}
