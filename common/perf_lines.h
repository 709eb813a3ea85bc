/*
 * perf_lines.h - the lines of perf script text other than frame lines
 * (perf_lines.c): what a sample header holds, read by the converter
 * (conv_perf.c) at every sample, and by the kind checks that tell perf
 * script text from folded stacks and other text.
 */
#ifndef KP_PERF_LINES_H
#define KP_PERF_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scan.h"

/* A sample header's fields: pointers into the line, NULL where absent. */
struct kp_perf_hdr {
	const char *comm, *comme, *pid, *pide, *tid, *tide, *ev, *eve;
	const char *rest, *reste; /* after the event: the frame without -g */
	uint64_t period;
	bool has_period;
	bool period_bad; /* digits where the period goes, past 2^64 */
};

/*
 * s[0..len) (trimmed) a sample header, "comm [pid/]tid [cpu] [time:]
 * [period] event[:mods]:" and what follows: its fields into *h; false
 * for any other line, side-band records included.
 */
bool kp_perf_header(const char *s, size_t len, struct kp_perf_hdr *h);
/* kp_perf_header for a line with 64 bytes readable from s (a chunk's
 * buffer): the same answer, faster. */
bool kp_perf_header_pad(const char *s, size_t len, struct kp_perf_hdr *h);
/* A side-band record's line (perf script --show-mmap-events ...). */
bool kp_perf_sideband(const char *s, size_t n);
/* A header without time and event (-F tid,ip,sym ...): "[comm] PID[/TID]
 * [[cpu]]". */
bool kp_perf_loose_header(const char *s, size_t n, struct kp_perf_hdr *h);

/* Comments; -F +srccode's source lines: "|42   code" (trimmed line). */
static inline bool
kp_perf_passed_over(const char *s, size_t n)
{
	return *s == '#' || (*s == '|' && n > 1 && kp_conv_digit(s[1]));
}

/* A sample header or side-band line of 'perf script' (trimmed line). */
bool kp_perf_script_line(const char *s, size_t n);
/* A line of folded stacks, "a;b;c COUNT" (trimmed line). */
bool kp_folded_line(const char *s, size_t n);

#endif
