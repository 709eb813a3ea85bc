/*
 * context.h - the execution context of a sample, inferred from the
 * frames of its stack, and the compiler clone suffixes of kernel
 * function names (context.c; the rules are in man/kp.5, EXECUTION
 * CONTEXT).
 *
 * The frames are read from the leaf outwards, and the first one that is
 * an entry point of a context (a table in context.c: "handle_softirqs"
 * is softirq, "asm_sysvec_*" hardirq, "do_idle" idle, ...) decides: a
 * softirq run on the way out of an interrupt that hit the idle loop is
 * softirq, not idle.  A stack with no such frame is task when it has a
 * kernel frame, user when it has none.
 */
#ifndef KP_CONTEXT_H
#define KP_CONTEXT_H

#include "kp.h"

enum kp_context {
	KP_CTX_USER,
	KP_CTX_TASK,
	KP_CTX_SOFTIRQ,
	KP_CTX_HARDIRQ,
	KP_CTX_NMI,
	KP_CTX_IDLE,
	KP_CTX_COUNT
};

/* "user", "task", "softirq", "hardirq", "nmi", "idle"; -1 if none. */
int kp_context_parse(const char *s);
const char *kp_context_name(enum kp_context c);
/* The context of the stack frames[0..n) (leaf first). */
enum kp_context kp_context_of(const struct kp_frame *const *frames, size_t n);

/* Is f kernel code: an address in the kernel half, else a kernel
 * module name (kp_module_is_kernel)? */
bool kp_frame_is_kernel(const struct kp_frame *f);

/*
 * A new agg of one-frame stacks: each stack of agg becomes the name of
 * its context ("softirq"), so that a profile of it counts samples per
 * context (kp-inclusive --by context).
 */
struct kp_agg *kp_context_agg(const struct kp_agg *agg);

/*
 * The length of sym without the suffixes the compiler gives clones of a
 * function: ".isra.N", ".constprop.N", ".part.N", ".cold", ".cold.N",
 * ".lto_priv.N", ".llvm.N" and their combinations, so that
 * "foo.constprop.0.isra.0" is "foo".  strlen(sym) when it has none.
 */
size_t kp_clone_base_len(const char *sym);

#endif /* KP_CONTEXT_H */
