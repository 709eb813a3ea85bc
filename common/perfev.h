/*
 * perfev.h - perf_event_open(2) for kp-sample: event names, opening an
 * event, and reading its mmap ring buffer.
 *
 *	struct perf_event_attr attr;
 *	struct kp_perfev_ring ring;
 *	int fd;
 *
 *	kp_perfev_attr_init(&attr, PERF_TYPE_SOFTWARE,
 *			    PERF_COUNT_SW_CPU_CLOCK);
 *	fd = kp_perfev_open(&attr, -1, cpu, -1);
 *	if (fd < 0 || kp_perfev_ring_map(&ring, fd, 64) < 0)
 *		kp_die("perf_event_open:");
 *	...
 *	kp_perfev_ring_drain(&ring, handle_record, arg);
 *	kp_perfev_ring_unmap(&ring);
 *
 * The ring is read as perf(1) and bcc's perf_buffer read it: load
 * data_head with acquire order, walk the records from data_tail, copy a
 * record that wraps around the end of the buffer into a linear buffer,
 * and store data_tail with release order when done.  The library prints
 * nothing; failures return -1 with errno set.
 */
#ifndef KP_PERFEV_H
#define KP_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

/* A named event: "cpu-clock", "cycles", ... */
struct kp_perfev_name {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/*
 * Look up an event by name (perf's generic names and aliases:
 * cycles|cpu-cycles, instructions, cache-references, cache-misses,
 * branches|branch-instructions, branch-misses, bus-cycles,
 * ref-cycles, stalled-cycles-frontend, stalled-cycles-backend,
 * cpu-clock, task-clock, page-faults|faults, context-switches|cs,
 * cpu-migrations|migrations, minor-faults, major-faults,
 * alignment-faults, emulation-faults), or a raw PMU event "rHEX".
 * Returns 0, or -1 if the name is unknown.
 */
int kp_perfev_lookup(const char *name, uint32_t *type, uint64_t *config);
/* The table behind kp_perfev_lookup, ending with a NULL name. */
extern const struct kp_perfev_name kp_perfev_names[];

/* Zero *attr and set its size, type and config. */
void kp_perfev_attr_init(struct perf_event_attr *attr, uint32_t type,
			 uint64_t config);

/* perf_event_open(2) with PERF_FLAG_FD_CLOEXEC; -1 and errno on error. */
int kp_perfev_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		   int group_fd);

/*
 * The online CPUs (/sys/devices/system/cpu/online), or the CPUs of a
 * list such as "0,2-5": a malloc'ed array of CPU numbers, ascending and
 * without duplicates, its length in *n.  Returns NULL (errno EINVAL for
 * a bad list) on error.
 */
int *kp_perfev_cpus_online(size_t *n);
int *kp_perfev_cpus_parse(const char *list, size_t *n);
/* Format cpus[0..n) as a list "0-3,6" into buf (NUL-terminated). */
void kp_perfev_cpus_format(const int *cpus, size_t n, char *buf, size_t size);

/* A mapped ring buffer. */
struct kp_perfev_ring {
	struct perf_event_mmap_page *meta; /* the first page */
	unsigned char *data;               /* the data area */
	uint64_t size;                     /* its size, a power of two */
	size_t map_len;                    /* 0 if not mmap'ed by us */
	unsigned char *copy;               /* a wrapped record, linearized */
	size_t copy_cap;
	uint64_t bad;                      /* corrupt headers met */
};

/*
 * mmap the ring of the event fd: one metadata page and data_pages pages
 * of data (a power of two).  Returns 0, or -1 with errno set.
 */
int kp_perfev_ring_map(struct kp_perfev_ring *r, int fd, size_t data_pages);
/*
 * Use memory the caller owns: meta, then size bytes of data (a power of
 * two).  For tests.
 */
void kp_perfev_ring_init(struct kp_perfev_ring *r,
			 struct perf_event_mmap_page *meta, void *data,
			 uint64_t size);

/*
 * Call fn for every record between data_tail and data_head, in order,
 * with a pointer to the whole record (header included, contiguous even
 * if it wraps, valid during the call only), then release the space to
 * the kernel.  A header with a size too small or too large to be a
 * record means the ring is corrupt: the rest is dropped and r->bad is
 * counted.  Returns the number of records passed to fn.
 */
typedef void (*kp_perfev_fn)(const struct perf_event_header *hdr, void *arg);
size_t kp_perfev_ring_drain(struct kp_perfev_ring *r, kp_perfev_fn fn,
			    void *arg);
/*
 * The same walk without releasing anything: the records stay for the
 * next kp_perfev_ring_drain().  (kp-sample reads the side-band records,
 * COMM, FORK, MMAP2, of every CPU before the samples they name.)
 */
size_t kp_perfev_ring_scan(struct kp_perfev_ring *r, kp_perfev_fn fn,
			   void *arg);
/* True if the ring holds unread data. */
bool kp_perfev_ring_pending(const struct kp_perfev_ring *r);
void kp_perfev_ring_unmap(struct kp_perfev_ring *r);

#endif /* KP_PERFEV_H */
