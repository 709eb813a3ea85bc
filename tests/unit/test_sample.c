/*
 * test_sample.c - unit tests of perfev's record decoding for
 * kp-sample's modes: samples laid out by sample_type (every field
 * kp-sample asks for, RAW's padding, records cut short), the
 * sample_id_all trailer of a PERF_RECORD_SWITCH fed to the off-CPU
 * accounting, and a drain after a scan that stops where the scan did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp.h"
#include "offcpu.h"
#include "perfev.h"

#include "check.h"

static unsigned char rec[1024];
static size_t len;

static void
start(uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	len = sizeof(h);
}

static void
put(const void *p, size_t n)
{
	memcpy(rec + len, p, n);
	len += n;
}

static void
u64(uint64_t v)
{
	put(&v, 8);
}

static const struct perf_event_header *
done(void)
{
	struct perf_event_header *h = (void *)rec;

	h->size = (uint16_t)len;
	return h;
}

static void
test_parse(void)
{
	struct kp_perfev_sample s;
	uint64_t t = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		     PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
		     PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		     PERF_SAMPLE_RAW | PERF_SAMPLE_PHYS_ADDR |
		     PERF_SAMPLE_DATA_PAGE_SIZE;
	uint32_t raw_size = 12;
	unsigned char raw[12] = "abcdefghijk";

	start(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(77);                               /* id */
	u64(0xffffffff81000010ull);            /* ip */
	u64((uint64_t)12 << 32 | 10);          /* pid 10, tid 12 */
	u64(123456789);                        /* time */
	u64(0x7f0000001000ull);                /* addr */
	u64(1);                                /* cpu 1 */
	u64(1);                                /* period */
	u64(3);                                /* nr */
	u64(PERF_CONTEXT_KERNEL);
	u64(0xffffffff81000010ull);
	u64(0xffffffff81000020ull);
	put(&raw_size, 4);                     /* raw: 4 + 12 = 16 bytes */
	put(raw, 12);
	u64(0x12345000);                       /* phys */
	u64(4096);                             /* page size */
	CHECK(kp_perfev_sample_parse_as(done(), t, &s) == 0);
	CHECK(s.id == 77 && s.ip == 0xffffffff81000010ull && s.pid == 10 &&
	      s.tid == 12 && s.time == 123456789 &&
	      s.addr == 0x7f0000001000ull && s.cpu == 1 && s.period == 1);
	CHECK(s.nr == 3 && kp_perfev_sample_ip(&s, 2) == 0xffffffff81000020ull);
	CHECK(s.raw_size == 12 && memcmp(s.raw, "abcdefghijk", 12) == 0);
	CHECK(s.phys_addr == 0x12345000 && s.data_page_size == 4096);
	CHECK(s.mode == PERF_RECORD_MISC_KERNEL);
	/* cut anywhere: an error, never a read past the end */
	for (size_t cut = sizeof(struct perf_event_header); cut < len; cut += 4) {
		((struct perf_event_header *)rec)->size = (uint16_t)cut;
		CHECK(kp_perfev_sample_parse_as((void *)rec, t, &s) < 0);
	}
	/* a RAW size past the record */
	start(PERF_RECORD_SAMPLE, 0);
	raw_size = 4000;
	put(&raw_size, 4);
	put(raw, 4);
	CHECK(kp_perfev_sample_parse_as(done(), PERF_SAMPLE_RAW, &s) < 0);
	/* a bit it does not know */
	start(PERF_RECORD_SAMPLE, 0);
	u64(1);
	CHECK(kp_perfev_sample_parse_as(done(), PERF_SAMPLE_READ, &s) < 0);
	/* the basic layout, as before */
	start(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(0x401000);
	u64((uint64_t)5 << 32 | 5);
	u64(0);
	CHECK(kp_perfev_sample_parse(done(), &s) == 0 && s.ip == 0x401000 &&
	      s.pid == 5 && s.nr == 0 && s.time == 0 &&
	      s.mode == PERF_RECORD_MISC_USER);
}

static uint64_t span_ns;

static void
on_span(const struct kp_offcpu_span *sp, void *arg)
{
	(void)arg;
	span_ns += sp->ns;
}

static void
test_switch(void)
{
	struct kp_offcpu *o = kp_offcpu_new();
	struct kp_perfev_sample s;
	uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	uint64_t ip = 0xffffffff81000010ull;

	/* PERF_RECORD_SWITCH: no body, the trailer TID, TIME */
	start(PERF_RECORD_SWITCH, 0);
	u64((uint64_t)8 << 32 | 7);
	u64(5000);
	CHECK(kp_perfev_sample_id(done(), t, &s) == 0 && s.pid == 7 &&
	      s.tid == 8 && s.time == 5000);
	/* a switch-in closes tid 8's wait; a switch-out is left alone */
	kp_offcpu_out(o, 1000, 7, 8, 'S', &ip, 1);
	CHECK(kp_offcpu_switch_record(o, done(), t));
	start(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	u64((uint64_t)8 << 32 | 7);
	u64(6000);
	CHECK(kp_offcpu_switch_record(o, done(), t));
	start(PERF_RECORD_COMM, 0);
	CHECK(!kp_offcpu_switch_record(o, done(), t));
	kp_offcpu_finish(o, 10000, on_span, NULL);
	CHECK(kp_offcpu_stats(o)->spans == 1 && span_ns == 4000);
	kp_offcpu_free(o);
	/* too short for its trailer */
	start(PERF_RECORD_SWITCH, 0);
	u64(1);
	CHECK(kp_perfev_sample_id(done(), t, &s) < 0);
}

/* a scan, records written, a drain: the drain stops where the scan did */
static struct perf_event_mmap_page meta;
static unsigned char data[256];

static void
count(const struct perf_event_header *h, void *arg)
{
	(void)h;
	(*(size_t *)arg)++;
}

static void
test_scan_drain(void)
{
	struct kp_perfev_ring r;
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .size = 16 };
	size_t n = 0;

	memset(&meta, 0, sizeof(meta));
	kp_perfev_ring_init(&r, &meta, data, sizeof(data));
	memcpy(data, &h, sizeof(h));
	meta.data_head = 16;
	CHECK(kp_perfev_ring_scan(&r, count, &n) == 1);
	memcpy(data + 16, &h, sizeof(h)); /* written after the scan */
	meta.data_head = 32;
	n = 0;
	CHECK(kp_perfev_ring_drain(&r, count, &n) == 1 && meta.data_tail == 16);
	/* the next round sees it, scanned and drained */
	CHECK(kp_perfev_ring_scan(&r, count, &n) == 1);
	CHECK(kp_perfev_ring_drain(&r, count, &n) == 1 && meta.data_tail == 32);
	/* a drain with no scan before it takes everything */
	memcpy(data + 32, &h, sizeof(h));
	meta.data_head = 48;
	CHECK(kp_perfev_ring_drain(&r, count, &n) == 1 && meta.data_tail == 48);
}

int
main(void)
{
	test_parse();
	test_switch();
	test_scan_drain();
	return CHECK_DONE();
}
