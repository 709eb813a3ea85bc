/*
 * test_perfev.c - unit tests of common/perfev.c: the ring buffer reader
 * (records in order, a record that wraps, a corrupt header, data_tail
 * released) and CPU lists (event names: test_events.c).  No perf_event_open needed: the
 * ring is plain memory laid out as the kernel lays it out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp.h"
#include "perfev.h"

#include "check.h"

#define RING 256 /* bytes of data: small, so records wrap */

static struct perf_event_mmap_page meta;
static unsigned char data[RING];

/* Write a record of type and size (payload: its sequence number). */
static void
put(uint64_t *head, uint32_t type, uint16_t size, uint64_t seq)
{
	unsigned char rec[512];
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	uint16_t i;

	memset(rec, 0xaa, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), &seq, sizeof(seq));
	for (i = 0; i < size; i++)
		data[(*head + i) % RING] = rec[i];
	*head += size;
}

struct seen {
	uint64_t seq[64];
	uint16_t size[64];
	size_t n;
	bool intact;
};

static void
collect(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const unsigned char *p = (const unsigned char *)h;
	uint16_t i;

	memcpy(&s->seq[s->n], h + 1, 8);
	s->size[s->n] = h->size;
	for (i = 16; i < h->size; i++)
		if (p[i] != 0xaa)
			s->intact = false;
	s->n++;
}

static void
test_ring(void)
{
	struct kp_perfev_ring r;
	struct seen s;
	uint64_t head = 0;
	size_t n;

	memset(&meta, 0, sizeof(meta));
	kp_perfev_ring_init(&r, &meta, data, RING);
	CHECK(!kp_perfev_ring_pending(&r));

	/* three records, no wrap */
	put(&head, PERF_RECORD_SAMPLE, 48, 1);
	put(&head, PERF_RECORD_LOST, 32, 2);
	put(&head, PERF_RECORD_SAMPLE, 64, 3);
	meta.data_head = head;
	CHECK(kp_perfev_ring_pending(&r));
	/* a scan sees them and leaves them */
	memset(&s, 0, sizeof(s));
	CHECK(kp_perfev_ring_scan(&r, collect, &s) == 3 && s.seq[2] == 3);
	CHECK(meta.data_tail == 0 && kp_perfev_ring_pending(&r));
	memset(&s, 0, sizeof(s));
	s.intact = true;
	n = kp_perfev_ring_drain(&r, collect, &s);
	CHECK(n == 3 && s.n == 3);
	CHECK(s.seq[0] == 1 && s.seq[1] == 2 && s.seq[2] == 3);
	CHECK(s.size[2] == 64);
	CHECK(s.intact);
	CHECK(meta.data_tail == head);
	CHECK(!kp_perfev_ring_pending(&r));

	/* 144 bytes used so far: a 160-byte record wraps at 256 */
	put(&head, PERF_RECORD_SAMPLE, 160, 4);
	put(&head, PERF_RECORD_SAMPLE, 24, 5);
	meta.data_head = head;
	memset(&s, 0, sizeof(s));
	s.intact = true;
	n = kp_perfev_ring_drain(&r, collect, &s);
	CHECK(n == 2 && s.seq[0] == 4 && s.size[0] == 160 && s.seq[1] == 5);
	CHECK(s.intact); /* the wrapped record arrived whole */
	CHECK(meta.data_tail == head && r.bad == 0);

	/* nothing new: nothing passed */
	memset(&s, 0, sizeof(s));
	CHECK(kp_perfev_ring_drain(&r, collect, &s) == 0);

	/* a corrupt header (size 0) drops the rest, counted */
	put(&head, PERF_RECORD_SAMPLE, 32, 6);
	put(&head, PERF_RECORD_SAMPLE, 8, 7);
	memset(data + (head - 8) % RING, 0, 8);
	put(&head, PERF_RECORD_SAMPLE, 32, 8);
	meta.data_head = head;
	memset(&s, 0, sizeof(s));
	n = kp_perfev_ring_drain(&r, collect, &s);
	CHECK(n == 1 && s.seq[0] == 6);
	CHECK(r.bad == 1);
	CHECK(meta.data_tail == head); /* space released all the same */

	/* a size beyond data_head is corrupt too */
	put(&head, PERF_RECORD_SAMPLE, 64, 9);
	meta.data_head = head - 32;
	memset(&s, 0, sizeof(s));
	CHECK(kp_perfev_ring_drain(&r, collect, &s) == 0);
	CHECK(r.bad == 2);
	kp_perfev_ring_unmap(&r);
}

static void
test_cpus(void)
{
	char buf[64];
	size_t n;
	int *c;

	c = kp_perfev_cpus_parse("0-1\n", &n);
	CHECK(c && n == 2 && c[0] == 0 && c[1] == 1);
	free(c);
	c = kp_perfev_cpus_parse("5,0,2-3,3", &n);
	CHECK(c && n == 4 && c[0] == 0 && c[1] == 2 && c[2] == 3 && c[3] == 5);
	kp_perfev_cpus_format(c, n, buf, sizeof(buf));
	CHECK(strcmp(buf, "0,2-3,5") == 0);
	free(c);
	CHECK(kp_perfev_cpus_parse("", &n) == NULL);
	CHECK(kp_perfev_cpus_parse("1-", &n) == NULL);
	CHECK(kp_perfev_cpus_parse("3-1", &n) == NULL);
	CHECK(kp_perfev_cpus_parse("a", &n) == NULL);
	CHECK(kp_perfev_cpus_parse("1,,2", &n) == NULL);
	CHECK(kp_perfev_cpus_parse("99999", &n) == NULL);
	c = kp_perfev_cpus_online(&n);
	CHECK(c && n >= 1);
	free(c);
}

int
main(int argc, char **argv)
{
	(void)argc;
	kp_init(argv);
	test_ring();
	test_cpus();
	return CHECK_DONE();
}
