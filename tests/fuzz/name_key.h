/*
 * name_key.h - the key of a filter that names frames (kp-inclusive,
 * kp-fold, kp-flame) for test_reader and fuzz_reader: a frame less its
 * address, offset and size where it is said to ignore them: for every
 * frame (name_keyed 1, KP_KEY_NAMED | KP_KEY_UNNAMED), for frames with a
 * symbol (2, KP_KEY_NAMED), for frames with a module (3, KP_KEY_NAMED |
 * KP_KEY_MODULE), so that the reader's fast path reads names (reader.c,
 * the name cache) where its plain path parses every line.  name_keyed
 * 0: no key.
 */
#ifndef KP_TESTS_NAME_KEY_H
#define KP_TESTS_NAME_KEY_H

#include <string.h>

#include "kp.h"

static int name_keyed;

static const struct kp_frame *
name_key(const struct kp_frame *f)
{
	struct kp_frame g;

	memset(&g, 0, sizeof(g));
	g.sym = f->sym;
	g.module = f->module;
	g.file = f->file;
	g.line = f->line;
	g.flags = f->flags & (KP_F_INLINE | KP_F_INEXACT);
	if (name_keyed == 2 ? !f->sym : name_keyed == 3 && !f->module) {
		/* not ignored */
		g.addr = f->addr;
		g.off = f->off;
		g.size = f->size;
		g.flags = f->flags;
	}
	return kp_frame_intern(&g);
}

/* rd read with the key name_keyed says (before its first record). */
static void
name_key_set(struct kp_reader *rd)
{
	if (!name_keyed)
		return;
	kp_reader_set_key(rd, name_key);
	kp_reader_key_ignores(rd, name_keyed == 1   ? KP_KEY_NAMED |
							      KP_KEY_UNNAMED
				  : name_keyed == 2 ? KP_KEY_NAMED
						    : KP_KEY_NAMED |
							      KP_KEY_MODULE);
}

#endif /* KP_TESTS_NAME_KEY_H */
