/* samplemode.c - what kp-sample samples; see samplemode.h */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataaddr.h"
#include "events.h"
#include "offcpu.h"
#include "samplemode.h"

struct id_ev {
	uint64_t id;
	size_t ev;
};

struct kp_samplemode {
	struct kp_samplemode_opts o;
	struct kp_procs *procs;
	struct kp_chains *chains;
	struct kp_perfev_set **sets; /* of each event */
	struct kp_event *ev;
	const struct kp_frame **names; /* "[event]", with several */
	size_t nev;
	struct id_ev *ids; /* sample id -> event, sorted (several) */
	size_t nids;
	uint64_t sample_type;
	uint64_t nsamples, nlost, nthrottled, nbad, noverflow;
	/* --data */
	struct kp_numa *numa;
	/* --off-cpu */
	struct kp_offcpu *off;
	struct kp_sched_switch layout;
	uint64_t last_round;
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct kp_samplemode *
kp_samplemode_new(const struct kp_samplemode_opts *o, struct kp_procs *procs,
		  struct kp_chains *chains)
{
	struct kp_samplemode *m = kp_xcalloc(1, sizeof(*m));
	char err[512];

	size_t i;
	char name[300];

	m->o = *o;
	m->procs = procs;
	m->chains = chains;
	m->nev = o->nevents ? o->nevents : 1;
	m->ev = kp_xcalloc(m->nev, sizeof(*m->ev));
	m->sets = kp_xcalloc(m->nev, sizeof(*m->sets));
	m->names = kp_xcalloc(m->nev, sizeof(*m->names));
	if (o->modes & KP_SM_OFFCPU) {
		if (kp_event_parse("sched:sched_switch", &m->ev[0], err,
				   sizeof(err)) < 0 ||
		    kp_sched_switch_layout(&m->layout, err, sizeof(err)) < 0)
			kp_die("--off-cpu: %s", err);
		m->off = kp_offcpu_new();
	}
	for (i = 0; !m->off && i < m->nev; i++) {
		if (kp_event_parse(o->nevents ? o->events[i] : "cycles",
				   &m->ev[i], err, sizeof(err)) < 0)
			kp_usage_error("-e: %s", err);
		snprintf(name, sizeof(name), "[%s]", m->ev[i].name);
		m->names[i] = kp_frame_make(0, 0, name, NULL);
	}
	if (o->modes & KP_SM_DATA)
		m->numa = kp_numa_load(NULL);
	return m;
}

void
kp_samplemode_free(struct kp_samplemode *m)
{
	if (!m)
		return;
	kp_offcpu_free(m->off);
	kp_numa_free(m->numa);
	free(m->ev);
	free(m->sets);
	free(m->names);
	free(m->ids);
	free(m);
}

size_t
kp_samplemode_nevents(const struct kp_samplemode *m)
{
	return m->nev;
}

void
kp_samplemode_event(struct kp_samplemode *m, size_t i,
		    struct kp_perfev_set *set)
{
	struct perf_event_attr *a = &set->attr;
	const struct kp_event *ev = &m->ev[i];

	m->sets[i] = set;
	*a = ev->attr;
	set->name = ev->name;
	set->may_fall_back = !m->o.nevents && !(m->o.modes & KP_SM_OFFCPU);
	set->pages = m->o.pages;
	if (i > 0) {
		set->leader = m->sets[0];
		set->next = m->sets[0]->next;
		m->sets[0]->next = set;
	}
	/* the rate: -c, -F, the event's own period= or freq=, perf's
	 * period 1 for a tracepoint, else the default -F */
	if (m->o.period) {
		a->freq = 0;
		a->sample_period = m->o.period;
	} else if (m->o.freq_given ||
		   (!a->sample_period && !a->freq && !ev->default_period)) {
		a->freq = 1;
		a->sample_freq = m->o.freq;
	} else if (!a->sample_period && !a->freq) {
		a->sample_period = ev->default_period;
	}
	m->sample_type = KP_PERFEV_SAMPLE_BASIC;
	if (m->nev > 1) /* which event: the first field of every sample */
		m->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (m->o.modes & KP_SM_DATA)
		m->sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR |
				  PERF_SAMPLE_DATA_PAGE_SIZE;
	if (m->off) {
		/* times comparable across CPUs and with mono_ns() */
		m->sample_type |= PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		/* following tasks: their switch-ins, with tid and time */
		a->context_switch = m->o.tasks;
		a->sample_id_all = m->o.tasks;
	}
	if ((m->o.modes & KP_SM_DATA) || m->procs) {
		/*
		 * side-band records in time order (kp_perfev_set_read): a
		 * child's fork, exec and exit may be read from the rings of
		 * different CPUs, and taken ring by ring its exec could come
		 * before its fork, which then named it after its parent
		 * (tests/kp-sample/order.sh)
		 */
		m->sample_type |= PERF_SAMPLE_TIME;
		a->sample_id_all = 1;
	}
	a->sample_type = m->sample_type;
	a->disabled = 1;
	a->exclude_callchain_user = !m->o.user;
	a->watermark = 1;
	a->wakeup_watermark =
		(uint32_t)(m->o.pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	a->comm = a->comm_exec = a->task = m->procs != NULL;
	a->mmap = a->mmap2 = m->o.user || (m->o.modes & KP_SM_DATA);
	a->mmap_data = (m->o.modes & KP_SM_DATA) != 0;
	if (m->procs && (m->o.modes & KP_SM_DATA))
		kp_procs_keep_data(m->procs);
}

/* A wait ended: its stack counts its nanoseconds. */
static void
on_span(const struct kp_offcpu_span *sp, void *arg)
{
	struct kp_samplemode *m = arg;
	struct kp_perfev_sample s;
	const struct kp_frame *state[1];
	char name[8];

	memset(&s, 0, sizeof(s));
	s.pid = sp->pid;
	s.tid = sp->tid;
	s.ips = (const unsigned char *)sp->ips;
	s.nr = sp->n;
	s.mode = PERF_RECORD_MISC_KERNEL;
	snprintf(name, sizeof(name), "[%c]", sp->state ? sp->state : '?');
	state[0] = kp_frame_make(0, 0, name, NULL);
	if (kp_chains_add_outer(m->chains, &s, sp->ns, state,
				(m->o.modes & KP_SM_STATE) ? 1 : 0) == 0)
		m->nsamples++;
	else
		m->noverflow++;
}

static int
cmp_id(const void *a, const void *b)
{
	const struct id_ev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The event a sample id belongs to (m->nev if none). */
static size_t
event_of(struct kp_samplemode *m, uint64_t id)
{
	struct id_ev key = { id, 0 }, *e;
	size_t i, k;

	if (!m->ids) { /* the events are open by the first sample */
		for (i = 0; i < m->nev; i++)
			m->nids += m->sets[i]->nfds;
		m->ids = kp_xcalloc(m->nids ? m->nids : 1, sizeof(*m->ids));
		for (i = 0, m->nids = 0; i < m->nev; i++)
			for (k = 0; k < m->sets[i]->nfds; k++)
				m->ids[m->nids++] =
					(struct id_ev){ m->sets[i]->ids[k], i };
		qsort(m->ids, m->nids, sizeof(*m->ids), cmp_id);
	}
	e = bsearch(&key, m->ids, m->nids, sizeof(*m->ids), cmp_id);
	return e ? e->ev : m->nev;
}

void
kp_samplemode_record(const struct perf_event_header *h, void *arg)
{
	struct kp_samplemode *m = arg;
	struct kp_perfev_sample s;
	const struct kp_frame *outer[4];
	size_t n = 0, ev = 0;

	if (h->type != PERF_RECORD_SAMPLE) {
		if (!m->off || !kp_offcpu_switch_record(m->off, h,
							m->sample_type))
			kp_perfev_count_loss(h, &m->nlost, &m->nthrottled);
		return;
	}
	if (kp_perfev_sample_parse_as(h, m->sample_type, &s) < 0 ||
	    (m->nev > 1 && (ev = event_of(m, s.id)) == m->nev)) {
		m->nbad++;
		return;
	}
	if (m->off) {
		if (kp_offcpu_sched_switch(m->off, &m->layout, &s,
					   !m->o.tasks) < 0)
			m->nbad++;
		return;
	}
	if (m->nev > 1)
		outer[n++] = m->names[ev];
	if (m->o.modes & KP_SM_DATA)
		n += kp_dataaddr_frames(m->procs, m->numa, &s, outer + n);
	if (kp_chains_add_outer(m->chains, &s, 1, outer, n) == 0)
		m->nsamples++;
	else
		m->noverflow++;
}

void
kp_samplemode_round(struct kp_samplemode *m)
{
	uint64_t now = mono_ns();

	/*
	 * Every event before the previous round began has been read by
	 * now (each ring was read since): those go in, in time order.
	 */
	if (m->off && m->last_round)
		kp_offcpu_flush(m->off, m->last_round, on_span, m);
	m->last_round = now;
}

void
kp_samplemode_finish(struct kp_samplemode *m)
{
	if (m->off)
		kp_offcpu_finish(m->off, mono_ns(), on_span, m);
}

const uint64_t *
kp_samplemode_samples(const struct kp_samplemode *m)
{
	return &m->nsamples;
}

const uint64_t *
kp_samplemode_lost(const struct kp_samplemode *m)
{
	return &m->nlost;
}

void
kp_samplemode_meta(struct kp_samplemode *m)
{
	const struct perf_event_attr *a = &m->sets[0]->attr;
	char names[4096];
	size_t i, len = 0;

	m->nbad += kp_perfev_set_bad(m->sets[0]);
	if (m->nlost)
		kp_warn("%" PRIu64 " samples lost (ring buffer full): use "
			"-m to give it more pages, or a lower -F",
			m->nlost);
	if (m->nthrottled)
		kp_warn("the kernel throttled sampling %" PRIu64 " time%s (its "
			"interrupts took too long): use a lower -F",
			m->nthrottled, m->nthrottled == 1 ? "" : "s");
	if (m->nbad)
		kp_warn("%" PRIu64 " malformed records skipped", m->nbad);
	if (m->noverflow)
		kp_warn("%" PRIu64 " samples skipped: their stack's count "
			"would pass 2^64", m->noverflow);
	for (i = 0, names[0] = '\0'; i < m->nev && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len,
					"%s%s", i ? ", " : "",
					m->sets[i]->name);
	kp_meta_set("event", "%s%s", names,
		    m->sets[0]->fell_back
			    ? " (cycles not supported: no hardware PMU)"
			    : "");
	if (m->nev > 1)
		kp_meta_set("events", "each its own profile, under [EVENT] "
			    "as the outermost frame");
	if (a->freq)
		kp_meta_set("frequency", "%" PRIu64, (uint64_t)a->sample_freq);
	else
		kp_meta_set("period", "%" PRIu64, (uint64_t)a->sample_period);
	kp_meta_set("weight", m->off ? "off-cpu-ns" : "samples");
	if (m->o.modes & KP_SM_DATA)
		kp_meta_set("data", "mapping%s%s",
			    a->sample_type & PERF_SAMPLE_DATA_PAGE_SIZE
				    ? ", page size"
				    : "",
			    m->numa ? ", NUMA node" : "");
	kp_meta_set("samples", "%" PRIu64, m->nsamples);
	kp_meta_set("lost", "%" PRIu64, m->nlost);
	kp_meta_set("throttled", "%" PRIu64, m->nthrottled);
	if (m->off) {
		const struct kp_offcpu_stats *st = kp_offcpu_stats(m->off);

		kp_meta_set("off-cpu", "%" PRIu64 " waits, %" PRIu64
			    " still waiting at the end, %" PRIu64
			    " switch-ins of waits begun before",
			    st->spans, st->open, st->unmatched);
	}
}
