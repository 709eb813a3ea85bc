/*
 * procs.c - the process model: pid -> name and executable mappings.  See
 * procs.h.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp.h"
#include "procs.h"

/*
 * The processes and their arrays of mappings are carved from a pool and
 * freed with the model, never one by one: an array a parent lent to a
 * child and then replaced with a copy of its own stays the child's, and
 * one outgrown stays where it was.  A capture of many short-lived
 * processes makes thousands of them (perfdata-check.data: 10,500
 * programs), and each malloc of a few hundred bytes grew perf2kp's
 * second thread's heap a page at a time, a system call each (1,669
 * mprotect calls there).
 */
struct kp_procs {
	struct kp_slots cur; /* pid -> its current struct kp_proc */
	size_t nall; /* programs made (kp_procs_count) */
	struct kp_pool pool; /* the processes and their mappings */
	bool data; /* keep data mappings too (kp-sample --data) */
};

struct kp_procs *
kp_procs_new(void)
{
	return kp_xcalloc(1, sizeof(struct kp_procs));
}

void
kp_procs_free(struct kp_procs *ps)
{
	if (!ps)
		return;
	kp_pool_free(&ps->pool);
	kp_slots_free(&ps->cur);
	free(ps);
}

static uint64_t
pid_hash(uint32_t pid)
{
	uint64_t k = pid;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	return k ^ (k >> 33);
}

/*
 * The slot of pid: its current process, or the empty slot for it.  A
 * slot's hash is its pid's (pid_hash is one to one: murmur3's finalizer
 * of a 64-bit number), so the slots are told apart by their hashes, not
 * by the processes they point to: on a capture of many short-lived
 * processes each of those was a miss in the cache (perfdata-check.data's
 * 13,500 forks, three lookups each, and a lookup a sample).
 */
static struct kp_slot *
pid_slot(struct kp_procs *ps, uint32_t pid)
{
	uint64_t h = pid_hash(pid);
	size_t i, mask;

	kp_slots_reserve(&ps->cur, 1024);
	mask = ps->cur.cap - 1;
	for (i = h & mask; ps->cur.tab[i].p; i = (i + 1) & mask)
		if (ps->cur.tab[i].hash == h)
			return &ps->cur.tab[i];
	ps->cur.tab[i].hash = h;
	return &ps->cur.tab[i];
}

struct kp_proc *
kp_procs_find(struct kp_procs *ps, uint32_t pid)
{
	uint64_t h = pid_hash(pid);
	size_t i, mask;

	if (!ps->cur.cap)
		return NULL;
	mask = ps->cur.cap - 1;
	for (i = h & mask; ps->cur.tab[i].p; i = (i + 1) & mask)
		if (ps->cur.tab[i].hash == h)
			return ps->cur.tab[i].p;
	return NULL;
}

/* pid's current program, or a new one (fresh: an exec). */
static struct kp_proc *
proc_get(struct kp_procs *ps, uint32_t pid, bool fresh)
{
	struct kp_slot *s = pid_slot(ps, pid);
	struct kp_proc *p = s->p;

	if (p && !fresh)
		return p;
	if (!p)
		ps->cur.n++;
	p = kp_pool_alloc(&ps->pool, sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	s->p = p;
	ps->nall++;
	return p;
}

const struct kp_map *
kp_proc_map_back(const struct kp_proc *p, uint64_t addr)
{
	const struct kp_map *m = NULL;
	int depth;

	for (depth = 0; p && !m && depth < 8; depth++, p = p->before)
		m = kp_proc_map(p, addr);
	return m;
}

const struct kp_map *
kp_procs_map(struct kp_procs *ps, uint32_t pid, uint64_t addr)
{
	return kp_proc_map_back(kp_procs_find(ps, pid), addr);
}

struct kp_proc *
kp_procs_get(struct kp_procs *ps, uint32_t pid)
{
	return proc_get(ps, pid, false);
}

size_t
kp_procs_count(const struct kp_procs *ps)
{
	return ps->nall;
}

void
kp_procs_comm(struct kp_procs *ps, uint32_t pid, uint32_t tid,
	      const char *comm, size_t len, bool exec)
{
	struct kp_proc *p, *before;

	if (pid != tid)
		return;
	/* a new program: its mappings come in the mmap records after */
	before = exec ? kp_procs_find(ps, pid) : NULL;
	p = proc_get(ps, pid, exec);
	if (exec) {
		p->maps_known = true;
		p->before = before;
	}
	p->comm = kp_intern(comm, strnlen(comm, len));
}

void
kp_procs_fork(struct kp_procs *ps, uint32_t pid, uint32_t ppid, uint32_t tid,
	      uint32_t ptid)
{
	struct kp_proc *p, *parent;

	(void)ptid;
	if (pid != tid || pid == ppid)
		return;
	parent = kp_procs_find(ps, ppid);
	/*
	 * Records of other CPUs come in no particular order: the child's
	 * exec may have been read already, and its name is the better.  A
	 * pid reused after an exit is a new process.
	 */
	p = kp_procs_find(ps, pid);
	p = proc_get(ps, pid, p && p->exited);
	if (!parent)
		return;
	if (!p->comm)
		p->comm = parent->comm;
	if (!p->maps_known && !p->nmaps && parent->nmaps) {
		/* shared, not copied: most children exec (a new program,
		 * mappings of its own) before they map anything.  (p has no
		 * array of its own: every add_map leaves one mapping at
		 * least.) */
		p->maps = parent->maps;
		p->nmaps = parent->nmaps;
		p->mcap = 0;
		parent->maps_lent = true;
		p->maps_known = parent->maps_known;
	}
}

void
kp_procs_exit(struct kp_procs *ps, uint32_t pid, uint32_t tid)
{
	struct kp_proc *p;

	if (pid == tid && (p = kp_procs_find(ps, pid)) != NULL)
		p->exited = true;
}

/* p's mappings in a new array of cap entries (the old one stays: a
 * child may share it). */
static void
move_maps(struct kp_procs *ps, struct kp_proc *p, size_t cap)
{
	struct kp_map *copy = kp_pool_alloc(&ps->pool, cap * sizeof(*copy));

	if (p->nmaps)
		memcpy(copy, p->maps, p->nmaps * sizeof(*copy));
	p->maps = copy;
	p->mcap = cap;
	p->maps_lent = false;
}

/* p's mappings an array of its own, to change: a copy of a shared one. */
static void
own_maps(struct kp_procs *ps, struct kp_proc *p)
{
	if ((p->mcap && !p->maps_lent) || !p->nmaps)
		return;
	move_maps(ps, p, p->nmaps < 4 ? 8 : 2 * p->nmaps);
}

/* Add a mapping, replacing what it overlaps (a new mmap over an old);
 * path and build_id interned. */
static void
add_map(struct kp_procs *ps, struct kp_proc *p, uint64_t start, uint64_t end,
	uint64_t pgoff, const char *path, const char *build_id)
{
	size_t i, j;

	own_maps(ps, p);
	for (i = 0, j = 0; i < p->nmaps; i++)
		if (p->maps[i].end <= start || p->maps[i].start >= end)
			p->maps[j++] = p->maps[i];
	p->nmaps = j;
	if (p->nmaps == p->mcap)
		move_maps(ps, p, p->mcap ? p->mcap * 2 : 8);
	for (i = p->nmaps; i > 0 && p->maps[i - 1].start > start; i--)
		p->maps[i] = p->maps[i - 1];
	p->maps[i].start = start;
	p->maps[i].end = end;
	p->maps[i].pgoff = pgoff;
	p->maps[i].path = path;
	p->maps[i].build_id = build_id;
	p->maps[i].key[0] = p->maps[i].key[1] = NULL;
	p->nmaps++;
}

void
kp_procs_mmap(struct kp_procs *ps, uint32_t pid, uint64_t start, uint64_t len,
	      uint64_t pgoff, const char *path, const char *build_id)
{
	kp_procs_mmap_interned(ps, pid, start, len, pgoff, kp_intern_str(path),
			       build_id ? kp_intern_str(build_id) : NULL);
}

void
kp_procs_mmap_interned(struct kp_procs *ps, uint32_t pid, uint64_t start,
		       uint64_t len, uint64_t pgoff, const char *path,
		       const char *build_id)
{
	if (pid == (uint32_t)-1 || len == 0 || start + len < start)
		return;
	add_map(ps, proc_get(ps, pid, false), start, start + len, pgoff, path,
		build_id);
}

const struct kp_map *
kp_proc_map(const struct kp_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/* ---- /proc ---- */

/* The name of a running process: /proc/PID/comm. */
static void
scan_comm(struct kp_proc *p)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	if (p->pid == 0) {
		p->comm = kp_intern_str("swapper");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n <= 0) /* gone already: perf names it ":PID" */
		n = snprintf(buf, sizeof(buf), ":%u", p->pid);
	p->comm = kp_intern(buf, (size_t)n);
}

/*
 * /proc/PID/maps of a process that was running before sampling began,
 * the executable mappings only:
 *
 *	55d0c9a00000-55d0c9a1c000 r-xp 00002000 fd:01 1835023    /usr/bin/dd
 *	7ffd5b5f1000-7ffd5b5f3000 r-xp 00000000 00:00 0          [vdso]
 */
static void
scan_maps(struct kp_procs *ps, struct kp_proc *p)
{
	char path[64], *line = NULL, perms[8], *name;
	unsigned long long start, end, pgoff;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;
	int pos;

	p->maps_known = true;
	snprintf(path, sizeof(path), "/proc/%u/maps", p->pid);
	fp = fopen(path, "re");
	if (!fp)
		return;
	while ((len = getline(&line, &cap, fp)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end,
			   perms, &pgoff, &pos) != 4 ||
		    pos == 0 || (perms[2] != 'x' && !ps->data))
			continue;
		name = line + pos;
		while (*name == ' ')
			name++;
		add_map(ps, p, start, end, pgoff,
			kp_intern_str(*name ? name : "[anon]"), NULL);
	}
	free(line);
	fclose(fp);
}

void
kp_procs_scan(struct kp_procs *ps, uint32_t pid, unsigned what)
{
	struct kp_proc *p = proc_get(ps, pid, false);

	if (what & KP_PROCS_COMM)
		scan_comm(p);
	if ((what & KP_PROCS_MAPS) && !p->maps_known && pid != 0)
		scan_maps(ps, p);
}

void
kp_procs_scan_all(struct kp_procs *ps, unsigned what)
{
	struct dirent *d;
	DIR *dir;
	long v;
	char *end;

	kp_procs_scan(ps, 0, what);
	if (!(dir = opendir("/proc")))
		return;
	while ((d = readdir(dir)) != NULL) {
		v = strtol(d->d_name, &end, 10);
		if (*end == '\0' && v > 0 && v <= INT_MAX)
			kp_procs_scan(ps, (uint32_t)v, what);
	}
	closedir(dir);
}

void
kp_procs_keep_data(struct kp_procs *ps)
{
	ps->data = true;
}

bool
kp_procs_keeps_data(const struct kp_procs *ps)
{
	return ps->data;
}
