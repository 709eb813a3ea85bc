/*
 * pb.h - a small protocol buffers encoder (kp-pprof's profile.proto).
 *
 * Messages are built bottom up: encode a nested message into its own
 * struct kp_pb, then append it to its parent with kp_pb_msg.  Only what
 * profile.proto needs: varints (uint64, int64, bool), length-delimited
 * bytes and messages, and packed repeated varints.  The buffers grow as
 * needed (out of memory is fatal, as everywhere in kp); nothing prints.
 *
 * Wire format: https://protobuf.dev/programming-guides/encoding/ --
 * a field is a varint key (field << 3 | wire type) then its value; wire
 * type 0 is a varint, 2 a varint length then that many bytes.
 */
#ifndef KP_PB_H
#define KP_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kp_pb {
	unsigned char *p;
	size_t len, cap;
};

/* An empty buffer (a zeroed struct is one too). */
void kp_pb_init(struct kp_pb *b);
void kp_pb_free(struct kp_pb *b);
/* Forget the contents, keep the memory. */
void kp_pb_reset(struct kp_pb *b);

void kp_pb_raw(struct kp_pb *b, const void *p, size_t n);
void kp_pb_varint(struct kp_pb *b, uint64_t v);
/* A varint field; proto3 omits zero values, and so does this. */
void kp_pb_uint(struct kp_pb *b, unsigned field, uint64_t v);
/* An int64 field: negative values as ten-byte two's complement. */
void kp_pb_int(struct kp_pb *b, unsigned field, int64_t v);
/* A length-delimited field: bytes, a string (always written). */
void kp_pb_bytes(struct kp_pb *b, unsigned field, const void *p, size_t n);
void kp_pb_str(struct kp_pb *b, unsigned field, const char *s);
/* An embedded message (always written, even when empty). */
void kp_pb_msg(struct kp_pb *b, unsigned field, const struct kp_pb *sub);
/* A packed repeated varint field (nothing when n is 0). */
void kp_pb_packed(struct kp_pb *b, unsigned field, const uint64_t *v,
		  size_t n);
/*
 * The buffer gzip-compressed to fp, deterministic (no name, no time in
 * the header); write errors show in ferror(fp).
 */
void kp_pb_write_gzip(FILE *fp, const struct kp_pb *b);

#endif /* KP_PB_H */
