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
	cv->frames = NULL;
	cv->n = cv->cap = 0;
}

/*
 * Shapes the tidy pass sees (stackcollapse-perf.pl's tidy_generic):
 *
 *	StealTask::do_it(GCTaskManager*, unsigned int)	-> StealTask::do_it
 *	net/http.(*Client).Do				-> kept (Go method)
 *	(anonymous namespace)::foo(int)			-> (anonymous namespace)::foo
 *	RegExp:[&<>\"\']				-> RegExp:[&<>\\]
 */
size_t
kp_conv_tidy_generic(char *s, size_t len)
{
	char *p = memchr(s, '(', len);
	size_t i, o;

	while (p) {
		size_t rest = len - (size_t)(p - s);

		if (rest >= 21 &&
		    memcmp(p, "(anonymous namespace)", 21) == 0) {
			p = memchr(p + 1, '(', rest - 1);
			continue;
		}
		if (p > s && p[-1] == '.')
			break; /* Go: keep the whole name */
		len = (size_t)(p - s);
		break;
	}
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
		unsigned c = (unsigned char)*p, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}
