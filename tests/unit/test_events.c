/*
 * test_events.c - unit tests of common/events.c: every form of event
 * name perf accepts (hardware, the whole hardware-cache matrix,
 * software, tracepoints, PMU terms and aliases from sysfs, rHEX,
 * modifiers), the errors and their messages, tracepoint fields, the
 * list.  sysfs and tracefs are fake trees built here, laid out as the
 * kernel lays them out; the real tracefs is compared where it is
 * mounted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "kp.h"

#include "check.h"

static char root[256];

static void
put(const char *rel, const char *text)
{
	char path[512], *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *fp = fopen(path, "w");
	if (!fp) {
		perror(path);
		exit(2);
	}
	fputs(text, fp);
	fclose(fp);
}

static const char sched_switch_format[] =
	"name: sched_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

static void
make_tree(void)
{
	put("devices/cpu/type", "4\n");
	put("devices/cpu/format/event", "config:0-7\n");
	put("devices/cpu/format/umask", "config:8-15\n");
	put("devices/cpu/format/edge", "config:18\n");
	put("devices/cpu/format/cmask", "config:24-31\n");
	put("devices/cpu/format/ldlat", "config1:0-15\n");
	put("devices/cpu/format/split", "config2:0-7,32-35\n");
	put("devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("devices/cpu/events/cycles-ct", "event=0x3c,\n in_tx=1\n");
	put("devices/cpu/events/mem-loads.unit", "nothing\n");
	put("devices/msr/type", "9\n");
	put("devices/msr/format/event", "config:0-63\n");
	put("devices/msr/events/tsc", "event=0x00\n");
	put("devices/software/type", "1\n");
	put("tracing/events/sched/sched_switch/id", "372\n");
	put("tracing/events/sched/sched_switch/format", sched_switch_format);
	put("tracing/events/sched/sched_wakeup/id", "370\n");
	put("tracing/events/enable", "0\n");
	put("empty/README", "not mounted\n");
}

static struct kp_event ev;
static char err[512];

/* parse must succeed with this type and config */
static bool
is(const char *spec, uint32_t type, uint64_t config)
{
	err[0] = '\0';
	if (kp_event_parse(spec, &ev, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", spec, err);
		return false;
	}
	if (ev.attr.type != type || ev.attr.config != config) {
		fprintf(stderr, "%s: type %u config %#llx\n", spec,
			ev.attr.type, (unsigned long long)ev.attr.config);
		return false;
	}
	return ev.attr.size == sizeof(ev.attr);
}

/* parse must fail with a message holding msg */
static bool
bad(const char *spec, const char *msg)
{
	err[0] = '\0';
	if (kp_event_parse(spec, &ev, err, sizeof(err)) == 0) {
		fprintf(stderr, "%s: parsed\n", spec);
		return false;
	}
	if (!strstr(err, msg)) {
		fprintf(stderr, "%s: message '%s', not '%s'\n", spec, err, msg);
		return false;
	}
	return true;
}

static void
test_named(void)
{
	CHECK(is("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES));
	CHECK(ev.kind == KP_EVENT_HARDWARE && strcmp(ev.name, "cycles") == 0);
	CHECK(is("cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES));
	CHECK(is("instructions", 0, PERF_COUNT_HW_INSTRUCTIONS));
	CHECK(is("cache-references", 0, PERF_COUNT_HW_CACHE_REFERENCES));
	CHECK(is("cache-misses", 0, PERF_COUNT_HW_CACHE_MISSES));
	CHECK(is("branches", 0, PERF_COUNT_HW_BRANCH_INSTRUCTIONS));
	CHECK(is("branch-instructions", 0, PERF_COUNT_HW_BRANCH_INSTRUCTIONS));
	CHECK(is("branch-misses", 0, PERF_COUNT_HW_BRANCH_MISSES));
	CHECK(is("bus-cycles", 0, PERF_COUNT_HW_BUS_CYCLES));
	CHECK(is("ref-cycles", 0, PERF_COUNT_HW_REF_CPU_CYCLES));
	CHECK(is("idle-cycles-frontend", 0,
		 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND));
	CHECK(is("stalled-cycles-backend", 0,
		 PERF_COUNT_HW_STALLED_CYCLES_BACKEND));
	CHECK(is("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK));
	CHECK(ev.kind == KP_EVENT_SOFTWARE && ev.default_period == 0);
	CHECK(is("task-clock", 1, PERF_COUNT_SW_TASK_CLOCK));
	CHECK(is("page-faults", 1, PERF_COUNT_SW_PAGE_FAULTS));
	CHECK(is("faults", 1, PERF_COUNT_SW_PAGE_FAULTS));
	CHECK(is("minor-faults", 1, PERF_COUNT_SW_PAGE_FAULTS_MIN));
	CHECK(is("major-faults", 1, PERF_COUNT_SW_PAGE_FAULTS_MAJ));
	CHECK(is("context-switches", 1, PERF_COUNT_SW_CONTEXT_SWITCHES));
	CHECK(is("cs", 1, PERF_COUNT_SW_CONTEXT_SWITCHES));
	CHECK(is("cpu-migrations", 1, PERF_COUNT_SW_CPU_MIGRATIONS));
	CHECK(is("migrations", 1, PERF_COUNT_SW_CPU_MIGRATIONS));
	CHECK(is("alignment-faults", 1, PERF_COUNT_SW_ALIGNMENT_FAULTS));
	CHECK(is("emulation-faults", 1, PERF_COUNT_SW_EMULATION_FAULTS));
	CHECK(is("dummy", 1, PERF_COUNT_SW_DUMMY));
	CHECK(is("bpf-output", 1, PERF_COUNT_SW_BPF_OUTPUT));
	CHECK(is("cgroup-switches", 1, PERF_COUNT_SW_CGROUP_SWITCHES));
	CHECK(is("r1a8", PERF_TYPE_RAW, 0x1a8));
	CHECK(ev.kind == KP_EVENT_RAW);
	CHECK(is("rC0", PERF_TYPE_RAW, 0xc0));
	CHECK(bad("rxyz", "unknown event 'rxyz'"));
	CHECK(bad("rzz", "unknown event 'rzz'"));
	CHECK(bad("cpu_clock", "unknown event 'cpu_clock'"));
	CHECK(bad("r", "unknown event 'r'"));
	CHECK(bad("r10000000000000000", "unknown event"));
	CHECK(bad("Cycles", "unknown event 'Cycles' (kp-sample --list"));
	CHECK(bad("", "an empty event name"));
}

/* The cache matrix: every name perf list prints, and the aliases. */
static void
test_cache(void)
{
	static const char *const types[] = { "L1-dcache", "L1-icache", "LLC",
					     "dTLB", "iTLB", "branch", "node" };
	static const char *const ops[][2] = { { "load", "loads" },
					      { "store", "stores" },
					      { "prefetch", "prefetches" } };
	/* the operations perf allows for each cache: r, w, p */
	static const char *const valid[] = { "rwp", "rp", "rwp", "rwp",
					     "r", "r", "rwp" };
	char name[64];
	int t, o, n = 0;

	for (t = 0; t < 7; t++)
		for (o = 0; o < 3; o++) {
			bool ok = strchr(valid[t], "rwp"[o]) != NULL;
			uint64_t c = (uint64_t)t | (uint64_t)o << 8;

			snprintf(name, sizeof(name), "%s-%s", types[t],
				 ops[o][1]);
			if (ok) {
				CHECK(is(name, PERF_TYPE_HW_CACHE, c));
				CHECK(ev.kind == KP_EVENT_CACHE);
			} else {
				CHECK(bad(name, "cache cannot count"));
			}
			snprintf(name, sizeof(name), "%s-%s-misses",
				 types[t], ops[o][0]);
			if (ok)
				CHECK(is(name, PERF_TYPE_HW_CACHE,
					 c | 1ull << 16));
			else
				CHECK(bad(name, "cache cannot count"));
			n += ok;
		}
	CHECK(n == 16); /* perf list: 32 cache events */
	CHECK(is("dTLB-load-misses", PERF_TYPE_HW_CACHE, 3 | 0 << 8 | 1 << 16));
	CHECK(is("dtlb-load-misses", PERF_TYPE_HW_CACHE, 3 | 1 << 16));
	CHECK(is("L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0 | 1 << 16));
	CHECK(is("l1d-loads", PERF_TYPE_HW_CACHE, 0));
	CHECK(is("LLC-load-misses", PERF_TYPE_HW_CACHE, 2 | 1 << 16));
	CHECK(is("LLC-misses", PERF_TYPE_HW_CACHE, 2 | 1 << 16)); /* op defaults to read */
	CHECK(is("L2-store-miss", PERF_TYPE_HW_CACHE, 2 | 1 << 8 | 1 << 16));
	CHECK(is("LLC", PERF_TYPE_HW_CACHE, 2));                  /* read access */
	CHECK(is("iTLB-misses", PERF_TYPE_HW_CACHE, 4 | 1 << 16));
	CHECK(is("branch-loads", PERF_TYPE_HW_CACHE, 5));
	CHECK(is("bpu-load-misses", PERF_TYPE_HW_CACHE, 5 | 1 << 16));
	CHECK(is("node-prefetch-misses", PERF_TYPE_HW_CACHE, 6 | 2 << 8 | 1 << 16));
	CHECK(is("L1-dcache-misses-store", PERF_TYPE_HW_CACHE, 0 | 1 << 8 | 1 << 16));
	CHECK(is("LLC-speculative-read-refs", PERF_TYPE_HW_CACHE, 2 | 2 << 8));
	CHECK(is("Data-TLB-write-access", PERF_TYPE_HW_CACHE, 3 | 1 << 8));
	CHECK(bad("L1-icache-store-misses",
		  "'L1-icache-store-misses': the L1-icache cache cannot count "
		  "stores"));
	CHECK(bad("LLC-load-misses-refs", "unknown event"));
	CHECK(bad("LLC-load-store", "unknown event"));
	CHECK(bad("LLC-loadx", "unknown event"));
	CHECK(bad("L1-dcache-load-misses-x", "unknown event"));
}

static void
test_modifiers(void)
{
	CHECK(is("cycles:u", 0, 0));
	CHECK(!ev.attr.exclude_user && ev.attr.exclude_kernel &&
	      ev.attr.exclude_hv);
	CHECK(is("cpu-clock:k", 1, 0));
	CHECK(ev.attr.exclude_user && !ev.attr.exclude_kernel);
	CHECK(is("cpu-clock:uk", 1, 0));
	CHECK(!ev.attr.exclude_user && !ev.attr.exclude_kernel &&
	      ev.attr.exclude_hv);
	CHECK(is("cpu-clock", 1, 0));
	CHECK(!ev.attr.exclude_user && !ev.attr.exclude_kernel &&
	      !ev.attr.exclude_hv && !ev.attr.precise_ip);
	CHECK(is("cycles:ppp", 0, 0) && ev.attr.precise_ip == 3);
	CHECK(is("dTLB-load-misses:upI", PERF_TYPE_HW_CACHE, 3 | 1 << 16));
	CHECK(ev.attr.precise_ip == 1 && ev.attr.exclude_idle &&
	      ev.attr.exclude_kernel);
	CHECK(is("r1a8:G", PERF_TYPE_RAW, 0x1a8));
	CHECK(!ev.attr.exclude_guest && ev.attr.exclude_host);
	CHECK(strcmp(ev.name, "r1a8:G") == 0);
	CHECK(bad("cycles:pppp", "at most 'ppp'"));
	CHECK(bad("cycles:uq", "unknown modifier 'q'"));
}

static void
test_tracepoints(void)
{
	char path[512];
	unsigned off, size;

	snprintf(path, sizeof(path), "%s/tracing", root);
	kp_events_set_roots(NULL, path);
	CHECK(is("sched:sched_switch", PERF_TYPE_TRACEPOINT, 372));
	CHECK(ev.kind == KP_EVENT_TRACEPOINT && ev.default_period == 1);
	CHECK(is("sched:sched_wakeup:k", PERF_TYPE_TRACEPOINT, 370));
	CHECK(ev.attr.exclude_user && strcmp(ev.name, "sched:sched_wakeup:k") == 0);
	CHECK(bad("sched:nope", "no tracepoint 'sched:nope' (none in "));
	CHECK(bad("nosys:x", "no tracepoint 'nosys:x'"));
	CHECK(bad("sched:", "'sched:' is not a tracepoint name"));
	CHECK(bad(":x", "is not a tracepoint name"));
	CHECK(bad("sched:a b", "letters, digits"));
	CHECK(bad("sched:sched_switch:z", "unknown modifier 'z'"));
	/* not an event but modifier letters: read as a tracepoint */
	CHECK(bad("foo:u", "no tracepoint 'foo:u'"));

	CHECK(kp_tracepoint_field("sched:sched_switch", "prev_pid", &off,
				  &size, err, sizeof(err)) == 0 &&
	      off == 24 && size == 4);
	CHECK(kp_tracepoint_field("sched:sched_switch", "prev_state", &off,
				  &size, err, sizeof(err)) == 0 &&
	      off == 32 && size == 8);
	CHECK(kp_tracepoint_field("sched:sched_switch", "prev_comm", &off,
				  &size, err, sizeof(err)) == 0 &&
	      off == 8 && size == 16);
	CHECK(kp_tracepoint_field("sched:sched_switch", "next_pid", &off,
				  &size, err, sizeof(err)) == 0 &&
	      off == 56 && size == 4);
	CHECK(kp_tracepoint_field("sched:sched_switch", "pid", &off, &size,
				  err, sizeof(err)) < 0 &&
	      strstr(err, "has no field 'pid'"));

	/* tracefs not mounted: say so, and how to mount it */
	snprintf(path, sizeof(path), "%s/empty", root);
	kp_events_set_roots(NULL, path);
	CHECK(bad("sched:sched_switch",
		  "tracepoint 'sched:sched_switch': tracefs is not mounted at "));
	CHECK(bad("sched:sched_switch",
		  "mount it with 'mount -t tracefs nodev /sys/kernel/tracing'"));
	/* non-tracepoint events do not need it */
	CHECK(is("cycles:k", 0, 0));
	kp_events_set_roots(NULL, NULL);
}

static void
test_pmus(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/devices", root);
	kp_events_set_roots(path, NULL);
	CHECK(is("cpu/event=0x3c,umask=0x1/", 4, 0x13c));
	CHECK(ev.kind == KP_EVENT_PMU);
	CHECK(is("cpu/event=60,umask=1,edge,cmask=2/", 4,
		 0x13c | 1 << 18 | 2 << 24));
	CHECK(is("cpu/event=0xd0,umask=0x81/uk", 4, 0x81d0));
	CHECK(!ev.attr.exclude_user && !ev.attr.exclude_kernel &&
	      ev.attr.exclude_hv);
	CHECK(is("cpu/event=0xd0/:k", 4, 0xd0) && ev.attr.exclude_user);
	CHECK(is("cpu/config=0x1234,config1=5,config2=0x7,period=1000/", 4,
		 0x1234));
	CHECK(ev.attr.config1 == 5 && ev.attr.config2 == 7 &&
	      ev.attr.sample_period == 1000 && !ev.attr.freq);
	CHECK(is("cpu/event=1,freq=99/", 4, 1) && ev.attr.freq &&
	      ev.attr.sample_freq == 99);
	CHECK(is("cpu/event=0x3c,name=my-cycles/", 4, 0x3c));
	CHECK(strcmp(ev.name, "my-cycles") == 0);
	/* a term over two ranges: low bits to 0-7, the next to 32-35 */
	CHECK(is("cpu/split=0xabc/", 4, 0));
	CHECK(ev.attr.config2 == (0xbcull | 0xaull << 32));
	CHECK(bad("cpu/split=0x1abc/", "does not fit the term's 12 bits"));
	CHECK(bad("cpu/event=0x1ff/",
		  "'cpu/event=0x1ff/': event=0x1ff does not fit the term's 8 "
		  "bits (config:0-7)"));
	CHECK(bad("cpu/event=0xzz/", "'0xzz' is not a number"));
	CHECK(bad("cpu/event=010x/", "is not a number"));
	CHECK(bad("cpu/foo=1/", "PMU 'cpu' has no term or event 'foo' "
				"(its terms: "));
	CHECK(strstr(err, "umask") && strstr(err, "ldlat"));
	CHECK(bad("nopmu/event=1/", "no PMU 'nopmu' in "));
	CHECK(strstr(err, "this machine has: ") && strstr(err, "msr") &&
	      strstr(err, "cpu"));
	CHECK(bad("cpu/event=1", "is not a PMU event"));
	CHECK(bad("/event=1/", "is not a PMU event"));
	CHECK(bad("cpu/event=1/q", "unknown modifier 'q'"));
	CHECK(bad("cpu/name=/", "name= needs a value"));
	/* aliases: pmu/alias/ and a bare alias, terms and all */
	CHECK(is("cpu/mem-loads/", 4, 0x1cd) && ev.attr.config1 == 3);
	CHECK(is("mem-loads", 4, 0x1cd) && ev.attr.config1 == 3);
	CHECK(ev.kind == KP_EVENT_PMU);
	CHECK(is("mem-loads:u", 4, 0x1cd) && ev.attr.exclude_kernel);
	CHECK(is("msr/tsc/", 9, 0));
	CHECK(is("tsc", 9, 0));
	CHECK(is("cpu/mem-loads,ldlat=30/", 4, 0x1cd) &&
	      ev.attr.config1 == 30);
	/* an alias naming a term the PMU lacks */
	CHECK(bad("cycles-ct", "PMU 'cpu' has no term or event 'in_tx'"));
	CHECK(bad("mem-stores", "unknown event 'mem-stores'"));
	/* names come before aliases: a PMU alias "cycles" does not win */
	put("devices/cpu/events/cycles", "event=0x3c\n");
	CHECK(is("cycles", PERF_TYPE_HARDWARE, 0));
	CHECK(is("cpu/cycles/", 4, 0x3c));
	kp_events_set_roots(NULL, NULL);
}

static void
test_list(void)
{
	char path[512], path2[512], *buf = NULL;
	size_t len = 0, n;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/devices", root);
	snprintf(path2, sizeof(path2), "%s/tracing", root);
	kp_events_set_roots(path, path2);
	fp = open_memstream(&buf, &len);
	n = kp_events_list(fp);
	fclose(fp);
	/* 22 named, 32 cache, 2 forms, 4 aliases, 2 tracepoints */
	CHECK(n == 22 + 32 + 2 + 4 + 2);
	CHECK(strstr(buf, "\n  cpu-clock "));
	CHECK(strstr(buf, "[Software event]\n"));
	CHECK(strstr(buf, "\n  cpu-cycles OR cycles "));
	CHECK(strstr(buf, "\n  page-faults OR faults "));
	CHECK(strstr(buf, "\n  L1-dcache-load-misses "));
	CHECK(strstr(buf, "\n  L1-icache-prefetches "));
	CHECK(!strstr(buf, "L1-icache-stores"));
	CHECK(strstr(buf, "\n  dTLB-store-misses "));
	CHECK(strstr(buf, "\n  cpu/mem-loads/ "));
	CHECK(!strstr(buf, "mem-loads.unit"));
	CHECK(strstr(buf, "\n  msr/tsc/ "));
	CHECK(strstr(buf, "\n  rNNN "));
	CHECK(strstr(buf, "\n  sched:sched_switch "));
	CHECK(strstr(buf, "\n  sched:sched_wakeup "));
	CHECK(!strstr(buf, "sched:enable") && !strstr(buf, ":enable"));
	free(buf);

	snprintf(path2, sizeof(path2), "%s/empty", root);
	kp_events_set_roots(path, path2);
	buf = NULL;
	fp = open_memstream(&buf, &len);
	n = kp_events_list(fp);
	fclose(fp);
	CHECK(n == 22 + 32 + 2 + 4);
	CHECK(strstr(buf, "(tracepoints: tracefs is not mounted at "));
	CHECK(strstr(buf, "mount -t tracefs nodev /sys/kernel/tracing"));
	free(buf);
	kp_events_set_roots(NULL, NULL);
}

/* The real tracefs, where it is mounted and readable. */
static void
test_real_tracefs(void)
{
	char id[64] = "";
	FILE *fp = fopen("/sys/kernel/tracing/events/sched/sched_switch/id", "r");
	unsigned long long want;
	unsigned off, size;

	if (!fp) {
		printf("no /sys/kernel/tracing/events/sched/sched_switch/id "
		       "(%s): real tracepoint ids not compared\n",
		       strerror(errno));
		return;
	}
	if (fgets(id, sizeof(id), fp) == NULL)
		id[0] = '\0';
	fclose(fp);
	want = strtoull(id, NULL, 10);
	CHECK(want > 0);
	CHECK(is("sched:sched_switch", PERF_TYPE_TRACEPOINT, want));
	CHECK(kp_tracepoint_field("sched:sched_switch", "next_pid", &off,
				  &size, err, sizeof(err)) == 0 &&
	      size == 4);
	printf("sched:sched_switch id %llu, as tracefs says\n", want);
}

int
main(void)
{
	char cmd[300];

	snprintf(root, sizeof(root), "%s/kp-events-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	make_tree();
	test_named();
	test_cache();
	test_modifiers();
	test_tracepoints();
	test_pmus();
	test_list();
	test_real_tracefs();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return CHECK_DONE();
}
