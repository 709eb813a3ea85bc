/*
 * meta.h - "# key: value" metadata (meta.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_META_H
#define KP_META_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/*
 * Metadata lines read from inputs (or added by a filter) in order of
 * first appearance; a line equal to one already held is not added
 * twice.  kp_meta_set replaces the value of a key or appends it.
 */
void kp_meta_add_line(const char *line, size_t len);
void kp_meta_set(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The value of key (the text after "# key: "), or NULL. */
const char *kp_meta_get(const char *key);
size_t kp_meta_count(void);
/* Forget every metadata line (a fresh start, as for each fuzz input). */
void kp_meta_clear(void);
const char *kp_meta_line(size_t i); /* "# key: value", no newline */
/*
 * True when the period of event (a "# event:" value such as
 * "cpu-clock" or "task-clock:u") is in nanoseconds: the software clock
 * events.  The one place that rule is decided.
 */
bool kp_event_period_is_ns(const char *event);
/*
 * What the counts are, for every filter: with "# weight: period" on a
 * clock event (kp_event_period_is_ns) they are nanoseconds, and with
 * "# weight: off-cpu-ns" (kp-sample --off-cpu).
 */
bool kp_meta_counts_ns(void);
/* With "# weight: samples" on a clock event and a fixed "# period: N":
 * N, the nanoseconds each sample stands for; else 0. */
uint64_t kp_meta_clock_period(void);

#endif /* KP_META_H */
