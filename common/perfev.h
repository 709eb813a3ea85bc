/*
 * perfev.h - perf_event_open(2) for kp-sample: opening an event (its
 * name: events.h), and reading its mmap ring buffer.
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
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>

#include <linux/perf_event.h>

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

/*
 * -C LIST as a user gives it: the CPUs of the list, each of them online,
 * else a usage error (exit 64) naming the CPUs that are.
 */
int *kp_perfev_cpus_arg(const char *list, size_t *n);
/* "PID[,PID...]": a malloc'ed array, or NULL if the list is not one. */
pid_t *kp_perfev_pids_parse(const char *list, size_t *n);

/* A mapped ring buffer. */
struct kp_perfev_ring {
	struct perf_event_mmap_page *meta; /* the first page */
	unsigned char *data;               /* the data area */
	uint64_t size;                     /* its size, a power of two */
	size_t map_len;                    /* 0 if not mmap'ed by us */
	unsigned char *copy;               /* a wrapped record, linearized */
	size_t copy_cap;
	uint64_t bad;                      /* corrupt headers met */
	uint64_t scanned_head; /* where the last scan stopped, if scanned */
	bool scanned;
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
 * next kp_perfev_ring_drain(), which then stops where the scan did.  (kp-sample reads the side-band records,
 * COMM, FORK, MMAP2, of every CPU before the samples they name.)
 */
size_t kp_perfev_ring_scan(struct kp_perfev_ring *r, kp_perfev_fn fn,
			   void *arg);
/* True if the ring holds unread data. */
bool kp_perfev_ring_pending(const struct kp_perfev_ring *r);
void kp_perfev_ring_unmap(struct kp_perfev_ring *r);

/* ---- an event on many CPUs or tasks, and its rings ---- */

/*
 * One event opened on each CPU of a list (system-wide), or on each
 * thread of a process and each CPU (the events of one CPU share that
 * CPU's ring through PERF_EVENT_IOC_SET_OUTPUT, as perf record does).
 * Fill attr, name and pages, then open.  Unlike the functions above,
 * the opening functions end the program (exit 2) with an explanation of
 * what to do when the kernel refuses: perf_event_paranoid, ulimit -n,
 * perf_event_max_sample_rate, perf_event_mlock_kb, no PMU.
 */
struct kp_perfev_set {
	struct perf_event_attr attr; /* the event, as opened */
	const char *name;            /* its name, for messages */
	size_t pages;                /* data pages per ring, a power of two */
	/* no hardware PMU: open cpu-clock instead (said with kp_warn) */
	bool may_fall_back, fell_back;
	int *fds;
	size_t nfds;
	struct kp_perfev_ring *rings;
	struct pollfd *pfds;
	size_t nrings;
	/*
	 * Several events (kp-sample -e A -e B): each its own set; a set
	 * whose leader is given (before opening, on the same CPUs) writes
	 * into the leader's rings (PERF_EVENT_IOC_SET_OUTPUT), and is
	 * enabled and disabled with it.  With PERF_SAMPLE_IDENTIFIER in
	 * sample_type, ids[i] is fds[i]'s id (PERF_EVENT_IOC_ID), which
	 * its samples carry.
	 */
	struct kp_perfev_set *leader, *next;
	uint64_t *ids;
	int *ring_cpus; /* the CPU of each ring */
};

/* The event on each of cpus[0..n), every task. */
void kp_perfev_set_open_cpus(struct kp_perfev_set *s, const int *cpus,
			     size_t n);
/*
 * The event on tids[0..ntids) (threads of one process, the first its
 * main thread) on each of cpus[0..ncpus); a thread that ended since it
 * was listed is skipped.
 */
void kp_perfev_set_open_tasks(struct kp_perfev_set *s, const pid_t *tids,
			      size_t ntids, const int *cpus, size_t ncpus);
/* The threads of a process (/proc/PID/task), malloc'ed; NULL if gone. */
pid_t *kp_perfev_threads(pid_t pid, size_t *n);
void kp_perfev_set_enable(struct kp_perfev_set *s, bool on);
/*
 * Wait until a ring has data to read (its watermark), a signal of those
 * not in sigmask comes, or seconds pass; a ring whose task ended stops
 * being polled.  Returns 0, or -1 with errno set (EINTR is not an
 * error: 0).
 */
int kp_perfev_set_poll(struct kp_perfev_set *s, double seconds,
		       const sigset_t *sigmask);
/*
 * Read every ring: if sideband is given, first the side-band records of
 * all rings (kp_perfev_ring_scan: a process that moved to another CPU
 * after its exec has its new name there), in time order where the
 * event has sample_id_all and PERF_SAMPLE_TIME (COMM, FORK, EXIT, MMAP,
 * MMAP2 only), then every record with fn.
 */
void kp_perfev_set_read(struct kp_perfev_set *s, kp_perfev_fn sideband,
			kp_perfev_fn fn, void *arg);
/*
 * Sample until duration seconds pass (0: no limit), *stop is set (a
 * signal handler's flag) or done(arg) is true, reading the rings with
 * read(arg) at each wake-up and at the end (after disabling the
 * events).  Signals are taken only while waiting (ppoll with an empty
 * mask): the caller keeps them blocked.  On a terminal, a status line
 * on stderr, 4 times a second, of *samples and *lost, erased at the
 * end.  Returns the seconds sampled.  Where the caller enabled the
 * events before this call (kp-sample -a with a command: the command may
 * wait for a CPU before its exec), started is when (kp_perfev_now()):
 * both the duration and the seconds returned count from then (0: from
 * this call).
 */
struct kp_perfev_run {
	double duration;
	double started;
	volatile sig_atomic_t *stop;
	bool (*done)(void *arg);
	void (*read)(void *arg);
	void *arg;
	const uint64_t *samples, *lost;
};
double kp_perfev_set_run(struct kp_perfev_set *s,
			 const struct kp_perfev_run *run);
/* Seconds on CLOCK_MONOTONIC. */
double kp_perfev_now(void);
/* Corrupt records met in all rings. */
uint64_t kp_perfev_set_bad(const struct kp_perfev_set *s);
void kp_perfev_set_close(struct kp_perfev_set *s);
/* Raise the soft limit on open files to the hard one, as perf does. */
void kp_perfev_raise_nofile(void);

/* ---- records ---- */

/*
 * A PERF_RECORD_SAMPLE, its fields in the order perf_event_open(2)
 * gives them for the sample_type bits kp-sample asks for:
 *
 *	struct perf_event_header header;
 *	u64 id;			IDENTIFIER
 *	u64 ip;			IP
 *	u32 pid, tid;		TID
 *	u64 time;		TIME
 *	u64 addr;		ADDR
 *	u32 cpu, res;		CPU
 *	u64 period;		PERIOD
 *	u64 nr;			CALLCHAIN
 *	u64 ips[nr];	PERF_CONTEXT_KERNEL, kernel frames leaf first,
 *			then PERF_CONTEXT_USER and user frames
 *	u32 size; char data[size];	RAW (a tracepoint's fields)
 *	u64 phys_addr;		PHYS_ADDR
 *	u64 data_page_size;	DATA_PAGE_SIZE
 *
 * Fields not asked for are 0.
 */
struct kp_perfev_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t nr;
	const unsigned char *ips; /* nr u64s, any alignment */
	unsigned mode; /* PERF_RECORD_MISC_KERNEL, _USER, ... */
	uint64_t id, time, addr, period, phys_addr, data_page_size;
	uint32_t cpu;
	const unsigned char *raw; /* raw_size bytes, any alignment */
	uint32_t raw_size;
};
/* The sample_type kp_perfev_sample_parse reads. */
#define KP_PERFEV_SAMPLE_BASIC \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN)
/* The bits kp_perfev_sample_parse_as knows. */
#define KP_PERFEV_SAMPLE_KNOWN                                               \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |         \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |      \
	 PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE)
/* Decode a sample of KP_PERFEV_SAMPLE_BASIC; -1 if the record is too
 * short for what it says. */
int kp_perfev_sample_parse(const struct perf_event_header *h,
			   struct kp_perfev_sample *s);
/* The same for a sample_type of the bits in KP_PERFEV_SAMPLE_KNOWN. */
int kp_perfev_sample_parse_as(const struct perf_event_header *h,
			      uint64_t sample_type,
			      struct kp_perfev_sample *s);
/*
 * The fields sample_id_all appends to a non-sample record (TID, TIME,
 * ID, STREAM_ID, CPU, IDENTIFIER of sample_type, at its end): pid, tid
 * and time into *s (the rest 0).  -1 if the record is too short.
 */
int kp_perfev_sample_id(const struct perf_event_header *h,
			uint64_t sample_type, struct kp_perfev_sample *s);
static inline uint64_t
kp_perfev_sample_ip(const struct kp_perfev_sample *s, uint64_t i)
{
	uint64_t v;

	memcpy(&v, s->ips + 8 * i, 8);
	return v;
}

/*
 * COMM, FORK, EXIT, MMAP and MMAP2 records (sample_id_all off) fed to
 * the process model; other records are left alone.  Returns true if
 * the record was one of these.
 */
struct kp_procs;
bool kp_perfev_feed_procs(struct kp_procs *ps,
			  const struct perf_event_header *h);
/* Samples lost (LOST, LOST_SAMPLES) and THROTTLE records counted. */
void kp_perfev_count_loss(const struct perf_event_header *h, uint64_t *lost,
			  uint64_t *throttled);

#endif /* KP_PERFEV_H */
