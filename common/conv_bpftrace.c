/*
 * conv_bpftrace.c - bpftrace map output with stack keys to kp.
 *
 *	bpftrace -e 'profile:hz:99 { @[kstack] = count(); }'
 *
 * A map entry is "@name[" KEY "]: VALUE" where KEY is a list of
 * elements separated by ", ": stacks (one frame a line, leaf first) and
 * scalars (comm, pid ...).  Lines outside map entries (probe banners,
 * printf output, "^C") are not bpftrace map output and are passed over.
 */
#include <stdlib.h>
#include <string.h>

#include "conv.h"

#define MAXKEYS 16

struct bpf {
	const struct kp_bpftrace_opts *o;
	struct kp_input *in;
	struct kp_conv cv;
	bool in_entry;	/* between "@[" and "]:" */
	bool in_hist;	/* after "]:" with a histogram value */
	bool bad;	/* the entry had a bad line; dropped */
	uint64_t hist;	/* sum of the histogram's buckets */
	const struct kp_frame *keys[MAXKEYS];
	size_t nkeys;
	unsigned long start; /* line of the "@[" */
	unsigned long maps;  /* "@...[" lines seen */
	unsigned long text;  /* other non-blank lines (banners, printf) */
};

static const char *
trim(const char **s, const char *e)
{
	while (*s < e && kp_conv_blank(**s))
		(*s)++;
	while (e > *s && kp_conv_blank(e[-1]))
		e--;
	return e;
}

/* A scalar key element ("dd", "1234"): an outer frame with --key. */
static void
scalar(struct bpf *b, const char *s, const char *e)
{
	e = trim(&s, e);
	if (s == e || b->nkeys == MAXKEYS)
		return;
	b->keys[b->nkeys++] = kp_conv_intern(&(struct kp_frame){
		.sym = kp_intern(s, (size_t)(e - s)),
	});
}

/* Scalars in "a, b, " (the text of a line around stacks). */
static void
scalars(struct bpf *b, const char *s, const char *e)
{
	const char *c;

	while (s < e) {
		c = memchr(s, ',', (size_t)(e - s));
		if (!c)
			c = e;
		scalar(b, s, c);
		s = c + (c < e);
	}
}

/*
 * A frame line of a stack key (blanks around it removed):
 *
 *	filemap_map_pages+181			kstack, ustack
 *	schedule				no offset
 *	0x7f7912fbe2ad				unresolved (ustack)
 *	ffffffff813a2413 finish_task_switch.isra.0+147	kstack(perf)
 *	7f8027c182ad 0x7f8027c182ad ([unknown])	ustack(perf)
 *	bb3d 0xbb3d ([unknown])			ustack(perf), short address
 *	7f8027c182ad __libc_read+13 (/usr/lib/x86_64-linux-gnu/libc.so.6)
 *	ffffffff81d33df7			kstack(raw), ustack(raw)
 *	fuzzer::Fuzzer::RunOne(unsigned char const*, unsigned long)+219	C++
 *
 * Offsets are decimal.  An address of kernel space gives module
 * "kernel".
 */
static int
frame(struct bpf *b, const char *s, const char *e)
{
	struct kp_frame f;
	const char *sp, *p, *mod = NULL, *mode = NULL;
	uint64_t v;

	memset(&f, 0, sizeof(f));
	/* "(module)" at the end */
	if (e[-1] == ')') {
		for (p = e - 1; p > s && !kp_conv_blank(p[-1]); p--)
			;
		if (*p == '(' && p > s) {
			mod = p + 1;
			mode = e - 1;
			e = p;
			while (e > s && kp_conv_blank(e[-1]))
				e--;
		}
	}
	sp = memchr(s, ' ', (size_t)(e - s));
	if (!sp)
		sp = memchr(s, '\t', (size_t)(e - s));
	/* a leading address: perf and raw modes */
	if (sp && (sp - s >= 5 || mod) && kp_conv_all_hex(s, sp) &&
	    kp_conv_hex(s, sp, &v)) {
		f.addr = v;
		f.flags |= KP_F_ADDR;
		s = sp;
		e = trim(&s, e);
	} else if (!sp && !memchr(s, '+', (size_t)(e - s)) && e - s >= 8 &&
		   kp_conv_all_hex(s, e) && kp_conv_hex(s, e, &v)) {
		f.addr = v;
		f.flags |= KP_F_ADDR;
		s = e;
	}
	if (s < e && e - s > 2 && s[0] == '0' && s[1] == 'x' &&
	    kp_conv_hex(s + 2, e, &v)) {
		f.addr = v;
		f.flags |= KP_F_ADDR;
		s = e;
	}
	if (s < e) {
		for (p = e; p > s && kp_conv_digit(p[-1]); p--)
			;
		if (p < e && p - s >= 2 && p[-1] == '+' &&
		    kp_parse_u64(p, (size_t)(e - p), 10, &f.off) == 0) {
			f.flags |= KP_F_OFF;
			e = p - 1;
		}
		/* blanks only in C++/Rust names: "f(int, char)", "a<b, c>" */
		if (memchr(s, ' ', (size_t)(e - s)) &&
		    !memchr(s, '(', (size_t)(e - s)) &&
		    !memchr(s, '<', (size_t)(e - s)) &&
		    !memchr(s, ':', (size_t)(e - s)))
			return -1;
		f.sym = kp_intern(s, (size_t)(e - s));
	}
	if (!f.sym && !(f.flags & KP_F_ADDR))
		return -1;
	if (mod && !(mode - mod == 9 && memcmp(mod, "[unknown]", 9) == 0) &&
	    mode > mod)
		f.module = kp_intern(mod, (size_t)(mode - mod));
	else if ((f.flags & KP_F_ADDR) && kp_addr_is_kernel(f.addr))
		f.module = kp_intern("kernel", 6);
	kp_conv_push(&b->cv, kp_conv_intern(&f));
	return 0;
}

static void
end_entry(struct bpf *b, uint64_t count)
{
	size_t i;

	if (!b->bad) {
		if (b->cv.n == 0 && !(b->o->keys && b->nkeys))
			kp_conv_push(&b->cv,
				     kp_frame_make(0, 0, "[no stack]", NULL));
		if (b->o->keys)
			for (i = b->nkeys; i-- > 0;)
				kp_conv_push(&b->cv, b->keys[i]);
		kp_conv_flush(&b->cv, count);
	}
	b->cv.n = 0;
	b->nkeys = 0;
	b->in_entry = b->in_hist = b->bad = false;
	b->hist = 0;
}

/*
 * The end of an entry: "]: 12", ", dd]: 3", ", ]: 1", or "]:" with a
 * histogram on the lines after it.  Returns false if s is not one.
 */
static bool
entry_end(struct bpf *b, const char *s, const char *e)
{
	const char *br = NULL, *p;
	uint64_t count;

	for (p = e; p > s; p--)
		if (p[-1] == ':' && p - 1 > s && p[-2] == ']') {
			br = p - 2;
			break;
		}
	if (!br)
		return false;
	p = br + 2;
	while (p < e && kp_conv_blank(*p))
		p++;
	if (p < e && !kp_conv_all_digits(p, e))
		return false;
	/* scalars before "]": ", dd" */
	{
		const char *q = s;

		while (q < br && (kp_conv_blank(*q) || *q == ','))
			q++;
		scalars(b, q, br);
	}
	if (p == e) {
		b->in_hist = true; /* "]:" then a histogram */
		b->in_entry = false;
		return true;
	}
	if (kp_parse_u64(p, (size_t)(e - p), 10, &count) < 0) {
		kp_input_skip(b->in, "count out of range");
		b->bad = true;
		count = 0;
	}
	end_entry(b, count);
	return true;
}

/*
 * A histogram bucket after "]:", as hist()/lhist() print them:
 *
 *	[64K, 128K)            1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
 *	[0]                    3 |@@@@@@                               |
 *
 * The entry's count is the sum of its buckets (the number of events).
 */
static bool
bucket(struct bpf *b, const char *s, const char *e)
{
	const char *p = memchr(s, ']', (size_t)(e - s)), *q;
	uint64_t n;

	if (*s != '[' || !p) {
		p = memchr(s, ')', (size_t)(e - s));
		if (*s != '[' || !p)
			return false;
	}
	p++;
	while (p < e && kp_conv_blank(*p))
		p++;
	for (q = p; q < e && kp_conv_digit(*q); q++)
		;
	if (q == p || kp_parse_u64(p, (size_t)(q - p), 10, &n) < 0)
		return false;
	b->hist = b->hist > UINT64_MAX - n ? UINT64_MAX : b->hist + n;
	return true;
}

/* kp, perf script or DTrace given to bpftrace2kp: say so early. */
static int
check_kind(struct kp_input *in, const char **why)
{
	const char *p, *e, *nl, *s, *le;
	size_t n = kp_input_peek(in, &p);

	e = p + (n > 1024 ? 1024 : n);
	if (memchr(p, '\0', (size_t)(e - p)) ||
	    (n >= 7 && memcmp(p, "PERFILE", 7) == 0))
		goto wrong;
	while (p < e && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		s = p;
		le = nl;
		p = nl + 1;
		while (s < le && kp_conv_blank(*s))
			s++;
		if (s < le && *s == '@')
			return 0;
		/* DTrace module`function, kp "ADDR : SYMBOL", perf "(dso)" */
		if (memchr(s, '`', (size_t)(le - s)) ||
		    (le - s > 4 && memmem(s, (size_t)(le - s), " : ", 3)) ||
		    (le > s && le[-1] == ')' &&
		     memmem(s, (size_t)(le - s), " ([", 3)) ||
		    (le - s == 1 && *s == '!'))
			goto wrong;
	}
	return 0;
wrong:
	*why = "expected bpftrace map output of stack keys ('@[' then one "
	       "frame a line, then ']: COUNT')";
	return -1;
}

int
kp_bpftrace_convert(struct kp_agg *agg, struct kp_input *in, void *arg,
		    const char **why)
{
	const struct kp_bpftrace_opts *o = arg;
	struct bpf b;
	char *line;
	const char *s, *e, *br;
	size_t len;

	if (check_kind(in, why) < 0)
		return -1;
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.in = in;
	kp_conv_init(&b.cv, agg, in);
	while ((line = kp_input_getline(in, &len)) != NULL) {
		if (kp_conv_nul(in, line, len))
			continue;
		s = line;
		e = trim(&s, line + len);
		if (b.in_hist) {
			if (s < e && bucket(&b, s, e))
				continue;
			end_entry(&b, b.hist);
		}
		if (s == e)
			continue;
		/* "@[", "@name[", "@[dd, ", "@[]: 3", "@[dd]: 3" */
		if (*s == '@' && (br = memchr(s, '[', (size_t)(e - s)))) {
			if (b.in_entry) {
				kp_input_skip(in, "map entry from line %lu "
						    "has no ']: COUNT'; "
						    "dropped", b.start);
				b.bad = true;
				end_entry(&b, 0);
			}
			b.in_entry = true;
			b.maps++;
			b.start = kp_input_lineno(in);
			if (!entry_end(&b, br + 1, e))
				scalars(&b, br + 1, e);
			continue;
		}
		if (!b.in_entry) {
			b.text++;
			continue; /* not map output: banners, printf */
		}
		if (entry_end(&b, s, e))
			continue;
		if (*s == ',') {
			scalars(&b, s + 1, e);
			continue;
		}
		if (frame(&b, s, e) < 0)
			kp_input_skip(in, "not a bpftrace stack frame line");
	}
	if (b.in_hist)
		end_entry(&b, b.hist);
	if (b.in_entry)
		kp_input_skip(in, "map entry from line %lu has no "
				  "']: COUNT'; dropped", b.start);
	kp_conv_free(&b.cv);
	/* text, but not one map: another kind of file, not an empty map */
	if (!b.maps && b.text) {
		*why = "no bpftrace map in the input (expected '@[' then one "
		       "frame a line, then ']: COUNT')";
		return -1;
	}
	return 0;
}
