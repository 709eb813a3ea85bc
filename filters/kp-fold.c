/*
 * kp-fold - kp in, Brendan Gregg's folded format out:
 *
 *	root;parent;leaf COUNT
 *
 * one line per distinct stack, root first, sorted bytewise (as
 * stackcollapse-*.pl and inferno sort them).  Stacks that differ only in
 * offsets or addresses fold into one line and their counts add.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "kp.h"

static bool opt_modules, opt_offsets, opt_addrs, opt_jit, opt_inlined;
static bool opt_perf_addrs, opt_backtick;
static bool dtrace_addrs; /* DTrace input: name a bare frame by address */

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-fold [-h] [--modules] [--jit] [--inlined] [--all]\n"
		"               [--offsets] [--addrs | --perf-addrs | --backtick]\n"
		"               [file ...]\n"
		"Read kp (or SystemTap output) and write folded stacks,\n"
		"'root;...;leaf COUNT', for flamegraph.pl, inferno and\n"
		"speedscope.  With no file, or '-', read standard input.\n"
		"  --modules   append _[k] to kernel frames (kernel, vmlinux and\n"
		"              kernel modules) and perf's [vdso]-like modules, as\n"
		"              stackcollapse-perf.pl --kernel\n"
		"  --jit       append _[j] to JIT frames (module /tmp/perf-PID.map\n"
		"              or jitted-*.so), as stackcollapse-perf.pl --jit\n"
		"  --inlined   append _[i] to inlined frames\n"
		"  --all       --modules --jit --inlined\n"
		"  --offsets   keep each frame's offset: name+0xOFF\n"
		"  --addrs     name a frame without a symbol by its address\n"
		"              (default: [module file name], or [unknown];\n"
		"              the address for dtrace2kp's input)\n"
		"  --perf-addrs  name it [module <addr>] or [unknown <addr>], as\n"
		"              stackcollapse-perf.pl --addrs\n"
		"  --backtick  name frames module`symbol, as DTrace prints them\n"
		"              (and module`0xADDR or 0xADDR without a symbol),\n"
		"              as stackcollapse.pl keeps them\n"
		"  -h, --help  show this help\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/*
 * A JIT module, as perf names them: perf-map-agent's and V8's
 * /tmp/perf-PID.map, and jitdump's /tmp/jitted-PID-N.so (as inferno).
 */
static bool
is_jit(const char *m)
{
	const char *p, *base;
	size_t n;

	if (!m)
		return false;
	base = strrchr(m, '/');
	base = base ? base + 1 : m;
	n = strlen(base);
	if (strncmp(base, "jitted-", 7) == 0 && n > 10 &&
	    strcmp(base + n - 3, ".so") == 0)
		return true;
	if (strncmp(m, "/tmp/perf-", 10) != 0)
		return false;
	for (p = m + 10; *p >= '0' && *p <= '9'; p++)
		;
	return p > m + 10 && strcmp(p, ".map") == 0;
}

/*
 * The name of f: kp_frame_name, except that a frame with neither
 * symbol nor (wanted) address is named by its module's file name, as
 * stackcollapse-perf.pl does: [libc.so.6], not [/usr/lib/libc.so.6].
 */
static size_t
frame_name(const struct kp_frame *f, char **nb, size_t *ncap)
{
	const char *base;
	size_t n, m;

	if (opt_backtick) {
		/* DTrace's module`function, module`0xADDR, 0xADDR */
		m = f->module ? strlen(f->module) : 0;
		if (f->sym)
			n = kp_frame_name(f, opt_offsets, false, nb, ncap);
		else if (f->flags & KP_F_ADDR)
			n = kp_frame_name(f, false, true, nb, ncap);
		else
			return kp_frame_name(f, false, false, nb, ncap);
		if (!m)
			return n;
		if (*ncap < n + m + 2) {
			*ncap = n + m + 64;
			*nb = kp_xrealloc(*nb, *ncap);
		}
		memmove(*nb + m + 1, *nb, n + 1);
		memcpy(*nb, f->module, m);
		(*nb)[m] = '`';
		return n + m + 1;
	}
	if (f->sym || (!f->module && !opt_perf_addrs) ||
	    ((opt_addrs || dtrace_addrs) && (f->flags & KP_F_ADDR)))
		return kp_frame_name(f, opt_offsets,
				     opt_addrs || dtrace_addrs, nb, ncap);
	if (f->module) {
		base = strrchr(f->module, '/');
		base = base && base[1] ? base + 1 : f->module;
	} else {
		base = "unknown";
	}
	n = strlen(base);
	if (*ncap < n + 24) {
		*ncap = n + 64;
		*nb = kp_xrealloc(*nb, *ncap);
	}
	(*nb)[0] = '[';
	memcpy(*nb + 1, base, n);
	n++;
	if (opt_perf_addrs && (f->flags & KP_F_ADDR))
		n += (size_t)snprintf(*nb + n, 21, " <%" PRIx64 ">", f->addr);
	else if (!f->module)
		n = (size_t)snprintf(*nb, 10, "[unknown");
	(*nb)[n] = ']';
	(*nb)[n + 1] = '\0';
	return n + 1;
}

/*
 * The text of a frame in a folded line, in *nb: its name, ';' made ':'
 * (the separator), and one annotation, as stackcollapse-perf.pl gives.
 */
static size_t
segment(const struct kp_frame *f, char **nb, size_t *ncap)
{
	size_t n = frame_name(f, nb, ncap), j;
	char *p;

	if (*ncap < n + 5) {
		*ncap = n + 64;
		*nb = kp_xrealloc(*nb, *ncap);
	}
	p = *nb;
	for (j = 0; j < n; j++)
		if (p[j] == ';')
			p[j] = ':';
	if (opt_inlined && (f->flags & KP_F_INLINE)) {
		memcpy(p + n, "_[i]", 4);
		n += 4;
	} else if (opt_modules && (kp_module_is_kernel(f->module) ||
				   (f->module && f->module[0] == '['))) {
		memcpy(p + n, "_[k]", 4);
		n += 4;
	} else if (opt_jit && is_jit(f->module)) {
		memcpy(p + n, "_[j]", 4);
		n += 4;
	}
	return n;
}

/*
 * Whether dtrace_addrs is known yet: it is the first "# source:" line's
 * (kp_meta_get), so once one is read no later input changes it.  Until
 * then a frame without a symbol cannot be named as it is read.
 */
static bool
addrs_decided(void)
{
	static bool decided;
	static size_t seen;
	const char *src;

	if (decided || opt_addrs || opt_perf_addrs || opt_backtick)
		return true;
	if (kp_meta_count() == seen)
		return false;
	seen = kp_meta_count();
	src = kp_meta_get("source");
	if (!src)
		return false;
	dtrace_addrs = strcmp(src, "dtrace") == 0;
	decided = true;
	return true;
}

/*
 * The key of a frame: frames of one key give one text in a folded line,
 * so stacks that fold to one line merge as they are read
 * (kp_agg_read_keyed).  It is a frame whose symbol is that text
 * (segment()), and nothing else.  A frame without a symbol whose name
 * may be its address (addrs_decided) is kept as what that name uses
 * instead, its module, inline mark and address, and named after the
 * input is read.
 */
static const struct kp_frame *
fold_key(const struct kp_frame *f)
{
	static char *nb;
	static size_t ncap;
	struct kp_frame g;
	size_t n;

	memset(&g, 0, sizeof(g));
	g.sym = f->sym;
	g.module = f->module;
	g.flags = f->flags & KP_F_INLINE;
	if (f->sym && opt_offsets && (f->flags & KP_F_OFF)) {
		g.off = f->off;
		g.flags |= KP_F_OFF;
	}
	if (!f->sym && (f->flags & KP_F_ADDR)) {
		g.addr = f->addr;
		g.flags |= KP_F_ADDR;
		if (!addrs_decided())
			return kp_frame_intern(&g);
	}
	n = segment(&g, &nb, &ncap);
	memset(&g, 0, sizeof(g));
	g.sym = kp_intern(nb, n);
	return kp_frame_intern(&g);
}

/*
 * What fold_key ignores, with the metadata read so far: the address and
 * offset of a frame with a symbol (unless --offsets), and of one
 * without once its name cannot be its address (frame_name: not
 * --addrs, --perf-addrs or --backtick, and the source known, not
 * DTrace).
 */
static unsigned
fold_ignores(void)
{
	unsigned what = opt_offsets ? 0 : KP_KEY_NAMED;

	if (!opt_addrs && !opt_perf_addrs && !opt_backtick &&
	    addrs_decided() && !dtrace_addrs)
		what |= KP_KEY_UNNAMED;
	return what;
}

int
main(int argc, char **argv)
{
	enum {
		OPT_MODULES = 256,
		OPT_OFFSETS,
		OPT_ADDRS,
		OPT_JIT,
		OPT_INLINED,
		OPT_ALL,
		OPT_PERF_ADDRS,
		OPT_BACKTICK,
	};
	static const struct option longopts[] = {
		{ "modules", no_argument, NULL, OPT_MODULES },
		{ "offsets", no_argument, NULL, OPT_OFFSETS },
		{ "addrs", no_argument, NULL, OPT_ADDRS },
		{ "jit", no_argument, NULL, OPT_JIT },
		{ "inlined", no_argument, NULL, OPT_INLINED },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "perf-addrs", no_argument, NULL, OPT_PERF_ADDRS },
		{ "backtick", no_argument, NULL, OPT_BACKTICK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kp_agg *agg;
	struct kp_fold_name *names;
	uint32_t *ids = NULL;
	uint64_t *counts;
	char *nb = NULL;
	size_t cap = 0, ncap = 0, len, i, k, n, nnames, *start;
	int ch, status;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case OPT_MODULES:
			opt_modules = true;
			break;
		case OPT_OFFSETS:
			opt_offsets = true;
			break;
		case OPT_ADDRS:
			opt_addrs = true;
			break;
		case OPT_JIT:
			opt_jit = true;
			break;
		case OPT_INLINED:
			opt_inlined = true;
			break;
		case OPT_BACKTICK:
			opt_backtick = true;
			break;
		case OPT_PERF_ADDRS:
			opt_perf_addrs = true;
			break;
		case OPT_ALL:
			opt_modules = opt_jit = opt_inlined = true;
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	/* a frame with a symbol is named by it and its module (and
	 * --offsets, its offset): not its address */
	agg = kp_agg_read_keyed(argc, argv, fold_key, fold_ignores);
	/* "unix`0xfffffffffb800c91": the DTrace peers keep the address */
	dtrace_addrs = !opt_perf_addrs && kp_meta_get("source") &&
		       strcmp(kp_meta_get("source"), "dtrace") == 0;

	/* each stack as its frames' names, root first (a name made once
	 * a frame) */
	n = kp_agg_len(agg);
	nnames = kp_frame_count();
	names = kp_xcalloc(nnames ? nnames : 1, sizeof(*names));
	start = kp_xmalloc((n + 1) * sizeof(*start));
	counts = kp_xmalloc((n ? n : 1) * sizeof(*counts));
	for (i = 0, cap = 0; i < n; i++)
		cap += kp_agg_get(agg, i)->n;
	ids = kp_xmalloc((cap ? cap : 1) * sizeof(*ids));
	for (i = 0, len = 0; i < n; i++) {
		const struct kp_stack *st = kp_agg_get(agg, i);

		start[i] = len;
		counts[i] = st->count;
		for (k = st->n; k-- > 0;) {
			const struct kp_frame *f = st->frames[k];
			struct kp_fold_name *nm = &names[f->id];

			if (!nm->s && f->sym) {
				nm->s = f->sym;
				nm->len = strlen(f->sym);
			} else if (!nm->s) {
				nm->len = segment(f, &nb, &ncap);
				nm->s = kp_intern(nb, nm->len);
			}
			ids[len++] = f->id;
		}
	}
	start[n] = len;
	status = kp_folded_write(stdout, names, nnames, ids, start, counts, n);
	/* the output closed first: the next filter reads its end while
	 * the memory is given back */
	if (status != KP_EXIT_FATAL)
		status = kp_finish();
	free(names);
	free(ids);
	free(start);
	free(counts);
	free(nb);
	kp_agg_free(agg);
	return status;
}
