/* offcpu.c - off-CPU time: switch-outs matched to switch-ins by task */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "kp.h"
#include "perfev.h"
#include "offcpu.h"

/* A fed event, kept until its horizon. */
struct ev {
	uint64_t time, seq;
	uint32_t pid, tid;
	char state;
	enum { EV_IN, EV_OUT, EV_EXIT } kind;
	uint64_t *ips; /* a switch-out's stack, malloc'ed; owned */
	size_t n;
};

/* A task: its pending switch-out, if any (kept once seen). */
struct task {
	uint32_t tid;
	bool pending;
	struct ev out;
};

struct kp_offcpu {
	struct ev *evs;
	size_t nevs, cap;
	uint64_t seq;
	uint64_t passed; /* the last horizon */
	struct kp_slots tasks; /* of struct task, by tid */
	struct kp_offcpu_stats st;
};

struct kp_offcpu *
kp_offcpu_new(void)
{
	return kp_xcalloc(1, sizeof(struct kp_offcpu));
}

void
kp_offcpu_free(struct kp_offcpu *o)
{
	size_t i;
	struct task *t;

	if (!o)
		return;
	for (i = 0; i < o->nevs; i++)
		free(o->evs[i].ips);
	for (i = 0; i < o->tasks.cap; i++)
		if ((t = o->tasks.tab[i].p) != NULL) {
			free(t->out.ips);
			free(t);
		}
	kp_slots_free(&o->tasks);
	free(o->evs);
	free(o);
}

static struct ev *
push(struct kp_offcpu *o, uint64_t time, uint32_t tid)
{
	struct ev *e;

	if (o->nevs == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 1024;
		o->evs = kp_xrealloc(o->evs, o->cap * sizeof(*o->evs));
	}
	e = &o->evs[o->nevs++];
	memset(e, 0, sizeof(*e));
	e->time = time;
	e->seq = o->seq++;
	e->tid = tid;
	return e;
}

void
kp_offcpu_out(struct kp_offcpu *o, uint64_t time, uint32_t pid, uint32_t tid,
	      char state, const void *ips, size_t n)
{
	struct ev *e = push(o, time, tid);

	/* a task's last switch-out (dead, a zombie) has no switch-in */
	e->kind = state == 'X' || state == 'Z' ? EV_EXIT : EV_OUT;
	e->pid = pid;
	e->state = state;
	e->n = n;
	if (n) {
		e->ips = kp_xmalloc(n * sizeof(*e->ips));
		memcpy(e->ips, ips, n * sizeof(*e->ips));
	}
}

void
kp_offcpu_in(struct kp_offcpu *o, uint64_t time, uint32_t tid)
{
	push(o, time, tid)->kind = EV_IN;
}

void
kp_offcpu_exit(struct kp_offcpu *o, uint64_t time, uint32_t tid)
{
	push(o, time, tid)->kind = EV_EXIT;
}

static struct task *
task_get(struct kp_offcpu *o, uint32_t tid)
{
	uint64_t h = (uint64_t)tid * 0x9e3779b97f4a7c15ull;
	size_t mask, i;
	struct task *t;

	if (o->tasks.cap) {
		mask = o->tasks.cap - 1;
		for (i = h & mask; (t = o->tasks.tab[i].p) != NULL;
		     i = (i + 1) & mask)
			if (t->tid == tid)
				return t;
	}
	kp_slots_reserve(&o->tasks, 256);
	t = kp_xcalloc(1, sizeof(*t));
	t->tid = tid;
	kp_slots_put(&o->tasks, h, t);
	return t;
}

/* The span of t's pending switch-out, ended at end. */
static void
close_span(struct kp_offcpu *o, struct task *t, uint64_t end,
	   kp_offcpu_fn fn, void *arg)
{
	struct kp_offcpu_span s = {
		.pid = t->out.pid,
		.tid = t->tid,
		.state = t->out.state,
		.ips = t->out.ips,
		.n = t->out.n,
		.start = t->out.time,
		.ns = end > t->out.time ? end - t->out.time : 0,
	};

	fn(&s, arg);
	o->st.spans++;
	free(t->out.ips);
	t->out.ips = NULL;
	t->pending = false;
}

static void
take(struct kp_offcpu *o, struct ev *e, kp_offcpu_fn fn, void *arg)
{
	struct task *t = task_get(o, e->tid);

	if (e->kind == EV_EXIT) {
		if (t->pending)
			o->st.exited++;
		free(t->out.ips);
		t->out.ips = NULL;
		t->pending = false;
	} else if (e->kind == EV_OUT) {
		if (t->pending) {
			o->st.replaced++;
			free(t->out.ips);
		}
		t->out = *e;
		t->pending = true;
		e->ips = NULL; /* the task owns it now */
	} else if (t->pending) {
		close_span(o, t, e->time, fn, arg);
	} else {
		o->st.unmatched++;
	}
}

static int
cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
kp_offcpu_flush(struct kp_offcpu *o, uint64_t horizon, kp_offcpu_fn fn,
		void *arg)
{
	size_t i, k;

	if (o->nevs)
		qsort(o->evs, o->nevs, sizeof(*o->evs), cmp_ev);
	for (k = 0; k < o->nevs && o->evs[k].time < horizon; k++) {
		if (o->evs[k].time < o->passed)
			o->st.late++; /* taken all the same, late */
		take(o, &o->evs[k], fn, arg);
	}
	for (i = 0; i < k; i++)
		free(o->evs[i].ips);
	memmove(o->evs, o->evs + k, (o->nevs - k) * sizeof(*o->evs));
	o->nevs -= k;
	if (horizon > o->passed)
		o->passed = horizon;
}

void
kp_offcpu_finish(struct kp_offcpu *o, uint64_t end, kp_offcpu_fn fn,
		 void *arg)
{
	size_t i;
	struct task *t;

	kp_offcpu_flush(o, UINT64_MAX, fn, arg);
	for (i = 0; i < o->tasks.cap; i++)
		if ((t = o->tasks.tab[i].p) != NULL && t->pending) {
			o->st.open++;
			close_span(o, t, end, fn, arg);
		}
}

const struct kp_offcpu_stats *
kp_offcpu_stats(const struct kp_offcpu *o)
{
	return &o->st;
}

char
kp_offcpu_state(uint64_t prev_state)
{
	static const char letters[] = "SDTtXZPI";
	int b;

	if (prev_state == 0 || (prev_state & 0x100))
		return 'R';
	for (b = 0; b < 8; b++)
		if (prev_state & (1u << b))
			return letters[b];
	return '?';
}

int
kp_sched_switch_layout(struct kp_sched_switch *l, char *err, size_t errlen)
{
	static const char tp[] = "sched:sched_switch";

	if (kp_tracepoint_field(tp, "prev_pid", &l->prev_pid,
				&l->prev_pid_size, err, errlen) < 0 ||
	    kp_tracepoint_field(tp, "prev_state", &l->prev_state,
				&l->prev_state_size, err, errlen) < 0 ||
	    kp_tracepoint_field(tp, "next_pid", &l->next_pid,
				&l->next_pid_size, err, errlen) < 0)
		return -1;
	if (l->prev_pid_size != 4 || l->next_pid_size != 4 ||
	    (l->prev_state_size != 4 && l->prev_state_size != 8)) {
		snprintf(err, errlen,
			 "%s: unexpected field sizes (prev_pid %u, "
			 "prev_state %u, next_pid %u bytes)",
			 tp, l->prev_pid_size, l->prev_state_size,
			 l->next_pid_size);
		return -1;
	}
	return 0;
}

int
kp_sched_switch_decode(const struct kp_sched_switch *l, const void *raw,
		       size_t len, uint32_t *prev_pid, uint64_t *prev_state,
		       uint32_t *next_pid)
{
	const unsigned char *p = raw;
	uint32_t s32;

	if (l->prev_pid + 4 > len || l->next_pid + 4 > len ||
	    l->prev_state + l->prev_state_size > len)
		return -1;
	memcpy(prev_pid, p + l->prev_pid, 4);
	memcpy(next_pid, p + l->next_pid, 4);
	if (l->prev_state_size == 8) {
		memcpy(prev_state, p + l->prev_state, 8);
	} else {
		memcpy(&s32, p + l->prev_state, 4);
		*prev_state = s32;
	}
	return 0;
}

int
kp_offcpu_sched_switch(struct kp_offcpu *o, const struct kp_sched_switch *l,
		       const struct kp_perfev_sample *s, bool next_in)
{
	uint32_t prev, next;
	uint64_t state;

	if (kp_sched_switch_decode(l, s->raw, s->raw_size, &prev, &state,
				   &next) < 0)
		return -1;
	kp_offcpu_out(o, s->time, s->pid, prev, kp_offcpu_state(state),
		      s->ips, (size_t)s->nr);
	if (next_in && next != 0)
		kp_offcpu_in(o, s->time, next);
	return 0;
}

bool
kp_offcpu_switch_record(struct kp_offcpu *o,
			const struct perf_event_header *h,
			uint64_t sample_type)
{
	struct kp_perfev_sample s;

	if (h->type != PERF_RECORD_SWITCH)
		return false;
	if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT) &&
	    kp_perfev_sample_id(h, sample_type, &s) == 0)
		kp_offcpu_in(o, s.time, s.tid);
	return true;
}
