/* events.c - event names, as perf(1) accepts them, to perf_event_attr */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events.h"
#include "kp.h"

#define DEVICES "/sys/bus/event_source/devices"
#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_DEBUG "/sys/kernel/debug/tracing"
#define MOUNT_HINT "mount it with 'mount -t tracefs nodev " TRACEFS "'"

static const char *root_devices, *root_tracefs;

void
kp_events_set_roots(const char *devices, const char *tracefs)
{
	root_devices = devices;
	root_tracefs = tracefs;
}

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the named events: perf's tables (tools/perf/util/parse-events.c) ---- */

struct named {
	const char *name, *alias;
	uint32_t type;
	uint64_t config;
};

static const struct named named[] = {
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "bpf-output", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT },
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CGROUP_SWITCHES },
};
#define NNAMED (sizeof(named) / sizeof(named[0]))

/*
 * Hardware cache events: TYPE[-OP][-RESULT] (OP and RESULT in either
 * order), each word one of its aliases, in any case; OP defaults to
 * read, RESULT to access.  The first alias of each is the name perf
 * list prints, the second of OP its plural ("L1-dcache-loads").
 */
#define NALIAS 5
static const char *const cache_type[PERF_COUNT_HW_CACHE_MAX][NALIAS] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data" },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction" },
	{ "LLC", "L2" },
	{ "dTLB", "d-tlb", "Data-TLB" },
	{ "iTLB", "i-tlb", "Instruction-TLB" },
	{ "branch", "branches", "bpu", "btb", "bpc" },
	{ "node" },
};
static const char *const cache_op[PERF_COUNT_HW_CACHE_OP_MAX][NALIAS] = {
	{ "load", "loads", "read" },
	{ "store", "stores", "write" },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_result[PERF_COUNT_HW_CACHE_RESULT_MAX][NALIAS] = {
	{ "refs", "Reference", "ops", "access" },
	{ "misses", "miss" },
};
/* which operations each cache can count (perf's evsel__hw_cache_stat) */
#define OPS_ALL 7u
static const unsigned cache_ops_valid[PERF_COUNT_HW_CACHE_MAX] = {
	OPS_ALL, 1u | 4u, OPS_ALL, OPS_ALL, 1u, 1u, OPS_ALL,
};

/*
 * The longest alias of table[0..n) that s starts with, followed by '-'
 * or the end: its index, the length in *len; -1 if none.
 */
static int
match_alias(const char *s, const char *const (*table)[NALIAS], int n,
	    size_t *len)
{
	int i, j, best = -1;
	size_t l;

	*len = 0;
	for (i = 0; i < n; i++)
		for (j = 0; j < NALIAS && table[i][j]; j++) {
			l = strlen(table[i][j]);
			if (l > *len && strncasecmp(s, table[i][j], l) == 0 &&
			    (s[l] == '-' || s[l] == '\0')) {
				best = i;
				*len = l;
			}
		}
	return best;
}

/* 1 and *config if name is a cache event, 0 if not one, -1 if invalid. */
static int
parse_cache(const char *name, uint64_t *config, char *err, size_t errlen)
{
	int type, op = -1, res = -1, k, w;
	size_t len;
	const char *s = name;

	type = match_alias(s, cache_type, PERF_COUNT_HW_CACHE_MAX, &len);
	if (type < 0)
		return 0;
	s += len;
	for (w = 0; *s && w < 2; w++) {
		s++; /* the '-' */
		if (op < 0 &&
		    (k = match_alias(s, cache_op, PERF_COUNT_HW_CACHE_OP_MAX,
				     &len)) >= 0)
			op = k;
		else if (res < 0 &&
			 (k = match_alias(s, cache_result,
					  PERF_COUNT_HW_CACHE_RESULT_MAX,
					  &len)) >= 0)
			res = k;
		else
			return 0;
		s += len;
	}
	if (*s)
		return 0;
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (res < 0)
		res = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!(cache_ops_valid[type] & (1u << op)))
		return fail(err, errlen,
			    "'%s': the %s cache cannot count %s (perf has no "
			    "such event)",
			    name, cache_type[type][0], cache_op[op][1]);
	*config = (uint64_t)type | (uint64_t)op << 8 | (uint64_t)res << 16;
	return 1;
}

/* ---- files of sysfs and tracefs ---- */

/* Read a small text file whole, NUL-terminated, trailing blanks cut. */
static int
read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t len = 0;

	if (fd < 0)
		return -1;
	while (len + 1 < size &&
	       (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	while (len && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	return 0;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The tracefs directory holding events/, or NULL with why in err:
 * not mounted (and how to mount it), or not readable.
 */
static const char *
tracefs_dir(char *err, size_t errlen)
{
	static const char *const dflt[] = { TRACEFS, TRACEFS_DEBUG };
	char path[PATH_MAX];
	size_t i;

	if (root_tracefs) {
		snprintf(path, sizeof(path), "%s/events", root_tracefs);
		if (is_dir(path))
			return root_tracefs;
		fail(err, errlen, "tracefs is not mounted at %s: %s",
		     root_tracefs, MOUNT_HINT);
		return NULL;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events", dflt[i]);
		if (is_dir(path))
			return dflt[i];
		if (errno == EACCES) {
			fail(err, errlen,
			     "%s: permission denied (tracepoints need root)",
			     path);
			return NULL;
		}
	}
	fail(err, errlen, "tracefs is not mounted: %s", MOUNT_HINT);
	return NULL;
}

/* A tracepoint's subsystem and name: "sched:sched_switch" */
static int
split_tracepoint(const char *tp, char *sys, char *name, size_t size,
		 char *err, size_t errlen)
{
	const char *c = strchr(tp, ':');
	const char *p;

	if (!c || c == tp || !c[1] || (size_t)(c - tp) >= size ||
	    strlen(c + 1) >= size)
		return fail(err, errlen, "'%s' is not a tracepoint name "
			    "(subsystem:event)", tp);
	for (p = tp; *p; p++)
		if (p != c && !(isalnum((unsigned char)*p) || *p == '_' ||
				*p == '-' || *p == '.'))
			return fail(err, errlen,
				    "'%s': a tracepoint name has letters, "
				    "digits, '_', '-' and '.' only", tp);
	memcpy(sys, tp, (size_t)(c - tp));
	sys[c - tp] = '\0';
	strcpy(name, c + 1);
	return 0;
}

/* Read events/SYS/NAME/FILE of tracefs into buf. */
static int
tracepoint_file(const char *tp, const char *file, char *buf, size_t size,
		char *err, size_t errlen)
{
	char sys[128], name[128], path[PATH_MAX], why[512];
	const char *dir;

	if (split_tracepoint(tp, sys, name, sizeof(sys), err, errlen) < 0)
		return -1;
	if (!(dir = tracefs_dir(why, sizeof(why))))
		return fail(err, errlen, "tracepoint '%s': %s", tp, why);
	snprintf(path, sizeof(path), "%s/events/%s/%s/%s", dir, sys, name,
		 file);
	if (read_small(path, buf, size) == 0)
		return 0;
	if (errno == ENOENT)
		return fail(err, errlen,
			    "no tracepoint '%s' (none in %s/events/%s/)", tp,
			    dir, sys);
	return fail(err, errlen, "tracepoint '%s': %s: %s", tp, path,
		    strerror(errno));
}

int
kp_tracepoint_field(const char *tp, const char *field, unsigned *offset,
		    unsigned *size, char *err, size_t errlen)
{
	static char buf[65536];
	const char *p, *semi, *name;
	size_t flen = strlen(field), nlen;
	unsigned off, sz;

	if (tracepoint_file(tp, "format", buf, sizeof(buf), err, errlen) < 0)
		return -1;
	/* "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;" */
	for (p = buf; (p = strstr(p, "field:")) != NULL; p++) {
		if (!(semi = strchr(p, ';')))
			break;
		name = semi;
		while (name > p && name[-1] == ']')
			while (name > p && *--name != '[')
				;
		nlen = 0;
		while (name > p && (isalnum((unsigned char)name[-1]) ||
				    name[-1] == '_')) {
			name--;
			nlen++;
		}
		if (nlen != flen || memcmp(name, field, flen) != 0)
			continue;
		if (sscanf(semi, "; offset:%u; size:%u;", &off, &sz) != 2)
			break;
		*offset = off;
		*size = sz;
		return 0;
	}
	return fail(err, errlen, "tracepoint '%s' has no field '%s'", tp,
		    field);
}

/* ---- PMUs of sysfs ---- */

/* Parse a number as perf's lexer does: 0x hexadecimal, else decimal. */
static int
parse_num(const char *s, size_t len, uint64_t *v)
{
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return kp_parse_u64(s + 2, len - 2, 16, v);
	return kp_parse_u64(s, len, 10, v);
}

/* Scatter the low bits of v over the set bits of mask; -1 if v is wider. */
static int
scatter(uint64_t v, uint64_t mask, __u64 *out)
{
	int b;

	for (b = 0; b < 64; b++)
		if (mask & (1ull << b)) {
			if (v & 1)
				*out |= 1ull << b;
			v >>= 1;
		}
	return v ? -1 : 0;
}

/* "config1:0-7,32" into the field (0, 1, 2) and its bit mask */
static int
parse_format(const char *s, int *field, uint64_t *mask)
{
	unsigned lo, hi;
	int n;

	if (strncmp(s, "config", 6) != 0)
		return -1;
	s += 6;
	*field = 0;
	if (*s == '1' || *s == '2')
		*field = *s++ - '0';
	if (*s++ != ':')
		return -1;
	*mask = 0;
	for (;;) {
		if (sscanf(s, "%u%n", &lo, &n) != 1)
			return -1;
		s += n;
		hi = lo;
		if (*s == '-' && sscanf(s + 1, "%u%n", &hi, &n) == 1)
			s += 1 + n;
		if (lo > hi || hi > 63)
			return -1;
		*mask |= (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) &
			 ~((1ull << lo) - 1);
		if (*s != ',')
			break;
		s++;
	}
	return *s ? -1 : 0;
}

/* The names of the files in dir, space-separated, into buf. */
static void
dir_names(const char *dir, char *buf, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t len = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strchr(de->d_name, '.'))
			continue;
		if (len + strlen(de->d_name) + 2 >= size)
			break;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					len ? " " : "", de->d_name);
	}
	closedir(d);
}

static const char *
devices_dir(void)
{
	return root_devices ? root_devices : DEVICES;
}

static int apply_terms(const char *pmu, const char *terms, size_t len,
		       struct kp_event *ev, int depth, char *err,
		       size_t errlen);

/* One term of PMU's event: name[=value] */
static int
apply_term(const char *pmu, const char *t, size_t len, struct kp_event *ev,
	   int depth, char *err, size_t errlen)
{
	char term[128], path[PATH_MAX], buf[4096];
	const char *eq = memchr(t, '=', len);
	size_t tlen = eq ? (size_t)(eq - t) : len;
	const char *val = eq ? eq + 1 : NULL;
	size_t vlen = eq ? len - tlen - 1 : 0;
	uint64_t v = 1, mask;
	__u64 *cfg;
	int field;

	if (tlen == 0 || tlen >= sizeof(term))
		return fail(err, errlen, "'%s': an empty or overlong term",
			    ev->name);
	memcpy(term, t, tlen);
	term[tlen] = '\0';
	if (strcmp(term, "name") == 0) {
		if (!val || vlen == 0 || vlen >= sizeof(ev->name))
			return fail(err, errlen, "'%s': name= needs a value",
				    ev->name);
		memcpy(ev->name, val, vlen);
		ev->name[vlen] = '\0';
		return 0;
	}
	if (val && parse_num(val, vlen, &v) < 0)
		return fail(err, errlen,
			    "'%s': term '%s': '%.*s' is not a number "
			    "(decimal, or hex with 0x)",
			    ev->name, term, (int)vlen, val);
	if (strcmp(term, "config") == 0 || strcmp(term, "config1") == 0 ||
	    strcmp(term, "config2") == 0) {
		cfg = term[6] == '1'   ? &ev->attr.config1
		      : term[6] == '2' ? &ev->attr.config2
				       : &ev->attr.config;
		*cfg = v;
		return 0;
	}
	if (strcmp(term, "period") == 0) {
		ev->attr.freq = 0;
		ev->attr.sample_period = v;
		return 0;
	}
	if (strcmp(term, "freq") == 0) {
		ev->attr.freq = 1;
		ev->attr.sample_freq = v;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s/format/%s", devices_dir(), pmu,
		 term);
	if (read_small(path, buf, sizeof(buf)) == 0) {
		if (parse_format(buf, &field, &mask) < 0)
			return fail(err, errlen, "%s: cannot read '%s'",
				    path, buf);
		cfg = field == 1   ? &ev->attr.config1
		      : field == 2 ? &ev->attr.config2
				   : &ev->attr.config;
		*cfg &= ~mask;
		if (scatter(v, mask, cfg) < 0)
			return fail(err, errlen,
				    "'%s': %s=%.*s does not fit the term's "
				    "%d bits (%s)",
				    ev->name, term, (int)vlen, val,
				    __builtin_popcountll(mask), buf);
		return 0;
	}
	/* an alias: events/TERM holds terms of its own */
	snprintf(path, sizeof(path), "%s/%s/events/%s", devices_dir(), pmu,
		 term);
	if (!val && depth == 0 && read_small(path, buf, sizeof(buf)) == 0)
		return apply_terms(pmu, buf, strlen(buf), ev, depth + 1, err,
				   errlen);
	snprintf(path, sizeof(path), "%s/%s/format", devices_dir(), pmu);
	dir_names(path, buf, sizeof(buf));
	return fail(err, errlen,
		    "'%s': PMU '%s' has no term or event '%s' (its terms: %s; "
		    "its events: kp-sample --list)",
		    ev->name, pmu, term, buf[0] ? buf : "none");
}

static int
apply_terms(const char *pmu, const char *terms, size_t len,
	    struct kp_event *ev, int depth, char *err, size_t errlen)
{
	const char *p = terms, *end = terms + len, *c;

	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		c = memchr(p, ',', (size_t)(end - p));
		if (!c)
			c = end;
		len = (size_t)(c - p);
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len && apply_term(pmu, p, len, ev, depth, err, errlen) < 0)
			return -1;
		p = c + 1;
	}
	return 0;
}

/* The type of PMU from sysfs, or -1 with a message naming the PMUs. */
static int
pmu_type(const char *spec, const char *pmu, uint32_t *type, char *err,
	 size_t errlen)
{
	char path[PATH_MAX], buf[4096];
	uint64_t v;

	snprintf(path, sizeof(path), "%s/%s/type", devices_dir(), pmu);
	if (strchr(pmu, '/') == NULL && pmu[0] != '.' &&
	    read_small(path, buf, sizeof(buf)) == 0 &&
	    kp_parse_u64(buf, strlen(buf), 10, &v) == 0 && v <= UINT32_MAX) {
		*type = (uint32_t)v;
		return 0;
	}
	dir_names(devices_dir(), buf, sizeof(buf));
	return fail(err, errlen,
		    "'%s': no PMU '%s' in %s (this machine has: %s)", spec, pmu,
		    devices_dir(), buf[0] ? buf : "none");
}

/* "pmu/terms/": *rest is left at what follows the closing '/' */
static int
parse_pmu(const char *spec, const char **rest, struct kp_event *ev,
	  char *err, size_t errlen)
{
	const char *slash = strchr(spec, '/'), *close;
	char pmu[128];

	if (!slash || slash == spec || (size_t)(slash - spec) >= sizeof(pmu) ||
	    !(close = strchr(slash + 1, '/')))
		return fail(err, errlen,
			    "'%s' is not a PMU event (pmu/term=value,.../)",
			    spec);
	memcpy(pmu, spec, (size_t)(slash - spec));
	pmu[slash - spec] = '\0';
	if (pmu_type(spec, pmu, &ev->attr.type, err, errlen) < 0)
		return -1;
	ev->kind = KP_EVENT_PMU;
	if (apply_terms(pmu, slash + 1, (size_t)(close - slash - 1), ev, 0,
			err, errlen) < 0)
		return -1;
	*rest = close + 1;
	return 0;
}

/* A bare alias of some PMU's events/ ("mem-loads"): 1 if found. */
static int
parse_alias(const char *name, struct kp_event *ev, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[4096];
	DIR *d;
	struct dirent *de;
	int found = 0;

	if (strchr(name, '/') || name[0] == '.' || !(d = opendir(devices_dir())))
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events/%s", devices_dir(),
			 de->d_name, name);
		if (read_small(path, buf, sizeof(buf)) < 0)
			continue;
		found = 1;
		if (pmu_type(name, de->d_name, &ev->attr.type, err, errlen) <
			    0 ||
		    apply_terms(de->d_name, buf, strlen(buf), ev, 1, err,
				errlen) < 0)
			found = -1;
		ev->kind = KP_EVENT_PMU;
	}
	closedir(d);
	return found;
}

/* ---- modifiers, and the whole spec ---- */

static int
apply_modifiers(const char *mods, struct kp_event *ev, char *err,
		size_t errlen)
{
	bool u = false, k = false, h = false, g = false, hst = false;
	const char *m;

	for (m = mods; *m; m++)
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'G': g = true; break;
		case 'H': hst = true; break;
		case 'I': ev->attr.exclude_idle = 1; break;
		case 'p':
			if (ev->attr.precise_ip == 3)
				return fail(err, errlen,
					    "'%s': at most 'ppp'", ev->name);
			ev->attr.precise_ip++;
			break;
		default:
			return fail(err, errlen,
				    "'%s': unknown modifier '%c' (kp knows "
				    "u, k, h, G, H, I and p)",
				    ev->name, *m);
		}
	if (u || k || h) {
		ev->attr.exclude_user = !u;
		ev->attr.exclude_kernel = !k;
		ev->attr.exclude_hv = !h;
	}
	if (g || hst) {
		ev->attr.exclude_guest = !g;
		ev->attr.exclude_host = !hst;
	}
	return 0;
}

/* Every form but a tracepoint and a PMU's pmu/.../: 1 found, 0 not, -1 bad */
static int
parse_plain(const char *name, struct kp_event *ev, char *err, size_t errlen)
{
	size_t i;
	uint64_t config;
	int r;

	for (i = 0; i < NNAMED; i++)
		if (strcmp(name, named[i].name) == 0 ||
		    (named[i].alias && strcmp(name, named[i].alias) == 0)) {
			ev->attr.type = named[i].type;
			ev->attr.config = named[i].config;
			ev->kind = named[i].type == PERF_TYPE_HARDWARE
					   ? KP_EVENT_HARDWARE
					   : KP_EVENT_SOFTWARE;
			return 1;
		}
	if ((r = parse_cache(name, &config, err, errlen)) != 0) {
		ev->attr.type = PERF_TYPE_HW_CACHE;
		ev->attr.config = config;
		ev->kind = KP_EVENT_CACHE;
		return r;
	}
	/* rHEX: perf's raw event, r1a8 */
	if (name[0] == 'r' && name[1] &&
	    strspn(name + 1, "0123456789abcdefABCDEF") == strlen(name + 1) &&
	    kp_parse_u64(name + 1, strlen(name + 1), 16, &config) == 0) {
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = config;
		ev->kind = KP_EVENT_RAW;
		return 1;
	}
	return parse_alias(name, ev, err, errlen);
}

int
kp_event_parse(const char *spec, struct kp_event *ev, char *err,
	       size_t errlen)
{
	char base[256], id[64];
	const char *colon, *rest = "", *first;
	uint64_t v;
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	if (!*spec)
		return fail(err, errlen, "an empty event name");
	if (strlen(spec) >= sizeof(ev->name))
		return fail(err, errlen, "event name too long: '%.40s...'",
			    spec);
	strcpy(ev->name, spec);

	/* pmu/terms/[mods] or pmu/terms/:mods */
	if (strchr(spec, '/')) {
		if (parse_pmu(spec, &rest, ev, err, errlen) < 0)
			return -1;
		if (*rest == ':')
			rest++;
		return apply_modifiers(rest, ev, err, errlen);
	}

	/* NAME[:MODS], SUBSYS:NAME or SUBSYS:NAME:MODS */
	colon = strrchr(spec, ':');
	first = strchr(spec, ':');
	snprintf(base, sizeof(base), "%s", spec);
	if (colon && colon != first) {
		base[colon - spec] = '\0';
		rest = colon + 1;
	} else {
		if (colon)
			base[colon - spec] = '\0';
		if ((r = parse_plain(base, ev, err, errlen)) < 0)
			return -1;
		if (r > 0)
			return apply_modifiers(colon ? colon + 1 : "", ev, err,
					       errlen);
		if (!colon)
			return fail(err, errlen,
				    "unknown event '%s' (kp-sample --list "
				    "shows the events of this machine)",
				    spec);
		snprintf(base, sizeof(base), "%s", spec); /* a tracepoint */
	}
	if (tracepoint_file(base, "id", id, sizeof(id), err, errlen) < 0)
		return -1;
	if (kp_parse_u64(id, strlen(id), 10, &v) < 0)
		return fail(err, errlen, "tracepoint '%s': its id '%s' is not "
			    "a number", base, id);
	ev->kind = KP_EVENT_TRACEPOINT;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = v;
	ev->default_period = 1;
	return apply_modifiers(rest, ev, err, errlen);
}

const char *
kp_event_kind_name(enum kp_event_kind kind)
{
	switch (kind) {
	case KP_EVENT_HARDWARE: return "Hardware event";
	case KP_EVENT_CACHE: return "Hardware cache event";
	case KP_EVENT_SOFTWARE: return "Software event";
	case KP_EVENT_TRACEPOINT: return "Tracepoint event";
	case KP_EVENT_PMU: return "Kernel PMU event";
	case KP_EVENT_RAW: return "Raw hardware event descriptor";
	}
	return "event";
}

int
kp_event_probe(const struct kp_event *ev)
{
	struct perf_event_attr attr = ev->attr;
	long fd;

	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* ---- the list ---- */

static void
list_line(FILE *fp, const char *name, const char *kind, const char *note)
{
	fprintf(fp, "  %-48s [%s%s%s]\n", name, kind, note ? ", " : "",
		note ? note : "");
}

/* A line for a named event, probed. */
static void
list_probed(FILE *fp, const char *shown, const char *name)
{
	struct kp_event ev;
	char err[256];
	int e;

	if (kp_event_parse(name, &ev, err, sizeof(err)) < 0)
		return;
	e = kp_event_probe(&ev);
	list_line(fp, shown, kp_event_kind_name(ev.kind),
		  e == 0                        ? NULL
		  : e == ENOENT || e == EOPNOTSUPP ? "not supported here"
						: strerror(e));
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir (sorted, no dot files), malloc'ed; *n their count. */
static char **
sorted_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		v = kp_xrealloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = kp_xstrdup(de->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void
free_names(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

size_t
kp_events_list(FILE *fp)
{
	char buf[512], path[PATH_MAX], err[512];
	char **pmus, **evs, **subs, **tps;
	size_t i, j, k, np, ne, ns, nt, count = 0;
	int t, op, res;
	const char *dir;

	fputs("Events of this machine (kp-sample -e NAME; man kp-sample):\n\n",
	      fp);
	for (i = 0; i < NNAMED; i++) {
		if (named[i].alias)
			snprintf(buf, sizeof(buf), "%s OR %s", named[i].name,
				 named[i].alias);
		else
			snprintf(buf, sizeof(buf), "%s", named[i].name);
		list_probed(fp, buf, named[i].name);
		count++;
	}
	for (t = 0; t < PERF_COUNT_HW_CACHE_MAX; t++)
		for (op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++) {
			if (!(cache_ops_valid[t] & (1u << op)))
				continue;
			for (res = 0; res < PERF_COUNT_HW_CACHE_RESULT_MAX;
			     res++) {
				if (res == PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					snprintf(buf, sizeof(buf), "%s-%s",
						 cache_type[t][0],
						 cache_op[op][1]);
				else
					snprintf(buf, sizeof(buf), "%s-%s-%s",
						 cache_type[t][0],
						 cache_op[op][0],
						 cache_result[res][0]);
				list_probed(fp, buf, buf);
				count++;
			}
		}
	list_line(fp, "rNNN", kp_event_kind_name(KP_EVENT_RAW), NULL);
	list_line(fp, "PMU/term=value[,term=value...]/[ukhp]", "PMU event",
		  "terms in " DEVICES "/PMU/format");
	count += 2;

	pmus = sorted_names(devices_dir(), &np);
	for (i = 0; i < np; i++) {
		snprintf(path, sizeof(path), "%s/%s/events", devices_dir(),
			 pmus[i]);
		evs = sorted_names(path, &ne);
		for (j = 0; j < ne; j++) {
			if (strchr(evs[j], '.')) /* .scale, .unit */
				continue;
			snprintf(buf, sizeof(buf), "%s/%s/", pmus[i], evs[j]);
			list_line(fp, buf, kp_event_kind_name(KP_EVENT_PMU),
				  NULL);
			count++;
		}
		free_names(evs, ne);
	}
	free_names(pmus, np);

	if (!(dir = tracefs_dir(err, sizeof(err)))) {
		fprintf(fp, "  (tracepoints: %s)\n", err);
		return count;
	}
	snprintf(path, sizeof(path), "%s/events", dir);
	subs = sorted_names(path, &ns);
	for (i = 0; i < ns; i++) {
		snprintf(path, sizeof(path), "%s/events/%s", dir, subs[i]);
		if (!is_dir(path))
			continue;
		tps = sorted_names(path, &nt);
		for (k = 0; k < nt; k++) {
			snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir,
				 subs[i], tps[k]);
			if (access(path, R_OK) != 0)
				continue;
			snprintf(buf, sizeof(buf), "%s:%s", subs[i], tps[k]);
			list_line(fp, buf,
				  kp_event_kind_name(KP_EVENT_TRACEPOINT),
				  NULL);
			count++;
		}
		free_names(tps, nt);
	}
	free_names(subs, ns);
	return count;
}
