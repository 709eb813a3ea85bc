/* conv.c - helpers shared by the converters: the stack, the tidy passes */
#include <stdlib.h>
#include <string.h>

#include "conv.h"

void
kp_conv_init(struct kp_conv *cv, struct kp_agg *agg, struct kp_input *in)
{
	memset(cv, 0, sizeof(*cv));
	cv->agg = agg;
	cv->in = in;
}

void
kp_conv_push(struct kp_conv *cv, const struct kp_frame *f)
{
	if (cv->n == cv->cap) {
		cv->cap = cv->cap ? cv->cap * 2 : 256;
		cv->frames = kp_xrealloc(cv->frames,
					 cv->cap * sizeof(*cv->frames));
	}
	cv->frames[cv->n++] = f;
}

void
kp_conv_flush(struct kp_conv *cv, uint64_t count)
{
	kp_agg_add_or_skip(cv->agg, cv->in, cv->frames, cv->n, count);
	cv->n = 0;
}

void
kp_conv_free(struct kp_conv *cv)
{
	free(cv->frames);
	free(cv->tmp);
	cv->frames = NULL;
	cv->tmp = NULL;
	cv->n = cv->cap = cv->tmpcap = 0;
}

char *
kp_conv_tmp(struct kp_conv *cv, size_t n)
{
	if (cv->tmpcap < n + 1) {
		cv->tmpcap = n + 64;
		cv->tmp = kp_xrealloc(cv->tmp, cv->tmpcap);
	}
	return cv->tmp;
}

/* Text the kp frame grammar could read differently from what it is. */
static bool
risky(const char *s, bool is_module)
{
	size_t n;
	const char *p;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || kp_conv_blank(s[0]) || kp_conv_blank(s[n - 1]) ||
	    s[n - 1] == ')' || s[n - 1] == '\r')
		return true;
	for (p = s; *p; p++)
		if (*p == '[' || *p == ']' || *p == '+' || *p == '\n' ||
		    (is_module && (kp_conv_blank(*p) || *p == '(')))
			return true;
	return false;
}

bool
kp_conv_plain(const struct kp_frame *f)
{
	return !risky(f->sym, false) && !risky(f->module, true) &&
	       !risky(f->file, true);
}

void
kp_conv_normal(const struct kp_frame *f, struct kp_frame *out)
{
	struct kp_frame g = *f, h;
	int i;

	/* the reader takes an offset equal to the address for the old
	 * converter's mistake and drops it: do the same */
	if ((g.flags & KP_F_ADDR) && (g.flags & KP_F_OFF) && g.addr &&
	    g.off == g.addr) {
		g.flags &= ~(uint32_t)(KP_F_OFF | KP_F_SIZE);
		g.off = g.size = 0;
	}
	if (!risky(g.sym, false) && !risky(g.module, true) &&
	    !risky(g.file, true)) {
		*out = g;
		return;
	}
	/* reread until the frame is what the reader gives back */
	for (i = 0; i < 4; i++) {
		if (!kp_frame_reread(&g, &h))
			break;
		if (memcmp(&g, &h, KP_FRAME_KEY) == 0) {
			*out = g;
			return;
		}
		g = h;
	}
	/* no text for it: keep what is safe (the address) */
	memset(&h, 0, sizeof(h));
	h.flags = f->flags & KP_F_ADDR;
	h.addr = h.flags ? f->addr : 0; /* else not printed */
	if (!h.flags)
		h.sym = kp_intern("[bad name]", 10);
	*out = h;
}

const struct kp_frame *
kp_conv_intern(const struct kp_frame *f)
{
	struct kp_frame g;

	kp_conv_normal(f, &g);
	return kp_frame_intern(&g);
}

/*
 * Shapes the tidy pass sees (stackcollapse-perf.pl's tidy_generic; the
 * argument list is the first '(' outside <>, {}, [] and (), as inferno
 * finds it, so that a template argument holding parentheses stays):
 *
 *	StealTask::do_it(GCTaskManager*, unsigned int)	-> StealTask::do_it
 *	net/http.(*Client).Do				-> kept (Go method)
 *	(anonymous namespace)::foo(int)			-> (anonymous namespace)::foo
 *	RegExp:[&<>\"\']				-> RegExp:[&<>\\]
 *	f<int (*)(int)>(int)				-> f<int (*)(int)>
 *	t<v*, &(g(v**, h<x>*))>+0x44 (offset cut before)-> t<v*, &(g(v**, h<x>*))>
 *	{lambda(int)#1}::operator()(int) const		-> {lambda(int)#1}::operator()
 *	std::operator<< <char>(std::ostream&)		-> std::operator<< <char>
 */
size_t
kp_conv_tidy_generic(char *s, size_t len)
{
	size_t i, o, cut = len;
	int depth = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '<' || c == '{' || c == '[') {
			depth++;
		} else if (c == '>' || c == '}' || c == ']' || c == ')') {
			depth--;
		} else if (c == 'o' && len - i > 8 &&
			   memcmp(s + i, "operator", 8) == 0 &&
			   (i == 0 || !kp_conv_xdigit(s[i - 1]) ||
			    s[i - 1] == ':')) {
			/* the operator's own brackets are no nesting */
			i += 8;
			if (len - i >= 2 && memcmp(s + i, "()", 2) == 0)
				i += 2;
			else
				while (i < len && strchr("<>=!+-*/%^&|~[],",
							 s[i]) && s[i])
					i++;
			i--;
		} else if (c == '(') {
			if (depth == 0 && len - i >= 21 &&
			    memcmp(s + i, "(anonymous namespace)", 21) == 0) {
				i += 20;
				continue;
			}
			if (depth == 0 && i > 0 && s[i - 1] == '.')
				break; /* Go: keep the whole name */
			if (depth == 0) {
				cut = i;
				break;
			}
			depth++;
		}
	}
	len = cut;
	for (i = o = 0; i < len; i++)
		if (s[i] != '"' && s[i] != '\'')
			s[o++] = s[i];
	while (o && kp_conv_blank(s[o - 1]))
		o--; /* "f<int (*)(int)>" cut at '(' */
	return o;
}

size_t
kp_conv_tidy_java(char *s, size_t len)
{
	if (len > 1 && s[0] == 'L' && memchr(s, '/', len)) {
		memmove(s, s + 1, len - 1);
		return len - 1;
	}
	return len;
}

bool
kp_conv_hex(const char *s, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	const char *p;

	if (s == e || e - s > 16)
		return false;
	for (p = s; p < e; p++) {
		int d = kp_digit_value[(unsigned char)*p];

		if (d < 0)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return true;
}

void
kp_conv_files(struct kp_agg *agg, int nfiles, char **files,
	      kp_conv_fn convert, void *o)
{
	struct kp_input *in;
	const char *why;
	bool bad;
	int i;

	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		const char *path = nfiles ? files[i] : "-";

		in = kp_input_open(path);
		bad = convert(agg, in, o, &why) < 0;
		kp_input_close(in); /* before exit: nothing left to leak */
		if (bad)
			kp_die("%s: %s", strcmp(path, "-") ? path : "<stdin>",
			       why);
		kp_agg_check_total(agg, path);
	}
}
