/*
 * test_procs.c - unit tests of the process model (common/procs.c), the
 * side-band and sample records decoded into it (common/perfev.c), and
 * callchains to stacks (common/chains.c): an exec keeps the mappings
 * the frames before it were taken in, a fork takes its parent's (shared
 * until either maps something), a child's exec read before its fork
 * wins, mappings replace what they overlap; return addresses are marked,
 * context markers dropped, user mode without user stacks is [user].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "chains.h"
#include "kp.h"
#include "perfev.h"
#include "procs.h"
#include "resolve.h"

#include "check.h"

/* A side-band record in buf: header, then the payload. */
static const struct perf_event_header *
rec(unsigned char *buf, uint32_t type, uint16_t misc, const void *payload,
    size_t len)
{
	struct perf_event_header h = { .type = type, .misc = misc,
				       .size = (uint16_t)(sizeof(h) + len) };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), payload, len);
	return (const struct perf_event_header *)buf;
}

static void
test_model(void)
{
	struct kp_procs *ps = kp_procs_new();
	struct kp_proc *p, *old, *child;
	const struct kp_map *m;

	kp_procs_comm(ps, 10, 10, "sh\0garbage", 11, false);
	kp_procs_mmap(ps, 10, 0x1000, 0x1000, 0x2000, "/bin/sh", NULL);
	kp_procs_mmap(ps, 10, 0x5000, 0x1000, 0, "/lib/libc.so.6", "abcd");
	p = kp_procs_get(ps, 10);
	CHECK(strcmp(p->comm, "sh") == 0);
	CHECK(p->nmaps == 2);
	m = kp_proc_map(p, 0x1800);
	CHECK(m && strcmp(m->path, "/bin/sh") == 0 && m->pgoff == 0x2000);
	CHECK(kp_proc_map(p, 0x2000) == NULL);
	m = kp_proc_map(p, 0x5fff);
	CHECK(m && m->build_id && strcmp(m->build_id, "abcd") == 0);
	/* a new mapping replaces what it overlaps */
	kp_procs_mmap(ps, 10, 0x1800, 0x1000, 0, "/bin/other", NULL);
	CHECK(p->nmaps == 2);
	CHECK(kp_proc_map(p, 0x1000) == NULL);
	CHECK(strcmp(kp_proc_map(p, 0x1800)->path, "/bin/other") == 0);
	/* a thread's name is not the process's */
	kp_procs_comm(ps, 10, 11, "worker", 6, false);
	CHECK(strcmp(p->comm, "sh") == 0);
	/* fork: the child starts with the parent's name and mappings */
	kp_procs_fork(ps, 20, 10, 20, 10);
	child = kp_procs_get(ps, 20);
	CHECK(child != p && strcmp(child->comm, "sh") == 0);
	CHECK(child->nmaps == 2 && child->maps_known == p->maps_known);
	CHECK(strcmp(kp_proc_map(child, 0x1800)->path, "/bin/other") == 0);
	/* a thread is not a process */
	kp_procs_fork(ps, 10, 10, 12, 10);
	CHECK(kp_procs_get(ps, 10) == p);
	/* exec: a new program, the old one kept for frames taken before */
	old = child;
	kp_procs_comm(ps, 20, 20, "dd", 2, true);
	child = kp_procs_get(ps, 20);
	CHECK(child != old && child->nmaps == 0 && child->maps_known);
	CHECK(old->nmaps == 2 && strcmp(old->comm, "sh") == 0);
	/* a child's exec read before its fork: the exec's name wins */
	kp_procs_comm(ps, 30, 30, "make", 4, true);
	kp_procs_fork(ps, 30, 10, 30, 10);
	CHECK(strcmp(kp_procs_get(ps, 30)->comm, "make") == 0);
	CHECK(kp_procs_get(ps, 30)->nmaps == 0);
	/* a pid reused after its exit is a new process */
	kp_procs_exit(ps, 20, 20);
	CHECK(kp_procs_get(ps, 20)->exited);
	kp_procs_fork(ps, 20, 10, 20, 10);
	CHECK(kp_procs_get(ps, 20) != child);
	CHECK(kp_procs_find(ps, 99) == NULL);
	CHECK(kp_procs_count(ps) == 5);
	/* the kernel's mapping is not a process's */
	kp_procs_mmap(ps, (uint32_t)-1, 0xffffffff81000000ull, 0x1000, 0,
		      "[kernel.kallsyms]_text", NULL);
	CHECK(kp_procs_find(ps, (uint32_t)-1) == NULL);
	kp_procs_free(ps);
}

/*
 * A child shares its parent's mappings until either maps something: the
 * one that does changes its own, never the other's; a grandchild's,
 * shared from a child that shares them, too.  (ASan: every array freed
 * once, the ones a parent replaced after lending them included.)
 */
static void
test_fork_shares(void)
{
	struct kp_procs *ps = kp_procs_new();
	struct kp_proc *p, *c, *g, *h;

	kp_procs_comm(ps, 1, 1, "make", 4, true);
	kp_procs_mmap(ps, 1, 0x1000, 0x1000, 0, "/usr/bin/make", NULL);
	kp_procs_mmap(ps, 1, 0x8000, 0x1000, 0, "/lib/libc.so.6", NULL);
	p = kp_procs_get(ps, 1);
	kp_procs_fork(ps, 2, 1, 2, 1);
	c = kp_procs_get(ps, 2);
	kp_procs_fork(ps, 3, 2, 3, 2);
	g = kp_procs_get(ps, 3);
	CHECK(c->nmaps == 2 && g->nmaps == 2);
	/* the parent maps over its program: its children keep theirs */
	kp_procs_mmap(ps, 1, 0x1000, 0x2000, 0, "/usr/bin/other", NULL);
	CHECK(p->nmaps == 2);
	CHECK(strcmp(kp_proc_map(p, 0x1800)->path, "/usr/bin/other") == 0);
	CHECK(strcmp(kp_proc_map(c, 0x1800)->path, "/usr/bin/make") == 0);
	CHECK(strcmp(kp_proc_map(g, 0x1800)->path, "/usr/bin/make") == 0);
	CHECK(kp_proc_map(c, 0x2800) == NULL && kp_proc_map(g, 0x2800) == NULL);
	/* the child maps a library: the grandchild and parent do not see it */
	kp_procs_mmap(ps, 2, 0x20000, 0x1000, 0, "/lib/libm.so.6", NULL);
	CHECK(c->nmaps == 3 && g->nmaps == 2 && p->nmaps == 2);
	CHECK(strcmp(kp_proc_map(c, 0x20010)->path, "/lib/libm.so.6") == 0);
	CHECK(kp_proc_map(g, 0x20010) == NULL && kp_proc_map(p, 0x20010) == NULL);
	/* the grandchild maps over libc: its own, the child's unchanged */
	kp_procs_mmap(ps, 3, 0x8000, 0x1000, 0x1000, "/lib/libc2.so", NULL);
	CHECK(strcmp(kp_proc_map(g, 0x8000)->path, "/lib/libc2.so") == 0);
	CHECK(strcmp(kp_proc_map(c, 0x8000)->path, "/lib/libc.so.6") == 0);
	CHECK(strcmp(kp_proc_map(p, 0x8000)->path, "/lib/libc.so.6") == 0);
	/* a parent lends its new array again, and maps after that */
	kp_procs_fork(ps, 4, 1, 4, 1);
	h = kp_procs_get(ps, 4);
	kp_procs_mmap(ps, 1, 0x40000, 0x1000, 0, "/lib/libz.so", NULL);
	CHECK(p->nmaps == 3 && h->nmaps == 2 && kp_proc_map(h, 0x40000) == NULL);
	CHECK(strcmp(kp_proc_map(h, 0x1800)->path, "/usr/bin/other") == 0);
	/* many mappings after a fork (the array grows from the copy) */
	for (int i = 0; i < 100; i++)
		kp_procs_mmap(ps, 4, 0x100000 + (uint64_t)i * 0x1000, 0x1000, 0,
			      "/lib/many.so", NULL);
	CHECK(h->nmaps == 102 && p->nmaps == 3);
	kp_procs_free(ps);
}

static void
test_records(void)
{
	struct kp_procs *ps = kp_procs_new();
	unsigned char buf[512], p[256];
	uint32_t u[4] = { 7, 7, 0, 0 }, prot;
	uint64_t a[3] = { 0x400000, 0x1000, 0x3000 };
	struct kp_proc *pr;

	memcpy(p, u, 8);
	memcpy(p + 8, "cat\0\0\0\0", 8);
	CHECK(kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_COMM,
					   PERF_RECORD_MISC_COMM_EXEC, p, 16)));
	pr = kp_procs_get(ps, 7);
	CHECK(pr->comm && strcmp(pr->comm, "cat") == 0 && pr->maps_known);
	/* MMAP2, executable */
	memset(p, 0, sizeof(p));
	memcpy(p, u, 8);
	memcpy(p + 8, a, 24);
	prot = PROT_READ | PROT_EXEC;
	memcpy(p + 56, &prot, 4);
	strcpy((char *)p + 64, "/usr/bin/cat");
	CHECK(kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_MMAP2, 0, p, 80)));
	CHECK(pr->nmaps == 1 && pr->maps[0].pgoff == 0x3000 &&
	      strcmp(pr->maps[0].path, "/usr/bin/cat") == 0);
	/* with a build-id */
	a[0] = 0x500000;
	memcpy(p + 8, a, 24);
	p[32] = 2;
	p[36] = 0xab;
	p[37] = 0x01;
	strcpy((char *)p + 64, "/lib/x.so");
	kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_MMAP2,
				     PERF_RECORD_MISC_MMAP_BUILD_ID, p, 80));
	CHECK(pr->nmaps == 2 && pr->maps[1].build_id &&
	      strcmp(pr->maps[1].build_id, "ab01") == 0);
	/* not executable: dropped */
	a[0] = 0x600000;
	memcpy(p + 8, a, 24);
	prot = PROT_READ;
	memcpy(p + 56, &prot, 4);
	kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_MMAP2, 0, p, 80));
	CHECK(pr->nmaps == 2);
	/* a name without its NUL, a record too short: ignored */
	memset(p + 64, 'x', 16);
	prot = PROT_EXEC;
	memcpy(p + 56, &prot, 4);
	kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_MMAP2, 0, p, 80));
	kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_MMAP2, 0, p, 20));
	CHECK(pr->nmaps == 2);
	/* FORK: pid, ppid, tid, ptid */
	u[0] = 8, u[1] = 7, u[2] = 8, u[3] = 7;
	memcpy(p, u, 16);
	memset(p + 16, 0, 8);
	CHECK(kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_FORK, 0, p, 24)));
	CHECK(kp_procs_get(ps, 8)->nmaps == 2);
	CHECK(!kp_perfev_feed_procs(ps, rec(buf, PERF_RECORD_SAMPLE, 0, p, 24)));
	kp_procs_free(ps);
}

/* A sample record: ip, pid/tid, nr, ips. */
static const struct perf_event_header *
sample(unsigned char *buf, uint16_t mode, uint32_t pid, const uint64_t *ips,
       uint64_t nr)
{
	unsigned char p[512];
	uint64_t ip = nr ? ips[1] : 0x1234;
	uint32_t pt[2] = { pid, pid };

	memcpy(p, &ip, 8);
	memcpy(p + 8, pt, 8);
	memcpy(p + 16, &nr, 8);
	memcpy(p + 24, ips, nr * 8);
	return rec(buf, PERF_RECORD_SAMPLE, mode, p, 24 + nr * 8);
}

static void
test_chains(void)
{
	struct kp_procs *ps = kp_procs_new();
	struct kp_resolver *r = kp_resolver_new(0);
	struct kp_chains *c;
	struct kp_perfev_sample s;
	struct kp_agg *agg;
	const struct kp_stack *st;
	unsigned char buf[1024];
	uint64_t k[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ull,
			 0xffffffff81000020ull, PERF_CONTEXT_USER, 0x401010,
			 0x401020, 0x999999 };
	size_t i, found = 0;

	/* a kernel of two symbols, a program mapped at 0x400000 */
	kp_procs_comm(ps, 5, 5, "prog", 4, true);
	kp_procs_mmap(ps, 5, 0x400000, 0x2000, 0, "/nonexistent/prog",
		      NULL);
	c = kp_chains_new(ps, KP_CHAINS_USER | KP_CHAINS_COMM);
	CHECK(kp_perfev_sample_parse(sample(buf, PERF_RECORD_MISC_KERNEL, 5,
					    k, 7),
				     &s) == 0);
	CHECK(s.nr == 7 && s.pid == 5);
	CHECK(kp_chains_add(c, &s, 1) == 0);
	CHECK(kp_chains_add(c, &s, 2) == 0);
	/* user mode: one [user] frame without KP_CHAINS_USER */
	kp_chains_free(c);
	c = kp_chains_new(ps, 0);
	kp_perfev_sample_parse(sample(buf, PERF_RECORD_MISC_USER, 5, k + 3, 3),
			       &s);
	CHECK(kp_chains_add(c, &s, 4) == 0);
	agg = kp_chains_resolve(c, r);
	CHECK(kp_agg_len(agg) == 1);
	st = kp_agg_get(agg, 0);
	CHECK(st->n == 1 && st->count == 4 &&
	      strcmp(st->frames[0]->sym, KP_USER_FRAME) == 0);
	kp_agg_free(agg);
	kp_chains_free(c);
	/* the kernel and user chain, named without symbols: addresses,
	 * the user ones as file offsets, the comm outermost */
	c = kp_chains_new(ps, KP_CHAINS_USER | KP_CHAINS_COMM);
	kp_perfev_sample_parse(sample(buf, PERF_RECORD_MISC_KERNEL, 5, k, 7),
			       &s);
	kp_chains_add(c, &s, 3);
	agg = kp_chains_resolve(c, r);
	st = kp_agg_get(agg, 0);
	CHECK(kp_agg_len(agg) == 1 && st->count == 3 && st->n == 6);
	if (st->n == 6) {
		CHECK(st->frames[0]->addr == 0xffffffff81000010ull &&
		      strcmp(st->frames[0]->module, "kernel") == 0);
		CHECK(st->frames[2]->addr == 0x401010 &&
		      (st->frames[2]->flags & KP_F_OFF) &&
		      st->frames[2]->off == 0x1010);
		/* outside every mapping: the address alone */
		CHECK(st->frames[4]->addr == 0x999999 && !st->frames[4]->module);
		CHECK(strcmp(st->frames[5]->sym, "prog") == 0);
		found = 1;
	}
	for (i = 0; i < st->n; i++)
		CHECK(st->frames[i]->sym == NULL || i == 5);
	CHECK(found);
	kp_agg_free(agg);
	kp_chains_free(c);
	kp_resolver_free(r);
	kp_procs_free(ps);
}

static void
test_offsets(void)
{
	struct kp_elf_seg segs[] = { { 0, 0x400000, 0x500 },
				     { 0x1000, 0x401000, 0x2000 } };
	uint64_t v;

	CHECK(kp_elf_off_to_vaddr(segs, 2, 0x1010, &v) && v == 0x401010);
	CHECK(kp_elf_off_to_vaddr(segs, 2, 0x10, &v) && v == 0x400010);
	CHECK(!kp_elf_off_to_vaddr(segs, 2, 0x600, &v));
	CHECK(!kp_elf_off_to_vaddr(segs, 2, 0x3000, &v));
}

/*
 * Many processes, their pids sequential, sharing their low 16 bits and
 * at the ends of the range, each forked from the one before and mapping
 * a file of its own (interned already: kept as given): each pid finds
 * its own process, through the table's growth (its slots are told apart
 * by hash alone), and a pid never seen finds none.
 */
static void
test_many(void)
{
	struct kp_procs *ps = kp_procs_new();
	uint32_t *pid = kp_xmalloc(30000 * sizeof(*pid));
	const struct kp_map *m;
	const char *path;
	char name[32];
	size_t i, n = 0, bad = 0;

	for (i = 1; i <= 10000; i++)
		pid[n++] = (uint32_t)i;
	for (i = 1; i <= 10000; i++)
		pid[n++] = (uint32_t)(i << 16);
	for (i = 1; i <= 10000; i++)
		pid[n++] = UINT32_MAX - 1 - (uint32_t)i;
	for (i = 0; i < n; i++) {
		kp_procs_fork(ps, pid[i], i ? pid[i - 1] : 0, pid[i],
			      i ? pid[i - 1] : 0);
		snprintf(name, sizeof(name), "/bin/p%zu", i);
		path = kp_intern_str(name);
		kp_procs_mmap_interned(ps, pid[i], 0x1000, 0x1000, 0, path,
				       NULL);
		m = kp_procs_map(ps, pid[i], 0x1800);
		bad += !m || m->path != path;
	}
	CHECK(bad == 0);
	for (i = 0, bad = 0; i < n; i++) {
		struct kp_proc *p = kp_procs_find(ps, pid[i]);

		snprintf(name, sizeof(name), "/bin/p%zu", i);
		m = p ? kp_proc_map(p, 0x1800) : NULL;
		bad += !p || p->pid != pid[i] || !m ||
		       m->path != kp_intern_str(name);
	}
	CHECK(bad == 0);
	CHECK(kp_procs_count(ps) == n);
	CHECK(kp_procs_find(ps, 10001) == NULL);
	CHECK(kp_procs_find(ps, 3u << 20 | 1) == NULL);
	CHECK(kp_procs_find(ps, UINT32_MAX) == NULL);
	free(pid);
	kp_procs_free(ps);
}

int
main(int argc, char **argv)
{
	(void)argc;
	kp_init(argv);
	test_model();
	test_fork_shares();
	test_records();
	test_chains();
	test_offsets();
	test_many();
	return CHECK_DONE();
}
