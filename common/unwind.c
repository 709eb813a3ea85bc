/*
 * unwind.c - user stacks of --call-graph dwarf samples through libdwfl:
 * see unwind.h.
 *
 * A session per process (struct sess): a Dwfl attached (dwfl_attach_state)
 * with thread callbacks that read the sample being unwound, u->cur.
 * Modules are reported as the unwinding reaches them, as perf's
 * unwind-libdw.c does: the frame callback reports the module of each pc
 * before asking dwfl_frame_pc whether it is an activation, which
 * unwinds the next frame with that module's CFI.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtab.h"
#include "unwind.h"

/* perf's x86-64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
enum { PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP,
       PR_R8 = 16 };
/* The DWARF registers of x86-64 (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi,
 * 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address, rip) as
 * perf numbers them. */
static const int dwarf_perf[17] = {
	PR_AX,	    PR_DX,	PR_CX,	    PR_BX,	PR_SI,	    PR_DI,
	PR_BP,	    PR_SP,	PR_R8,	    PR_R8 + 1,	PR_R8 + 2,  PR_R8 + 3,
	PR_R8 + 4,  PR_R8 + 5,	PR_R8 + 6,  PR_R8 + 7,	PR_IP,
};

/* A file a mapping names: opened once, checked against its build-id. */
struct ufile {
	const char *path, *build_id; /* interned */
	int fd;			     /* -1: not usable */
	Elf *elf;
	struct ufile *next;
};

/* One process's Dwfl. */
struct sess {
	uint32_t pid;
	const struct kp_proc *proc; /* the program it was made for */
	Dwfl *dwfl;
	bool attached;
};

struct kp_unwind {
	struct kp_procs *procs;
	bool x86_64;
	Elf *ehdr_elf; /* an ELF header of x86-64: dwfl_attach_state's arch */
	struct kp_slots sess; /* pid -> struct sess */
	struct ufile *files[256];
	/* the sample being unwound */
	const struct kp_unwind_regs *cur;
	struct sess *s;
	uint64_t sp;
	uint64_t *pcs;
	size_t n, max;
	bool read_failed; /* since the last frame: a word not in the copy */
};

static int
find_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
		  Dwarf_Addr base, const char *file_name,
		  const char *debuglink_file, GElf_Word debuglink_crc,
		  char **debuginfo_file_name)
{
	/* .eh_frame of the file itself: no debug files are looked for */
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks offline = {
	.find_debuginfo = find_no_debuginfo,
};

struct kp_unwind *
kp_unwind_new(struct kp_procs *procs, const char *arch)
{
	static Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
			     ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_ehsize = sizeof(Elf64_Ehdr),
	};
	struct kp_unwind *u = kp_xcalloc(1, sizeof(*u));

	u->procs = procs;
	u->x86_64 = !arch || strcmp(arch, "x86_64") == 0;
	elf_version(EV_CURRENT);
	u->ehdr_elf = elf_memory((char *)&eh, sizeof(eh));
	return u;
}

static struct ufile *
ufile_get(struct kp_unwind *u, const struct kp_map *m)
{
	size_t h = (size_t)(kp_hash(&m->path, sizeof(m->path)) & 255);
	struct ufile *f;
	char *id, *where;
	bool same;

	for (f = u->files[h]; f; f = f->next)
		if (f->path == m->path && f->build_id == m->build_id)
			return f->fd < 0 ? NULL : f;
	f = kp_xcalloc(1, sizeof(*f));
	f->path = m->path;
	f->build_id = m->build_id;
	f->next = u->files[h];
	u->files[h] = f;
	f->fd = kp_open_regular(f->path, 0);
	if (f->fd >= 0) {
		f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
		if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
			goto bad;
	}
	if (f->fd >= 0 && f->build_id) {
		/* the file sampled, not one rebuilt since (the resolver
		 * says so once, naming it) */
		id = kp_elf_build_id_of(f->elf);
		same = id && strcmp(id, f->build_id) == 0;
		free(id);
		if (!same) {
			elf_end(f->elf);
			f->elf = NULL;
			close(f->fd);
			f->fd = -1;
		}
	}
	if (f->fd < 0 && f->build_id) {
		/* gone or rebuilt: the copy perf's build-id cache kept, as
		 * perf's libunwind reads it (dso__data_fd, the cache first;
		 * the resolver says when one cannot be used) */
		f->fd = kp_buildid_cache_open(f->path, f->build_id, "elf",
					      &where);
		free(where);
		if (f->fd < 0)
			return NULL;
		f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
		if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
			goto bad;
		id = kp_elf_build_id_of(f->elf);
		same = id && strcmp(id, f->build_id) == 0;
		free(id);
		if (!same)
			goto bad;
	}
	if (f->fd < 0)
		return NULL;
	return f;
bad:
	if (f->elf)
		elf_end(f->elf);
	f->elf = NULL;
	close(f->fd);
	f->fd = -1;
	return NULL;
}

/* Report the mapping that holds pc to the session's Dwfl, if any. */
static void
report(struct kp_unwind *u, Dwarf_Addr pc)
{
	const struct kp_map *m;
	struct ufile *f;
	GElf_Phdr ph;
	size_t i, nph;
	uint64_t bias = 0;
	bool found = false;
	Dwfl_Module *mod;
	int fd;

	if (dwfl_addrmodule(u->s->dwfl, pc))
		return;
	m = kp_procs_map(u->procs, u->cur->pid, pc);
	if (!m || !(f = ufile_get(u, m)))
		return;
	/* the load bias: the mapping's start less the ELF address of the
	 * file offset it starts at */
	if (elf_getphdrnum(f->elf, &nph) != 0)
		return;
	for (i = 0; i < nph && !found; i++)
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    m->pgoff >= ph.p_offset &&
		    m->pgoff - ph.p_offset < ph.p_filesz) {
			bias = m->start - (ph.p_vaddr + (m->pgoff - ph.p_offset));
			found = true;
		}
	if (!found || (fd = dup(f->fd)) < 0)
		return;
	dwfl_report_begin_add(u->s->dwfl);
	mod = dwfl_report_elf(u->s->dwfl, m->path, m->path, fd, bias, true);
	if (!mod)
		close(fd); /* overlapping what is there: not used */
	dwfl_report_end(u->s->dwfl, NULL, NULL);
}

/* ---- the thread callbacks: one thread, the sample's ---- */

static pid_t
next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool
get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return tid == dwfl_pid(dwfl);
}

static bool
memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct kp_unwind *u = arg;
	const struct kp_map *m;
	struct ufile *f;
	uint64_t off;

	(void)dwfl;
	/* the stack copy; as perf, a word that ends at the copy's end is
	 * not taken from it (unwind-libunwind-local.c access_mem) */
	if (addr >= u->sp && addr - u->sp < u->cur->size &&
	    u->cur->size - (addr - u->sp) > sizeof(*result)) {
		memcpy(result, u->cur->stack + (addr - u->sp), sizeof(*result));
		return true;
	}
	/* else the bytes of a mapped file */
	m = kp_procs_map(u->procs, u->cur->pid, addr);
	off = m ? addr - m->start + m->pgoff : 0;
	if (!m || addr + sizeof(*result) > m->end || !(f = ufile_get(u, m)) ||
	    pread(f->fd, result, sizeof(*result), (off_t)off) !=
		    (ssize_t)sizeof(*result)) {
		u->read_failed = true;
		return false;
	}
	return true;
}

static bool
set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct kp_unwind *u = arg;
	Dwarf_Word r;
	int i, bit;

	for (i = 0; i < 17; i++) {
		bit = dwarf_perf[i];
		if (!(u->cur->mask >> bit & 1))
			continue;
		r = u->cur->regs[__builtin_popcountll(u->cur->mask &
						      ((1ull << bit) - 1))];
		if (!dwfl_thread_state_registers(thread, i, 1, &r))
			return false;
	}
	return true;
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int
frame(Dwfl_Frame *state, void *arg)
{
	struct kp_unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	report(u, pc); /* before the next frame is unwound with its CFI */
	u->read_failed = false; /* what unwinding the caller reads */
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = activation ? pc : pc - 1;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* ---- sessions ---- */

static void
sess_end(struct sess *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
	s->attached = false;
}

static struct sess *
sess_get(struct kp_unwind *u, uint32_t pid)
{
	const struct kp_proc *p = kp_procs_find(u->procs, pid);
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull;
	struct sess *s;
	size_t i, mask;

	s = NULL;
	if (u->sess.cap) {
		mask = u->sess.cap - 1;
		for (i = h & mask; u->sess.tab[i].p; i = (i + 1) & mask)
			if (((struct sess *)u->sess.tab[i].p)->pid == pid) {
				s = u->sess.tab[i].p;
				break;
			}
	}
	if (!s) {
		kp_slots_reserve(&u->sess, 64);
		s = kp_xcalloc(1, sizeof(*s));
		s->pid = pid;
		kp_slots_put(&u->sess, h, s);
	}
	if (s->dwfl && s->proc != p) /* an exec: another program */
		sess_end(s);
	if (!s->dwfl) {
		s->dwfl = dwfl_begin(&offline);
		s->proc = p;
		if (!s->dwfl)
			return NULL;
	}
	return s;
}

size_t
kp_unwind_user(struct kp_unwind *u, const struct kp_unwind_regs *r,
	       uint64_t *pcs, size_t max, const char **why)
{
	struct sess *s;
	uint64_t want = 1ull << PR_SP | 1ull << PR_IP;

	*why = NULL;
	if (!u->x86_64) {
		*why = "the capture is not of x86-64";
		return 0;
	}
	if (r->abi != PERF_SAMPLE_REGS_ABI_64) {
		*why = r->abi == PERF_SAMPLE_REGS_ABI_32
			       ? "a 32-bit process"
			       : "no user registers";
		return 0;
	}
	if ((r->mask & want) != want ||
	    r->nregs != (uint32_t)__builtin_popcountll(r->mask)) {
		*why = "no SP or IP among the user registers";
		return 0;
	}
	if (max == 0 || !(s = sess_get(u, r->pid))) {
		*why = "libdwfl could not start";
		return 0;
	}
	u->cur = r;
	u->s = s;
	u->sp = r->regs[__builtin_popcountll(r->mask & ((1ull << PR_SP) - 1))];
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	if (!s->attached) {
		if (!dwfl_attach_state(s->dwfl, u->ehdr_elf, (pid_t)r->pid,
				       &thread_cbs, u)) {
			*why = "libdwfl could not attach";
			return 0;
		}
		s->attached = true;
	}
	/* libdwfl ends where a return address cannot be read as where
	 * the CFI ends the stack, without an error */
	u->read_failed = false;
	dwfl_getthread_frames(s->dwfl, (pid_t)r->pid, frame, u);
	if (u->read_failed && u->n > 0 && u->n < u->max)
		/* the caller's return address is past the stack copy: perf
		 * (libunwind) gives one more frame there, an IP of 0 less 1,
		 * "[unknown]", which marks the stack cut short */
		pcs[u->n++] = (uint64_t)0 - 1;
	if (u->n == 0) {
		/* not even the IP (a pid libdwfl takes for no thread) */
		pcs[0] = r->regs[__builtin_popcountll(r->mask &
						      ((1ull << PR_IP) - 1))];
		u->n = 1;
	}
	u->cur = NULL;
	return u->n;
}

void
kp_unwind_free(struct kp_unwind *u)
{
	struct ufile *f, *next;
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->sess.cap; i++)
		if (u->sess.tab[i].p) {
			sess_end(u->sess.tab[i].p);
			free(u->sess.tab[i].p);
		}
	kp_slots_free(&u->sess);
	for (i = 0; i < 256; i++)
		for (f = u->files[i]; f; f = next) {
			next = f->next;
			if (f->elf)
				elf_end(f->elf);
			if (f->fd >= 0)
				close(f->fd);
			free(f);
		}
	if (u->ehdr_elf)
		elf_end(u->ehdr_elf);
	free(u);
}
