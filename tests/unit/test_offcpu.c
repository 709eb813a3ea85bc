/*
 * test_offcpu.c - unit tests of common/offcpu.c, fed synthetic
 * switch-outs and switch-ins: a span per wait with the stack and state
 * of its switch-out, events read out of order (a switch-in before its
 * switch-out, as two CPUs' rings give them), the horizon, switch-ins
 * with nothing pending, lost switch-ins, task ends, tasks still waiting
 * at the end, and a timeline of many tasks on two CPUs fed in ring
 * order whose sums must equal the waits as they happened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "kp.h"
#include "offcpu.h"

#include "check.h"

#define MAXSPANS 4096

static struct kp_offcpu_span got[MAXSPANS];
static uint64_t got_ips[MAXSPANS][4];
static size_t ngot;

static void
collect(const struct kp_offcpu_span *s, void *arg)
{
	(void)arg;
	if (ngot == MAXSPANS)
		return;
	got[ngot] = *s;
	memset(got_ips[ngot], 0, sizeof(got_ips[ngot]));
	if (s->n)
		memcpy(got_ips[ngot], s->ips,
		       (s->n < 4 ? s->n : 4) * sizeof(*s->ips));
	got[ngot].ips = got_ips[ngot];
	ngot++;
}

static void
test_one(void)
{
	struct kp_offcpu *o = kp_offcpu_new();
	static const uint64_t st[] = { 0xffffffff81000010ull, 0x401000, 0x402000 };

	ngot = 0;
	kp_offcpu_out(o, 100, 40, 41, 'S', st, 3);
	kp_offcpu_in(o, 350, 41);
	kp_offcpu_flush(o, 1000, collect, NULL);
	CHECK(ngot == 1);
	CHECK(got[0].ns == 250 && got[0].start == 100);
	CHECK(got[0].pid == 40 && got[0].tid == 41 && got[0].state == 'S');
	CHECK(got[0].n == 3 && got[0].ips[0] == st[0] && got[0].ips[2] == st[2]);
	CHECK(kp_offcpu_stats(o)->spans == 1);
	kp_offcpu_free(o);
}

static void
test_order_and_horizon(void)
{
	struct kp_offcpu *o = kp_offcpu_new();
	uint64_t a = 1, b = 2;

	ngot = 0;
	/* the switch-in is read first (another CPU's ring) */
	kp_offcpu_in(o, 300, 7);
	kp_offcpu_out(o, 100, 7, 7, 'D', &a, 1);
	/* the next wait ends after the horizon: kept for later */
	kp_offcpu_out(o, 400, 7, 7, 'S', &b, 1);
	kp_offcpu_in(o, 900, 7);
	kp_offcpu_flush(o, 600, collect, NULL);
	CHECK(ngot == 1 && got[0].ns == 200 && got[0].state == 'D' &&
	      got[0].ips[0] == 1);
	kp_offcpu_flush(o, 1000, collect, NULL);
	CHECK(ngot == 2 && got[1].ns == 500 && got[1].state == 'S' &&
	      got[1].ips[0] == 2);
	CHECK(kp_offcpu_stats(o)->unmatched == 0 &&
	      kp_offcpu_stats(o)->late == 0);
	/* an event older than a horizon passed: taken, but counted late */
	kp_offcpu_in(o, 950, 7);
	kp_offcpu_flush(o, 2000, collect, NULL);
	CHECK(kp_offcpu_stats(o)->late == 1 &&
	      kp_offcpu_stats(o)->unmatched == 1 && ngot == 2);
	kp_offcpu_free(o);
}

static void
test_odd(void)
{
	struct kp_offcpu *o = kp_offcpu_new();
	uint64_t a = 1, b = 2, c = 3;
	const struct kp_offcpu_stats *st = kp_offcpu_stats(o);

	ngot = 0;
	/* a switch-in with nothing before it: the wait began earlier */
	kp_offcpu_in(o, 50, 9);
	/* two switch-outs, the switch-in between them lost: the second counts */
	kp_offcpu_out(o, 100, 9, 9, 'S', &a, 1);
	kp_offcpu_out(o, 200, 9, 9, 'D', &b, 1);
	kp_offcpu_in(o, 260, 9);
	/* the task's end closes its wait with nothing counted */
	kp_offcpu_out(o, 300, 9, 10, 'S', &c, 1);
	kp_offcpu_exit(o, 310, 10);
	kp_offcpu_in(o, 320, 10);
	/* a last switch-out (dead) is never switched in again */
	kp_offcpu_out(o, 400, 9, 11, 'X', &c, 1);
	/* same time: out of one task and in of another, as sched_switch */
	kp_offcpu_out(o, 500, 12, 12, 'R', NULL, 0);
	kp_offcpu_in(o, 500, 13);
	/* still waiting at the end */
	kp_offcpu_finish(o, 1500, collect, NULL);
	CHECK(ngot == 2);
	CHECK(got[0].tid == 9 && got[0].ns == 60 && got[0].ips[0] == 2);
	CHECK(got[1].tid == 12 && got[1].ns == 1000 && got[1].state == 'R' &&
	      got[1].n == 0);
	CHECK(st->unmatched == 3 && st->replaced == 1 && st->exited == 1 &&
	      st->open == 1 && st->spans == 2);
	/* a switch-in earlier than its switch-out (clocks of two CPUs) */
	kp_offcpu_out(o, 2000, 1, 1, 'S', &a, 1);
	kp_offcpu_finish(o, 1990, collect, NULL);
	CHECK(ngot == 3 && got[2].ns == 0);
	kp_offcpu_free(o);
	kp_offcpu_free(NULL);
}

static void
test_states(void)
{
	CHECK(kp_offcpu_state(0) == 'R');
	CHECK(kp_offcpu_state(0x100) == 'R');
	CHECK(kp_offcpu_state(0x101) == 'R');
	CHECK(kp_offcpu_state(1) == 'S');
	CHECK(kp_offcpu_state(2) == 'D');
	CHECK(kp_offcpu_state(4) == 'T');
	CHECK(kp_offcpu_state(8) == 't');
	CHECK(kp_offcpu_state(0x10) == 'X');
	CHECK(kp_offcpu_state(0x20) == 'Z');
	CHECK(kp_offcpu_state(0x40) == 'P');
	CHECK(kp_offcpu_state(0x80) == 'I');
	CHECK(kp_offcpu_state(0x200) == '?');
}

/*
 * Many tasks on two CPUs: a timeline of runs and waits, each event
 * written to the ring of the CPU it happened on, the rings read in
 * rounds (CPU 1's ring before CPU 0's); the horizon is the start of the
 * previous round.  The spans must sum to each task's waits exactly.
 */
#define NT 40
static uint64_t want[NT], sum[NT];

static void
add(const struct kp_offcpu_span *s, void *arg)
{
	(void)arg;
	if (s->tid < NT && s->n == 1 && s->ips[0] == s->tid * 1000u)
		sum[s->tid] += s->ns;
}

struct rec {
	uint64_t time;
	uint32_t tid;
	bool out;
};

static void
test_timeline(void)
{
	struct kp_offcpu *o = kp_offcpu_new();
	static struct rec ring[2][200000];
	size_t nring[2] = { 0, 0 }, pos[2] = { 0, 0 };
	uint64_t next_free[NT], t, prev_round = 0, ip;
	unsigned seed = 12345;
	int cpu, i, k;

	memset(want, 0, sizeof(want));
	memset(sum, 0, sizeof(sum));
	/* each task: runs on a random CPU, leaves, waits, comes back */
	for (i = 0; i < NT; i++)
		next_free[i] = 0;
	for (k = 0; k < 3000; k++) {
		i = (int)(rand_r(&seed) % NT);
		cpu = (int)(rand_r(&seed) % 2);
		t = next_free[i] + 1 + rand_r(&seed) % 1000;
		if (nring[cpu] && ring[cpu][nring[cpu] - 1].time >= t)
			t = ring[cpu][nring[cpu] - 1].time + 1;
		if (next_free[i]) { /* it was waiting since its last out */
			ring[cpu][nring[cpu]++] = (struct rec){ t, (uint32_t)i, false };
			want[i] += t - next_free[i];
		}
		t += 1 + rand_r(&seed) % 500; /* runs, then leaves */
		ring[cpu][nring[cpu]++] = (struct rec){ t, (uint32_t)i, true };
		next_free[i] = t;
	}
	/* still waiting at the end: counted until the end */
	t = 0;
	for (cpu = 0; cpu < 2; cpu++)
		if (nring[cpu] && ring[cpu][nring[cpu] - 1].time > t)
			t = ring[cpu][nring[cpu] - 1].time;
	t += 10;
	for (i = 0; i < NT; i++)
		if (next_free[i])
			want[i] += t - next_free[i];
	/* read in rounds of 50 µs of time, CPU 1 first */
	for (uint64_t now = 50000;; now += 50000) {
		bool more = false;

		for (cpu = 1; cpu >= 0; cpu--)
			for (; pos[cpu] < nring[cpu] &&
			       ring[cpu][pos[cpu]].time < now;
			     pos[cpu]++) {
				struct rec *r = &ring[cpu][pos[cpu]];

				ip = r->tid * 1000u;
				if (r->out)
					kp_offcpu_out(o, r->time, 1, r->tid,
						      'S', &ip, 1);
				else
					kp_offcpu_in(o, r->time, r->tid);
			}
		kp_offcpu_flush(o, prev_round, add, NULL);
		prev_round = now;
		for (cpu = 0; cpu < 2; cpu++)
			more |= pos[cpu] < nring[cpu];
		if (!more)
			break;
	}
	kp_offcpu_finish(o, t, add, NULL);
	for (i = 0; i < NT; i++)
		CHECK(sum[i] == want[i]);
	CHECK(kp_offcpu_stats(o)->unmatched == 0 &&
	      kp_offcpu_stats(o)->replaced == 0 &&
	      kp_offcpu_stats(o)->late == 0);
	kp_offcpu_free(o);
}

/*
 * sched_switch's RAW data, laid out by its format file: this kernel's
 * (prev_state a long) and an older one's (an int, other offsets).
 */
static void
write_format(const char *dir, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/events", dir);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	strcat(path, "/sched");
	mkdir(path, 0755);
	strcat(path, "/sched_switch");
	mkdir(path, 0755);
	strcat(path, "/format");
	if (!(fp = fopen(path, "w"))) {
		perror(path);
		exit(2);
	}
	fputs(text, fp);
	fclose(fp);
}

static void
test_sched_switch(void)
{
	char dir[256], err[512], cmd[300];
	unsigned char raw[64];
	struct kp_sched_switch l;
	uint32_t prev, next, v32;
	uint64_t state, v64;

	snprintf(dir, sizeof(dir), "%s/kp-offcpu-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	write_format(dir,
		"name: sched_switch\nID: 372\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
		"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
		"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
		"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n");
	kp_events_set_roots(NULL, dir);
	CHECK(kp_sched_switch_layout(&l, err, sizeof(err)) == 0);
	CHECK(l.prev_pid == 24 && l.prev_state == 32 &&
	      l.prev_state_size == 8 && l.next_pid == 56);
	memset(raw, 0, sizeof(raw));
	v32 = 4242;
	memcpy(raw + 24, &v32, 4);
	v64 = 0x2; /* D */
	memcpy(raw + 32, &v64, 8);
	v32 = 77;
	memcpy(raw + 56, &v32, 4);
	CHECK(kp_sched_switch_decode(&l, raw, 64, &prev, &state, &next) == 0);
	CHECK(prev == 4242 && next == 77 && kp_offcpu_state(state) == 'D');
	CHECK(kp_sched_switch_decode(&l, raw, 59, &prev, &state, &next) < 0);

	/* before Linux 5.x: prev_state an int at 28 */
	write_format(dir,
		"format:\n"
		"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:long prev_state;\toffset:28;\tsize:4;\tsigned:1;\n"
		"\tfield:pid_t next_pid;\toffset:52;\tsize:4;\tsigned:1;\n");
	CHECK(kp_sched_switch_layout(&l, err, sizeof(err)) == 0);
	v32 = 0x101; /* preempted */
	memcpy(raw + 28, &v32, 4);
	v32 = 5;
	memcpy(raw + 52, &v32, 4);
	CHECK(kp_sched_switch_decode(&l, raw, 56, &prev, &state, &next) == 0);
	CHECK(prev == 4242 && next == 5 && state == 0x101 &&
	      kp_offcpu_state(state) == 'R');

	/* a layout this code does not know: said, not guessed */
	write_format(dir,
		"format:\n"
		"\tfield:pid_t prev_pid;\toffset:24;\tsize:8;\tsigned:1;\n"
		"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
		"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n");
	CHECK(kp_sched_switch_layout(&l, err, sizeof(err)) < 0 &&
	      strstr(err, "unexpected field sizes (prev_pid 8"));
	write_format(dir, "format:\n");
	CHECK(kp_sched_switch_layout(&l, err, sizeof(err)) < 0 &&
	      strstr(err, "has no field 'prev_pid'"));
	kp_events_set_roots(NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int
main(void)
{
	test_one();
	test_order_and_horizon();
	test_odd();
	test_states();
	test_timeline();
	test_sched_switch();
	return CHECK_DONE();
}
