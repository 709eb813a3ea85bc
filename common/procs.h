/*
 * procs.h - the process model: pid -> name and executable mappings, as
 * the records of a capture tell them (COMM, FORK, EXIT, MMAP, MMAP2)
 * and as /proc tells them for processes that ran before it began.  For
 * kp-sample and the perf.data reader.
 *
 *	struct kp_procs *ps = kp_procs_new();
 *	struct kp_proc *p;
 *	const struct kp_map *m;
 *
 *	kp_procs_comm(ps, pid, tid, "make", 4, true);
 *	kp_procs_mmap(ps, pid, start, len, pgoff, "/usr/bin/make", NULL);
 *	...
 *	p = kp_procs_get(ps, pid);
 *	if ((m = kp_proc_map(p, ip)) != NULL)
 *		n = kp_resolve_user(r, m, ip, flags, &frames);
 *	kp_procs_free(ps);
 *
 * The functions take the records' decoded fields, not the raw kernel
 * records: kp-sample decodes its ring, the perf.data reader its file.
 *
 * A struct kp_proc is one program run by a process: an exec (a COMM
 * record with exec set) starts a new one, so that samples taken before
 * it keep the mappings they were taken in.  A struct kp_proc stays
 * valid, and its fields unchanged but for later mmaps, until
 * kp_procs_free(): callers may keep pointers to it (kp-sample keeps one
 * per user frame and names the frames at the end).  Records of
 * different CPUs may come out of order (a child's exec before its
 * fork): the model keeps the better information.
 */
#ifndef KP_PROCS_H
#define KP_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resolve.h"

struct kp_procs;

/* Read-only for callers. */
struct kp_proc {
	uint32_t pid;
	const char *comm;    /* interned; NULL if not known yet */
	/* executable mappings, sorted, disjoint; a forked child's are its
	 * parent's array, shared until either changes its mappings (the
	 * one that changes them copies them first) */
	struct kp_map *maps;
	size_t nmaps;
	size_t mcap;	 /* 0: maps is a parent's (or none) */
	bool maps_lent;	 /* maps is shared with a child */
	bool maps_known; /* an exec seen, a parent's taken or /proc read */
	bool exited;
	/* the program an exec replaced (its mappings still hold a sample
	 * taken inside execve), or NULL */
	const struct kp_proc *before;
};

struct kp_procs *kp_procs_new(void);
void kp_procs_free(struct kp_procs *ps);

/* The current program of pid, made (empty) if not known. */
struct kp_proc *kp_procs_get(struct kp_procs *ps, uint32_t pid);
/* The same, NULL if pid was never seen. */
struct kp_proc *kp_procs_find(struct kp_procs *ps, uint32_t pid);

/*
 * PERF_RECORD_COMM: comm[0..len) (need not be NUL-terminated) is the
 * name of thread tid of pid; only the main thread's (pid == tid) names
 * the process.  exec: PERF_RECORD_MISC_COMM_EXEC, a new program whose
 * mappings the MMAP records after it give.
 */
void kp_procs_comm(struct kp_procs *ps, uint32_t pid, uint32_t tid,
		   const char *comm, size_t len, bool exec);

/*
 * PERF_RECORD_FORK: a new process (pid != ppid, pid == tid; a new
 * thread is not a process) with its parent's name and mappings.
 */
void kp_procs_fork(struct kp_procs *ps, uint32_t pid, uint32_t ppid,
		   uint32_t tid, uint32_t ptid);

/* PERF_RECORD_EXIT: the process ended (its struct kp_proc stays). */
void kp_procs_exit(struct kp_procs *ps, uint32_t pid, uint32_t tid);

/*
 * PERF_RECORD_MMAP / MMAP2 of an executable mapping (the caller drops
 * data mappings: MMAP2 prot without PROT_EXEC, or MMAP misc with
 * PERF_RECORD_MISC_MMAP_DATA).  It replaces the mappings it overlaps.
 * build_id: lowercase hex (an MMAP2 record with
 * PERF_RECORD_MISC_MMAP_BUILD_ID), or NULL.  pid (u32)-1 is the kernel:
 * ignored here (give its pgoff to kp_resolver_kernel as .text).
 */
void kp_procs_mmap(struct kp_procs *ps, uint32_t pid, uint64_t start,
		   uint64_t len, uint64_t pgoff, const char *path,
		   const char *build_id);
/* kp_procs_mmap of a path and build-id interned already (kp_intern):
 * kept as they are, not looked up again. */
void kp_procs_mmap_interned(struct kp_procs *ps, uint32_t pid, uint64_t start,
			    uint64_t len, uint64_t pgoff, const char *path,
			    const char *build_id);

/*
 * Keep data mappings too (kp-sample --data, which names the mapping a
 * data address falls in): /proc/PID/maps' every line, and MMAP2
 * records without PROT_EXEC (attr.mmap_data) fed to kp_procs_mmap.
 */
void kp_procs_keep_data(struct kp_procs *ps);
bool kp_procs_keeps_data(const struct kp_procs *ps);

/* kp_procs_scan what. */
enum {
	KP_PROCS_COMM = 1 << 0, /* /proc/PID/comm */
	KP_PROCS_MAPS = 1 << 1, /* /proc/PID/maps, executable mappings */
};

/*
 * What /proc says of pid now (a process that ran before the capture,
 * as perf synthesizes it).  A process gone already is named ":PID", as
 * perf names it; pid 0 is "swapper".
 */
void kp_procs_scan(struct kp_procs *ps, uint32_t pid, unsigned what);
/* The same for every process in /proc, and pid 0. */
void kp_procs_scan_all(struct kp_procs *ps, unsigned what);

/* The mapping of p that holds addr, or NULL. */
const struct kp_map *kp_proc_map(const struct kp_proc *p, uint64_t addr);

/*
 * The mapping of pid that holds addr: its current program's, else (as
 * perf, which forgets an old program's mappings only as new ones cover
 * them) of the programs before it, up to 8 execs back.  NULL if none.
 */
const struct kp_map *kp_procs_map(struct kp_procs *ps, uint32_t pid,
				  uint64_t addr);
/* The same from p, pid's current program (NULL: none). */
const struct kp_map *kp_proc_map_back(const struct kp_proc *p,
				      uint64_t addr);

/* How many struct kp_proc were made so far (each program of each
 * process). */
size_t kp_procs_count(const struct kp_procs *ps);

#endif /* KP_PROCS_H */
