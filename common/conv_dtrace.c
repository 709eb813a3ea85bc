/*
 * conv_dtrace.c - DTrace printa() output of stack aggregations to kp.
 *
 *	dtrace -x stackframes=100 -n 'profile-997 /arg0/ { @[stack()] = count(); }'
 *
 * A record is its frames (leaf first), possibly two blocks of them
 * (@[stack(), ustack()]) separated by a blank line, then the count.
 */
#include <stdlib.h>
#include <string.h>

#include "conv.h"

struct dtrace {
	const struct kp_dtrace_opts *o;
	struct kp_input *in;
	struct kp_conv cv;
	bool header; /* still before the first record */
	bool any;    /* a frame or count was seen */
	bool lines;  /* a non-blank line was seen */
	unsigned long first_frame_line;
};

static bool
is_count(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 20)
		return false;
	for (i = 0; i < n; i++)
		if (!kp_conv_digit(s[i]))
			return false;
	return true;
}

static bool
is_hexaddr(const char *s, size_t n)
{
	uint64_t v;

	return n > 2 && s[0] == '0' && (s[1] | 0x20) == 'x' &&
	       kp_conv_hex(s + 2, s + n, &v);
}

/*
 * Header lines, before the first record and between printa() blocks:
 *
 *	CPU     ID                    FUNCTION:NAME
 *	  0  64091                        :tick-60s
 *	  7  98784               count:ips_localout 1
 *	dtrace: description 'profile-997 ' matched 1 probe
 *	# dtrace -q -n 'fbt::malloc:entry { @[stack()] = count(); }'
 *	^C
 */
static bool
is_header(const char *s, size_t n)
{
	if (n >= 3 && memcmp(s, "CPU", 3) == 0)
		return true;
	if (n >= 7 && memcmp(s, "dtrace:", 7) == 0)
		return true;
	if (s[0] == '#' || (n == 2 && memcmp(s, "^C", 2) == 0))
		return true;
	/* "CPU ID PROBE": a number, blanks, a number */
	if (kp_conv_digit(s[0])) {
		size_t i = 0;

		while (i < n && kp_conv_digit(s[i]))
			i++;
		if (i < n && kp_conv_blank(s[i])) {
			while (i < n && kp_conv_blank(s[i]))
				i++;
			return i < n && kp_conv_digit(s[i]);
		}
	}
	return false;
}

/*
 * stackcollapse.pl's C++ tidy (the Perl substitution of "(::.*)[(<].*"
 * by its first group): after the first
 * "::", cut at the last '(' or '<'.
 *
 *	JavaCalls::call_helper(JavaValue*, methodHandle*)  -> JavaCalls::call_helper
 *	TestClass::TestClass2<blargh>(const char*)[__1cJ]  -> TestClass::TestClass2<blargh>
 */
static size_t
uncpp(const char *s, size_t n)
{
	const char *sc = NULL, *p;
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (s[i] == ':' && s[i + 1] == ':') {
			sc = s + i + 2;
			break;
		}
	if (!sc)
		return n;
	for (p = s + n; p > sc; p--)
		if (p[-1] == '(' || p[-1] == '<')
			return (size_t)(p - 1 - s);
	return n;
}

/*
 * A frame line (indent removed):
 *
 *	genunix`kmem_cpu_reload+0x20
 *	genunix`segvn_fault
 *	unix`0xfffffffffb8001d6
 *	0x104d08831
 *	libjvm.dylib`JavaCalls::call_helper(JavaValue*, methodHandle*, JavaCallArguments*, Thread*)+0x6ae
 *	rg`std::panicking::try::do_call::h08ca64c12e8a9bb0 (.llvm.15516475458848885060)+0x25
 *	test`foo->bar			(Java inlining: bar is inlined into foo)
 *	kernel`amd64_syscall+0x169	(FreeBSD; vmlinux` on Oracle Linux)
 */
static int
frame_line(struct dtrace *dt, const char *s, size_t n)
{
	const char *tick = memchr(s, '`', n), *e = s + n, *f, *p, *arrow;
	const char *module = NULL, *piece;
	uint64_t addr = 0, off = 0;
	bool has_off = false;
	const struct kp_frame *fr[64];
	size_t nf = 0, k, i;
	char *t;

	if (!tick && is_hexaddr(s, n)) {
		kp_parse_u64(s, n, 16, &addr);
		kp_conv_push(&dt->cv,
			     kp_frame_make(addr, KP_F_ADDR, NULL, NULL));
		return 0;
	}
	if (!tick)
		return -1;
	if (tick > s)
		module = kp_intern(s, (size_t)(tick - s));
	f = tick + 1;
	if (is_hexaddr(f, (size_t)(e - f))) {
		kp_parse_u64(f, (size_t)(e - f), 16, &addr);
		kp_conv_push(&dt->cv, kp_conv_intern(&(struct kp_frame){
					      .addr = addr,
					      .flags = KP_F_ADDR,
					      .module = module,
				      }));
		return 0;
	}
	/* "+0xOFF" at the end */
	for (p = e; p > f && kp_conv_xdigit(p[-1]); p--)
		;
	if (p - f >= 3 && p < e && p[-1] == 'x' && p[-2] == '0' &&
	    p[-3] == '+' && kp_conv_hex(p, e, &off)) {
		has_off = true;
		e = p - 3;
	}
	/* split "outer->inlined->..." ; the last piece is innermost */
	for (p = f; nf < 64;) {
		for (arrow = p; arrow + 1 < e; arrow++)
			if (arrow[0] == '-' && arrow[1] == '>')
				break;
		if (arrow + 1 >= e || nf == 63)
			arrow = e;
		piece = p;
		k = (size_t)(arrow - piece);
		if (nf > 0)
			while (k && *piece == 'L') { /* Java class "L" */
				piece++;
				k--;
			}
		t = kp_conv_tmp(&dt->cv, k);
		memcpy(t, piece, k);
		k = uncpp(t, k);
		{
			struct kp_frame fm;

			memset(&fm, 0, sizeof(fm));
			fm.sym = kp_intern(k ? t : "-", k ? k : 1);
			fm.module = nf == 0 ? module : NULL;
			fm.flags = nf > 0 ? KP_F_INLINE : 0;
			fr[nf++] = kp_conv_intern(&fm);
		}
		if (arrow == e)
			break;
		p = arrow + 2;
	}
	/* the offset belongs to the innermost piece */
	if (has_off && dt->o->offsets) {
		struct kp_frame fm = *fr[nf - 1];

		fm.off = off;
		fm.flags |= KP_F_OFF;
		fr[nf - 1] = kp_conv_intern(&fm);
	}
	for (i = nf; i-- > 0;)
		kp_conv_push(&dt->cv, fr[i]);
	return 0;
}

/* stackcollapse.pl keeps offsets except the leaf's. */
static void
end_record(struct dtrace *dt, uint64_t count)
{
	if (dt->o->offsets && dt->cv.n > 0 &&
	    (dt->cv.frames[0]->flags & KP_F_OFF)) {
		struct kp_frame fm = *dt->cv.frames[0];

		fm.flags &= ~(uint32_t)KP_F_OFF;
		fm.off = 0;
		dt->cv.frames[0] = kp_conv_intern(&fm);
	}
	if (dt->cv.n == 0)
		kp_conv_push(&dt->cv, kp_frame_make(0, 0, "[no stack]", NULL));
	kp_conv_flush(&dt->cv, count);
}

/*
 * Refuse another kind of input within the first KiB: no frame line
 * (module`function or 0xADDR) but lines that are not DTrace headers.
 */
static int
check_kind(struct kp_input *in, const char **why)
{
	const char *p, *e, *nl, *s, *le;
	size_t n = kp_input_peek(in, &p);
	bool frame = false, other = false;

	e = p + (n > 1024 ? 1024 : n);
	if (memchr(p, '\0', (size_t)(e - p))) {
		*why = "binary input: expected the text of DTrace printa() "
		       "of a stack() aggregation";
		return -1;
	}
	while (p < e && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		s = p;
		le = nl;
		p = nl + 1;
		while (s < le && kp_conv_blank(*s))
			s++;
		while (le > s && (kp_conv_blank(le[-1]) || le[-1] == '\r'))
			le--;
		if (s == le)
			continue;
		if (memchr(s, '`', (size_t)(le - s)) ||
		    is_hexaddr(s, (size_t)(le - s)))
			frame = true;
		else if (!is_header(s, (size_t)(le - s)) &&
			 !is_count(s, (size_t)(le - s)) &&
			 !(le - s == 1 && *s == '!'))
			other = true;
	}
	if (other && !frame) {
		*why = "expected DTrace printa() output of a stack() "
		       "aggregation (frames like 'module`function+0x1c' "
		       "and count lines)";
		return -1;
	}
	return 0;
}

int
kp_dtrace_convert(struct kp_agg *agg, struct kp_input *in, void *arg,
		  const char **why)
{
	const struct kp_dtrace_opts *o = arg;
	struct dtrace dt;
	char *line, *s;
	size_t len, n;
	uint64_t count;

	if (check_kind(in, why) < 0)
		return -1;
	memset(&dt, 0, sizeof(dt));
	dt.o = o;
	dt.in = in;
	dt.header = true;
	kp_conv_init(&dt.cv, agg, in);
	while ((line = kp_input_getline(in, &len)) != NULL) {
		if (kp_conv_nul(in, line, len))
			continue;
		s = line;
		n = len;
		while (n && kp_conv_blank(*s)) {
			s++;
			n--;
		}
		while (n && kp_conv_blank(s[n - 1]))
			n--;
		/* blank lines, and the "!" key of kp.d's @["!", stack()] */
		if (n == 0 || (n == 1 && *s == '!'))
			continue;
		dt.lines = true;
		if (is_count(s, n)) {
			if (kp_parse_u64(s, n, 10, &count) < 0) {
				kp_input_skip(in, "count out of range");
				dt.cv.n = 0;
				continue;
			}
			end_record(&dt, count);
			dt.header = false;
			dt.any = true;
			continue;
		}
		if (frame_line(&dt, s, n) == 0) {
			if (dt.cv.n == 1)
				dt.first_frame_line = kp_input_lineno(in);
			dt.header = false;
			dt.any = true;
			continue;
		}
		if (dt.cv.n == 0 && (dt.header || is_header(s, n)))
			continue;
		kp_input_skip(in, "not a DTrace frame or count line");
	}
	if (dt.cv.n > 0)
		kp_input_skip(in, "the stack from line %lu has no count line "
				  "(stack() as a trace action?); dropped",
			      dt.first_frame_line);
	else if (!dt.any && dt.lines)
		kp_input_skip(in, "no stacks: the input has only header "
				  "lines");
	kp_conv_free(&dt.cv);
	return 0;
}
