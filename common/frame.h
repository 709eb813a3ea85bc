/*
 * frame.h - the frame model, the frame-line syntax and stacks (frame.c).
 * Part of common/kp.h, which includes every such header; the
 * conventions are kp.h's.
 */
#ifndef KP_FRAME_H
#define KP_FRAME_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"
#include "strtab.h"

enum {
	KP_F_ADDR = 1 << 0,    /* addr is known */
	KP_F_OFF = 1 << 1,     /* off is known */
	KP_F_SIZE = 1 << 2,    /* size is known */
	KP_F_INEXACT = 1 << 3, /* SystemTap's "(inexact)" */
	KP_F_INLINE = 1 << 4,  /* an inlined function at its caller's addr */
};

/*
 * One frame.  sym, module and file are interned (or NULL when unknown).
 * Without sym, off and size are relative to the module (SystemTap's
 * "0xADDR [kernel+0x10/0x20]").  Frames are interned too: two equal
 * frames are one pointer (kp_frame_intern), so a stack is an array of
 * frame pointers that hashes and compares as plain memory.
 */
struct kp_frame {
	uint64_t addr;
	uint64_t off;
	uint64_t size;
	const char *sym;
	const char *module;
	const char *file; /* source file, with line (kp-addr2sym -l) */
	uint32_t line;
	uint32_t flags;
	/*
	 * Not part of the frame: kp_frame_intern numbers the frames it
	 * keeps 0, 1, 2 ... (kp_frame_count() of them), so that a filter
	 * keeps what it derives from a frame in an array indexed by id
	 * instead of a table keyed by pointer.  Ignored in *f.
	 */
	uint32_t id;
};

/* The bytes of a frame that are the frame (all but id). */
#define KP_FRAME_KEY offsetof(struct kp_frame, id)

/* Return the unique pointer for a frame equal to *f (id aside). */
const struct kp_frame *kp_frame_intern(const struct kp_frame *f);
/* Helper: intern a frame from parts (any of sym/module may be NULL). */
const struct kp_frame *kp_frame_make(uint64_t addr, unsigned flags,
				     const char *sym, const char *module);
size_t kp_frame_count(void);

/*
 * Parse one frame line (already stripped of its line end).  Returns 0
 * and fills *f (strings interned), or -1 with *why set to a static
 * description of what is wrong.
 */
int kp_frame_parse(const char *s, size_t len, struct kp_frame *f,
		   const char **why);
/*
 * The frame the reader reads back from the line kp_write_frame prints for
 * *f, computed from its fields (the rule is above its code in frame.c):
 * true and *g, or false when that line reads as no frame (neither an
 * address nor a symbol).  Strings in *f must be interned; so are *g's.
 */
bool kp_frame_reread(const struct kp_frame *f, struct kp_frame *g);

/* The first address of the x86-64 kernel half. */
#define KP_KERNEL_START 0xffff800000000000ull

/* True for an x86-64 kernel-half address (KP_KERNEL_START and up). */
static inline bool
kp_addr_is_kernel(uint64_t addr)
{
	return addr >= KP_KERNEL_START;
}

/* True when the module is the kernel image (kernel, vmlinux*,
 * [kernel.kallsyms]). */
bool kp_module_is_vmlinux(const char *module);
/* True when the module names kernel code (the image or a module). */
bool kp_module_is_kernel(const char *module);

/*
 * The one name of time spent in user mode when user stacks are not
 * recorded (kp-sample without --user, perf2kp --kernel-only, kp-top
 * --by module): a frame of this symbol and no module.  man/kp.5.
 */
#define KP_USER_FRAME "[user]"

/*
 * The name of a frame as the folded format and the reports show it:
 * the symbol (with "+0xOFF" if want_off), else the address if want_addr,
 * else "[module]" or "[unknown]".  Writes into buf (grown as needed),
 * returns its length.
 */
size_t kp_frame_name(const struct kp_frame *f, bool want_off, bool want_addr,
		     char **buf, size_t *cap);


/* A stack: frames leaf (innermost) first, and its count (or weight). */
struct kp_stack {
	const struct kp_frame **frames;
	size_t n;
	uint64_t count;
};

#endif /* KP_FRAME_H */
