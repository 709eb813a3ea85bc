/*
 * reader.h - the kp reader (reader.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_READER_H
#define KP_READER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include "frame.h"
#include "meta.h"

struct kp_reader;

/* Open a kp (or SystemTap) stream; "-" is stdin.  Cannot open: exit 2. */
struct kp_reader *kp_reader_open(const char *path);
/*
 * kp_reader_open ends the program when the input is what a converter
 * reads, not kp (perf.data, perf script text, folded stacks: kp(5)),
 * unless this is false (the fuzz targets, which feed it any bytes).
 */
extern bool kp_refuse_foreign;
/*
 * kp_reader_next reads the lines that are whole in the input buffer
 * where they lie, some ahead (reader.c); when this is false every line
 * takes the path that reads any line (the tests compare the two).  The
 * records, messages and line numbers are the same.
 */
extern bool kp_reader_fast;
/*
 * The next record, or NULL at the end of the input.  The stack and its
 * frame array are valid until the next call.  Metadata lines go to
 * kp_meta_*; malformed records are skipped with kp_input_skip.
 */
const struct kp_stack *kp_reader_next(struct kp_reader *rd);
/*
 * A filter that needs less of a frame than the line holds (kp-fold names
 * a frame by its function) has the reader give key(frame) in place of
 * each frame: lines that read as one key then give one pointer, so that
 * records that differ only in what the filter ignores merge as they are
 * read, and the frames themselves are not interned.  key is called for
 * each distinct line (for each occurrence of a line the cache does not
 * keep), with the frame the line reads as, its strings interned but not
 * itself (its id means nothing), and returns an interned frame.  Before
 * the first kp_reader_next.
 */
typedef const struct kp_frame *(*kp_frame_key_fn)(const struct kp_frame *);
void kp_reader_set_key(struct kp_reader *rd, kp_frame_key_fn key);
/*
 * What the key ignores, said so that lines differing only in that are
 * looked up once by their names (reader.c, the name cache): the
 * address, offset and size of a frame with a symbol and a module
 * (KP_KEY_NAMED), of one with a module and no symbol (KP_KEY_MODULE),
 * of one without a symbol, with or without a module (KP_KEY_UNNAMED:
 * KP_KEY_MODULE and more).  That is, key(f) is the same frame for two
 * such frames that differ only there (and in the flags KP_F_ADDR,
 * KP_F_OFF and KP_F_SIZE).  KP_KEY_BARE_KERNEL, for a key that keeps
 * less than KP_KEY_UNNAMED says: of a frame with neither a symbol nor a
 * module, all but whether its address is the kernel's
 * (kp_addr_is_kernel): key(f) is the same for two such frames whose
 * addresses are both the kernel's, or both not.  After
 * kp_reader_set_key (with no key set, nothing is ignored), and again
 * between records when what the key ignores has changed (with the
 * metadata read so far, say).
 */
enum {
	KP_KEY_NAMED = 1,
	KP_KEY_MODULE = 2,
	KP_KEY_UNNAMED = 6,
	KP_KEY_BARE_KERNEL = 8
};
void kp_reader_key_ignores(struct kp_reader *rd, unsigned what);
/*
 * The ids of the frames of the record kp_reader_next returned last:
 * ids[i] is frames[i]->id.  A filter that keeps what it derives from a
 * frame in an array by id (kp_frame.id) looks there without reading the
 * frame itself, which on a real capture is mostly out of the cache.
 */
const uint32_t *kp_reader_ids(const struct kp_reader *rd);
struct kp_input *kp_reader_input(struct kp_reader *rd);
void kp_reader_close(struct kp_reader *rd);

#endif /* KP_READER_H */
