/* pb.c - a small protocol buffers encoder (see pb.h) */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kp.h"
#include "pb.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

void
kp_pb_init(struct kp_pb *b)
{
	memset(b, 0, sizeof(*b));
}

void
kp_pb_free(struct kp_pb *b)
{
	free(b->p);
	kp_pb_init(b);
}

void
kp_pb_reset(struct kp_pb *b)
{
	b->len = 0;
}

static void
reserve(struct kp_pb *b, size_t n)
{
	if (b->cap - b->len >= n)
		return;
	if (n > SIZE_MAX / 2 - b->len)
		kp_die("out of memory");
	b->cap = (b->len + n) * 2 < 256 ? 256 : (b->len + n) * 2;
	b->p = kp_xrealloc(b->p, b->cap);
}

void
kp_pb_raw(struct kp_pb *b, const void *p, size_t n)
{
	reserve(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
kp_pb_varint(struct kp_pb *b, uint64_t v)
{
	unsigned char *q;

	reserve(b, 10);
	q = b->p + b->len;
	while (v >= 0x80) {
		*q++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*q++ = (unsigned char)v;
	b->len = (size_t)(q - b->p);
}

static void
key(struct kp_pb *b, unsigned field, unsigned wire)
{
	kp_pb_varint(b, (uint64_t)field << 3 | wire);
}

void
kp_pb_uint(struct kp_pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	key(b, field, WIRE_VARINT);
	kp_pb_varint(b, v);
}

void
kp_pb_int(struct kp_pb *b, unsigned field, int64_t v)
{
	kp_pb_uint(b, field, (uint64_t)v);
}

void
kp_pb_bytes(struct kp_pb *b, unsigned field, const void *p, size_t n)
{
	key(b, field, WIRE_LEN);
	kp_pb_varint(b, n);
	kp_pb_raw(b, p, n);
}

void
kp_pb_str(struct kp_pb *b, unsigned field, const char *s)
{
	kp_pb_bytes(b, field, s, strlen(s));
}

void
kp_pb_msg(struct kp_pb *b, unsigned field, const struct kp_pb *sub)
{
	kp_pb_bytes(b, field, sub->p, sub->len);
}

void
kp_pb_packed(struct kp_pb *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;
	uint64_t x;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		for (x = v[i], len++; x >= 0x80; x >>= 7)
			len++;
	key(b, field, WIRE_LEN);
	kp_pb_varint(b, len);
	for (i = 0; i < n; i++)
		kp_pb_varint(b, v[i]);
}

/* gzip (deterministic: no name, no time) to fp. */
void
kp_pb_write_gzip(FILE *fp, const struct kp_pb *b)
{
	unsigned char out[1 << 16];
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		kp_die("zlib: cannot start deflate");
	z.next_in = b->p;
	z.avail_in = (uInt)b->len;
	if (z.avail_in != b->len)
		kp_die("profile too large (%zu bytes)", b->len);
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		r = deflate(&z, Z_FINISH);
		if (r == Z_STREAM_ERROR)
			kp_die("zlib: deflate failed");
		if (fwrite(out, 1, sizeof(out) - z.avail_out, fp) !=
		    sizeof(out) - z.avail_out)
			break; /* reported by kp_close_output */
	} while (r != Z_STREAM_END);
	deflateEnd(&z);
}
