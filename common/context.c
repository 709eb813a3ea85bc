/*
 * context.c - execution contexts from stacks, and clone suffixes
 * (context.h).  The one table of context entry points is below; kp.5
 * lists it for users.
 */
#include <string.h>

#include "context.h"

static const char *const names[KP_CTX_COUNT] = {
	"user", "task", "softirq", "hardirq", "nmi", "idle",
};

/*
 * The frames that mark a context, by function name (clone suffixes
 * removed).  A name ending in '*' is a prefix.
 */
static const struct marker {
	const char *name;
	enum kp_context ctx;
} markers[] = {
	/* NMI entry */
	{ "asm_exc_nmi", KP_CTX_NMI },
	{ "exc_nmi", KP_CTX_NMI },
	{ "default_do_nmi", KP_CTX_NMI },
	{ "do_nmi", KP_CTX_NMI },
	{ "nmi_handle", KP_CTX_NMI },
	{ "end_repeat_nmi", KP_CTX_NMI },
	/* hard interrupts: vectors, the generic entry, irq flow handlers */
	{ "asm_sysvec_*", KP_CTX_HARDIRQ },
	{ "sysvec_*", KP_CTX_HARDIRQ },
	{ "__sysvec_*", KP_CTX_HARDIRQ },
	{ "asm_common_interrupt", KP_CTX_HARDIRQ },
	{ "common_interrupt", KP_CTX_HARDIRQ },
	{ "do_IRQ", KP_CTX_HARDIRQ },
	{ "handle_irq_event", KP_CTX_HARDIRQ },
	{ "__handle_irq_event_percpu", KP_CTX_HARDIRQ },
	{ "generic_handle_irq", KP_CTX_HARDIRQ },
	/* softirqs, on irq exit, on local_bh_enable or in ksoftirqd */
	{ "handle_softirqs", KP_CTX_SOFTIRQ },
	{ "__do_softirq", KP_CTX_SOFTIRQ },
	{ "do_softirq", KP_CTX_SOFTIRQ },
	{ "do_softirq_own_stack", KP_CTX_SOFTIRQ },
	{ "run_ksoftirqd", KP_CTX_SOFTIRQ },
	/* the idle loop */
	{ "do_idle", KP_CTX_IDLE },
	{ "cpu_startup_entry", KP_CTX_IDLE },
	{ "cpu_idle_poll", KP_CTX_IDLE },
	{ "cpuidle_idle_call", KP_CTX_IDLE },
	{ "cpuidle_enter", KP_CTX_IDLE },
	{ "cpuidle_enter_state", KP_CTX_IDLE },
	{ "default_idle_call", KP_CTX_IDLE },
	{ "default_idle", KP_CTX_IDLE },
	{ "default_enter_idle", KP_CTX_IDLE },
	{ "arch_cpu_idle", KP_CTX_IDLE },
	{ "poll_idle", KP_CTX_IDLE },
	{ "intel_idle", KP_CTX_IDLE },
	{ "acpi_idle_enter", KP_CTX_IDLE },
	{ "mwait_idle", KP_CTX_IDLE },
};

/* A symbol's marker context, -1 if it marks none; cached by symbol. */
struct cached {
	const char *sym;
	int ctx;
};
static struct kp_slots cache;
static struct kp_pool cache_pool;

int
kp_context_parse(const char *s)
{
	int i;

	for (i = 0; i < KP_CTX_COUNT; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

const char *
kp_context_name(enum kp_context c)
{
	return names[c];
}

static int
marker_of(const char *sym)
{
	size_t len = kp_clone_base_len(sym), i, m;

	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		m = strlen(markers[i].name);
		if (markers[i].name[m - 1] == '*') {
			if (len >= m - 1 && memcmp(sym, markers[i].name, m - 1) == 0)
				return (int)markers[i].ctx;
		} else if (len == m && memcmp(sym, markers[i].name, m) == 0) {
			return (int)markers[i].ctx;
		}
	}
	return -1;
}

/* The marker context of an interned symbol. */
static int
sym_context(const char *sym)
{
	uint64_t h = kp_hash(&sym, sizeof(sym));
	struct cached *c;
	size_t j;

	if (cache.cap)
		for (j = h & (cache.cap - 1); cache.tab[j].p;
		     j = (j + 1) & (cache.cap - 1)) {
			c = cache.tab[j].p;
			if (c->sym == sym)
				return c->ctx;
		}
	kp_slots_reserve(&cache, 1024);
	c = kp_pool_alloc(&cache_pool, sizeof(*c));
	c->sym = sym;
	c->ctx = marker_of(sym);
	kp_slots_put(&cache, h, c);
	return c->ctx;
}

bool
kp_frame_is_kernel(const struct kp_frame *f)
{
	if (f->flags & KP_F_ADDR)
		return kp_addr_is_kernel(f->addr);
	return kp_module_is_kernel(f->module);
}

enum kp_context
kp_context_of(const struct kp_frame *const *frames, size_t n)
{
	bool kernel = false;
	size_t i;
	int c;

	for (i = 0; i < n; i++) {
		if (frames[i]->sym && (c = sym_context(frames[i]->sym)) >= 0)
			return (enum kp_context)c;
		if (!kernel && kp_frame_is_kernel(frames[i]))
			kernel = true;
	}
	return kernel ? KP_CTX_TASK : KP_CTX_USER;
}

/* Does s[0..n) read as one clone suffix word and its number? */
static const char *const suffixes[] = {
	"isra", "constprop", "part", "cold", "lto_priv", "llvm",
};

/* The length of the suffix ".WORD" or ".N" at s, 0 if none. */
static size_t
suffix_len(const char *s)
{
	size_t i, n;

	if (s[0] != '.')
		return 0;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		n = strlen(suffixes[i]);
		if (strncmp(s + 1, suffixes[i], n) == 0 &&
		    (s[n + 1] == '.' || s[n + 1] == '\0'))
			return n + 1;
	}
	for (n = 1; s[n] >= '0' && s[n] <= '9'; n++)
		;
	return n > 1 && (s[n] == '.' || s[n] == '\0') ? n : 0;
}

size_t
kp_clone_base_len(const char *sym)
{
	const char *p, *q;
	size_t n;
	bool word;

	/* the first '.' from which the rest is all suffixes, with a word
	 * before any number */
	for (p = strchr(sym, '.'); p && p != sym; p = strchr(p + 1, '.')) {
		word = false;
		for (q = p; *q; q += n) {
			n = suffix_len(q);
			if (!n || (!word && q[1] >= '0' && q[1] <= '9'))
				break;
			word = true;
		}
		if (!*q)
			return (size_t)(p - sym);
	}
	return strlen(sym);
}

const struct kp_frame *
kp_context_frame(const struct kp_frame *const *frames, size_t n)
{
	static const struct kp_frame *f[KP_CTX_COUNT];
	enum kp_context c = kp_context_of(frames, n);

	if (!f[c])
		f[c] = kp_frame_make(0, 0, kp_intern_str(names[c]), NULL);
	return f[c];
}
