/*
 * events.h - event names, as perf(1) accepts them, to perf_event_attr.
 *
 *	struct kp_event ev;
 *	char err[256];
 *
 *	if (kp_event_parse("sched:sched_switch", &ev, err, sizeof(err)) < 0)
 *		kp_usage_error("-e: %s", err);
 *	fd = kp_perfev_open(&ev.attr, -1, cpu, -1);
 *
 * The forms (perf-list(1) names them the same way):
 *	cycles, instructions, cache-misses, ...	hardware (PERF_TYPE_HARDWARE)
 *	L1-dcache-load-misses, dTLB-loads, ...	hardware cache: perf's matrix
 *	cpu-clock, page-faults, cs, ...		software
 *	subsys:name				a tracepoint, its id from tracefs
 *	pmu/term=value,.../			a PMU of sysfs, its terms from
 *						/sys/bus/event_source/devices/
 *						PMU/format, aliases from events/
 *	pmu/alias/ or a bare alias (mem-loads)	an event of PMU/events/
 *	rHEX					a raw PMU event (PERF_TYPE_RAW)
 * each optionally followed by ":MODS" (a PMU event also by "/MODS"):
 * u, k, h count in user, kernel, hypervisor mode only (several add up),
 * G, H in guest or host, I excludes idle, p, pp, ppp ask for precise
 * samples.
 *
 * The library prints nothing: errors are a sentence in err, naming the
 * event and, where there is one, the fix.
 */
#ifndef KP_EVENTS_H
#define KP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/perf_event.h>

enum kp_event_kind {
	KP_EVENT_HARDWARE,
	KP_EVENT_CACHE,
	KP_EVENT_SOFTWARE,
	KP_EVENT_TRACEPOINT,
	KP_EVENT_PMU,
	KP_EVENT_RAW,
};

struct kp_event {
	char name[256];   /* as typed, or the PMU term name= */
	enum kp_event_kind kind;
	/*
	 * size, type, config, config1, config2, the exclude_* bits and
	 * precise_ip; sample_period or sample_freq only where the event
	 * names one (a PMU term period= or freq=).  The caller sets the
	 * rest.
	 */
	struct perf_event_attr attr;
	/* a tracepoint counts every hit unless asked: perf's period 1 */
	uint64_t default_period;
};

/*
 * Parse one event spec into *ev.  Returns 0, or -1 with a message in
 * err ("unknown event 'x'", "tracefs is not mounted: mount it with
 * ...", "PMU 'cpu' has no term 'foo' (its terms: ...)", ...).
 */
int kp_event_parse(const char *spec, struct kp_event *ev, char *err,
		   size_t errlen);

/* The kind as perf-list(1) names it: "Hardware event", "Tracepoint event"... */
const char *kp_event_kind_name(enum kp_event_kind kind);

/*
 * Whether this machine can open the event: perf_event_open(2) on the
 * calling thread, counting user mode only, disabled, then closed.
 * Returns 0 or the errno it failed with (ENOENT: no such hardware).
 */
int kp_event_probe(const struct kp_event *ev);

/*
 * Where a tracepoint field lies in the event's RAW data, from
 * tracefs's events/SUBSYS/NAME/format: "sched:sched_switch" and
 * "prev_pid" give offset 24, size 4 on x86-64.  Returns 0, or -1 with a
 * message in err.
 */
int kp_tracepoint_field(const char *tracepoint, const char *field,
			unsigned *offset, unsigned *size, char *err,
			size_t errlen);

/*
 * Print what this machine offers, one event a line in perf-list(1)'s
 * layout: hardware and hardware cache events (each marked "not
 * supported here" where perf_event_open refuses it), software events,
 * the raw and PMU forms, every alias of every PMU in sysfs, and every
 * tracepoint in tracefs (or a line saying how to mount tracefs).
 * Returns the number of events listed.
 */
size_t kp_events_list(FILE *fp);

/*
 * Look for PMUs in devices (instead of /sys/bus/event_source/devices)
 * and for tracefs at tracefs (instead of /sys/kernel/tracing, then
 * /sys/kernel/debug/tracing); NULL keeps the default.  For tests.
 */
void kp_events_set_roots(const char *devices, const char *tracefs);

#endif /* KP_EVENTS_H */
