/*
 * unwind.h - the user stack of a "perf record --call-graph dwarf" sample,
 * unwound with libdw (libdwfl's dwfl_attach_state and
 * dwfl_getthread_frames over the sample's REGS_USER and STACK_USER, as
 * hotspot's perfparser and perf's unwind-libdw.c do).
 *
 *	struct kp_unwind *u = kp_unwind_new(procs);
 *	struct kp_unwind_regs s = { pid, abi, mask, regs, nregs,
 *				     stack, dyn_size };
 *	uint64_t pcs[KP_UNWIND_MAX];
 *	const char *why;
 *	size_t n = kp_unwind_user(u, &s, pcs, KP_UNWIND_MAX, &why);
 *	...
 *	kp_unwind_free(u);
 *
 * The code is found through the process model (procs.h): each
 * executable mapping of the sample's process that the unwinding reaches
 * is reported to libdwfl as an ELF module (the file opened as a regular
 * file only, and only if its build-id is the one the capture names), its
 * .eh_frame giving the rules.  One Dwfl per process (per program: an
 * exec starts another), kept with its modules for the samples after, so
 * that what a sample costs is its unwinding.  Memory reads come from the
 * sample's stack copy, [sp, sp + dyn_size), else from the mapped file's
 * bytes.
 *
 * x86-64 only (the capture's arch "x86_64", the sample's regs abi
 * PERF_SAMPLE_REGS_ABI_64); anything else gives 0 frames and *why.
 * The library prints nothing.
 */
#ifndef KP_UNWIND_H
#define KP_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "procs.h"

/* What perf unwinds at most: its default max-stack (127). */
#define KP_UNWIND_MAX 127

struct kp_unwind;

/* A sample's REGS_USER and STACK_USER, as the perf.data reader gives them. */
struct kp_unwind_regs {
	uint32_t pid;
	uint64_t abi;         /* PERF_SAMPLE_REGS_ABI_* */
	uint64_t mask;        /* attr.sample_regs_user: which regs, in order */
	const uint64_t *regs; /* one per bit of mask, low bit first */
	uint32_t nregs;
	const uint8_t *stack; /* the copy of the stack from sp on */
	uint64_t size;        /* its bytes that hold data (dyn_size) */
};

/* arch: the capture's (uname -m), NULL if the header does not say. */
struct kp_unwind *kp_unwind_new(struct kp_procs *procs, const char *arch);
void kp_unwind_free(struct kp_unwind *u);

/*
 * The user stack of s into pcs[0..max), innermost first, as perf 6.1
 * gives it: pcs[0] the sampled user IP, then for each caller its return
 * address minus 1 (the call instruction's last byte; not for the frame
 * a signal interrupted), looked up at that address as it is.  Returns
 * how many; the unwinding ends where the stack copy, the code's
 * mappings or their CFI end.  Returns 0 with *why (a static string) if
 * the sample cannot be unwound at all (not x86-64, no SP or IP in its
 * regs).
 */
size_t kp_unwind_user(struct kp_unwind *u, const struct kp_unwind_regs *s,
		      uint64_t *pcs, size_t max, const char **why);

#endif /* KP_UNWIND_H */
