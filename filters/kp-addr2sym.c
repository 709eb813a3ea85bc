/*
 * kp-addr2sym - fill in or correct the symbols of kp frames from
 * addresses: kernel frames from /proc/kallsyms (or a saved copy), a
 * System.map or a vmlinux, user frames from the ELF file named in their
 * module field; with -l the source line and with -i the inlined
 * functions, from DWARF.
 *
 *	 0xffffffff81001040 [kernel]
 * becomes
 *	 0xffffffff81001040 : x86_64_start_reservations+0x30/0x30 [kernel]
 *
 * Any frame but the innermost holds a return address, looked up at
 * pc - 1 (the call), as eu-stack does; perf does not, and names the
 * next symbol where a function ends in a call that never returns.  The
 * first user frame under kernel frames is the interrupted pc, looked up
 * as it is.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp.h"
#include "resolve.h"


static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-addr2sym [-fhil] [-k kallsyms] [-m System.map] "
		"[-e elf]\n"
		"                   [--kaslr-offset N] [--modules DIR] "
		"[file ...]\n"
		"Read kp and give each frame the symbol of its address; write "
		"kp.\n"
		"Kernel frames (no module, kernel, vmlinux or a module name) "
		"are looked up\n"
		"in kallsyms (default: the capture's '# archive:' copy, else "
		"/proc/kallsyms),\n"
		"or a System.map or vmlinux shifted by the KASLR offset; user "
		"frames (a path\n"
		"as module) in that ELF file or its debug file under "
		"/usr/lib/debug.\n"
		"With no file, or '-', read standard input.\n"
		"  -k, --kallsyms FILE    kernel and module symbols from a "
		"saved kallsyms\n"
		"  -m, --system-map FILE  kernel symbols from a System.map\n"
		"  -e, --elf FILE         symbols (and DWARF) from a vmlinux, "
		"or from an\n"
		"                         executable for frames without a "
		"module\n"
		"  -l, --lines            add the source line: (at FILE:LINE)\n"
		"  -i, --inlines          add inlined functions as frames of "
		"their own\n"
		"  -f, --force            replace symbols the frames already "
		"have; use a\n"
		"                         kernel image or kallsyms that does "
		"not match\n"
		"                         the input's kernel (with a warning)\n"
		"      --kaslr-offset N   the KASLR shift (run-time minus "
		"link-time address)\n"
		"      --modules DIR      kernel modules' .ko files, for -l and "
		"-i (default\n"
		"                         /lib/modules/$(uname -r)); placed "
		"as /sys/module/*/\n"
		"                         sections says, or the capture's "
		"'# archive:' copy\n"
		"  -h, --help             show this help\n"
		"The KASLR shift is, in this order: --kaslr-offset, '# kaslr:' "
		"metadata,\n"
		"'# stext:' metadata, or _text of -k FILE; which one is said "
		"on stderr.\n"
		"Exit: 0 ok, 1 some input lines skipped, 2 fatal, 64 usage.\n");
	exit(status);
}

/*
 * --kaslr-offset: decimal or 0x-hex, and negative for a kernel loaded
 * below its link address.
 */
static uint64_t
parse_shift(const char *arg)
{
	const char *p = arg[0] == '-' ? arg + 1 : arg;
	bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	uint64_t v;

	if (kp_parse_u64(p, strlen(p), hex ? 16 : 10, &v) < 0)
		kp_usage_error("--kaslr-offset: not a number: '%s'", arg);
	return arg[0] == '-' ? -v : v;
}

static struct kp_resolver *res;
static struct kp_kernel_src ksrc;
static bool setup_done, have_vmlinux, have_user_elf;

/*
 * The kernel's symbols, once the metadata before the first record is
 * known:
 *
 *	# archive: /var/tmp/kp-archive
 *	# kaslr: 0x1e000000
 *	# stext: 0xffffffff9f000000
 *	# build-id: 48dc540c8b76393804ca8088dbfa7d42911a9444
 */
static void
setup_kernel(void)
{
	static char kallsyms[4096], sections[4096];
	const char *v, *archive = kp_meta_get("archive");
	bool implicit = !ksrc.kallsyms && !ksrc.image && !have_vmlinux;
	struct stat sb;

	setup_done = true;
	if (have_user_elf && implicit)
		return; /* -e a program: its frames only */
	if (archive) {
		/* what kp-sample --archive saved with the capture */
		snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", archive);
		snprintf(sections, sizeof(sections), "%s/sections", archive);
		if (stat(archive, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
			kp_warn("# archive: %s: %s; %s", archive,
				stat(archive, &sb) < 0 ? strerror(errno)
						       : "not a directory",
				implicit ? "kernel symbols from /proc/kallsyms"
					 : "not used");
		} else {
			if (implicit && access(kallsyms, R_OK) == 0) {
				ksrc.kallsyms = kallsyms;
				kp_warn("kernel symbols from %s (# archive:)",
					kallsyms);
			}
			ksrc.sections = sections;
		}
	}
	if ((v = kp_meta_get("stext")) != NULL &&
	    kp_parse_u64(v, strlen(v), 16, &ksrc.stext) == 0)
		ksrc.have_stext = true;
	else if (v)
		kp_die("bad '# stext: %s' metadata", v);
	ksrc.build_id = kp_meta_get("build-id");
	if (!ksrc.have_shift && (v = kp_meta_get("kaslr")) != NULL) {
		if (kp_parse_u64(v, strlen(v), strncmp(v, "0x", 2) ? 10 : 16,
				 &ksrc.shift) < 0)
			kp_die("bad '# kaslr: %s' metadata", v);
		ksrc.have_shift = true;
		ksrc.shift_how = "# kaslr: metadata";
	}
	if (kp_resolver_kernel(res, &ksrc) < 0) {
		if (!implicit)
			kp_die("%s", kp_resolver_error(res));
		/* implicit: user frames may still resolve */
		kp_warn("%s; kernel frames stay addresses",
			kp_resolver_error(res));
	}
}

int
main(int argc, char **argv)
{
	enum { OPT_KASLR = 256, OPT_MODULES };
	static const struct option longopts[] = {
		{ "elf", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "kaslr-offset", required_argument, NULL, OPT_KASLR },
		{ "lines", no_argument, NULL, 'l' },
		{ "modules", required_argument, NULL, OPT_MODULES },
		{ "system-map", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const struct kp_frame **out = NULL, *const *fr;
	size_t ocap = 0, on, i, j, n;
	const char *opt_elf = NULL;
	const struct kp_stack *st;
	struct kp_reader *rd;
	struct kp_agg *agg;
	uint64_t distinct, unresolved;
	unsigned flags = 0, fl;
	int ch, k;

	kp_init(argv);
	while ((ch = getopt_long(argc, argv, "e:fhik:lm:", longopts, NULL)) !=
	       -1)
		switch (ch) {
		case 'e':
			opt_elf = optarg;
			break;
		case 'f':
			flags |= KP_RES_FORCE;
			ksrc.force = true;
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'i':
			flags |= KP_RES_INLINES;
			break;
		case 'k':
			ksrc.kallsyms = optarg;
			break;
		case 'l':
			flags |= KP_RES_LINES;
			break;
		case 'm':
			ksrc.image = optarg;
			break;
		case OPT_MODULES:
			ksrc.modules = optarg;
			break;
		case OPT_KASLR:
			ksrc.shift = parse_shift(optarg);
			ksrc.have_shift = true;
			ksrc.shift_how = "--kaslr-offset";
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;

	res = kp_resolver_new(flags);
	if (opt_elf) {
		if (kp_resolver_elf(res, opt_elf) == 1)
			have_vmlinux = true;
		else
			have_user_elf = true;
		if (have_vmlinux && ksrc.image)
			kp_usage_error("-m and -e with a vmlinux: give one of "
				       "them");
	}
	if ((flags & (KP_RES_LINES | KP_RES_INLINES)) && !opt_elf)
		kp_warn("no -e vmlinux: -l and -i add lines to module and "
			"user frames only");
	agg = kp_agg_new();
	for (k = 0; k < (argc ? argc : 1); k++) {
		rd = kp_reader_open(argc ? argv[k] : "-");
		while ((st = kp_reader_next(rd)) != NULL) {
			bool prev_kernel = false;
			size_t real = 0;

			if (!setup_done)
				setup_kernel();
			on = 0;
			for (i = 0; i < st->n; i++) {
				const struct kp_frame *f = st->frames[i];
				bool kernel = f->module ?
						      kp_module_is_kernel(
							      f->module) :
						      !have_user_elf;
				bool user = f->module ? f->module[0] == '/' :
							have_user_elf;

				/*
				 * Any frame but the first holds a return
				 * address, but the first user frame under
				 * kernel frames and the frame an interrupt
				 * stopped: exact pcs.
				 */
				fl = real > 0 && !(prev_kernel && user) &&
						     !kp_resolve_is_entry(
							     out[on - 1]) ?
					     KP_SYMTAB_RETADDR :
					     0;
				n = 1;
				fr = &st->frames[i];
				if (kp_resolve_frame_wanted(res, f))
					n = kp_resolve_frame(res, f, fl, &fr);
				if (!(f->flags & KP_F_INLINE)) {
					real++;
					prev_kernel = kernel;
				}
				if (on + n > ocap) {
					ocap = (on + n) * 2;
					out = kp_xrealloc(out,
							  ocap * sizeof(*out));
				}
				for (j = 0; j < n; j++)
					out[on++] = fr[j];
			}
			if (kp_agg_add(agg, out, on, st->count) < 0)
				kp_input_skip(kp_reader_input(rd),
					      "count overflows 64 bits when "
					      "added to an identical stack; "
					      "record dropped");
		}
		kp_reader_close(rd);
	}
	if (!setup_done)
		setup_kernel(); /* no record: still check what was given */
	kp_write_agg(stdout, agg);
	kp_resolver_stats(res, &distinct, &unresolved);
	if (unresolved)
		kp_warn("%" PRIu64 " of %" PRIu64 " distinct addresses not "
			"resolved",
			unresolved, distinct);
	free(out);
	kp_agg_free(agg);
	kp_resolver_free(res);
	return kp_finish();
}
