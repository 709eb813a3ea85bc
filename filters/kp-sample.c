/*
 * kp-sample - a native sampler on perf_event_open(2) that writes kp.
 *
 *	kp-sample -a sleep 30 | kp-inclusive
 *
 * One sampling event per CPU (system-wide with -a or -C, or following
 * a command or the processes of -p and their children), each with its
 * own mmap ring buffer read here.  Identical callchains are aggregated
 * in memory as they arrive; at the end each distinct kernel address is
 * resolved once against /proc/kallsyms (loaded before sampling starts,
 * so that the table appears the moment the command ends) and the whole
 * profile is written as kp with its metadata.
 *
 * Samples taken in user mode count under a "[user]" frame unless
 * --user asks for the user callchain, whose frames are named by the
 * mapping that holds them (file and offset, or the symbol when the
 * file's ELF symbol table has one).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kp.h"
#include "perfev.h"
#include "symtab.h"

#define DEFAULT_FREQ 997
#define DEFAULT_PAGES 128
#define STATUS_MS 250

/* ---- options ---- */

static bool opt_all, opt_user, opt_comm, opt_pid;
static const char *opt_cpus, *opt_pids, *opt_event, *opt_output,
	*opt_archive;
static uint64_t opt_freq = DEFAULT_FREQ, opt_period;
static double opt_duration;
static size_t opt_pages = DEFAULT_PAGES;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: kp-sample [-h] [-a | -C cpus | -p pid[,pid...]] [-d seconds]\n"
		"                 [-F hz | -c period] [-e event] [-m pages] [-o file]\n"
		"                 [--user] [--comm | --pid] [--archive dir]\n"
		"                 [command [arg ...]]\n"
		"Sample kernel callchains with perf_event_open(2) and write the\n"
		"aggregated profile as kp when sampling ends: when the command\n"
		"exits, after -d seconds, or on SIGINT/SIGTERM.\n"
		"  -a, --all-cpus     sample every CPU (with a command: while it runs)\n"
		"  -C, --cpu LIST     sample these CPUs only, e.g. 0,2-3\n"
		"  -p, --pids PIDS    sample these processes (all their threads)\n"
		"                     and their new children\n"
		"                     (default with a command: it and its children)\n"
		"  -d, --duration S   stop after S seconds (a command still running\n"
		"                     then gets SIGTERM)\n"
		"  -F, --freq HZ      samples per second per CPU (default %d)\n"
		"  -c, --period N     one sample every N events instead\n"
		"  -e, --event EV     cycles (default; cpu-clock where there is no\n"
		"                     hardware PMU), cpu-clock, task-clock,\n"
		"                     instructions, cache-misses, page-faults, ...\n"
		"                     or rHEX for a raw PMU event\n"
		"  -m, --mmap-pages N ring buffer data pages per CPU, a power of\n"
		"                     two (default %d)\n"
		"  -o, --output FILE  write kp to FILE instead of standard output\n"
		"      --user         add user-space frames (default: a sample in\n"
		"                     user mode counts under one [user] frame)\n"
		"      --comm         the process name as the outermost frame\n"
		"      --pid          the same with its pid: name-pid\n"
		"      --archive DIR  save what offline symbolization needs (kallsyms,\n"
		"                     modules, their section addresses, build-id)\n"
		"  -h, --help         show this help\n"
		"Needs root, or kernel.perf_event_paranoid low enough for the scope.\n"
		"Exit: 0 ok, 2 fatal (nothing written as complete), 64 usage.\n",
		DEFAULT_FREQ, DEFAULT_PAGES);
	exit(status);
}

/* ---- state ---- */

struct event {
	int fd;
	int cpu;
	bool ring; /* has its own ring (else redirected to its CPU's) */
};

static struct event *events;
static size_t nevents;
static struct kp_perfev_ring *rings;
static struct pollfd *pfds;
static size_t nrings;
static int *cpus;
static size_t ncpus;
static pid_t *pids; /* -p */
static size_t npids;

static struct kp_agg *raw; /* stacks of unresolved frames */
static struct kp_symtab *ksyms;
static uint64_t nsamples, nlost, nthrottled, nbad;
static const char *str_kernel; /* interned "kernel" */
static const struct kp_frame *fr_user, *fr_unknown;

static volatile sig_atomic_t got_stop, got_child;
static pid_t child = -1;
static int child_status = -1; /* from waitpid, -1 while running */

static const char *event_name;
static uint32_t event_type;
static uint64_t event_config;
static bool event_fallback;

/* ---- a small hash of u64 keys (kernel addresses, pids) ---- */

struct u64map_ent {
	uint64_t key;
	void *val;
};

struct u64map {
	struct u64map_ent *ent;
	size_t len, cap; /* cap a power of two; key 0 is kept aside */
	void *zero;
	bool has_zero;
};

static inline size_t
u64map_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static void **
u64map_get(struct u64map *m, uint64_t key, bool create)
{
	size_t i, j, oldcap;
	struct u64map_ent *old;

	if (key == 0) {
		if (!m->has_zero && !create)
			return NULL;
		m->has_zero = true;
		return &m->zero;
	}
	if (m->cap) {
		for (i = u64map_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
			if (m->ent[i].key == key)
				return &m->ent[i].val;
			if (m->ent[i].key == 0)
				break;
		}
	}
	if (!create)
		return NULL;
	if ((m->len + 1) * 2 > m->cap) {
		old = m->ent;
		oldcap = m->cap;
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->ent = kp_xcalloc(m->cap, sizeof(*m->ent));
		for (j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			for (i = u64map_slot(old[j].key, m->cap); m->ent[i].key;
			     i = (i + 1) & (m->cap - 1))
				;
			m->ent[i] = old[j];
		}
		free(old);
	}
	for (i = u64map_slot(key, m->cap); m->ent[i].key;
	     i = (i + 1) & (m->cap - 1))
		;
	m->ent[i].key = key;
	m->ent[i].val = NULL;
	m->len++;
	return &m->ent[i].val;
}

/* ---- processes: names and (with --user) mappings ---- */

struct map {
	uint64_t start, end, pgoff;
	const char *path; /* interned */
};

/*
 * One program run by a process: an exec starts a new one, so that the
 * user frames sampled before it keep the mappings they were taken in.
 */
struct proc {
	pid_t pid;
	const char *comm;             /* interned, or NULL if not known */
	const struct kp_frame *frame; /* ": comm" or ": comm-pid" */
	struct map *maps;             /* executable mappings, sorted */
	size_t nmaps, mcap;
	bool maps_known; /* from an exec seen, or /proc/PID/maps read */
};

static struct u64map procs; /* pid -> its current struct proc */
static struct proc **allprocs; /* every one, for user frames refer to them */
static size_t nallprocs;

static struct proc *
proc_get(pid_t pid, bool fresh)
{
	void **slot = u64map_get(&procs, (uint64_t)(uint32_t)pid, true);
	struct proc *p = *slot;

	if (!p || fresh) {
		p = kp_xcalloc(1, sizeof(*p));
		p->pid = pid;
		*slot = p;
		if ((nallprocs & (nallprocs - 1)) == 0)
			allprocs = kp_xrealloc(allprocs, (nallprocs ? nallprocs * 2
								    : 1) *
							   sizeof(*allprocs));
		allprocs[nallprocs++] = p;
	}
	return p;
}

static void
proc_set_comm(struct proc *p, const char *comm, size_t len)
{
	char buf[64];

	p->comm = kp_intern(comm, len);
	if (!opt_pid) {
		p->frame = kp_frame_make(0, 0, p->comm, NULL);
		return;
	}
	snprintf(buf, sizeof(buf), "%s-%d", p->comm, (int)p->pid);
	p->frame = kp_frame_make(0, 0, buf, NULL);
}

/* The name of a process not seen before: /proc/PID/comm. */
static void
proc_read_comm(struct proc *p)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	if (p->pid == 0) {
		proc_set_comm(p, "swapper", 7);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n <= 0) /* gone already: perf names it ":PID" */
		n = snprintf(buf, sizeof(buf), ":%d", (int)p->pid);
	proc_set_comm(p, buf, (size_t)n);
}

/*
 * The names of the processes running when sampling starts (as perf
 * synthesizes them), for they may end before their samples are read.
 */
static void
proc_read_all(const pid_t *only, size_t nonly)
{
	struct dirent *d;
	DIR *dir;
	size_t i;
	long v;
	char *end;

	for (i = 0; i < nonly; i++)
		proc_read_comm(proc_get(only[i], false));
	if (only)
		return;
	proc_read_comm(proc_get(0, false));
	if (!(dir = opendir("/proc")))
		return;
	while ((d = readdir(dir)) != NULL) {
		v = strtol(d->d_name, &end, 10);
		if (*end == '\0' && v > 0 && v <= INT_MAX)
			proc_read_comm(proc_get((pid_t)v, false));
	}
	closedir(dir);
}

/* Add a mapping, replacing what it overlaps (a new mmap over an old). */
static void
proc_add_map(struct proc *p, uint64_t start, uint64_t end, uint64_t pgoff,
	     const char *path)
{
	size_t i, j;

	for (i = 0, j = 0; i < p->nmaps; i++)
		if (p->maps[i].end <= start || p->maps[i].start >= end)
			p->maps[j++] = p->maps[i];
	p->nmaps = j;
	if (p->nmaps == p->mcap) {
		p->mcap = p->mcap ? p->mcap * 2 : 16;
		p->maps = kp_xrealloc(p->maps, p->mcap * sizeof(*p->maps));
	}
	for (i = p->nmaps; i > 0 && p->maps[i - 1].start > start; i--)
		p->maps[i] = p->maps[i - 1];
	p->maps[i].start = start;
	p->maps[i].end = end;
	p->maps[i].pgoff = pgoff;
	p->maps[i].path = kp_intern_str(path);
	p->nmaps++;
}

/*
 * /proc/PID/maps of a process that was running before sampling began,
 * the executable mappings only:
 *
 *	55d0c9a00000-55d0c9a1c000 r-xp 00002000 fd:01 1835023    /usr/bin/dd
 *	7f3c1e828000-7f3c1e9bd000 r-xp 00028000 fd:01 1837364    /usr/lib/x86_64-linux-gnu/libc.so.6
 *	7ffd5b5f1000-7ffd5b5f3000 r-xp 00000000 00:00 0          [vdso]
 */
static void
proc_read_maps(struct proc *p)
{
	char path[64], *line = NULL, perms[8], *name;
	unsigned long long start, end, pgoff;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;
	int pos;

	p->maps_known = true;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	fp = fopen(path, "re");
	if (!fp)
		return;
	while ((len = getline(&line, &cap, fp)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end,
			   perms, &pgoff, &pos) != 4 || pos == 0 ||
		    perms[2] != 'x')
			continue;
		name = line + pos;
		while (*name == ' ')
			name++;
		proc_add_map(p, start, end, pgoff, *name ? name : "[anon]");
	}
	free(line);
	fclose(fp);
}

/*
 * A user frame while sampling: its address and the program it ran in
 * (the struct proc, kept in off under a marker module); resolve_user()
 * names the mapping at the end, when every mmap record has been read.
 */
static const char *str_user_raw;

static const struct kp_frame *
user_frame(struct proc *p, uint64_t addr)
{
	struct kp_frame f;

	if (!p->maps_known)
		proc_read_maps(p);
	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.flags = KP_F_ADDR;
	f.module = str_user_raw;
	f.off = (uint64_t)(uintptr_t)p;
	return kp_frame_intern(&f);
}

/*
 * A file that user frames ran in: its symbols and where its segments
 * sit in the file, loaded once, at the end.
 */
struct dso {
	struct kp_symtab *syms; /* NULL: none to be had */
	GElf_Phdr *load;        /* PT_LOAD headers */
	size_t nload;
};

static struct u64map dsos; /* interned path -> struct dso */

static struct dso *
dso_get(const char *path)
{
	void **slot = u64map_get(&dsos, (uint64_t)(uintptr_t)path, true);
	struct dso *d = *slot;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;
	int fd;

	if (d)
		return d;
	d = kp_xcalloc(1, sizeof(*d));
	*slot = d;
	/* "[vdso]", "[anon]", "/memfd:x (deleted)": nothing to read */
	if (path[0] != '/' || strstr(path, " (deleted)"))
		return d;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return d;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_getphdrnum(elf, &n) == 0) {
		d->load = kp_xcalloc(n ? n : 1, sizeof(*d->load));
		for (i = 0; i < n; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				d->load[d->nload++] = ph;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (d->nload == 0)
		return d;
	d->syms = kp_symtab_new();
	if (kp_symtab_load_elf(d->syms, path, KP_SYMTAB_DEBUGFILE) < 0) {
		kp_symtab_free(d->syms);
		d->syms = NULL;
	}
	return d;
}

/*
 * A user frame, at the end: named by the symbol of its file where the
 * file's ELF symbol table has one,
 *
 *	0x00007f5f103012ad : __GI___libc_write+0x1d/0x90 [/usr/lib/x86_64-linux-gnu/libc.so.6]
 *
 * else by the file and the offset in it,
 *
 *	0x00007f5f103012ad [/usr/lib/x86_64-linux-gnu/libc.so.6+0xf82ad]
 *
 * or by its address alone when no mapping held it.
 */
static const struct kp_frame *
resolve_user(const struct kp_frame *rf)
{
	const struct proc *p = (const struct proc *)(uintptr_t)rf->off;
	struct kp_frame f;
	struct kp_sym sym;
	struct dso *d;
	size_t lo = 0, hi = p->nmaps, mid, i;
	uint64_t vaddr;

	memset(&f, 0, sizeof(f));
	f.addr = rf->addr;
	f.flags = KP_F_ADDR;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f.addr < p->maps[mid].start) {
			hi = mid;
		} else if (f.addr >= p->maps[mid].end) {
			lo = mid + 1;
		} else {
			f.module = p->maps[mid].path;
			f.off = f.addr - p->maps[mid].start + p->maps[mid].pgoff;
			f.flags |= KP_F_OFF;
			break;
		}
	}
	if (!f.module)
		return kp_frame_intern(&f);
	d = dso_get(f.module);
	for (i = 0; d->syms && i < d->nload; i++) {
		if (f.off < d->load[i].p_offset ||
		    f.off - d->load[i].p_offset >= d->load[i].p_filesz)
			continue;
		/* the file offset, as an address of the file's own */
		vaddr = f.off - d->load[i].p_offset + d->load[i].p_vaddr;
		if (kp_symtab_lookup(d->syms, vaddr, 0, &sym)) {
			f.sym = kp_intern_str(sym.name);
			f.off = sym.off;
			f.size = sym.size;
			f.flags |= KP_F_SIZE;
		}
		break;
	}
	return kp_frame_intern(&f);
}

static void
dsos_free(void)
{
	size_t i;
	struct dso *d;

	for (i = 0; i < dsos.cap; i++) {
		if (!dsos.ent[i].key)
			continue;
		d = dsos.ent[i].val;
		kp_symtab_free(d->syms);
		free(d->load);
		free(d);
	}
	free(dsos.ent);
}

/* ---- records ---- */

static struct u64map kaddrs; /* kernel address -> raw frame */
static const struct kp_frame **stack;
static size_t stack_cap;

static const struct kp_frame *
kernel_frame(uint64_t addr)
{
	void **slot = u64map_get(&kaddrs, addr, true);

	if (!*slot)
		*slot = (void *)kp_frame_make(addr, KP_F_ADDR, NULL, "kernel");
	return *slot;
}

static void
push(size_t *n, const struct kp_frame *f)
{
	if (*n == stack_cap) {
		stack_cap = stack_cap ? stack_cap * 2 : 256;
		stack = kp_xrealloc(stack, stack_cap * sizeof(*stack));
	}
	stack[(*n)++] = f;
}

/*
 * PERF_RECORD_SAMPLE with PERF_SAMPLE_IP | PERF_SAMPLE_TID |
 * PERF_SAMPLE_CALLCHAIN, in the order perf_event_open(2) gives:
 *
 *	struct perf_event_header header;
 *	u64 ip;
 *	u32 pid, tid;
 *	u64 nr;
 *	u64 ips[nr];	PERF_CONTEXT_KERNEL, kernel frames leaf first,
 *			then PERF_CONTEXT_USER and user frames (--user)
 */
static void
on_sample(const struct perf_event_header *h)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	const unsigned char *end = (const unsigned char *)h + h->size;
	unsigned mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint64_t ip, nr, a, i, ctx;
	uint32_t pid;
	struct proc *pr = NULL;
	size_t n = 0;

	if (end - p < 24) {
		nbad++;
		return;
	}
	memcpy(&ip, p, 8);
	memcpy(&pid, p + 8, 4);
	memcpy(&nr, p + 16, 8);
	p += 24;
	if (nr > (uint64_t)(end - p) / 8) {
		nbad++;
		return;
	}
	if (opt_user || opt_comm || opt_pid)
		pr = proc_get((pid_t)pid, false);
	ctx = mode == PERF_RECORD_MISC_USER ? PERF_CONTEXT_USER
					     : PERF_CONTEXT_KERNEL;
	if (mode == PERF_RECORD_MISC_USER && !opt_user) {
		push(&n, fr_user);
		nr = 0;
	}
	for (i = 0; i < nr; i++, p += 8) {
		memcpy(&a, p, 8);
		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		if (ctx == PERF_CONTEXT_KERNEL)
			push(&n, kernel_frame(a));
		else if (ctx == PERF_CONTEXT_USER && opt_user)
			push(&n, user_frame(pr, a));
	}
	if (n == 0) {
		/* no callchain: the sampled instruction alone */
		if (mode == PERF_RECORD_MISC_KERNEL)
			push(&n, kernel_frame(ip));
		else if (mode == PERF_RECORD_MISC_USER && opt_user)
			push(&n, user_frame(pr, ip));
		else if (mode == PERF_RECORD_MISC_USER)
			push(&n, fr_user);
		else
			push(&n, fr_unknown);
	}
	if (opt_comm || opt_pid) {
		if (!pr->frame)
			proc_read_comm(pr);
		push(&n, pr->frame);
	}
	if (kp_agg_add(raw, stack, n, 1) == 0)
		nsamples++;
}

/*
 * PERF_RECORD_COMM (attr.comm, comm_exec):
 *
 *	struct perf_event_header header;	misc: PERF_RECORD_MISC_COMM_EXEC
 *	u32 pid, tid;
 *	char comm[];
 */
static void
on_comm(const struct perf_event_header *h)
{
	const char *p = (const char *)(h + 1);
	const char *end = (const char *)h + h->size;
	uint32_t pid, tid;
	struct proc *pr;
	bool exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;

	if (end - p < 9)
		return;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	p += 8;
	if (pid != tid)
		return;
	/* a new program: its mappings come in the mmap records after */
	pr = proc_get((pid_t)pid, exec);
	if (exec)
		pr->maps_known = true;
	if (opt_comm || opt_pid)
		proc_set_comm(pr, p, strnlen(p, (size_t)(end - p)));
}

/*
 * PERF_RECORD_FORK (attr.task): a new process starts with its parent's
 * name and mappings (threads, pid == ppid, are not processes):
 *
 *	struct perf_event_header header;
 *	u32 pid, ppid;
 *	u32 tid, ptid;
 *	u64 time;
 */
static void
on_fork(const struct perf_event_header *h)
{
	const char *p = (const char *)(h + 1);
	uint32_t pid, ppid, tid;
	struct proc *pr, *parent;
	void **slot;

	if (h->size < sizeof(*h) + 16)
		return;
	memcpy(&pid, p, 4);
	memcpy(&ppid, p + 4, 4);
	memcpy(&tid, p + 8, 4);
	if (pid != tid || pid == ppid)
		return;
	slot = u64map_get(&procs, ppid, false);
	parent = slot ? *slot : NULL;
	/*
	 * Records of other CPUs come in no particular order: the child's
	 * exec may have been read already, and its name is the better.
	 */
	pr = proc_get((pid_t)pid, false);
	if (!parent)
		return;
	if (!pr->comm && parent->comm)
		proc_set_comm(pr, parent->comm, strlen(parent->comm));
	if (!pr->maps_known && !pr->nmaps && parent->nmaps) {
		pr->mcap = pr->nmaps = parent->nmaps;
		pr->maps = kp_xmalloc(pr->nmaps * sizeof(*pr->maps));
		memcpy(pr->maps, parent->maps, pr->nmaps * sizeof(*pr->maps));
		pr->maps_known = parent->maps_known;
	}
}

/*
 * PERF_RECORD_MMAP2 (attr.mmap, mmap2), executable mappings only:
 *
 *	struct perf_event_header header;
 *	u32 pid, tid;
 *	u64 addr, len, pgoff;
 *	u32 maj, min; u64 ino, ino_generation;	(or a build-id)
 *	u32 prot, flags;
 *	char filename[];
 */
static void
on_mmap2(const struct perf_event_header *h)
{
	const char *p = (const char *)(h + 1);
	const char *end = (const char *)h + h->size;
	uint64_t addr, len, pgoff;
	uint32_t pid;

	if (end - p < 65)
		return;
	memcpy(&pid, p, 4);
	memcpy(&addr, p + 8, 8);
	memcpy(&len, p + 16, 8);
	memcpy(&pgoff, p + 24, 8);
	p += 64;
	if (strnlen(p, (size_t)(end - p)) == (size_t)(end - p))
		return; /* no NUL: not a record we understand */
	proc_add_map(proc_get((pid_t)pid, false), addr, addr + len, pgoff, p);
}

/* Side-band records, read from every ring before the samples. */
static void
on_sideband(const struct perf_event_header *h, void *arg)
{
	(void)arg;
	switch (h->type) {
	case PERF_RECORD_COMM:
		on_comm(h);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap2(h);
		break;
	case PERF_RECORD_FORK:
		on_fork(h);
		break;
	default:
		break;
	}
}

static void
on_record(const struct perf_event_header *h, void *arg)
{
	uint64_t v;

	(void)arg;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(h);
		break;
	case PERF_RECORD_LOST:
		/* u64 id; u64 lost; */
		if (h->size >= sizeof(*h) + 16) {
			memcpy(&v, (const char *)(h + 1) + 8, 8);
			nlost += v;
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		/* u64 lost; */
		if (h->size >= sizeof(*h) + 8) {
			memcpy(&v, h + 1, 8);
			nlost += v;
		}
		break;
	case PERF_RECORD_THROTTLE:
		nthrottled++;
		break;
	default:
		break;
	}
}

/*
 * Read every ring: first the side-band records of all CPUs (a process
 * that moved to another CPU after its exec has its new name there),
 * then the samples.
 */
static void
drain_all(void)
{
	size_t i;

	if (opt_user || opt_comm || opt_pid)
		for (i = 0; i < nrings; i++)
			kp_perfev_ring_scan(&rings[i], on_sideband, NULL);
	for (i = 0; i < nrings; i++)
		kp_perfev_ring_drain(&rings[i], on_record, NULL);
}

/* ---- opening the events ---- */

static int
read_int_file(const char *path, long *v)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*v = strtol(buf, NULL, 10);
	return 0;
}

/* Why perf_event_open failed, and what to do about it; exits 2. */
static _Noreturn void
open_failed(int err, int cpu, pid_t pid)
{
	long paranoid = 0, maxrate = 0;
	char where[64];

	if (pid > 0)
		snprintf(where, sizeof(where), "pid %d, cpu %d", (int)pid, cpu);
	else
		snprintf(where, sizeof(where), "cpu %d", cpu);
	switch (err) {
	case EACCES:
	case EPERM:
		read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		kp_die("perf_event_open (%s): %s: kernel.perf_event_paranoid "
		       "is %ld; run as root, or allow it with 'sysctl "
		       "kernel.perf_event_paranoid=-1'",
		       where, strerror(err), paranoid);
	case EMFILE:
	case ENFILE:
		kp_die("perf_event_open (%s): too many open files (%zu events "
		       "so far); raise the limit with 'ulimit -n', or sample "
		       "fewer CPUs (-C) or processes",
		       where, nevents);
	case ESRCH:
		kp_die("perf_event_open (%s): no such process", where);
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		kp_die("event '%s' is not supported here (%s%s); try "
		       "-e cpu-clock",
		       event_name, strerror(err),
		       event_type == PERF_TYPE_HARDWARE ||
				       event_type == PERF_TYPE_RAW
			       ? ": no hardware PMU?"
			       : "");
	case EINVAL:
		if (!opt_period &&
		    read_int_file("/proc/sys/kernel/perf_event_max_sample_rate",
				  &maxrate) == 0 &&
		    opt_freq > (uint64_t)maxrate)
			kp_die("-F %" PRIu64 " is above "
			       "kernel.perf_event_max_sample_rate (%ld): lower "
			       "-F, or raise it with sysctl",
			       opt_freq, maxrate);
		kp_die("perf_event_open (%s, event '%s'): %s", where,
		       event_name, strerror(err));
	default:
		kp_die("perf_event_open (%s, event '%s'): %s", where,
		       event_name, strerror(err));
	}
}

static void
attr_fill(struct perf_event_attr *attr, bool task)
{
	kp_perfev_attr_init(attr, event_type, event_config);
	if (opt_period) {
		attr->sample_period = opt_period;
	} else {
		attr->freq = 1;
		attr->sample_freq = opt_freq;
	}
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_CALLCHAIN;
	attr->disabled = 1;
	attr->exclude_callchain_user = !opt_user;
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(opt_pages *
					    (size_t)sysconf(_SC_PAGESIZE) / 4);
	if (opt_user || opt_comm || opt_pid) {
		attr->comm = 1;
		attr->comm_exec = 1;
		attr->task = 1;
	}
	if (opt_user) {
		attr->mmap = 1;
		attr->mmap2 = 1;
	}
	if (task) {
		attr->inherit = 1;
		attr->enable_on_exec = child > 0;
	}
}

static void
add_event(int fd, int cpu, bool own_ring)
{
	events = kp_xrealloc(events, (nevents + 1) * sizeof(*events));
	events[nevents].fd = fd;
	events[nevents].cpu = cpu;
	events[nevents].ring = own_ring;
	nevents++;
	if (!own_ring)
		return;
	rings = kp_xrealloc(rings, (nrings + 1) * sizeof(*rings));
	pfds = kp_xrealloc(pfds, (nrings + 1) * sizeof(*pfds));
	if (kp_perfev_ring_map(&rings[nrings], fd, opt_pages) < 0) {
		if (errno == EPERM || errno == ENOMEM)
			kp_die("mmap of the ring buffer (cpu %d, %zu pages): "
			       "%s; use fewer pages (-m) or raise "
			       "kernel.perf_event_mlock_kb",
			       cpu, opt_pages, strerror(errno));
		kp_die("mmap of the ring buffer (cpu %d):", cpu);
	}
	pfds[nrings].fd = fd;
	pfds[nrings].events = POLLIN;
	pfds[nrings].revents = 0;
	nrings++;
}

/* The first event: try it on one CPU, falling back from cycles. */
static int
open_first(struct perf_event_attr *attr, pid_t pid, int cpu, bool task)
{
	int fd = kp_perfev_open(attr, pid, cpu, -1);

	if (fd >= 0 || opt_event ||
	    (errno != ENOENT && errno != EOPNOTSUPP && errno != ENODEV &&
	     errno != EINVAL))
		return fd;
	/* cycles is the default; without a PMU, the software timer */
	event_fallback = true;
	event_name = "cpu-clock";
	event_type = PERF_TYPE_SOFTWARE;
	event_config = PERF_COUNT_SW_CPU_CLOCK;
	attr_fill(attr, task);
	fd = kp_perfev_open(attr, pid, cpu, -1);
	if (fd >= 0)
		kp_warn("cycles: not supported here (no hardware PMU?); "
			"sampling cpu-clock instead");
	return fd;
}

static void
open_cpuwide(void)
{
	struct perf_event_attr attr;
	size_t i;
	int fd;

	attr_fill(&attr, false);
	for (i = 0; i < ncpus; i++) {
		fd = i == 0 ? open_first(&attr, -1, cpus[i], false)
			    : kp_perfev_open(&attr, -1, cpus[i], -1);
		if (fd < 0)
			open_failed(errno, cpus[i], -1);
		add_event(fd, cpus[i], true);
	}
}

/* The threads of a process: /proc/PID/task/TID. */
static pid_t *
threads_of(pid_t pid, size_t *n)
{
	char path[64];
	struct dirent **names;
	pid_t *tids;
	int i, k;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	k = scandir(path, &names, NULL, NULL);
	if (k < 0)
		return NULL;
	tids = kp_xcalloc((size_t)k + 1, sizeof(*tids));
	*n = 0;
	for (i = 0; i < k; i++) {
		if (names[i]->d_name[0] != '.')
			tids[(*n)++] = (pid_t)atoi(names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return tids;
}

/*
 * Per-task events: one per thread and CPU, inherited by new children;
 * the events of one CPU share that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT),
 * as perf record does.
 */
static void
open_tasks(const pid_t *tids, size_t ntids)
{
	struct perf_event_attr attr;
	size_t t, i;
	int *first = kp_xcalloc(ncpus, sizeof(*first));
	int fd;

	attr_fill(&attr, true);
	for (t = 0; t < ntids; t++)
		for (i = 0; i < ncpus; i++) {
			fd = nevents == 0
				     ? open_first(&attr, tids[t], cpus[i], true)
				     : kp_perfev_open(&attr, tids[t], cpus[i],
						      -1);
			if (fd < 0) {
				if (errno == ESRCH && t > 0)
					break; /* a thread that just ended */
				open_failed(errno, cpus[i], tids[t]);
			}
			if (t == 0) {
				first[i] = fd;
				add_event(fd, cpus[i], true);
				continue;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, first[i]) < 0)
				kp_die("PERF_EVENT_IOC_SET_OUTPUT (cpu %d):",
				       cpus[i]);
			add_event(fd, cpus[i], false);
		}
	free(first);
}

static void
enable_all(bool on)
{
	size_t i;

	for (i = 0; i < nevents; i++)
		ioctl(events[i].fd, on ? PERF_EVENT_IOC_ENABLE
				       : PERF_EVENT_IOC_DISABLE, 0);
}

/* Raise the soft limit on open files to the hard one, as perf does. */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- the command ---- */

static int go_fd = -1, err_fd = -1;

/*
 * Fork the command, stopped before exec until start_command(): the
 * events are opened on its pid first, so that nothing it does escapes.
 */
static void
fork_command(char **argv)
{
	int go[2], err[2];
	char c;
	int e;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		kp_die("pipe:");
	child = fork();
	if (child < 0)
		kp_die("fork:");
	if (child == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(err[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* kp-sample gave up */
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	go_fd = go[1];
	err_fd = err[0];
}

static void
start_command(const char *name)
{
	ssize_t n;
	int e;

	if (write(go_fd, "g", 1) != 1)
		kp_die("pipe to the command:");
	close(go_fd);
	n = read(err_fd, &e, sizeof(e));
	close(err_fd);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(child, NULL, 0);
		kp_die("cannot run '%s': %s", name, strerror(e));
	}
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

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool
child_done(void)
{
	int st;
	pid_t r;

	if (child <= 0 || child_status >= 0)
		return child_status >= 0;
	r = waitpid(child, &st, WNOHANG);
	if (r == child) {
		child_status = st;
		return true;
	}
	return false;
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

static bool status_shown;

static void
status_line(double elapsed)
{
	fprintf(stderr,
		"\r\033[K%s: %.1f s, %" PRIu64 " samples, %" PRIu64 " lost",
		kp_progname, elapsed, nsamples, nlost);
	fflush(stderr);
	status_shown = true;
}

/* ---- the end: resolve, write ---- */

static struct u64map resolved; /* raw frame pointer -> resolved frame */

static const struct kp_frame *
resolve(const struct kp_frame *f)
{
	void **slot;
	struct kp_frame r;
	struct kp_sym sym;

	if ((f->module != str_kernel || f->sym) && f->module != str_user_raw)
		return f;
	slot = u64map_get(&resolved, (uint64_t)(uintptr_t)f, true);
	if (*slot)
		return *slot;
	if (f->module == str_user_raw) {
		*slot = (void *)resolve_user(f);
		return *slot;
	}
	r = *f;
	/* addresses as recorded (return addresses), looked up as perf does */
	if (ksyms && kp_symtab_lookup(ksyms, f->addr, 0, &sym)) {
		r.sym = kp_intern_str(sym.name);
		r.off = sym.off;
		r.size = sym.size;
		r.flags |= KP_F_OFF | KP_F_SIZE;
		if (sym.module)
			r.module = kp_intern_str(sym.module);
	}
	*slot = (void *)kp_frame_intern(&r);
	return *slot;
}

static int
cmp_count(const void *a, const void *b)
{
	const struct kp_stack *x = *(const struct kp_stack *const *)a;
	const struct kp_stack *y = *(const struct kp_stack *const *)b;

	return x->count > y->count ? -1 : x->count < y->count;
}

/* The GNU build-id note in /sys/kernel/notes, as hex, or NULL. */
static char *
kernel_build_id(void)
{
	unsigned char buf[4096];
	uint32_t namesz, descsz, type;
	size_t off = 0, len, i;
	char *hex;
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return NULL;
	len = (size_t)n;
	/* Elf_Nhdr: namesz, descsz, type; name and desc padded to 4 */
	while (off + 12 <= len) {
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		if (namesz > len || descsz > len)
			return NULL;
		if (off + ((namesz + 3) & ~3u) + descsz > len)
			return NULL;
		if (type == 3 && namesz == 4 &&
		    memcmp(buf + off, "GNU", 4) == 0) {
			off += 4;
			hex = kp_xmalloc(descsz * 2 + 1);
			for (i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[off + i]);
			hex[descsz * 2] = '\0';
			return hex;
		}
		off += ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	}
	return NULL;
}

static void
set_metadata(double duration, char **cmd)
{
	struct utsname un;
	struct kp_sym sym;
	char buf[4096];
	char *bid;
	size_t i, len;

	kp_meta_set("tool", "kp-sample");
	kp_meta_set("event", "%s%s", event_name,
		    event_fallback ? " (cycles not supported: no hardware PMU)"
				   : "");
	if (opt_period)
		kp_meta_set("period", "%" PRIu64, opt_period);
	else
		kp_meta_set("frequency", "%" PRIu64, opt_freq);
	kp_meta_set("weight", "samples");
	kp_meta_set("duration", "%.3f s", duration);
	kp_perfev_cpus_format(cpus, ncpus, buf, sizeof(buf));
	kp_meta_set("cpus", "%s", buf);
	if (opt_pids)
		kp_meta_set("pids", "%s", opt_pids);
	if (cmd && cmd[0]) {
		len = 0;
		buf[0] = '\0';
		for (i = 0; cmd[i] && len < sizeof(buf) - 1; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s", i ? " " : "", cmd[i]);
		kp_meta_set("command", "%s", buf);
		if (WIFEXITED(child_status))
			kp_meta_set("command-status", "exit %d",
				    WEXITSTATUS(child_status));
		else if (WIFSIGNALED(child_status))
			kp_meta_set("command-status", "signal %d (%s)",
				    WTERMSIG(child_status),
				    strsignal(WTERMSIG(child_status)));
	}
	kp_meta_set("samples", "%" PRIu64, nsamples);
	kp_meta_set("lost", "%" PRIu64, nlost);
	kp_meta_set("throttled", "%" PRIu64, nthrottled);
	if (uname(&un) == 0)
		kp_meta_set("kernel", "%s", un.release);
	if ((bid = kernel_build_id()) != NULL) {
		kp_meta_set("build-id", "%s", bid);
		free(bid);
	}
	if (ksyms && kp_symtab_find(ksyms, "_stext", &sym))
		kp_meta_set("stext", "0x%016" PRIx64, sym.addr);
	if (opt_archive)
		kp_meta_set("archive", "%s", opt_archive);
}

static void
write_profile(FILE *out)
{
	struct kp_agg *agg = kp_agg_new();
	const struct kp_frame **fr = NULL;
	size_t i, j, n = kp_agg_len(raw), cap = 0;

	for (i = 0; i < n; i++) {
		const struct kp_stack *st = kp_agg_get(raw, i);

		if (st->n > cap) {
			cap = st->n * 2;
			fr = kp_xrealloc(fr, cap * sizeof(*fr));
		}
		for (j = 0; j < st->n; j++)
			fr[j] = resolve(st->frames[j]);
		if (kp_agg_add(agg, fr, st->n, st->count) < 0)
			kp_die("a stack's count overflows 64 bits");
	}
	kp_agg_sort(agg, cmp_count);
	kp_write_agg(out, agg);
	free(fr);
	kp_agg_free(agg);
}

/* ---- --archive ---- */

static void
archive_copy(const char *from, const char *dir, const char *name,
	     bool required)
{
	char path[PATH_MAX], buf[65536];
	ssize_t n;
	int in, out;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		if (required)
			kp_die("--archive: %s:", from);
		return;
	}
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		kp_die("--archive: %s:", path);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			kp_die("--archive: write error on %s:", path);
	if (n < 0)
		kp_die("--archive: %s:", from);
	close(in);
	if (close(out) < 0)
		kp_die("--archive: write error on %s:", path);
}

/*
 * Save what kp-addr2sym needs to redo the symbols elsewhere, as
 * oparchive does: DIR/kallsyms, DIR/modules, DIR/notes (the kernel's
 * ELF notes, build-id included), DIR/uname, and DIR/sections, one line
 * per loaded module section from /sys/module/MOD/sections/SECTION:
 *
 *	MODULE SECTION 0xADDRESS
 */
static void
archive_save(const char *dir)
{
	char path[PATH_MAX], buf[64];
	struct dirent **mods, **secs;
	struct utsname un;
	FILE *fp;
	int nm, ns, i, j, fd;
	ssize_t n;
	char *real;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		kp_die("--archive: %s:", dir);
	/* "# archive:" names it absolutely, for use from anywhere */
	if ((real = realpath(dir, NULL)) != NULL)
		opt_archive = real;
	archive_copy("/proc/kallsyms", dir, "kallsyms", true);
	archive_copy("/proc/modules", dir, "modules", false);
	archive_copy("/sys/kernel/notes", dir, "notes", false);
	snprintf(path, sizeof(path), "%s/uname", dir);
	if (!(fp = fopen(path, "we")))
		kp_die("--archive: %s:", path);
	if (uname(&un) == 0)
		fprintf(fp, "%s %s %s %s\n", un.sysname, un.release,
			un.version, un.machine);
	if (kp_close_output(fp, path) < 0)
		exit(KP_EXIT_FATAL);
	snprintf(path, sizeof(path), "%s/sections", dir);
	if (!(fp = fopen(path, "we")))
		kp_die("--archive: %s:", path);
	nm = scandir("/sys/module", &mods, NULL, alphasort);
	for (i = 0; i < nm; i++) {
		snprintf(path, sizeof(path), "/sys/module/%s/sections",
			 mods[i]->d_name);
		ns = mods[i]->d_name[0] == '.'
			     ? -1
			     : scandir(path, &secs, NULL, alphasort);
		for (j = 0; j < ns; j++) {
			snprintf(path, sizeof(path),
				 "/sys/module/%s/sections/%s", mods[i]->d_name,
				 secs[j]->d_name);
			fd = secs[j]->d_name[0] == '.' &&
					     (secs[j]->d_name[1] == '\0' ||
					      strcmp(secs[j]->d_name, "..") == 0)
				     ? -1
				     : open(path, O_RDONLY | O_CLOEXEC);
			n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
			if (n > 0) {
				buf[n] = '\0';
				buf[strcspn(buf, "\n")] = '\0';
				fprintf(fp, "%s %s %s\n", mods[i]->d_name,
					secs[j]->d_name, buf);
			}
			free(secs[j]);
		}
		if (ns >= 0)
			free(secs);
		free(mods[i]);
	}
	if (nm >= 0)
		free(mods);
	snprintf(path, sizeof(path), "%s/sections", dir);
	if (kp_close_output(fp, path) < 0)
		exit(KP_EXIT_FATAL);
}

/* ---- main ---- */

static pid_t *
parse_pids(const char *s, size_t *n)
{
	pid_t *v = NULL;
	const char *p = s, *q;
	uint64_t x;

	*n = 0;
	for (;;) {
		q = strchr(p, ',');
		if (!q)
			q = p + strlen(p);
		if (kp_parse_u64(p, (size_t)(q - p), 10, &x) < 0 || x == 0 ||
		    x > INT_MAX)
			kp_usage_error("-p: not a pid list: '%s'", s);
		v = kp_xrealloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = (pid_t)x;
		if (!*q)
			break;
		p = q + 1;
	}
	return v;
}

int
main(int argc, char **argv)
{
	enum { OPT_USER = 256, OPT_COMM, OPT_PID, OPT_ARCHIVE };
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
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	sigset_t block, none;
	struct timespec ts;
	double t0, t1, deadline = 0, next_status = 0, wait;
	bool tty, freq_given = false;
	FILE *out = stdout;
	char **cmd = NULL;
	int ch, status;
	size_t i, k;

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
			opt_event = optarg;
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
		default:
			usage(stderr, KP_EXIT_USAGE);
		}
	argc -= optind;
	argv += optind;
	if (argc > 0)
		cmd = argv;
	if (freq_given && opt_period)
		kp_usage_error("-F and -c exclude each other");
	if ((opt_all || opt_cpus) && opt_pids)
		kp_usage_error("-p excludes -a and -C");
	if (opt_all && opt_cpus)
		kp_usage_error("-a and -C exclude each other");
	if (opt_pids && cmd)
		kp_usage_error("-p excludes a command");
	if (!opt_all && !opt_cpus && !opt_pids && !cmd)
		kp_usage_error("nothing to sample: give -a, -C, -p or a "
			       "command");
	if (opt_pids)
		pids = parse_pids(opt_pids, &npids);

	event_name = opt_event ? opt_event : "cycles";
	if (kp_perfev_lookup(event_name, &event_type, &event_config) < 0)
		kp_usage_error("-e: unknown event '%s' (try cycles, "
			       "cpu-clock, task-clock, instructions, "
			       "page-faults, or rHEX)",
			       event_name);
	if (opt_cpus) {
		int *online;
		size_t nonline, j;
		char list[256];

		cpus = kp_perfev_cpus_parse(opt_cpus, &ncpus);
		if (!cpus)
			kp_usage_error("-C: not a CPU list: '%s'", opt_cpus);
		online = kp_perfev_cpus_online(&nonline);
		for (i = 0; online && i < ncpus; i++) {
			for (j = 0; j < nonline && online[j] != cpus[i]; j++)
				;
			if (j == nonline) {
				kp_perfev_cpus_format(online, nonline, list,
						      sizeof(list));
				free(online);
				kp_usage_error("-C: CPU %d is not online "
					       "(online: %s)",
					       cpus[i], list);
			}
		}
		free(online);
	} else {
		cpus = kp_perfev_cpus_online(&ncpus);
		if (!cpus)
			kp_die("/sys/devices/system/cpu/online:");
	}
	if (opt_output && !(out = fopen(opt_output, "we")))
		kp_die("%s:", opt_output);

	raw = kp_agg_new();
	str_kernel = kp_intern_str("kernel");
	str_user_raw = kp_intern_str("[user-raw]");
	fr_user = kp_frame_make(0, 0, "[user]", NULL);
	fr_unknown = kp_frame_make(0, 0, "[unknown]", NULL);
	raise_nofile();

	/* signals: blocked but while waiting in ppoll */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&none);

	if (cmd)
		fork_command(cmd);
	if (opt_comm || opt_pid) {
		if (opt_all || opt_cpus)
			proc_read_all(NULL, 0);
		else if (npids)
			proc_read_all(pids, npids);
	}
	if (cmd && (opt_comm || opt_pid)) {
		/* its name after exec, which no COMM record will give */
		const char *base = strrchr(cmd[0], '/');

		base = base ? base + 1 : cmd[0];
		proc_set_comm(proc_get(child, true), base,
			      strnlen(base, 15));
	}
	if (opt_all || opt_cpus) {
		open_cpuwide();
	} else if (cmd) {
		open_tasks(&child, 1);
	} else {
		for (i = 0; i < npids; i++) {
			pid_t *tids = threads_of(pids[i], &k);

			if (!tids)
				kp_die("-p %d: no such process", (int)pids[i]);
			open_tasks(tids, k);
			free(tids);
		}
	}

	/*
	 * The events are open (disabled), so permission errors came first.
	 * Symbols now, before sampling: the profile can be written the
	 * moment sampling ends.
	 */
	ksyms = kp_symtab_new();
	if (kp_symtab_load_kallsyms(ksyms, NULL) < 0) {
		kp_warn("%s; kernel frames keep bare addresses",
			kp_symtab_error(ksyms));
		kp_symtab_free(ksyms);
		ksyms = NULL;
	}
	if (opt_archive)
		archive_save(opt_archive);

	tty = isatty(STDERR_FILENO);
	t0 = now();
	if (!cmd || opt_all || opt_cpus)
		enable_all(true);
	if (cmd)
		start_command(cmd[0]); /* per-task events: enable_on_exec */
	if (opt_duration > 0)
		deadline = t0 + opt_duration;
	for (;;) {
		/* 4 reads a second name short-lived processes while alive */
		wait = STATUS_MS / 1000.0;
		t1 = now();
		if (tty) {
			if (t1 >= next_status) {
				status_line(t1 - t0);
				next_status = t1 + STATUS_MS / 1000.0;
			}
			wait = next_status - t1;
		}
		if (deadline > 0) {
			if (t1 >= deadline)
				break;
			if (deadline - t1 < wait)
				wait = deadline - t1;
		}
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		if (ppoll(pfds, nrings, &ts, &none) < 0 && errno != EINTR)
			kp_die("ppoll:");
		for (i = 0; i < nrings; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR))
				pfds[i].fd = -1; /* its task is gone */
		drain_all();
		if (got_stop)
			break;
		if (got_child && child_done())
			break;
		if (npids && pids_gone())
			break;
	}
	enable_all(false);
	t1 = now();
	drain_all();
	if (status_shown)
		fputs("\r\033[K", stderr);

	if (child > 0 && !child_done()) {
		/* -d ran out, or we were stopped: end the command too */
		kill(child, SIGTERM);
		while (waitpid(child, &child_status, 0) < 0 && errno == EINTR)
			;
	}
	if (cmd && child_status >= 0) {
		if (WIFEXITED(child_status) && WEXITSTATUS(child_status))
			kp_warn("%s exited with status %d", cmd[0],
				WEXITSTATUS(child_status));
		else if (WIFSIGNALED(child_status))
			kp_warn("%s was killed by signal %d (%s)", cmd[0],
				WTERMSIG(child_status),
				strsignal(WTERMSIG(child_status)));
	}
	for (i = 0; i < nrings; i++)
		nbad += rings[i].bad;
	if (nlost)
		kp_warn("%" PRIu64 " samples lost (ring buffer full): use "
			"-m to give it more pages, or a lower -F",
			nlost);
	if (nthrottled)
		kp_warn("the kernel throttled sampling %" PRIu64 " time%s (its "
			"interrupts took too long): use a lower -F",
			nthrottled, nthrottled == 1 ? "" : "s");
	if (nbad)
		kp_warn("%" PRIu64 " malformed records skipped", nbad);

	set_metadata(t1 - t0, cmd);
	write_profile(out);
	if (out != stdout && kp_close_output(out, opt_output) < 0)
		return KP_EXIT_FATAL;
	status = kp_finish();
	for (i = 0; i < nrings; i++)
		kp_perfev_ring_unmap(&rings[i]);
	for (i = 0; i < nevents; i++)
		close(events[i].fd);
	dsos_free();
	for (i = 0; i < nallprocs; i++) {
		free(allprocs[i]->maps);
		free(allprocs[i]);
	}
	free(allprocs);
	return status;
}
