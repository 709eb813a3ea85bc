/*
 * perfdata.c - perf.data, read in one pass (see perfdata.h).
 *
 * The layouts, from tools/perf/Documentation/perf.data-file-format.txt
 * and tools/perf/util/header.h:
 *
 *	file mode:  struct perf_file_header {        104 bytes
 *			u64 magic "PERFILE2", u64 size (104), u64 attr_size;
 *			struct perf_file_section attrs, data, event_types;
 *			u64 adds_features[4];  bit N: feature N present }
 *		    attrs: { perf_event_attr (attr_size - 16 bytes);
 *			     perf_file_section ids (u64 ids[]) } ...
 *		    data: records; after it one perf_file_section per
 *		    feature bit set, in bit order
 *	pipe mode:  { u64 magic, u64 size (16) } then records only
 *
 * Every record starts with struct perf_event_header { u32 type;
 * u16 misc; u16 size }, size counting the header.  Each record is
 * copied into an aligned buffer before it is decoded, and every field is
 * read through a cursor that checks the bytes left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata.h"

#define PD_MAGIC 0x32454c4946524550ull /* "PERFILE2" */
#define PD_HDR_SIZE 104
#define PD_PIPE_HDR_SIZE 16
#define PD_MAX_EVENTS 4096
#define PD_MAX_IDS (1u << 20)
#define PD_MAX_FEATURE (64u << 20)
#define PD_MAX_DECOMP (256u << 20)

/* Header features (tools/perf/util/header.h) this reader uses. */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21,
	FEAT_BITS = 256,
};

/* EVENT_UPDATE types (tools/lib/perf/include/perf/event.h). */
#define EVENT_UPDATE_NAME 2
/* build_id_event misc: the build-id's size is in the record. */
#define MISC_BUILD_ID_SIZE (1 << 15)
#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1u << 19)
#endif

/* A name perf gave some ids (EVENT_DESC, EVENT_UPDATE). */
struct desc {
	char *name;
	uint64_t *ids;
	size_t nids;
	size_t index; /* position in EVENT_DESC, for events without ids */
};

struct buildid {
	char *path;
	char hex[41];
	bool kernel;
};

struct kp_pd {
	struct kp_input *in;
	int fd;
	bool pipe;
	char err[256];
	uint64_t pos;	   /* stream offset of the next unread byte */
	uint64_t data_end; /* file mode: end of the data section */
	uint64_t total;	   /* file size (0: not known) */
	struct kp_pd_event *ev;
	size_t nev;
	struct kp_slots ids; /* id -> struct idmap */
	struct kp_pool pool;
	struct desc *desc;
	size_t ndesc;
	struct buildid *bid;
	size_t nbid;
	struct kp_slots bidx; /* path -> its last entry in bid (index + 1) */
	struct kp_pd_info info;
	uint64_t unknown_id; /* samples of no known event */
	/* perf record -z: the decompressed records not yet read */
	ZSTD_DCtx *z;
	uint8_t *dbuf;
	size_t dpos, dlen, dcap;
	uint64_t zoff; /* offset of the compressed record last read */
	/* records waiting to be put in time order (see "order") */
	struct qkey *q, *qtmp; /* qtmp: sort_keys', of q's size */
	size_t nq, qcap, qtmpcap, qbytes;
	size_t ready, nready; /* q[ready..nready): sorted, to deliver */
	size_t *runs, capruns;
	struct qchunk *fill, *spare; /* the chunk held records go to */
	struct qrec *given;	     /* delivered last: freed at the next */
	uint64_t max_time, next_flush, last_flush;
	/* the record being decoded, aligned: read into rec, or held */
	uint64_t *rec;
	const uint8_t *recp; /* its first byte */
	uint64_t regs[64];
};

struct idmap {
	uint64_t id;
	size_t ev;
};

/*
 * A record held back to be delivered in time order, in a chunk of many
 * (no malloc a record): a chunk is freed when the last of its records
 * has gone out.  Records are delivered from where they are held.
 */
#define QCHUNK (1u << 20)
struct qchunk {
	size_t used, live;
	uint64_t data[QCHUNK / 8];
};

struct qrec {
	uint64_t time, off;
	struct qchunk *chunk;
	uint32_t len, pad;
	uint64_t data[]; /* len bytes */
};

/* Its time beside it: sorting reads no record. */
struct qkey {
	uint64_t time;
	struct qrec *rec;
};

/* ---- errors and the cursor ---- */

static int
fail(struct kp_pd *pd, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(struct kp_pd *pd, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (off != UINT64_MAX)
		n = snprintf(pd->err, sizeof(pd->err), "offset %llu: ",
			     (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(pd->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(pd->err + n, sizeof(pd->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Bytes [p, e) read in order; ok turns false at the first overrun. */
struct cur {
	const uint8_t *p, *e;
	bool ok;
};

static uint64_t
get64(struct cur *c)
{
	uint64_t v = 0;

	if (c->e - c->p < 8) {
		c->ok = false;
		c->p = c->e;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static uint32_t
get32(struct cur *c)
{
	uint32_t v = 0;

	if (c->e - c->p < 4) {
		c->ok = false;
		c->p = c->e;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	return v;
}

/* n bytes, or NULL (and !ok) if fewer are left. */
static const uint8_t *
getn(struct cur *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if ((uint64_t)(c->e - c->p) < n) {
		c->ok = false;
		c->p = c->e;
		return NULL;
	}
	c->p += n;
	return p;
}

/*
 * A string of the header made one line of text, as it goes into
 * metadata ("# key: value"): control bytes become blanks, and the blanks
 * at its end go (a reader strips them).
 */
static char *
clean(char *s)
{
	size_t n = strlen(s), i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = ' ';
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
	return s;
}

/* perf_header_string: u32 len, then len bytes holding a C string. */
static char *
get_str(struct cur *c)
{
	uint32_t len = get32(c);
	const uint8_t *s = getn(c, len);

	if (!s)
		return NULL;
	return clean(kp_xstrndup((const char *)s,
				 strnlen((const char *)s, len)));
}

static void
hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* ---- events and ids ---- */

static uint64_t
id_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return id;
}

static struct idmap *
id_find(const struct kp_pd *pd, uint64_t id)
{
	uint64_t h = id_hash(id);
	size_t mask, i;
	struct idmap *m;

	if (!pd->ids.cap)
		return NULL;
	mask = pd->ids.cap - 1;
	for (i = h & mask; (m = pd->ids.tab[i].p) != NULL; i = (i + 1) & mask)
		if (m->id == id)
			return m;
	return NULL;
}

static int
id_add(struct kp_pd *pd, uint64_t id, size_t ev)
{
	struct idmap *m = id_find(pd, id);

	if (m) {
		m->ev = ev; /* ID_INDEX restating an id: the later word */
		return 0;
	}
	if (pd->ids.n >= PD_MAX_IDS)
		return fail(pd, UINT64_MAX, "more than %u event ids", PD_MAX_IDS);
	kp_slots_reserve(&pd->ids, 64);
	m = kp_pool_alloc(&pd->pool, sizeof(*m));
	m->id = id;
	m->ev = ev;
	kp_slots_put(&pd->ids, id_hash(id), m);
	return 0;
}

/* A new event from an attribute of attr_len bytes. */
static int
add_event(struct kp_pd *pd, const uint8_t *attr, size_t attr_len)
{
	struct kp_pd_event *e;

	if (pd->nev >= PD_MAX_EVENTS)
		return fail(pd, UINT64_MAX, "more than %d events", PD_MAX_EVENTS);
	pd->ev = kp_xrealloc(pd->ev, (pd->nev + 1) * sizeof(*pd->ev));
	e = &pd->ev[pd->nev++];
	memset(e, 0, sizeof(*e));
	memcpy(&e->attr, attr,
	       attr_len < sizeof(e->attr) ? attr_len : sizeof(e->attr));
	e->dummy = e->attr.type == PERF_TYPE_SOFTWARE &&
		   e->attr.config == PERF_COUNT_SW_DUMMY;
	return 0;
}

/* What perf calls an event that no EVENT_DESC names (evsel.c). */
static char *
attr_name(const struct perf_event_attr *a)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend",
		"ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output",
		"cgroup-switches",
	};
	char buf[64];

	if (a->type == PERF_TYPE_HARDWARE &&
	    a->config < sizeof(hw) / sizeof(hw[0]))
		return kp_xstrdup(hw[a->config]);
	if (a->type == PERF_TYPE_SOFTWARE &&
	    a->config < sizeof(sw) / sizeof(sw[0]))
		return kp_xstrdup(sw[a->config]);
	snprintf(buf, sizeof(buf), "event-%u:0x%llx", a->type,
		 (unsigned long long)a->config);
	return kp_xstrdup(buf);
}

static void
add_desc(struct kp_pd *pd, char *name, uint64_t *ids, size_t nids,
	 size_t index)
{
	struct desc *d;

	pd->desc = kp_xrealloc(pd->desc, (pd->ndesc + 1) * sizeof(*pd->desc));
	d = &pd->desc[pd->ndesc++];
	d->name = name;
	d->ids = ids;
	d->nids = nids;
	d->index = index;
}

/* Give every event its name: the last desc naming one of its ids, else
 * EVENT_DESC's entry of its index, else one made from its attr. */
static void
name_events(struct kp_pd *pd)
{
	size_t i, k;
	struct idmap *m;

	for (i = 0; i < pd->nev; i++) {
		free(pd->ev[i].name);
		pd->ev[i].name = NULL;
	}
	for (i = 0; i < pd->ndesc; i++) {
		const struct desc *d = &pd->desc[i];
		size_t ev = SIZE_MAX;

		for (k = 0; k < d->nids && ev == SIZE_MAX; k++)
			if ((m = id_find(pd, d->ids[k])) != NULL)
				ev = m->ev;
		if (ev == SIZE_MAX && d->nids == 0 && d->index < pd->nev)
			ev = d->index;
		if (ev == SIZE_MAX || ev >= pd->nev || !*d->name)
			continue;
		free(pd->ev[ev].name);
		pd->ev[ev].name = kp_xstrdup(d->name);
	}
	for (i = 0; i < pd->nev; i++)
		if (!pd->ev[i].name)
			pd->ev[i].name = attr_name(&pd->ev[i].attr);
}

/* ---- header features ---- */

/* The slot of path in pd->bidx: its entry's, or the free one for it. */
static struct kp_slot *
bid_slot(struct kp_pd *pd, const char *path, uint64_t h)
{
	size_t mask = pd->bidx.cap - 1, i;
	struct kp_slot *sl;

	for (i = h & mask; (sl = &pd->bidx.tab[i])->p; i = (i + 1) & mask)
		if (sl->hash == h &&
		    strcmp(pd->bid[(uintptr_t)sl->p - 1].path, path) == 0)
			return sl;
	return sl;
}

/* Entry i of pd->bid, the latest of its path (perf's: the last wins). */
static void
bid_index(struct kp_pd *pd, size_t i)
{
	const char *path = pd->bid[i].path;
	uint64_t h = kp_hash(path, strlen(path));
	struct kp_slot *sl;

	kp_slots_reserve(&pd->bidx, 256);
	sl = bid_slot(pd, path, h);
	if (!sl->p)
		pd->bidx.n++;
	sl->hash = h;
	sl->p = (void *)(uintptr_t)(i + 1);
}

static int
build_id_entry(struct kp_pd *pd, uint16_t misc, const uint8_t *p, size_t n)
{
	struct cur c = { p, p + n, true };
	const uint8_t *b;
	struct buildid *e;
	size_t bsize = 20;
	const char *name;

	get32(&c); /* pid */
	b = getn(&c, 24);
	if (!c.ok)
		return -1;
	if (misc & MISC_BUILD_ID_SIZE) {
		bsize = b[20];
		if (bsize > 20)
			bsize = 20;
	}
	name = (const char *)c.p;
	if ((pd->nbid & (pd->nbid - 1)) == 0)
		pd->bid = kp_xrealloc(pd->bid, (pd->nbid ? pd->nbid * 2 : 1) *
						       sizeof(*pd->bid));
	e = &pd->bid[pd->nbid++];
	e->path = kp_xstrndup(name, strnlen(name, (size_t)(c.e - c.p)));
	hex(e->hex, b, bsize);
	bid_index(pd, pd->nbid - 1);
	e->kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			    PERF_RECORD_MISC_KERNEL &&
		    strncmp(e->path, "[kernel.kallsyms]", 17) == 0;
	if (e->kernel && !pd->info.kernel_build_id)
		pd->info.kernel_build_id = kp_xstrdup(e->hex);
	return 0;
}

static int
feat_build_id(struct kp_pd *pd, const uint8_t *p, size_t n)
{
	size_t off = 0;
	uint16_t misc, size;

	while (n - off >= 8) {
		memcpy(&misc, p + off + 4, 2);
		memcpy(&size, p + off + 6, 2);
		if (size < 8 || size > n - off ||
		    build_id_entry(pd, misc, p + off + 8, size - 8u) < 0)
			return -1;
		off += size;
	}
	return 0;
}

static int
feat_event_desc(struct kp_pd *pd, struct cur *c)
{
	uint32_t nre = get32(c), sz = get32(c), i, nids, k;

	if (!c->ok || sz < PERF_ATTR_SIZE_VER0 || nre > PD_MAX_EVENTS)
		return -1;
	for (i = 0; i < nre; i++) {
		uint64_t *ids;
		char *name;

		getn(c, sz);
		nids = get32(c);
		name = get_str(c);
		if (!c->ok || !name || nids > (size_t)(c->e - c->p) / 8) {
			free(name);
			return -1;
		}
		ids = kp_xcalloc(nids ? nids : 1, sizeof(*ids));
		for (k = 0; k < nids; k++)
			ids[k] = get64(c);
		add_desc(pd, name, ids, nids, i);
	}
	return 0;
}

static void
set_str(char **field, char *s)
{
	free(*field);
	*field = s;
}

/* One feature section's bytes; a malformed one is an error. */
static int
feature(struct kp_pd *pd, uint64_t feat, const uint8_t *p, size_t n,
	uint64_t off)
{
	struct cur c = { p, p + n, true };
	uint32_t nr, i;
	char *s, *line = NULL;
	size_t len = 0;
	int ret = 0;

	switch (feat) {
	case FEAT_BUILD_ID:
		ret = feat_build_id(pd, p, n);
		break;
	case FEAT_HOSTNAME:
		set_str(&pd->info.hostname, get_str(&c));
		break;
	case FEAT_OSRELEASE:
		set_str(&pd->info.osrelease, get_str(&c));
		break;
	case FEAT_VERSION:
		set_str(&pd->info.version, get_str(&c));
		break;
	case FEAT_ARCH:
		set_str(&pd->info.arch, get_str(&c));
		break;
	case FEAT_SAMPLE_TIME:
		/* only to cut the samples in two (perfdata_conv.c): a
		 * short section is not worth refusing the file for */
		if (n >= 16) {
			memcpy(&pd->info.first_time, p, 8);
			memcpy(&pd->info.last_time, p + 8, 8);
		}
		break;
	case FEAT_NRCPUS:
		pd->info.nrcpus_avail = get32(&c);
		pd->info.nrcpus_online = get32(&c);
		break;
	case FEAT_CMDLINE:
		nr = get32(&c);
		for (i = 0; i < nr && c.ok; i++) {
			if (!(s = get_str(&c)))
				break;
			line = kp_xrealloc(line, len + strlen(s) + 2);
			if (len)
				line[len++] = ' ';
			strcpy(line + len, s);
			len += strlen(s);
			free(s);
		}
		if (c.ok && line)
			set_str(&pd->info.cmdline, clean(line));
		else
			free(line);
		break;
	case FEAT_EVENT_DESC:
		ret = feat_event_desc(pd, &c);
		break;
	default:
		return 0;
	}
	if (ret < 0 || !c.ok)
		return fail(pd, off, "feature %llu: malformed section",
			    (unsigned long long)feat);
	return 0;
}

/* ---- input ---- */

/* At least n bytes of the stream at pd->pos (fewer only at the end of
 * the input): *p and their count. */
static size_t
need(struct kp_pd *pd, size_t n, const char **p)
{
	return kp_input_need(pd->in, n, p);
}

/* n bytes need() gave are read. */
static void
consume(struct kp_pd *pd, size_t n)
{
	kp_input_consume(pd->in, n, 0);
}

/* ---- the file header ---- */

static int
pread_all(struct kp_pd *pd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	ssize_t r;

	if (pd->total && (off > pd->total || n > pd->total - off))
		return fail(pd, off, "%zu bytes past the end of the file (%llu)",
			    n, (unsigned long long)pd->total);
	while (got < n) {
		r = pread(pd->fd, (char *)buf + got, n - got,
			  (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail(pd, off, "read error: %s", strerror(errno));
		if (r == 0)
			return fail(pd, off + got, "the file ends here");
		got += (size_t)r;
	}
	return 0;
}

/* A section of the file read whole into a new buffer. */
static uint8_t *
read_section(struct kp_pd *pd, uint64_t off, uint64_t size, size_t max,
	     const char *what)
{
	uint8_t *buf;

	if (size > max) {
		fail(pd, off, "%s of %llu bytes (at most %zu)", what,
		     (unsigned long long)size, max);
		return NULL;
	}
	buf = kp_xmalloc(size ? size : 1);
	if (pread_all(pd, buf, size, off) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int
file_attrs(struct kp_pd *pd, uint64_t attr_size, uint64_t off, uint64_t size)
{
	uint8_t *buf, *ids;
	uint64_t n, i, k, ioff, isize;
	struct cur c;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return fail(pd, 16, "attr_size %llu is not an attribute's size",
			    (unsigned long long)attr_size);
	if (size % attr_size)
		return fail(pd, 24, "the attribute section (%llu bytes) is not a "
			    "multiple of attr_size (%llu)",
			    (unsigned long long)size,
			    (unsigned long long)attr_size);
	n = size / attr_size;
	if (n == 0 || n > PD_MAX_EVENTS)
		return fail(pd, 24, "%llu attributes", (unsigned long long)n);
	if (!(buf = read_section(pd, off, size, PD_MAX_FEATURE, "attributes")))
		return -1;
	for (i = 0; i < n; i++) {
		const uint8_t *a = buf + i * attr_size;

		if (add_event(pd, a, attr_size - 16) < 0)
			goto bad;
		memcpy(&ioff, a + attr_size - 16, 8);
		memcpy(&isize, a + attr_size - 8, 8);
		if (isize % 8 || isize / 8 > PD_MAX_IDS) {
			fail(pd, off + i * attr_size, "event %llu: an id "
			     "section of %llu bytes", (unsigned long long)i,
			     (unsigned long long)isize);
			goto bad;
		}
		if (!(ids = read_section(pd, ioff, isize, PD_MAX_FEATURE, "ids")))
			goto bad;
		c = (struct cur){ ids, ids + isize, true };
		for (k = 0; k < isize / 8; k++)
			if (id_add(pd, get64(&c), i) < 0) {
				free(ids);
				goto bad;
			}
		free(ids);
	}
	free(buf);
	return 0;
bad:
	free(buf);
	return -1;
}

static int
file_features(struct kp_pd *pd, const uint64_t *bits, uint64_t at)
{
	uint64_t f, sec[2];
	uint8_t *buf;
	int ret;

	for (f = 0; f < FEAT_BITS; f++) {
		if (!(bits[f / 64] >> (f % 64) & 1))
			continue;
		if (pread_all(pd, sec, sizeof(sec), at) < 0)
			return -1;
		at += sizeof(sec);
		if (f != FEAT_BUILD_ID && f != FEAT_HOSTNAME &&
		    f != FEAT_OSRELEASE && f != FEAT_VERSION &&
		    f != FEAT_ARCH && f != FEAT_NRCPUS &&
		    f != FEAT_CMDLINE && f != FEAT_EVENT_DESC &&
		    f != FEAT_SAMPLE_TIME)
			continue;
		if (!(buf = read_section(pd, sec[0], sec[1], PD_MAX_FEATURE,
					 "a feature section")))
			return -1;
		ret = feature(pd, f, buf, (size_t)sec[1], sec[0]);
		free(buf);
		if (ret < 0)
			return -1;
	}
	return 0;
}

bool
kp_pd_is(struct kp_input *in)
{
	const char *p;
	uint64_t m;

	if (kp_input_need(in, 8, &p) < 8)
		return false;
	memcpy(&m, p, 8);
	return m == PD_MAGIC || m == __builtin_bswap64(PD_MAGIC) ||
	       memcmp(p, "PERFFILE", 8) == 0;
}

/* Skip n bytes of the stream (consumed from the input). */
static int
skip(struct kp_pd *pd, uint64_t n)
{
	const char *p;
	size_t got;

	while (n) {
		got = need(pd, 1, &p);
		if (got == 0)
			return fail(pd, pd->pos, "the file ends here");
		if (got > n)
			got = (size_t)n;
		consume(pd, got);
		pd->pos += got;
		n -= got;
	}
	return 0;
}

static int
open_file(struct kp_pd *pd, const uint8_t *h)
{
	uint64_t v[13];
	struct stat st;

	memcpy(v, h, sizeof(v));
	pd->fd = kp_input_fd(pd->in);
	if (fstat(pd->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return fail(pd, UINT64_MAX,
			    "a perf.data file (not 'perf record -o -' pipe "
			    "output) must be a regular file: name it as an "
			    "operand");
	pd->total = (uint64_t)st.st_size;
	/* v: magic size attr_size attrs{off,size} data{off,size}
	 * event_types{off,size} features[4] */
	if (v[5] < PD_HDR_SIZE || v[5] > pd->total ||
	    v[6] > pd->total - v[5])
		return fail(pd, 40, "data section %llu+%llu outside the file "
			    "(%llu bytes)", (unsigned long long)v[5],
			    (unsigned long long)v[6],
			    (unsigned long long)pd->total);
	if (v[6] == 0)
		return fail(pd, 48, "the data section is empty (perf record "
			    "did not finish?)");
	if (file_attrs(pd, v[2], v[3], v[4]) < 0 ||
	    file_features(pd, &v[9], v[5] + v[6]) < 0)
		return -1;
	pd->data_end = v[5] + v[6];
	return skip(pd, v[5] - pd->pos);
}

struct kp_pd *
kp_pd_open(struct kp_input *in, const char **why)
{
	static char open_err[256];
	struct kp_pd *pd;
	const char *p;
	uint64_t m, size;
	size_t n;

	*why = "not a perf.data file";
	if (kp_input_need(in, PD_PIPE_HDR_SIZE, &p) < PD_PIPE_HDR_SIZE)
		return NULL;
	memcpy(&m, p, 8);
	memcpy(&size, p + 8, 8);
	if (memcmp(p, "PERFFILE", 8) == 0) {
		*why = "a perf.data of version 1 (perf before 2.6.36): "
		       "only version 2 (PERFILE2) is read";
		return NULL;
	}
	if (m == __builtin_bswap64(PD_MAGIC)) {
		*why = "a perf.data of the other byte order (recorded on a "
		       "machine of another endianness): convert it with "
		       "'perf script' there";
		return NULL;
	}
	if (m != PD_MAGIC)
		return NULL;
	pd = kp_xcalloc(1, sizeof(*pd));
	pd->in = in;
	pd->fd = -1;
	pd->rec = kp_xmalloc(65536);
	if (size == PD_PIPE_HDR_SIZE) {
		pd->pipe = true;
		kp_input_consume(in, PD_PIPE_HDR_SIZE, 0);
		pd->pos = PD_PIPE_HDR_SIZE;
		return pd;
	}
	if (size != PD_HDR_SIZE) {
		fail(pd, 8, "header size %llu (expected %d or %d)",
		     (unsigned long long)size, PD_HDR_SIZE, PD_PIPE_HDR_SIZE);
		goto bad;
	}
	if ((n = kp_input_need(in, PD_HDR_SIZE, &p)) < PD_HDR_SIZE) {
		fail(pd, n, "the file ends inside its %d-byte header",
		     PD_HDR_SIZE);
		goto bad;
	}
	{
		uint8_t h[PD_HDR_SIZE];

		memcpy(h, p, PD_HDR_SIZE);
		kp_input_consume(in, PD_HDR_SIZE, 0);
		pd->pos = PD_HDR_SIZE;
		if (open_file(pd, h) < 0)
			goto bad;
	}
	return pd;
bad:
	snprintf(open_err, sizeof(open_err), "%s", pd->err);
	*why = open_err;
	kp_pd_close(pd);
	return NULL;
}

/* ---- records ---- */

/* The event of a sample (r->ev, -1 if its id is unknown). */
static int
sample_event(struct kp_pd *pd, struct cur c)
{
	uint64_t st, id;
	unsigned pos;
	struct idmap *m;

	if (pd->nev <= 1)
		return pd->nev ? 0 : -1; /* pipe mode: no attr yet */
	st = pd->ev[0].attr.sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER)
		pos = 0;
	else if (st & PERF_SAMPLE_ID)
		pos = !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
		      !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
	else
		return 0;
	c.p += pos * 8 <= (size_t)(c.e - c.p) ? pos * 8 : (size_t)(c.e - c.p);
	id = get64(&c);
	if (!c.ok || !(m = id_find(pd, id)))
		return -1;
	return (int)m->ev;
}

static int
read_format_skip(struct cur *c, uint64_t rf)
{
	uint64_t nr = 1, per = 1, i;

	per += !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	if (rf & PERF_FORMAT_GROUP)
		nr = get64(c);
	getn(c, 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		     !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING)));
	if (nr > (uint64_t)(c->e - c->p) / 8 / per)
		c->ok = false;
	for (i = 0; i < nr && c->ok; i++)
		getn(c, 8 * per);
	return c->ok ? 0 : -1;
}

static int
decode_sample(struct kp_pd *pd, struct kp_pd_rec *r, struct cur c)
{
	const struct perf_event_attr *a;
	uint64_t st, n;

	r->ev = sample_event(pd, c);
	if (r->ev < 0) {
		pd->unknown_id++;
		return 0;
	}
	a = &pd->ev[r->ev].attr;
	st = a->sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER)
		r->id = get64(&c);
	if (st & PERF_SAMPLE_IP)
		r->ip = get64(&c);
	if (st & PERF_SAMPLE_TID) {
		r->pid = get32(&c);
		r->tid = get32(&c);
	}
	if (st & PERF_SAMPLE_TIME)
		r->time = get64(&c);
	if (st & PERF_SAMPLE_ADDR)
		r->addr = get64(&c);
	if (st & PERF_SAMPLE_ID)
		r->id = get64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		r->stream_id = get64(&c);
	if (st & PERF_SAMPLE_CPU) {
		r->cpu = get32(&c);
		get32(&c);
	}
	if (st & PERF_SAMPLE_PERIOD) {
		r->period = get64(&c);
		r->has_period = true;
	} else if (!a->freq) {
		r->period = a->sample_period; /* -c N */
		r->has_period = true;
	}
	if (st & PERF_SAMPLE_READ)
		read_format_skip(&c, a->read_format);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		n = get64(&c);
		if (n > (uint64_t)(c.e - c.p) / 8)
			return fail(pd, r->offset, "callchain of %llu entries "
				    "in a record of %zu bytes",
				    (unsigned long long)n,
				    (size_t)(c.e - pd->recp));
		r->chain = (const uint64_t *)c.p; /* rec is aligned: so is this */
		r->nchain = n;
		r->has_chain = true;
		c.p += n * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		r->raw_size = get32(&c);
		r->raw = getn(&c, r->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		r->nbranch = get64(&c);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			get64(&c);
		n = 24 + (a->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS
				  ? 8 : 0);
		if (r->nbranch > (uint64_t)(c.e - c.p) / n)
			c.ok = false;
		else
			getn(&c, r->nbranch * n);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		r->regs_abi = get64(&c);
		if (c.ok && r->regs_abi > PERF_SAMPLE_REGS_ABI_64)
			return fail(pd, r->offset, "REGS_USER abi %llu is none "
				    "of perf's (0 none, 1 32-bit, 2 64-bit)",
				    (unsigned long long)r->regs_abi);
		if (r->regs_abi) {
			uint64_t mask = a->sample_regs_user;
			uint32_t i;

			r->nregs = (uint32_t)__builtin_popcountll(mask);
			if (c.ok && (uint64_t)(c.e - c.p) / 8 < r->nregs)
				return fail(pd, r->offset, "REGS_USER of %u "
					    "registers in a record of %zu "
					    "bytes", r->nregs,
					    (size_t)(c.e - pd->recp));
			for (i = 0; i < r->nregs; i++)
				pd->regs[i] = get64(&c);
			r->regs = pd->regs;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		r->stack_size = get64(&c);
		/* the kernel copies whole words, and a dyn_size follows */
		if (c.ok && (r->stack_size % 8 ||
			     (r->stack_size &&
			      (uint64_t)(c.e - c.p) / 8 < r->stack_size / 8 + 1)))
			return fail(pd, r->offset, "STACK_USER of %llu bytes in "
				    "a record of %zu bytes",
				    (unsigned long long)r->stack_size,
				    (size_t)(c.e - pd->recp));
		r->stack = getn(&c, r->stack_size);
		if (r->stack_size) {
			r->stack_dyn = get64(&c);
			if (c.ok && r->stack_dyn > r->stack_size)
				return fail(pd, r->offset, "STACK_USER dyn_size "
					    "%llu is more than its %llu bytes",
					    (unsigned long long)r->stack_dyn,
					    (unsigned long long)r->stack_size);
		}
	}
	if (!c.ok)
		return fail(pd, r->offset, "a sample shorter than its fields "
			    "(sample_type 0x%llx)", (unsigned long long)st);
	pd->ev[r->ev].nsamples++;
	return 1;
}

/* The NUL-terminated string at c (filename, comm): its end must be in
 * the record. */
static const char *
get_cstr(struct cur *c, size_t *len)
{
	const char *s = (const char *)c->p;
	const char *nul = memchr(s, '\0', (size_t)(c->e - c->p));

	if (!nul) {
		c->ok = false;
		return NULL;
	}
	*len = (size_t)(nul - s);
	return s;
}

/* A kernel record: 1 decoded into r, 0 taken in here, -1 error. */
static int
decode(struct kp_pd *pd, struct kp_pd_rec *r, const uint8_t *p, size_t n)
{
	struct cur c = { p + 8, p + n, true };
	const uint8_t *b;

	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		return decode_sample(pd, r, c);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		r->pid = get32(&c);
		r->tid = get32(&c);
		r->start = get64(&c);
		r->len = get64(&c);
		r->pgoff = get64(&c);
		if (r->type == PERF_RECORD_MMAP2) {
			b = getn(&c, 24);
			r->prot = get32(&c);
			r->flags = get32(&c);
			if (b && (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
				hex(r->build_id, b + 4, b[0] > 20 ? 20 : b[0]);
		}
		if (c.ok)
			r->path = get_cstr(&c, &n);
		break;
	case PERF_RECORD_COMM:
		r->pid = get32(&c);
		r->tid = get32(&c);
		if (c.ok)
			r->comm = get_cstr(&c, &r->comm_len);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r->pid = get32(&c);
		r->ppid = get32(&c);
		r->tid = get32(&c);
		r->ptid = get32(&c);
		r->time = get64(&c);
		break;
	case PERF_RECORD_LOST:
		r->id = get64(&c);
		r->lost = get64(&c);
		pd->info.lost += r->lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->lost = get64(&c);
		pd->info.lost_samples += r->lost;
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		r->time = get64(&c);
		r->id = get64(&c);
		r->stream_id = get64(&c);
		if (r->type == PERF_RECORD_THROTTLE)
			pd->info.throttled++;
		break;
	default:
		return 0;
	}
	if (!c.ok)
		return fail(pd, r->offset, "record type %u: %zu bytes is too "
			    "short", r->type, n);
	return 1;
}

/* perf's own records: taken in here. */
static int
header_record(struct kp_pd *pd, uint32_t type, uint16_t misc,
	      const uint8_t *p, size_t n, uint64_t off)
{
	struct cur c = { p + 8, p + n, true };
	uint32_t asz;
	uint64_t v, k, id, *ids;
	const char *s;
	size_t len;

	switch (type) {
	case KP_PD_HEADER_ATTR:
		if (n < 8 + 8)
			break;
		memcpy(&asz, p + 12, 4); /* attr.size */
		if (asz == 0)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz < PERF_ATTR_SIZE_VER0 || asz > n - 8)
			return fail(pd, off, "attribute size %u in a record "
				    "of %zu bytes", asz, n);
		if (add_event(pd, p + 8, asz) < 0)
			return -1;
		getn(&c, asz);
		for (k = 0; k < (n - 8 - asz) / 8; k++)
			if (id_add(pd, get64(&c), pd->nev - 1) < 0)
				return -1;
		return 0;
	case KP_PD_HEADER_FEATURE:
		v = get64(&c);
		if (!c.ok)
			break;
		return feature(pd, v, c.p, (size_t)(c.e - c.p), off);
	case KP_PD_HEADER_BUILD_ID:
		if (build_id_entry(pd, misc, p + 8, n - 8) < 0)
			break;
		return 0;
	case KP_PD_EVENT_UPDATE:
		v = get64(&c);
		id = get64(&c);
		if (!c.ok)
			break;
		if (v == EVENT_UPDATE_NAME) {
			if (!(s = get_cstr(&c, &len)))
				break;
			ids = kp_xmalloc(sizeof(*ids));
			ids[0] = id;
			add_desc(pd, clean(kp_xstrndup(s, len)), ids, 1,
				 SIZE_MAX);
		}
		return 0;
	/*
	 * ID_INDEX maps ids to mmap indexes, cpus and threads, not to
	 * events: the attributes' ids do that.  FINISHED_ROUND and the
	 * others order or describe what this reader does not use.
	 */
	default:
		return 0;
	}
	return fail(pd, off, "record type %u: %zu bytes is malformed", type, n);
}

/* Append the decompressed bytes of a COMPRESSED record to dbuf. */
static int
decompress(struct kp_pd *pd, const uint8_t *p, size_t n, uint64_t off)
{
	ZSTD_inBuffer zin = { p, n, 0 };
	ZSTD_outBuffer zout;
	size_t ret;

	if (!pd->z && !(pd->z = ZSTD_createDCtx()))
		kp_die("out of memory");
	if (pd->dpos) {
		memmove(pd->dbuf, pd->dbuf + pd->dpos, pd->dlen - pd->dpos);
		pd->dlen -= pd->dpos;
		pd->dpos = 0;
	}
	while (zin.pos < zin.size) {
		if (pd->dcap - pd->dlen < 65536) {
			if (pd->dcap >= PD_MAX_DECOMP)
				return fail(pd, off, "compressed records that "
					    "decompress to more than %u MiB "
					    "without a whole record",
					    PD_MAX_DECOMP >> 20);
			pd->dcap = pd->dcap ? pd->dcap * 2 : 1u << 20;
			pd->dbuf = kp_xrealloc(pd->dbuf, pd->dcap);
		}
		zout = (ZSTD_outBuffer){ pd->dbuf, pd->dcap, pd->dlen };
		ret = ZSTD_decompressStream(pd->z, &zout, &zin);
		if (ZSTD_isError(ret))
			return fail(pd, off, "compressed record: %s",
				    ZSTD_getErrorName(ret));
		if (zout.pos == pd->dlen && zin.pos < zin.size &&
		    zout.pos < zout.size)
			return fail(pd, off, "compressed record: no progress");
		pd->dlen = zout.pos;
	}
	pd->zoff = off;
	return 0;
}

/*
 * The next raw record, *rp: from the decompressed bytes when a whole one
 * is there (copied into pd->rec), else from the input.  1, 0 at the
 * end, -1 error.  *from_z: it came out of a COMPRESSED record.
 */
static int
next_raw(struct kp_pd *pd, size_t *n, uint64_t *off, bool *from_z,
	 const uint8_t **rp)
{
	uint16_t size;
	const char *p;
	size_t got;

	if (pd->dlen - pd->dpos >= 8) {
		memcpy(&size, pd->dbuf + pd->dpos + 6, 2);
		if (size < 8)
			return fail(pd, pd->zoff, "in compressed data: record "
				    "size %u is less than its header", size);
		if (pd->dlen - pd->dpos >= size) {
			memcpy(pd->rec, pd->dbuf + pd->dpos, size);
			*rp = (const uint8_t *)pd->rec;
			pd->dpos += size;
			*n = size;
			*off = pd->zoff;
			*from_z = true;
			return 1;
		}
	}
	*from_z = false;
	if (!pd->pipe && pd->pos >= pd->data_end)
		goto end;
	got = need(pd, 8, &p);
	if (got == 0 && pd->pipe)
		goto end;
	if (got < 8)
		return fail(pd, pd->pos, "the file ends inside a record header");
	memcpy(&size, p + 6, 2);
	if (size < 8)
		return fail(pd, pd->pos, "record size %u is less than its "
			    "header", size);
	if (!pd->pipe && size > pd->data_end - pd->pos)
		return fail(pd, pd->pos, "a record of %u bytes runs past the "
			    "data section's end (%llu)", size,
			    (unsigned long long)pd->data_end);
	if (need(pd, size, &p) < size)
		return fail(pd, pd->pos, "the file ends inside a record of "
			    "%u bytes", size);
	/* read where it lies in the input's buffer (until the next read),
	 * but one not aligned as the fields a record is read as */
	if (((uintptr_t)p & 7) == 0) {
		*rp = (const uint8_t *)p;
	} else {
		memcpy(pd->rec, p, size);
		*rp = (const uint8_t *)pd->rec;
	}
	consume(pd, size);
	*off = pd->pos;
	pd->pos += size;
	*n = size;
	return 1;
end:
	if (pd->dpos < pd->dlen)
		return fail(pd, pd->zoff, "the compressed data ends inside a "
			    "record");
	return 0;
}

/* ---- order ----
 *
 * perf report and perf script see the records of all CPUs in time
 * order, not in the file's (each CPU's buffer is written in turn): a
 * child's FORK may be written after its first samples.  As perf's
 * ordered_events do, records with a time are held back; at each
 * FINISHED_ROUND those up to the greatest time seen before the previous
 * one are delivered, sorted by time (records of one time in file order),
 * and all of them at the end.  A record without a time, or older than
 * what was delivered already, goes out at once.  Memory: one round of
 * records (at most PD_MAX_QUEUE bytes; then the older half goes out).
 */
#define PD_MAX_QUEUE (256u << 20)

/* The time of a record, from its sample fields or its sample_id. */
static bool
rec_time(struct kp_pd *pd, const uint8_t *p, size_t n, uint64_t *t)
{
	const struct perf_event_attr *a;
	struct cur c = { p + 8, p + n, true };
	uint32_t type;
	uint64_t st, k;
	int ev;

	if (pd->nev == 0)
		return false;
	memcpy(&type, p, 4);
	if (type == PERF_RECORD_SAMPLE) {
		ev = sample_event(pd, c);
		if (ev < 0)
			return false;
		st = pd->ev[ev].attr.sample_type;
		if (!(st & PERF_SAMPLE_TIME))
			return false;
		k = !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
		    !!(st & PERF_SAMPLE_TID);
	} else {
		a = &pd->ev[0].attr;
		if (!a->sample_id_all)
			return false;
		st = a->sample_type;
		if (st & PERF_SAMPLE_IDENTIFIER && pd->nev > 1 && n >= 16) {
			struct idmap *m;
			uint64_t id;

			memcpy(&id, p + n - 8, 8);
			if ((m = id_find(pd, id)) != NULL)
				st = pd->ev[m->ev].attr.sample_type;
		}
		if (!(st & PERF_SAMPLE_TIME))
			return false;
		/* sample_id: TID TIME ID STREAM_ID CPU IDENTIFIER, at the end */
		k = !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
		    !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
		    !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER);
		if (k * 8 > n - 8)
			return false;
		c.p = p + n - k * 8;
		k = !!(st & PERF_SAMPLE_TID);
	}
	if (k * 8 > (size_t)(c.e - c.p))
		return false;
	c.p += k * 8;
	*t = get64(&c);
	return c.ok;
}

/*
 * Sort q[0..n) by time, keeping the order of equal times (the file's,
 * which flush() keeps first for the records carried over): the runs
 * already in order (each CPU's records come in time order) are found,
 * then merged two by two.  A round of two CPUs' records is two runs.
 */
static void
sort_keys(struct kp_pd *pd, size_t n)
{
	struct qkey *a = pd->q, *b, *t;
	size_t nr = 0, i, j, k, o, lo, mid, hi, w;

	if (n < 2)
		return;
	if (pd->capruns < n + 1) {
		pd->capruns = n + 1;
		pd->runs = kp_xrealloc(pd->runs,
				       pd->capruns * sizeof(*pd->runs));
	}
	if (pd->qtmpcap != pd->qcap) {
		/* as large as q: the two are swapped */
		pd->qtmpcap = pd->qcap;
		pd->qtmp = kp_xrealloc(pd->qtmp, pd->qcap * sizeof(*pd->qtmp));
	}
	b = pd->qtmp;
	pd->runs[nr++] = 0;
	for (i = 1; i < n; i++)
		if (a[i].time < a[i - 1].time)
			pd->runs[nr++] = i;
	pd->runs[nr] = n;
	while (nr > 1) {
		for (w = 0, k = 0; k < nr; k += 2, w++) {
			lo = pd->runs[k];
			mid = pd->runs[k + 1];
			hi = k + 2 <= nr ? pd->runs[k + 2] : n;
			if (k + 1 == nr)
				mid = hi = n;
			for (i = lo, j = mid, o = lo; i < mid && j < hi;)
				b[o++] = a[j].time < a[i].time ? a[j++] : a[i++];
			while (i < mid)
				b[o++] = a[i++];
			while (j < hi)
				b[o++] = a[j++];
			pd->runs[w] = lo;
		}
		pd->runs[w] = n;
		nr = w;
		t = a;
		a = b;
		b = t;
	}
	if (a != pd->q) {
		/* the sorted keys are in the other array: swap the two */
		pd->qtmp = pd->q;
		pd->q = a;
	}
}

/* Sort the held records; those up to limit (half: the older half of
 * them) become ready. */
static void
flush(struct kp_pd *pd, uint64_t limit, bool half)
{
	if (pd->ready < pd->nready)
		return; /* the last flush is still being delivered */
	if (pd->nready) { /* pd->q may be NULL: nothing held yet */
		memmove(pd->q, pd->q + pd->nready,
			(pd->nq - pd->nready) * sizeof(*pd->q));
		pd->nq -= pd->nready;
	}
	pd->ready = pd->nready = 0;
	sort_keys(pd, pd->nq);
	if (half && pd->nq)
		limit = pd->q[pd->nq / 2].time;
	while (pd->nready < pd->nq && pd->q[pd->nready].time <= limit)
		pd->nready++;
	if (pd->nready)
		pd->last_flush = pd->q[pd->nready - 1].time;
}

static void
hold(struct kp_pd *pd, const uint8_t *p, size_t n, uint64_t t, uint64_t off)
{
	size_t need = sizeof(struct qrec) + (n + 7) / 8 * 8;
	struct qchunk *ch = pd->fill;
	struct qrec *q;

	if (!ch || sizeof(ch->data) - ch->used < need) {
		if (ch && ch->live == 0) {
			ch->used = 0; /* all of it gone out: again */
		} else {
			ch = pd->spare ? pd->spare : kp_xmalloc(sizeof(*ch));
			pd->spare = NULL;
			ch->used = ch->live = 0;
			pd->fill = ch;
		}
	}
	q = (struct qrec *)((char *)ch->data + ch->used);
	ch->used += need;
	ch->live++;
	q->time = t;
	q->off = off;
	q->chunk = ch;
	q->len = (uint32_t)n;
	memcpy(q->data, p, n);
	if (pd->nq == pd->qcap) {
		pd->qcap = pd->qcap ? pd->qcap * 2 : 4096;
		pd->q = kp_xrealloc(pd->q, pd->qcap * sizeof(*pd->q));
	}
	pd->q[pd->nq].time = t;
	pd->q[pd->nq].rec = q;
	pd->nq++;
	pd->qbytes += n;
	if (t > pd->max_time)
		pd->max_time = t;
}

/* A held record gone: its chunk is freed (one kept) with its last. */
static void
release(struct kp_pd *pd, struct qrec *q)
{
	struct qchunk *ch = q->chunk;

	if (--ch->live == 0 && ch != pd->fill) {
		if (!pd->spare)
			pd->spare = ch;
		else
			free(ch);
	}
}

/* The next held record that is ready, or NULL; it stays where it is
 * until the next call. */
static struct qrec *
take(struct kp_pd *pd)
{
	struct qrec *q;

	if (pd->ready == pd->nready)
		return NULL;
	q = pd->q[pd->ready++].rec;
	pd->qbytes -= q->len;
	pd->given = q;
	return q;
}

int
kp_pd_next(struct kp_pd *pd, struct kp_pd_rec *r)
{
	const uint8_t *p = NULL;
	struct qrec *q;
	uint64_t off = 0, v;
	uint32_t type;
	uint16_t misc;
	bool from_z = false;
	size_t n = 0;
	int st;

	if (pd->given) {
		release(pd, pd->given);
		pd->given = NULL;
	}
	for (;;) {
		if ((q = take(pd)) != NULL) {
			p = (const uint8_t *)q->data;
			n = q->len;
			off = q->off;
			memcpy(&type, p, 4);
			memcpy(&misc, p + 4, 2);
			goto deliver;
		}
		if ((st = next_raw(pd, &n, &off, &from_z, &p)) <= 0) {
			if (st == 0 && pd->nq > 0) {
				flush(pd, UINT64_MAX, false);
				continue;
			}
			if (st == 0)
				name_events(pd);
			return st;
		}
		memcpy(&type, p, 4);
		memcpy(&misc, p + 4, 2);
		if (type == KP_PD_COMPRESSED) {
			if (from_z)
				return fail(pd, off, "a compressed record "
					    "inside compressed data");
			if (decompress(pd, p + 8, n - 8, off) < 0)
				return -1;
			continue;
		}
		if (type == KP_PD_HEADER_TRACING_DATA ||
		    type == KP_PD_AUXTRACE) {
			/* their data follows the record, outside its size */
			struct cur c = { p + 8, p + n, true };

			v = type == KP_PD_AUXTRACE ? get64(&c) : get32(&c);
			if (!c.ok || from_z)
				return fail(pd, off, "record type %u: "
					    "malformed", type);
			if (!pd->pipe && v > pd->data_end - pd->pos)
				return fail(pd, off, "record type %u: %llu "
					    "bytes past the data section",
					    type, (unsigned long long)v);
			if (skip(pd, v) < 0)
				return -1;
			continue;
		}
		if (type == KP_PD_FINISHED_ROUND) {
			flush(pd, pd->next_flush, false);
			pd->next_flush = pd->max_time;
			continue;
		}
		if (type >= KP_PD_HEADER_ATTR) {
			if (header_record(pd, type, misc, p, n, off) < 0)
				return -1;
			continue;
		}
		{
			uint64_t t;

			if (rec_time(pd, p, n, &t) && t >= pd->last_flush) {
				hold(pd, p, n, t, off);
				if (pd->qbytes > PD_MAX_QUEUE)
					flush(pd, 0, true);
				continue;
			}
		}
	deliver:
		pd->recp = p;
		memset(r, 0, sizeof(*r));
		r->type = type;
		r->misc = misc;
		r->offset = off;
		r->ev = -1;
		if ((st = decode(pd, r, p, n)) != 0)
			return st;
	}
}

/* ---- accessors ---- */

const char *
kp_pd_error(const struct kp_pd *pd)
{
	return pd->err;
}

bool
kp_pd_pipe(const struct kp_pd *pd)
{
	return pd->pipe;
}

size_t
kp_pd_nevents(const struct kp_pd *pd)
{
	return pd->nev;
}

const struct perf_event_attr *
kp_pd_attr(const struct kp_pd *pd, size_t i)
{
	return &pd->ev[i].attr;
}

struct kp_pd_event *
kp_pd_event(struct kp_pd *pd, size_t i)
{
	if (!pd->ev[i].name)
		name_events(pd);
	return &pd->ev[i];
}

const struct kp_pd_info *
kp_pd_info(const struct kp_pd *pd)
{
	return &pd->info;
}

uint64_t
kp_pd_unknown(const struct kp_pd *pd)
{
	return pd->unknown_id;
}

size_t
kp_pd_nbuild_ids(const struct kp_pd *pd)
{
	return pd->nbid;
}

const char *
kp_pd_build_id(const struct kp_pd *pd, const char *path)
{
	struct kp_slot *sl;

	if (!pd->nbid)
		return NULL;
	sl = bid_slot((struct kp_pd *)pd, path, kp_hash(path, strlen(path)));
	return sl->p ? pd->bid[(uintptr_t)sl->p - 1].hex : NULL;
}

void
kp_pd_progress(const struct kp_pd *pd, uint64_t *done, uint64_t *total)
{
	*done = pd->pos;
	*total = pd->total;
}

uint64_t
kp_pd_data_end(const struct kp_pd *pd)
{
	return pd->data_end;
}

void
kp_pd_close(struct kp_pd *pd)
{
	size_t i;

	if (!pd)
		return;
	for (i = 0; i < pd->nev; i++)
		free(pd->ev[i].name);
	free(pd->ev);
	for (i = 0; i < pd->ndesc; i++) {
		free(pd->desc[i].name);
		free(pd->desc[i].ids);
	}
	free(pd->desc);
	for (i = 0; i < pd->nbid; i++)
		free(pd->bid[i].path);
	free(pd->bid);
	kp_slots_free(&pd->bidx);
	free(pd->info.hostname);
	free(pd->info.osrelease);
	free(pd->info.version);
	free(pd->info.arch);
	free(pd->info.cmdline);
	free(pd->info.kernel_build_id);
	if (pd->given)
		release(pd, pd->given);
	for (i = pd->ready; i < pd->nq; i++)
		release(pd, pd->q[i].rec);
	free(pd->fill);
	free(pd->spare);
	free(pd->q);
	free(pd->qtmp);
	free(pd->runs);
	kp_slots_free(&pd->ids);
	kp_pool_free(&pd->pool);
	ZSTD_freeDCtx(pd->z);
	free(pd->dbuf);
	free(pd->rec);
	free(pd);
}
