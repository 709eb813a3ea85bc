/*
 * kp-sample - a native sampler on perf_event_open(2) that writes kp.
 *
 *	kp-sample -a sleep 30 | kp-inclusive
 *
 * One sampling event per CPU (system-wide with -a or -C, or following
 * a command or the processes of -p and their children), each with its
 * own mmap ring buffer (common/perfev).  Identical callchains are
 * aggregated in memory as they arrive, their frames raw addresses; at
 * the end each distinct address is named once by the resolver
 * (common/resolve: kallsyms loaded before sampling starts, so that the
 * table appears the moment the command ends) and the whole profile is
 * written as kp with its metadata.  Any frame but the first of each
 * context (kernel, user) holds a return address and is named by its
 * call, pc - 1, as kp-addr2sym names it.
 *
 * Samples taken in user mode count under a "[user]" frame unless
 * --user asks for the user callchain, whose frames are named by the
 * mapping that holds them (common/procs: the processes' mappings, from
 * the MMAP2 records and /proc): the file's symbol where its ELF symbol
 * table has one, else [FILE+0xOFFSET], the offset in the file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "archive.h"
#include "chains.h"
#include "command.h"
#include "kp.h"
#include "perfev.h"
#include "procs.h"
#include "resolve.h"
#include "samplemode.h"
#include "events.h"

#define DEFAULT_FREQ 997
#define DEFAULT_PAGES 128
#define OFFCPU_PAGES 512 /* a switch a few microseconds, each a callchain */
#define STOP_GRACE 2.0 /* seconds a command has to end on SIGTERM */

/* ---- options ---- */

static bool opt_all, opt_user, opt_comm, opt_pid;
static unsigned opt_modes; /* --data, --off-cpu, --state */
static const char *opt_events[16];
static size_t opt_nevents;
static const char *opt_cpus, *opt_pids, *opt_output,
	*opt_archive;
static uint64_t opt_freq = DEFAULT_FREQ, opt_period;
static double opt_duration;
static size_t opt_pages = DEFAULT_PAGES;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-sample [-h] [-a | -C cpus | -p pid[,pid...]] [-d seconds]\n"
		"                 [-F hz | -c period] [-e event]... [-m pages] [-o file]\n"
		"                 [--user] [--comm | --pid] [--archive dir]\n"
		"                 [--data | --off-cpu [--state]] [command [arg ...]]\n"
		"       kp-sample --list\n"
		"Sample kernel callchains with perf_event_open(2) and write the\n"
		"aggregated profile as kp when sampling ends: when the command\n"
		"exits, after -d seconds, or on SIGINT/SIGTERM.\n"
		"  -a, --all-cpus     sample every CPU (with a command: while it runs)\n"
		"  -C, --cpu LIST     sample these CPUs only, e.g. 0,2-3\n"
		"  -p, --pids PIDS    sample these processes (all their threads)\n"
		"                     and their new children\n"
		"                     (default with a command: it and its children)\n"
		"  -d, --duration S   stop after S seconds (a command still running\n"
		"                     then gets SIGTERM, and SIGKILL %g s later or\n"
		"                     on a second signal to kp-sample)\n"
		"  -F, --freq HZ      samples per second per CPU (default %d)\n"
		"  -c, --period N     one sample every N events instead\n"
		"  -e, --event EV     any event perf accepts: cycles (default;\n"
		"                     cpu-clock where there is no hardware PMU),\n"
		"                     cpu-clock, page-faults, dTLB-load-misses, ...,\n"
		"                     a tracepoint sched:sched_switch, a PMU's\n"
		"                     cpu/event=0x3c,umask=0/, rHEX; :u :k ...;\n"
		"                     several -e: each its own profile under\n"
		"                     [EVENT], the outermost frame\n"
		"      --list         list the events this machine offers\n"
		"  -m, --mmap-pages N ring buffer data pages per CPU, a power of\n"
		"                     two (default %d, %d with --off-cpu)\n"
		"  -o, --output FILE  write kp to FILE instead of standard output\n"
		"      --user         add user-space frames (default: a sample in\n"
		"                     user mode counts under one [user] frame)\n"
		"      --comm         the process name as the outermost frame\n"
		"      --pid          the same with its pid: name-pid\n"
		"      --archive DIR  save what offline symbolization needs (kallsyms,\n"
		"                     modules, their section addresses, build-id)\n"
		"      --data         the data address's mapping ([heap], [anon],\n"
		"                     [stack], a file), page size and NUMA node\n"
		"                     as outer frames (page-faults, mem-loads, ...)\n"
		"      --off-cpu      weigh each stack a task leaves the CPU with\n"
		"                     by the nanoseconds until it runs again\n"
		"      --state        with --off-cpu: the task state ([S], [D],\n"
		"                     [R] preempted, ...) as the outermost frame\n"
		"  -h, --help         show this help\n"
		"Needs root, or kernel.perf_event_paranoid low enough for the scope.\n"
		"Exit: 0 ok, 2 fatal (nothing written as complete), 64 usage.\n",
		STOP_GRACE, DEFAULT_FREQ, DEFAULT_PAGES, OFFCPU_PAGES);
	exit(status);
}

/* ---- state ---- */

static struct kp_perfev_set *sets; /* one per event; sets[0] reads */
static size_t nsets;
static int *cpus;
static size_t ncpus;
static pid_t *pids; /* -p */
static size_t npids;
static struct kp_command cmd;
static struct kp_procs *procs; /* with --user, --comm, --pid */
static struct kp_chains *chains;
static struct kp_resolver *res;
static struct kp_samplemode *mode;
static volatile sig_atomic_t got_stop, got_child;

/* ---- records ---- */

static void
on_sideband(const struct perf_event_header *h, void *arg)
{
	(void)arg;
	kp_perfev_feed_procs(procs, h);
}

static void
read_rings(void *arg)
{
	(void)arg;
	kp_perfev_set_read(&sets[0], procs ? on_sideband : NULL,
			   kp_samplemode_record, mode);
	kp_samplemode_round(mode);
}

/* ---- the end ---- */

static void
set_metadata(double duration, char **argv)
{
	struct utsname un;
	char buf[4096], *bid;
	size_t i, len;
	uint64_t a;

	kp_meta_set("tool", "kp-sample");
	kp_samplemode_meta(mode);
	kp_meta_set("duration", "%.3f s", duration);
	kp_perfev_cpus_format(cpus, ncpus, buf, sizeof(buf));
	kp_meta_set("cpus", "%s", buf);
	if (opt_pids)
		kp_meta_set("pids", "%s", opt_pids);
	if (argv) {
		for (i = 0, len = 0, buf[0] = '\0';
		     argv[i] && len < sizeof(buf) - 1; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s", i ? " " : "", argv[i]);
		kp_meta_set("command", "%s", buf);
		kp_command_status(&cmd, buf, sizeof(buf));
		if (buf[0])
			kp_meta_set("command-status", "%s", buf);
	}
	if (uname(&un) == 0)
		kp_meta_set("kernel", "%s", un.release);
	if ((bid = kp_kernel_build_id()) != NULL) {
		kp_meta_set("build-id", "%s", bid);
		free(bid);
	}
	if (kp_resolver_kernel_sym(res, "_stext", &a))
		kp_meta_set("stext", "0x%016" PRIx64, a);
	if (opt_archive)
		kp_meta_set("archive", "%s", opt_archive);
}

/* ---- signals, time, status ---- */

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_child = 1;
	else
		got_stop = sig;
}

static bool
pids_gone(void)
{
	size_t i;

	for (i = 0; i < npids; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return npids > 0;
}

/* The command ended, or -p's processes did. */
static bool
done(void *arg)
{
	(void)arg;
	return (got_child && cmd.pid > 0 && kp_command_done(&cmd)) ||
	       pids_gone();
}

/* An event on the CPUs (-a, -C), the command, or -p's processes. */
static void
open_set(struct kp_perfev_set *s, bool command)
{
	size_t i, k;
	pid_t *tids;

	if (opt_all || opt_cpus) {
		kp_perfev_set_open_cpus(s, cpus, ncpus);
		return;
	}
	s->attr.inherit = 1;
	s->attr.enable_on_exec = command;
	if (command)
		kp_perfev_set_open_tasks(s, &cmd.pid, 1, cpus, ncpus);
	for (i = 0; i < npids; i++) {
		if (!(tids = kp_perfev_threads(pids[i], &k)))
			kp_die("-p %d: no such process", (int)pids[i]);
		kp_perfev_set_open_tasks(s, tids, k, cpus, ncpus);
		free(tids);
	}
}

/* -o FILE: say now, not after sampling, that it cannot be written. */
static void
check_output(const char *path)
{
	char *dir = kp_xstrdup(path), *slash = strrchr(dir, '/');
	int bad;

	if (slash)
		slash[slash == dir] = '\0'; /* "/x" -> "/" */
	if (access(path, F_OK) == 0)
		bad = access(path, W_OK);
	else
		bad = access(slash ? dir : ".", W_OK | X_OK);
	free(dir);
	if (bad < 0)
		kp_die("%s:", path);
}

int
main(int argc, char **argv)
{
	enum { OPT_USER = 256, OPT_COMM, OPT_PID, OPT_ARCHIVE, OPT_LIST,
	       OPT_DATA, OPT_OFFCPU, OPT_STATE };
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "period", required_argument, NULL, 'c' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "pids", required_argument, NULL, 'p' },
		{ "user", no_argument, NULL, OPT_USER },
		{ "comm", no_argument, NULL, OPT_COMM },
		{ "pid", no_argument, NULL, OPT_PID },
		{ "archive", required_argument, NULL, OPT_ARCHIVE },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "data", no_argument, NULL, OPT_DATA },
		{ "off-cpu", no_argument, NULL, OPT_OFFCPU },
		{ "state", no_argument, NULL, OPT_STATE },
		{ NULL, 0, NULL, 0 },
	};
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };
	struct kp_kernel_src ksrc = { 0 };
	struct kp_perfev_run run = { 0 };
	struct sigaction sa;
	sigset_t block;
	bool freq_given = false, pages_given = false;
	char **cmdv = NULL;
	struct kp_agg *agg;
	double took;
	FILE *out;
	int ch, status;
	size_t i;

	kp_init(argv);
	/* '+': options end at the command, as in "kp-sample ls -l" */
	while ((ch = getopt_long(argc, argv, "+ac:C:d:e:F:hm:o:p:", longopts,
				 NULL)) != -1)
		switch (ch) {
		case 'a':
			opt_all = true;
			break;
		case 'c':
			opt_period = kp_arg_u64("-c", optarg);
			if (opt_period == 0)
				kp_usage_error("-c: the period must be > 0");
			break;
		case 'C':
			opt_cpus = optarg;
			break;
		case 'd':
			opt_duration = kp_arg_double("-d", optarg);
			if (opt_duration <= 0)
				kp_usage_error("-d: the duration must be > 0");
			break;
		case 'e':
			if (opt_nevents == 16)
				kp_usage_error("-e: at most 16 events");
			opt_events[opt_nevents++] = optarg;
			break;
		case 'F':
			opt_freq = kp_arg_u64("-F", optarg);
			freq_given = true;
			if (opt_freq == 0)
				kp_usage_error("-F: the frequency must be > 0");
			break;
		case 'h':
			usage(stdout, KP_EXIT_OK);
			break;
		case 'm':
			opt_pages = (size_t)kp_arg_u64("-m", optarg);
			pages_given = true;
			if (opt_pages == 0 || (opt_pages & (opt_pages - 1)) ||
			    opt_pages > (1u << 20))
				kp_usage_error("-m: '%s' is not a power of two "
					       "(1, 2, 4, ... pages)",
					       optarg);
			break;
		case 'o':
			opt_output = optarg;
			break;
		case 'p':
			opt_pids = optarg;
			break;
		case OPT_USER:
			opt_user = true;
			break;
		case OPT_COMM:
			opt_comm = true;
			break;
		case OPT_PID:
			opt_pid = true;
			break;
		case OPT_ARCHIVE:
			opt_archive = optarg;
			break;
		case OPT_LIST:
			kp_events_list(stdout);
			return kp_output_finish(stdout, NULL);
		case OPT_DATA:
			opt_modes |= KP_SM_DATA;
			break;
		case OPT_OFFCPU:
			opt_modes |= KP_SM_OFFCPU;
			break;
		case OPT_STATE:
			opt_modes |= KP_SM_STATE;
			break;
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	if (optind < argc)
		cmdv = argv + optind;
	if (freq_given && opt_period)
		kp_usage_error("-F and -c exclude each other");
	if ((opt_all || opt_cpus) && opt_pids)
		kp_usage_error("-p excludes -a and -C");
	if (opt_all && opt_cpus)
		kp_usage_error("-a and -C exclude each other");
	if (opt_pids && cmdv)
		kp_usage_error("-p excludes a command");
	if (!opt_all && !opt_cpus && !opt_pids && !cmdv)
		kp_usage_error("nothing to sample: give -a, -C, -p or a "
			       "command");
	if (opt_pids && !(pids = kp_perfev_pids_parse(opt_pids, &npids)))
		kp_usage_error("-p: not a pid list: '%s'", opt_pids);
	if ((opt_modes & KP_SM_OFFCPU) && (opt_nevents || freq_given ||
					   opt_period || (opt_modes & KP_SM_DATA)))
		kp_usage_error("--off-cpu samples sched:sched_switch: it "
			       "excludes -e, -F, -c and --data");
	if ((opt_modes & KP_SM_OFFCPU) && !pages_given)
		opt_pages = OFFCPU_PAGES;
	if ((opt_modes & KP_SM_STATE) && !(opt_modes & KP_SM_OFFCPU))
		kp_usage_error("--state goes with --off-cpu");
	if (opt_user || opt_comm || opt_pid || (opt_modes & KP_SM_DATA))
		procs = kp_procs_new();
	chains = kp_chains_new(procs, (opt_user ? KP_CHAINS_USER : 0) |
					      (opt_comm ? KP_CHAINS_COMM : 0) |
					      (opt_pid ? KP_CHAINS_PID : 0));
	mode = kp_samplemode_new(
		&(struct kp_samplemode_opts){
			.modes = opt_modes,
			.events = opt_events,
			.nevents = opt_nevents,
			.freq = opt_freq,
			.freq_given = freq_given,
			.period = opt_period,
			.pages = opt_pages,
			.user = opt_user,
			.tasks = !opt_all && !opt_cpus,
		},
		procs, chains);
	nsets = kp_samplemode_nevents(mode);
	sets = kp_xcalloc(nsets, sizeof(*sets));
	for (i = 0; i < nsets; i++)
		kp_samplemode_event(mode, i, &sets[i]);
	if (opt_cpus)
		cpus = kp_perfev_cpus_arg(opt_cpus, &ncpus);
	else if (!(cpus = kp_perfev_cpus_online(&ncpus)))
		kp_die("/sys/devices/system/cpu/online:");
	if (opt_output && strcmp(opt_output, "-") != 0)
		check_output(opt_output);

	kp_perfev_raise_nofile();

	/* signals: blocked but while waiting in ppoll */
	sigemptyset(&block);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaddset(&block, sigs[i]);
		sigaction(sigs[i], &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &block, NULL);

	if (cmdv)
		kp_command_fork(&cmd, cmdv);
	if (opt_comm || opt_pid) {
		if (opt_all || opt_cpus)
			kp_procs_scan_all(procs, KP_PROCS_COMM);
		for (i = 0; i < npids; i++)
			kp_procs_scan(procs, (uint32_t)pids[i], KP_PROCS_COMM);
	}
	if (cmdv && procs) {
		/* its name after exec, which no COMM record will give */
		const char *base = strrchr(cmdv[0], '/');

		base = base ? base + 1 : cmdv[0];
		kp_procs_comm(procs, (uint32_t)cmd.pid, (uint32_t)cmd.pid,
			      base, strnlen(base, 15), false);
	}
	for (i = 0; i < nsets; i++)
		open_set(&sets[i], cmdv != NULL);

	/*
	 * The events are open (disabled), so permission errors came first.
	 * Symbols now, before sampling: the profile can be written the
	 * moment sampling ends.
	 */
	res = kp_resolver_new(0);
	if (kp_resolver_kernel(res, &ksrc) < 0)
		kp_warn("%s; kernel frames keep bare addresses",
			kp_resolver_error(res));
	if (opt_archive)
		opt_archive = kp_archive_save(opt_archive);

	run.stop = &got_stop;
	run.done = done;
	run.read = read_rings;
	run.samples = kp_samplemode_samples(mode);
	run.lost = kp_samplemode_lost(mode);
	run.duration = opt_duration;
	if (!cmdv || opt_all || opt_cpus) {
		/* sampling starts here, before a command's exec */
		run.started = kp_perfev_now();
		kp_perfev_set_enable(&sets[0], true); /* and the others */
	}
	if (cmdv)
		kp_command_start(&cmd); /* per-task events: enable_on_exec */
	took = kp_perfev_set_run(&sets[0], &run);
	if (cmdv)
		kp_command_stop(&cmd, STOP_GRACE);
	kp_samplemode_finish(mode);
	set_metadata(took, cmdv);
	agg = kp_chains_resolve(chains, res);
	out = kp_output_open(opt_output);
	kp_write_agg(out, agg);
	status = kp_output_finish(out, opt_output);
	for (i = 0; i < nsets; i++)
		kp_perfev_set_close(&sets[i]);
	free(sets);
	kp_agg_free(agg);
	kp_chains_free(chains);
	kp_samplemode_free(mode);
	kp_procs_free(procs);
	kp_resolver_free(res);
	free(cpus);
	free(pids);
	return status;
}
