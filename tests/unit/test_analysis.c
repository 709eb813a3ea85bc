/* test_analysis.c - unit tests of the analysis modules of common/:
 * clone suffixes and contexts (context.c), the tests and the
 * adjustment (stats.c), per-key differences (diff.c), escaping
 * (report.c) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "diff.h"
#include "report.h"
#include "stats.h"

#include "check.h"

static bool
near(double a, double b)
{
	return fabs(a - b) <= 1e-4 * fabs(b) + 1e-12;
}

static void
test_clones(void)
{
	static const struct {
		const char *sym;
		size_t base;
	} cases[] = {
		{ "foo", 3 },
		{ "foo.isra.0", 3 },
		{ "foo.constprop.0.isra.0", 3 },
		{ "foo.part.12", 3 },
		{ "foo.cold", 3 },
		{ "foo.cold.2", 3 },
		{ "foo.lto_priv.0", 3 },
		{ "foo.llvm.8475629", 3 },
		{ "a.b.isra.0", 3 },     /* only the suffixes go */
		{ "__key.12", 8 },       /* a number alone is no clone */
		{ "foo.bar", 7 },        /* nor an unknown word */
		{ "foo.isradical", 13 }, /* nor a word that starts like one */
		{ ".isra.0", 7 },        /* nothing would be left */
		{ "foo.isra.x", 10 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got = kp_clone_base_len(cases[i].sym);

		if (got != cases[i].base)
			fprintf(stderr, "%s: %zu\n", cases[i].sym, got);
		CHECK(got == cases[i].base);
	}
}

/* The context of a stack given root first, "a;b;c", kernel frames. */
static enum kp_context
ctx(const char *folded, const char *module)
{
	const struct kp_frame *f[32], *t;
	char buf[256], *s, *save = NULL;
	size_t n = 0, i;

	snprintf(buf, sizeof(buf), "%s", folded);
	for (s = strtok_r(buf, ";", &save); s; s = strtok_r(NULL, ";", &save))
		f[n++] = kp_frame_make(0, 0, kp_intern_str(s),
				       kp_intern_str(module));
	for (i = 0; i < n / 2; i++) {
		t = f[i];
		f[i] = f[n - 1 - i];
		f[n - 1 - i] = t;
	}
	return kp_context_of(f, n);
}

static void
test_contexts(void)
{
	CHECK(ctx("main;foo", "/bin/a") == KP_CTX_USER);
	CHECK(ctx("entry_SYSCALL_64;do_syscall_64;vfs_read", "kernel") ==
	      KP_CTX_TASK);
	CHECK(ctx("cpu_startup_entry;do_idle;default_idle;pv_native_safe_halt",
		  "kernel") == KP_CTX_IDLE);
	/* an interrupt on the idle loop, and the softirq on its way out */
	CHECK(ctx("do_idle;default_idle;asm_sysvec_apic_timer_interrupt;"
		  "sysvec_apic_timer_interrupt;hrtimer_interrupt",
		  "kernel") == KP_CTX_HARDIRQ);
	CHECK(ctx("do_idle;default_idle;asm_sysvec_apic_timer_interrupt;"
		  "sysvec_apic_timer_interrupt;__irq_exit_rcu;handle_softirqs;"
		  "net_rx_action",
		  "kernel") == KP_CTX_SOFTIRQ);
	/* a hard interrupt inside a softirq is the interrupt */
	CHECK(ctx("run_ksoftirqd;handle_softirqs;net_rx_action;"
		  "asm_common_interrupt;common_interrupt;handle_irq_event",
		  "kernel") == KP_CTX_HARDIRQ);
	CHECK(ctx("vfs_read;asm_exc_nmi;exc_nmi;perf_event_nmi_handler",
		  "kernel") == KP_CTX_NMI);
	/* clone suffixes do not hide a marker */
	CHECK(ctx("foo;__do_softirq.cold;bar", "kernel") == KP_CTX_SOFTIRQ);
	/* a prefix entry needs more than the prefix to match a name */
	CHECK(ctx("foo;sysvec", "kernel") == KP_CTX_TASK);
	CHECK(kp_context_parse("softirq") == KP_CTX_SOFTIRQ);
	CHECK(kp_context_parse("irq") == -1);
	CHECK(strcmp(kp_context_name(KP_CTX_NMI), "nmi") == 0);
}

static void
test_stats(void)
{
	double p[4] = { 0.01, 0.04, 0.03, 0.005 };
	double x1[3] = { 10, 10.2, 9.8 }, x2[3] = { 10, 10.2, 9.8 };

	/* 50 of 100 against 70 of 100: z = 2.8868 */
	CHECK(near(kp_test_two_prop(50, 100, 70, 100), 0.0038924));
	CHECK(near(kp_test_two_prop(70, 100, 50, 100), 0.0038924));
	CHECK(kp_test_two_prop(0, 10, 0, 20) == 1.0);
	CHECK(kp_test_two_prop(10, 10, 20, 20) == 1.0);
	CHECK(kp_test_two_prop(1, 0, 1, 10) == 1.0);
	/* 10 against 30: z = 20 / sqrt(40) */
	CHECK(near(kp_test_two_counts(10, 30), 0.0015654));
	CHECK(kp_test_two_counts(0, 0) == 1.0);
	/* equal runs, or a floor that hides a small change */
	CHECK(kp_test_runs(x1, 3, 0.0, x2, 3, 0.0) == 1.0);
	x2[0] = 10.3;
	CHECK(kp_test_runs(x1, 3, 0.0, x2, 3, 0.0) > 0.3);
	CHECK(kp_test_runs(x1, 3, 100.0, x2, 3, 100.0) > 0.9);
	CHECK(near(kp_run_variance(x1, 3), 0.04));
	/* Benjamini-Hochberg by hand: ranks 0.005, 0.01, 0.03, 0.04 */
	kp_adjust_bh(p, 4);
	CHECK(near(p[0], 0.02) && near(p[1], 0.04) && near(p[2], 0.04) &&
	      near(p[3], 0.02));
}

static void
add(struct kp_profile *p, const char *sym, uint64_t count)
{
	const struct kp_frame *f = kp_frame_make(0, 0, kp_intern_str(sym),
						 NULL);

	kp_profile_add(p, &f, 1, count);
}

static void
test_diff(void)
{
	struct kp_profile *a = kp_profile_new(KP_BY_FUNCTION, false);
	struct kp_profile *b = kp_profile_new(KP_BY_FUNCTION, false);
	struct kp_diff *d;
	const struct kp_drow *r;

	add(a, "x", 50);
	add(a, "y", 50);
	add(b, "x", 70);
	add(b, "y", 30);
	add(b, "z", 100);
	d = kp_diff_new(&a, 1, &b, 1, false, false);
	CHECK(d->n == 3 && d->ta == 100 && d->tb == 200);
	r = kp_diff_find(d, kp_intern_str("x"), NULL);
	CHECK(r && r->a == 50 && r->b == 70 && near(r->pa, 50) &&
	      near(r->pb, 35) && near(r->d, -15));
	r = kp_diff_find(d, kp_intern_str("z"), NULL);
	CHECK(r && r->a == 0 && r->b == 100 && r->p_value < 1e-6);
	CHECK(kp_diff_find(d, kp_intern_str("w"), NULL) == NULL);
	kp_diff_free(d);
	d = kp_diff_new(&a, 1, &b, 1, false, true);
	r = kp_diff_find(d, kp_intern_str("x"), NULL);
	CHECK(r && near(r->d, 20));
	kp_diff_free(d);
	kp_profile_free(a);
	kp_profile_free(b);
}

static char *
escaped(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	fn(fp, s);
	fclose(fp);
	return buf;
}

static bool
escapes(void (*fn)(FILE *, const char *), const char *s, const char *want)
{
	char *got = escaped(fn, s);
	bool ok = strcmp(got, want) == 0;

	if (!ok)
		fprintf(stderr, "escaped '%s' as '%s', not '%s'\n", s, got, want);
	free(got);
	return ok;
}

static void
test_escapes(void)
{
	CHECK(escapes(kp_tsv_str, "a\tb\\c\nd\re", "a\\tb\\\\c\\nd\\re"));
	CHECK(escapes(kp_json_str, "q\"b\\", "\"q\\\"b\\\\\""));
	CHECK(escapes(kp_json_str, "\001\037\177", "\"\\u0001\\u001f\\u007f\""));
	CHECK(escapes(kp_json_str, "\303\251\342\202\254\360\237\230\200",
		      "\"\303\251\342\202\254\360\237\230\200\""));
	CHECK(escapes(kp_json_str, "\377", "\"\\ufffd\""));
	CHECK(escapes(kp_json_str, "\303(", "\"\\ufffd(\""));
	CHECK(escapes(kp_json_str, "\300\257", "\"\\ufffd\\ufffd\""));
	CHECK(escapes(kp_json_str, "\340\200\257", "\"\\ufffd\\ufffd\\ufffd\""));
	CHECK(escapes(kp_json_str, "\355\240\200", "\"\\ufffd\\ufffd\\ufffd\""));
	CHECK(escapes(kp_json_str, "\364\220\200\200",
		      "\"\\ufffd\\ufffd\\ufffd\\ufffd\""));
	CHECK(escapes(kp_json_str, "\342\202", "\"\\ufffd\\ufffd\""));
	CHECK(escapes(kp_json_str, "\364\217\277\277", "\"\364\217\277\277\""));
}

int
main(void)
{
	test_clones();
	test_contexts();
	test_stats();
	test_diff();
	test_escapes();
	return CHECK_DONE();
}
