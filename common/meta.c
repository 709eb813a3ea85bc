/* meta.c - "# key: value" metadata lines, kept in order of appearance */
#include <stdlib.h>
#include <string.h>

#include "meta.h"

static char **lines;
static size_t nlines, caplines;

/* The key of "# key: value" is the text up to ':' (blanks trimmed). */
static size_t
key_span(const char *line, const char **key)
{
	const char *p = line + 1, *c;

	while (*p == ' ' || *p == '\t')
		p++;
	c = strchr(p, ':');
	*key = p;
	return c ? (size_t)(c - p) : 0;
}

static void
append(char *copy)
{
	if (nlines == caplines) {
		caplines = caplines ? caplines * 2 : 16;
		lines = kp_xrealloc(lines, caplines * sizeof(*lines));
	}
	lines[nlines++] = copy;
}

void
kp_meta_add_line(const char *line, size_t len)
{
	size_t i;

	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
		       line[len - 1] == '\r'))
		len--;
	if (memchr(line, '\0', len))
		return;
	for (i = 0; i < nlines; i++)
		if (strlen(lines[i]) == len && memcmp(lines[i], line, len) == 0)
			return;
	append(kp_xstrndup(line, len));
}

void
kp_meta_set(const char *key, const char *fmt, ...)
{
	char *value, *line;
	const char *k;
	size_t i, klen = strlen(key);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&value, fmt, ap);
	va_end(ap);
	if (n < 0)
		kp_die("out of memory");
	if (asprintf(&line, "# %s: %s", key, value) < 0)
		kp_die("out of memory");
	free(value);
	for (i = 0; i < nlines; i++)
		if (key_span(lines[i], &k) == klen &&
		    memcmp(k, key, klen) == 0) {
			free(lines[i]);
			lines[i] = line;
			return;
		}
	append(line);
}

const char *
kp_meta_get(const char *key)
{
	const char *k, *v;
	size_t i, klen = strlen(key);

	for (i = 0; i < nlines; i++)
		if (key_span(lines[i], &k) == klen &&
		    memcmp(k, key, klen) == 0) {
			v = k + klen + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
	return NULL;
}

void
kp_meta_clear(void)
{
	size_t i;

	for (i = 0; i < nlines; i++)
		free(lines[i]);
	nlines = 0;
}

size_t
kp_meta_count(void)
{
	return nlines;
}

const char *
kp_meta_line(size_t i)
{
	return i < nlines ? lines[i] : NULL;
}

/*
 * The software clock events count time: their period is nanoseconds.
 * A prefix, as the event is written ("cpu-clock:u", "task-clock:ppp",
 * "cpu-clock (cycles not supported: no hardware PMU)").
 */
bool
kp_event_period_is_ns(const char *event)
{
	return event && (strncmp(event, "cpu-clock", 9) == 0 ||
			 strncmp(event, "task-clock", 10) == 0);
}

/* "# event:" names a clock event: its period is nanoseconds */
static bool
clock_event(void)
{
	return kp_event_period_is_ns(kp_meta_get("event"));
}

bool
kp_meta_counts_ns(void)
{
	const char *w = kp_meta_get("weight");

	return w && ((strcmp(w, "period") == 0 && clock_event()) ||
		     strcmp(w, "off-cpu-ns") == 0);
}

uint64_t
kp_meta_clock_period(void)
{
	const char *w = kp_meta_get("weight"), *p = kp_meta_get("period");
	uint64_t period;

	if (w && strcmp(w, "samples") == 0 && clock_event() && p &&
	    kp_parse_u64(p, strlen(p), 10, &period) == 0)
		return period;
	return 0;
}
