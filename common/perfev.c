/* perfev.c - perf_event_open(2): events on CPUs or tasks, CPUs, the mmap ring */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kp.h"
#include "perfev.h"
#include "procs.h"

void
kp_perfev_attr_init(struct perf_event_attr *attr, uint32_t type,
		    uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
}

int
kp_perfev_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			    PERF_FLAG_FD_CLOEXEC);
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * A CPU list, as /sys/devices/system/cpu/online and taskset(1) write it:
 *
 *	0-1
 *	0,2-5,7
 */
int *
kp_perfev_cpus_parse(const char *list, size_t *n)
{
	const char *p = list, *q;
	uint64_t lo, hi, c;
	size_t len = 0, cap = 16, i, out;
	int *cpus = kp_xmalloc(cap * sizeof(*cpus));

	for (;;) {
		for (q = p; *q >= '0' && *q <= '9'; q++)
			;
		if (kp_parse_u64(p, (size_t)(q - p), 10, &lo) < 0)
			goto bad;
		hi = lo;
		if (*q == '-') {
			p = q + 1;
			for (q = p; *q >= '0' && *q <= '9'; q++)
				;
			if (kp_parse_u64(p, (size_t)(q - p), 10, &hi) < 0)
				goto bad;
		}
		if (hi < lo || hi >= 65536)
			goto bad;
		for (c = lo; c <= hi; c++) {
			if (len == cap) {
				cap *= 2;
				cpus = kp_xrealloc(cpus, cap * sizeof(*cpus));
			}
			cpus[len++] = (int)c;
		}
		if (*q == '\0' || *q == '\n')
			break;
		if (*q != ',')
			goto bad;
		p = q + 1;
	}
	qsort(cpus, len, sizeof(*cpus), cmp_int);
	for (i = 0, out = 0; i < len; i++)
		if (out == 0 || cpus[out - 1] != cpus[i])
			cpus[out++] = cpus[i];
	*n = out;
	return cpus;
bad:
	free(cpus);
	errno = EINVAL;
	return NULL;
}

int *
kp_perfev_cpus_online(size_t *n)
{
	char buf[4096];
	ssize_t len;
	int fd;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0) {
		errno = len < 0 ? errno : EINVAL;
		return NULL;
	}
	buf[len] = '\0';
	return kp_perfev_cpus_parse(buf, n);
}

void
kp_perfev_cpus_format(const int *cpus, size_t n, char *buf, size_t size)
{
	size_t i, j, len = 0;
	int w;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < n; i = j + 1) {
		for (j = i; j + 1 < n && cpus[j + 1] == cpus[j] + 1; j++)
			;
		if (j == i)
			w = snprintf(buf + len, size - len, "%s%d",
				     len ? "," : "", cpus[i]);
		else
			w = snprintf(buf + len, size - len, "%s%d-%d",
				     len ? "," : "", cpus[i], cpus[j]);
		if (w < 0 || (size_t)w >= size - len)
			return;
		len += (size_t)w;
	}
}

int
kp_perfev_ring_map(struct kp_perfev_ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	memset(r, 0, sizeof(*r));
	if (data_pages == 0 || (data_pages & (data_pages - 1))) {
		errno = EINVAL;
		return -1;
	}
	r->map_len = (data_pages + 1) * page;
	p = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		r->map_len = 0;
		return -1;
	}
	r->meta = p;
	r->data = (unsigned char *)p + page;
	r->size = (uint64_t)data_pages * page;
	return 0;
}

void
kp_perfev_ring_init(struct kp_perfev_ring *r, struct perf_event_mmap_page *meta,
		    void *data, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	r->meta = meta;
	r->data = data;
	r->size = size;
}

bool
kp_perfev_ring_pending(const struct kp_perfev_ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) !=
	       r->meta->data_tail;
}

static size_t
walk(struct kp_perfev_ring *r, kp_perfev_fn fn, void *arg, bool release)
{
	uint64_t head, tail, mask = r->size - 1, off, first;
	const struct perf_event_header *hdr;
	struct perf_event_header h;
	size_t n = 0;

	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	/* a drain after a scan stops where the scan stopped: records
	 * written since go to the next scan, not past it unseen */
	if (release && r->scanned) {
		head = r->scanned_head;
		r->scanned = false;
	} else if (!release) {
		r->scanned_head = head;
		r->scanned = true;
	}
	tail = r->meta->data_tail;
	while (tail < head) {
		off = tail & mask;
		/* records are 8-byte aligned, so a header never wraps */
		if (head - tail < sizeof(h) || off + sizeof(h) > r->size) {
			r->bad++;
			break;
		}
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			r->bad++;
			break;
		}
		if (off + h.size <= r->size) {
			hdr = (const void *)(r->data + off);
		} else {
			if (r->copy_cap < h.size) {
				r->copy_cap = h.size < 256 ? 256 : h.size;
				free(r->copy);
				r->copy = kp_xmalloc(r->copy_cap);
			}
			first = r->size - off;
			memcpy(r->copy, r->data + off, first);
			memcpy(r->copy + first, r->data, h.size - first);
			hdr = (const void *)r->copy;
		}
		fn(hdr, arg);
		n++;
		tail += h.size;
	}
	if (release)
		__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

size_t
kp_perfev_ring_drain(struct kp_perfev_ring *r, kp_perfev_fn fn, void *arg)
{
	return walk(r, fn, arg, true);
}

size_t
kp_perfev_ring_scan(struct kp_perfev_ring *r, kp_perfev_fn fn, void *arg)
{
	uint64_t bad = r->bad;
	size_t n = walk(r, fn, arg, false);

	r->bad = bad; /* the drain that follows counts it */
	return n;
}

void
kp_perfev_ring_unmap(struct kp_perfev_ring *r)
{
	if (r->map_len)
		munmap(r->meta, r->map_len);
	free(r->copy);
	memset(r, 0, sizeof(*r));
}

/* ---- an event on many CPUs or tasks ---- */

static int
read_long_file(const char *path, long *v)
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
open_failed(const struct kp_perfev_set *s, int err, int cpu, pid_t pid)
{
	long paranoid = 0, maxrate = 0;
	char where[64];
	uint32_t t = s->attr.type;

	if (pid > 0)
		snprintf(where, sizeof(where), "pid %d, cpu %d", (int)pid, cpu);
	else
		snprintf(where, sizeof(where), "cpu %d", cpu);
	switch (err) {
	case EACCES:
	case EPERM:
		read_long_file("/proc/sys/kernel/perf_event_paranoid",
			       &paranoid);
		kp_die("perf_event_open (%s): %s: kernel.perf_event_paranoid "
		       "is %ld; run as root, or allow it with 'sysctl "
		       "kernel.perf_event_paranoid=-1'",
		       where, strerror(err), paranoid);
	case EMFILE:
	case ENFILE:
		kp_die("perf_event_open (%s): too many open files (%zu events "
		       "so far); raise the limit with 'ulimit -n', or sample "
		       "fewer CPUs (-C) or processes",
		       where, s->nfds);
	case ESRCH:
		kp_die("perf_event_open (%s): no such process", where);
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		kp_die("event '%s' is not supported here (%s%s); try "
		       "-e cpu-clock",
		       s->name, strerror(err),
		       t == PERF_TYPE_HARDWARE || t == PERF_TYPE_RAW ||
			       t == PERF_TYPE_HW_CACHE
			       ? ": no hardware PMU?"
			       : "");
	case EINVAL:
		if (s->attr.freq &&
		    read_long_file("/proc/sys/kernel/perf_event_max_sample_rate",
				   &maxrate) == 0 &&
		    s->attr.sample_freq > (uint64_t)maxrate)
			kp_die("-F %llu is above "
			       "kernel.perf_event_max_sample_rate (%ld): lower "
			       "-F, or raise it with sysctl",
			       (unsigned long long)s->attr.sample_freq, maxrate);
		/* fall through */
	default:
		kp_die("perf_event_open (%s, event '%s'): %s", where, s->name,
		       strerror(err));
	}
}

/* Open on (pid, cpu); the first open may fall back to cpu-clock. */
static int
set_open_one(struct kp_perfev_set *s, pid_t pid, int cpu)
{
	int fd = kp_perfev_open(&s->attr, pid, cpu, -1);

	if (fd >= 0 || s->nfds > 0 || !s->may_fall_back ||
	    (errno != ENOENT && errno != EOPNOTSUPP && errno != ENODEV &&
	     errno != EINVAL))
		return fd;
	/* cycles is the default; without a PMU, the software timer */
	s->fell_back = true;
	s->name = "cpu-clock";
	s->attr.type = PERF_TYPE_SOFTWARE;
	s->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	fd = kp_perfev_open(&s->attr, pid, cpu, -1);
	if (fd >= 0)
		kp_warn("cycles: not supported here (no hardware PMU?); "
			"sampling cpu-clock instead");
	return fd;
}

static void
set_add(struct kp_perfev_set *s, int fd, int cpu, bool own_ring)
{
	struct kp_perfev_set *l = s->leader;
	size_t i;

	s->fds = kp_xrealloc(s->fds, (s->nfds + 1) * sizeof(*s->fds));
	s->ids = kp_xrealloc(s->ids, (s->nfds + 1) * sizeof(*s->ids));
	s->ids[s->nfds] = 0;
	if ((s->attr.sample_type & PERF_SAMPLE_IDENTIFIER) &&
	    ioctl(fd, PERF_EVENT_IOC_ID, &s->ids[s->nfds]) < 0)
		kp_die("PERF_EVENT_IOC_ID (cpu %d):", cpu);
	s->fds[s->nfds++] = fd;
	if (l && own_ring) {
		/* into the leader's ring of this CPU */
		for (i = 0; i < l->nrings && l->ring_cpus[i] != cpu; i++)
			;
		if (i == l->nrings ||
		    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, l->pfds[i].fd) < 0)
			kp_die("PERF_EVENT_IOC_SET_OUTPUT (cpu %d):", cpu);
		own_ring = false;
	}
	if (!own_ring)
		return;
	s->ring_cpus = kp_xrealloc(s->ring_cpus,
				   (s->nrings + 1) * sizeof(*s->ring_cpus));
	s->ring_cpus[s->nrings] = cpu;
	s->rings = kp_xrealloc(s->rings, (s->nrings + 1) * sizeof(*s->rings));
	s->pfds = kp_xrealloc(s->pfds, (s->nrings + 1) * sizeof(*s->pfds));
	if (kp_perfev_ring_map(&s->rings[s->nrings], fd, s->pages) < 0) {
		if (errno == EPERM || errno == ENOMEM)
			kp_die("mmap of the ring buffer (cpu %d, %zu pages): "
			       "%s; use fewer pages (-m) or raise "
			       "kernel.perf_event_mlock_kb",
			       cpu, s->pages, strerror(errno));
		kp_die("mmap of the ring buffer (cpu %d):", cpu);
	}
	s->pfds[s->nrings].fd = fd;
	s->pfds[s->nrings].events = POLLIN;
	s->pfds[s->nrings].revents = 0;
	s->nrings++;
}

void
kp_perfev_set_open_cpus(struct kp_perfev_set *s, const int *cpus, size_t n)
{
	size_t i;
	int fd;

	for (i = 0; i < n; i++) {
		fd = set_open_one(s, -1, cpus[i]);
		if (fd < 0)
			open_failed(s, errno, cpus[i], -1);
		set_add(s, fd, cpus[i], true);
	}
}

pid_t *
kp_perfev_threads(pid_t pid, size_t *n)
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
	/* the main thread first: its ring is the one the others share */
	tids[(*n)++] = pid;
	for (i = 0; i < k; i++) {
		if (names[i]->d_name[0] != '.' &&
		    atoi(names[i]->d_name) != (int)pid)
			tids[(*n)++] = (pid_t)atoi(names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return tids;
}

void
kp_perfev_set_open_tasks(struct kp_perfev_set *s, const pid_t *tids,
			 size_t ntids, const int *cpus, size_t ncpus)
{
	int *first = kp_xcalloc(ncpus, sizeof(*first));
	size_t t, i;
	int fd;

	for (t = 0; t < ntids; t++)
		for (i = 0; i < ncpus; i++) {
			fd = set_open_one(s, tids[t], cpus[i]);
			if (fd < 0) {
				if (errno == ESRCH && t > 0)
					break; /* a thread that just ended */
				open_failed(s, errno, cpus[i], tids[t]);
			}
			if (t == 0) {
				first[i] = fd;
				set_add(s, fd, cpus[i], true); /* or the leader's */
				continue;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, first[i]) < 0)
				kp_die("PERF_EVENT_IOC_SET_OUTPUT (cpu %d):",
				       cpus[i]);
			set_add(s, fd, cpus[i], false);
		}
	free(first);
}

void
kp_perfev_set_enable(struct kp_perfev_set *s, bool on)
{
	size_t i;

	for (i = 0; i < s->nfds; i++)
		ioctl(s->fds[i],
		      on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	if (s->next)
		kp_perfev_set_enable(s->next, on);
}

int
kp_perfev_set_poll(struct kp_perfev_set *s, double seconds,
		   const sigset_t *sigmask)
{
	struct timespec ts;
	size_t i;

	if (seconds < 0)
		seconds = 0;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	if (ppoll(s->pfds, s->nrings, &ts, sigmask) < 0 && errno != EINTR)
		return -1;
	for (i = 0; i < s->nrings; i++)
		if (s->pfds[i].revents & (POLLHUP | POLLERR))
			s->pfds[i].fd = -1; /* its task is gone */
	return 0;
}

/* Side-band records of all rings, copied, to be taken in time order. */
struct side {
	uint64_t time, seq;
	struct perf_event_header *h;
};
struct sides {
	struct side *v;
	size_t n, cap;
	uint64_t sample_type;
};

static void
side_keep(const struct perf_event_header *h, void *arg)
{
	struct sides *ss = arg;
	struct kp_perfev_sample id;

	if (h->type != PERF_RECORD_COMM && h->type != PERF_RECORD_FORK &&
	    h->type != PERF_RECORD_EXIT && h->type != PERF_RECORD_MMAP &&
	    h->type != PERF_RECORD_MMAP2)
		return;
	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? 2 * ss->cap : 256;
		ss->v = kp_xrealloc(ss->v, ss->cap * sizeof(*ss->v));
	}
	kp_perfev_sample_id(h, ss->sample_type, &id);
	ss->v[ss->n].time = id.time;
	ss->v[ss->n].seq = ss->n;
	ss->v[ss->n].h = kp_xmalloc(h->size);
	memcpy(ss->v[ss->n].h, h, h->size);
	ss->n++;
}

static int
side_cmp(const void *a, const void *b)
{
	const struct side *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
kp_perfev_set_read(struct kp_perfev_set *s, kp_perfev_fn sideband,
		   kp_perfev_fn fn, void *arg)
{
	struct sides ss = { NULL, 0, 0, s->attr.sample_type };
	size_t i;

	if (sideband && s->attr.sample_id_all &&
	    (s->attr.sample_type & PERF_SAMPLE_TIME)) {
		/* in time order: an exec read on one CPU's ring after the
		 * mmaps that followed it on another's would empty them */
		for (i = 0; i < s->nrings; i++)
			kp_perfev_ring_scan(&s->rings[i], side_keep, &ss);
		if (ss.n)
			qsort(ss.v, ss.n, sizeof(*ss.v), side_cmp);
		for (i = 0; i < ss.n; i++) {
			sideband(ss.v[i].h, arg);
			free(ss.v[i].h);
		}
		free(ss.v);
	} else if (sideband) {
		for (i = 0; i < s->nrings; i++)
			kp_perfev_ring_scan(&s->rings[i], sideband, arg);
	}
	for (i = 0; i < s->nrings; i++)
		kp_perfev_ring_drain(&s->rings[i], fn, arg);
}

uint64_t
kp_perfev_set_bad(const struct kp_perfev_set *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->nrings; i++)
		n += s->rings[i].bad;
	return n;
}

void
kp_perfev_set_close(struct kp_perfev_set *s)
{
	size_t i;

	for (i = 0; i < s->nrings; i++)
		kp_perfev_ring_unmap(&s->rings[i]);
	for (i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->rings);
	free(s->pfds);
	free(s->fds);
	free(s->ids);
	free(s->ring_cpus);
	s->rings = NULL;
	s->pfds = NULL;
	s->fds = NULL;
	s->ids = NULL;
	s->ring_cpus = NULL;
	s->nrings = s->nfds = 0;
}

void
kp_perfev_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- records ---- */

/* A cursor over a record's bytes: each read checks what is left. */
struct cur {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t
cur_u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8)
		c->bad = true;
	else
		memcpy(&v, c->p, 8);
	c->p += c->bad ? 0 : 8;
	return v;
}

/* TID and TIME, where sample_type has them: in a sample and a trailer */
static void
cur_tid_time(struct cur *c, uint64_t type, struct kp_perfev_sample *s)
{
	uint64_t v;

	if (type & PERF_SAMPLE_TID) {
		v = cur_u64(c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (type & PERF_SAMPLE_TIME)
		s->time = cur_u64(c);
}

int
kp_perfev_sample_parse_as(const struct perf_event_header *h,
			  uint64_t type, struct kp_perfev_sample *s)
{
	struct cur c = { (const unsigned char *)(h + 1),
			 (const unsigned char *)h + h->size, false };
	uint32_t size;

	memset(s, 0, sizeof(*s));
	s->mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (h->size < sizeof(*h) || (type & ~(uint64_t)KP_PERFEV_SAMPLE_KNOWN))
		return -1;
	if (type & PERF_SAMPLE_IDENTIFIER)
		s->id = cur_u64(&c);
	if (type & PERF_SAMPLE_IP)
		s->ip = cur_u64(&c);
	cur_tid_time(&c, type, s);
	if (type & PERF_SAMPLE_ADDR)
		s->addr = cur_u64(&c);
	if (type & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)cur_u64(&c);
	if (type & PERF_SAMPLE_PERIOD)
		s->period = cur_u64(&c);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		s->nr = cur_u64(&c);
		s->ips = c.p;
		if (c.bad || s->nr > (uint64_t)(c.end - c.p) / 8)
			return -1;
		c.p += 8 * s->nr;
	}
	if (type & PERF_SAMPLE_RAW) {
		/* u32 size, the data, padding to 8 bytes with the size */
		if (c.end - c.p < 4)
			return -1;
		memcpy(&size, c.p, 4);
		if (size > (uint64_t)(c.end - c.p) - 4)
			return -1;
		s->raw = c.p + 4;
		s->raw_size = size;
		c.p += (4 + (uint64_t)size + 7) & ~7ull;
		if (c.p > c.end)
			return -1;
	}
	if (type & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = cur_u64(&c);
	if (type & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = cur_u64(&c);
	return c.bad ? -1 : 0;
}

int
kp_perfev_sample_parse(const struct perf_event_header *h,
		       struct kp_perfev_sample *s)
{
	return kp_perfev_sample_parse_as(h, KP_PERFEV_SAMPLE_BASIC, s);
}

int
kp_perfev_sample_id(const struct perf_event_header *h, uint64_t type,
		    struct kp_perfev_sample *s)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME,     PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
	};
	struct cur c;
	size_t i, n = 0;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		n += (type & bits[i]) ? 8 : 0;
	if (h->size < sizeof(*h) + n)
		return -1;
	c.end = (const unsigned char *)h + h->size;
	c.p = c.end - n;
	c.bad = false;
	cur_tid_time(&c, type, s);
	return 0;
}

/*
 * The side-band records, as perf_event_open(2) lays them out:
 *
 *	COMM	u32 pid, tid; char comm[];	(misc: COMM_EXEC)
 *	FORK	u32 pid, ppid, tid, ptid; u64 time;	(EXIT the same)
 *	MMAP	u32 pid, tid; u64 addr, len, pgoff; char filename[];
 *	MMAP2	u32 pid, tid; u64 addr, len, pgoff;
 *		u32 maj, min; u64 ino, ino_generation;
 *		  (or u8 build_id_size, u8, u16, u8 build_id[20])
 *		u32 prot, flags; char filename[];
 */
bool
kp_perfev_feed_procs(struct kp_procs *ps, const struct perf_event_header *h)
{
	const char *p = (const char *)(h + 1);
	const char *end = (const char *)h + h->size;
	uint32_t u[4], prot;
	uint64_t a[3];
	char id[41];
	const char *name, *bid = NULL;
	size_t i, idlen;

	switch (h->type) {
	case PERF_RECORD_COMM:
		if (end - p < 9)
			return true;
		memcpy(u, p, 8);
		kp_procs_comm(ps, u[0], u[1], p + 8, (size_t)(end - p - 8),
			      h->misc & PERF_RECORD_MISC_COMM_EXEC);
		return true;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (end - p < 16)
			return true;
		memcpy(u, p, 16);
		if (h->type == PERF_RECORD_FORK)
			kp_procs_fork(ps, u[0], u[1], u[2], u[3]);
		else
			kp_procs_exit(ps, u[0], u[2]);
		return true;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (end - p < (h->type == PERF_RECORD_MMAP ? 33 : 65))
			return true;
		memcpy(u, p, 8);
		memcpy(a, p + 8, 24);
		name = p + (h->type == PERF_RECORD_MMAP ? 32 : 64);
		if (strnlen(name, (size_t)(end - name)) == (size_t)(end - name))
			return true; /* no NUL: not a record we understand */
		if (h->type == PERF_RECORD_MMAP) {
			if ((h->misc & PERF_RECORD_MISC_MMAP_DATA) &&
			    !kp_procs_keeps_data(ps))
				return true;
		} else {
			memcpy(&prot, p + 56, 4);
			if (!(prot & PROT_EXEC) && !kp_procs_keeps_data(ps))
				return true;
			idlen = (unsigned char)p[32];
			if ((h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
			    idlen > 0 && idlen <= 20) {
				for (i = 0; i < idlen; i++)
					snprintf(id + 2 * i, 3, "%02x",
						 (unsigned char)p[36 + i]);
				bid = id;
			}
		}
		kp_procs_mmap(ps, u[0], a[0], a[1], a[2], name, bid);
		return true;
	default:
		return false;
	}
}

void
kp_perfev_count_loss(const struct perf_event_header *h, uint64_t *lost,
		     uint64_t *throttled)
{
	uint64_t v;

	switch (h->type) {
	case PERF_RECORD_LOST:
		/* u64 id; u64 lost; */
		if (h->size >= sizeof(*h) + 16) {
			memcpy(&v, (const char *)(h + 1) + 8, 8);
			*lost += v;
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		/* u64 lost; */
		if (h->size >= sizeof(*h) + 8) {
			memcpy(&v, h + 1, 8);
			*lost += v;
		}
		break;
	case PERF_RECORD_THROTTLE:
		(*throttled)++;
		break;
	default:
		break;
	}
}

/* ---- arguments and the sampling loop ---- */

int *
kp_perfev_cpus_arg(const char *list, size_t *n)
{
	size_t nonline, i, j;
	int *cpus, *online;
	char buf[256];

	cpus = kp_perfev_cpus_parse(list, n);
	if (!cpus)
		kp_usage_error("-C: not a CPU list: '%s'", list);
	online = kp_perfev_cpus_online(&nonline);
	for (i = 0; online && i < *n; i++) {
		for (j = 0; j < nonline && online[j] != cpus[i]; j++)
			;
		if (j == nonline) {
			kp_perfev_cpus_format(online, nonline, buf,
					      sizeof(buf));
			j = (size_t)cpus[i];
			free(online);
			free(cpus);
			kp_usage_error("-C: CPU %zu is not online (online: %s)",
				       j, buf);
		}
	}
	free(online);
	return cpus;
}

pid_t *
kp_perfev_pids_parse(const char *list, size_t *n)
{
	pid_t *v = NULL;
	const char *p = list, *q;
	uint64_t x;

	for (*n = 0;; p = q + 1) {
		q = p + strcspn(p, ",");
		if (kp_parse_u64(p, (size_t)(q - p), 10, &x) < 0 || x == 0 ||
		    x > INT32_MAX) {
			free(v);
			return NULL;
		}
		v = kp_xrealloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = (pid_t)x;
		if (!*q)
			return v;
	}
}

double
kp_perfev_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define STATUS_S 0.25

double
kp_perfev_set_run(struct kp_perfev_set *s, const struct kp_perfev_run *run)
{
	double t0, t1, deadline = 0, next_status = 0, wait;
	bool tty = isatty(STDERR_FILENO), shown = false;
	sigset_t none;

	t0 = run->started > 0 ? run->started : kp_perfev_now();
	sigemptyset(&none);
	if (run->duration > 0)
		deadline = t0 + run->duration;
	for (;;) {
		/* 4 reads a second name short-lived processes while alive */
		wait = STATUS_S;
		t1 = kp_perfev_now();
		if (tty) {
			if (t1 >= next_status) {
				fprintf(stderr,
					"\r\033[K%s: %.1f s, %llu samples, "
					"%llu lost",
					kp_progname, t1 - t0,
					(unsigned long long)*run->samples,
					(unsigned long long)*run->lost);
				fflush(stderr);
				shown = true;
				next_status = t1 + STATUS_S;
			}
			wait = next_status - t1;
		}
		if (deadline > 0) {
			if (t1 >= deadline)
				break;
			if (deadline - t1 < wait)
				wait = deadline - t1;
		}
		if (kp_perfev_set_poll(s, wait, &none) < 0)
			kp_die("ppoll:");
		run->read(run->arg);
		if (*run->stop || (run->done && run->done(run->arg)))
			break;
	}
	kp_perfev_set_enable(s, false);
	t1 = kp_perfev_now();
	run->read(run->arg);
	if (shown)
		fputs("\r\033[K", stderr);
	return t1 - t0;
}
