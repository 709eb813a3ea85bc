/*
 * name_key.h - the key of a filter that names frames (kp-inclusive,
 * kp-fold, kp-flame) for test_reader and fuzz_reader: a frame less its
 * address, offset and size where it is said to ignore them: for every
 * frame (name_keyed 1, KP_KEY_NAMED | KP_KEY_UNNAMED), for frames with a
 * symbol (2, KP_KEY_NAMED), for frames with a module (3, KP_KEY_NAMED |
 * KP_KEY_MODULE), so that the reader's fast path reads names (reader.c,
 * the name cache) where its plain path parses every line; the key of
 * 1 said to ignore all, nothing and KP_KEY_NAMED in turn, record by
 * record (4: what a key is said to ignore changes between records, as
 * kp-fold's does once the metadata names the source); 3's, with frames
 * of neither a symbol nor a module keyed by whether their address is
 * the kernel's (5, also KP_KEY_BARE_KERNEL: kp-flame's).  name_keyed 0:
 * no key.  NAME_KEYS: how many there are.
 */
#define NAME_KEYS 6
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
	if (name_keyed == 5 && !f->sym && !f->module) {
		/* its kind only */
		if ((f->flags & KP_F_ADDR) && kp_addr_is_kernel(f->addr)) {
			g.addr = KP_KERNEL_START;
			g.flags |= KP_F_ADDR;
		}
	} else if (name_keyed == 2 ? !f->sym
				   : (name_keyed == 3 || name_keyed == 5) &&
					     !f->module) {
		/* not ignored */
		g.addr = f->addr;
		g.off = f->off;
		g.size = f->size;
		g.flags = f->flags;
	}
	return kp_frame_intern(&g);
}

/* What the key of name_keyed is said to ignore after its nth record. */
static unsigned
name_key_ignores(unsigned long n)
{
	static const unsigned turn[3] = { KP_KEY_NAMED | KP_KEY_UNNAMED, 0,
					  KP_KEY_NAMED };

	switch (name_keyed) {
	case 1:
		return KP_KEY_NAMED | KP_KEY_UNNAMED;
	case 2:
		return KP_KEY_NAMED;
	case 3:
		return KP_KEY_NAMED | KP_KEY_MODULE;
	case 5:
		return KP_KEY_NAMED | KP_KEY_MODULE | KP_KEY_BARE_KERNEL;
	default:
		return turn[n % 3];
	}
}

/* rd read with the key name_keyed says (before its first record). */
static void
name_key_set(struct kp_reader *rd)
{
	if (!name_keyed)
		return;
	kp_reader_set_key(rd, name_key);
	kp_reader_key_ignores(rd, name_key_ignores(0));
}

/* After rd's nth record (1, 2, ...): name_keyed 4 says anew. */
static void
name_key_after(struct kp_reader *rd, unsigned long n)
{
	if (name_keyed == 4)
		kp_reader_key_ignores(rd, name_key_ignores(n));
}

#endif /* KP_TESTS_NAME_KEY_H */
