/* perfev.c - perf_event_open(2): event names, CPUs, the mmap ring */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kp.h"
#include "perfev.h"

const struct kp_perfev_name kp_perfev_names[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ NULL, 0, 0 },
};

int
kp_perfev_lookup(const char *name, uint32_t *type, uint64_t *config)
{
	const struct kp_perfev_name *e;

	for (e = kp_perfev_names; e->name; e++)
		if (strcmp(e->name, name) == 0) {
			*type = e->type;
			*config = e->config;
			return 0;
		}
	/* "r1a8": a raw PMU event, as perf(1) spells it */
	if (name[0] == 'r' && name[1] &&
	    kp_parse_u64(name + 1, strlen(name + 1), 16, config) == 0) {
		*type = PERF_TYPE_RAW;
		return 0;
	}
	return -1;
}

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
