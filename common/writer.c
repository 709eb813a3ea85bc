/*
 * writer.c - the canonical kp writer (man/kp.5, CANONICAL FORM):
 *
 *	# key: value
 *	!
 *	 0xffffffff814cde75 : net_rx_action+0x105/0x2b0 [kernel]
 *	 0xffffffff81000000 [kernel+0x10/0x20]
 *	 : folded_frame [kernel]
 *		1168
 *	!
 */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

static void
put_hex(FILE *out, uint64_t v)
{
	fprintf(out, "0x%" PRIx64, v);
}

/* The symbol, quoted with \" and \\ escapes when bare it would misread. */
static void
put_sym(FILE *out, const char *s)
{
	if (!kp_sym_needs_quote(s)) {
		fputs(s, out);
		return;
	}
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putc('\\', out);
		putc(*s, out);
	}
	putc('"', out);
}

void
kp_write_frame(FILE *out, const struct kp_frame *f)
{
	if (f->flags & KP_F_ADDR)
		fprintf(out, " 0x%016" PRIx64, f->addr);
	if (f->sym) {
		fputs(" : ", out);
		put_sym(out, f->sym);
	}
	if (f->sym && (f->flags & KP_F_OFF)) {
		putc('+', out);
		put_hex(out, f->off);
		if (f->flags & KP_F_SIZE) {
			putc('/', out);
			put_hex(out, f->size);
		}
	}
	if (f->module) {
		fputs(" [", out);
		fputs(f->module, out);
		if (!f->sym && (f->flags & KP_F_OFF)) {
			putc('+', out);
			put_hex(out, f->off);
			if (f->flags & KP_F_SIZE) {
				putc('/', out);
				put_hex(out, f->size);
			}
		}
		putc(']', out);
	}
	if (f->flags & KP_F_INEXACT)
		fputs(" (inexact)", out);
	if (f->flags & KP_F_INLINE)
		fputs(" (inline)", out);
	if (f->file) {
		fputs(" (at ", out);
		fputs(f->file, out);
		if (f->line)
			fprintf(out, ":%u", f->line);
		putc(')', out);
	}
	putc('\n', out);
}

void
kp_write_meta(FILE *out)
{
	size_t i, n = kp_meta_count();

	for (i = 0; i < n; i++) {
		fputs(kp_meta_line(i), out);
		putc('\n', out);
	}
}

void
kp_write_stack(FILE *out, const struct kp_stack *st)
{
	size_t i;

	fputs("!\n", out);
	for (i = 0; i < st->n; i++)
		kp_write_frame(out, st->frames[i]);
	fprintf(out, "\t%" PRIu64 "\n", st->count);
}

void
kp_write_end(FILE *out)
{
	fputs("!\n", out);
}

void
kp_write_agg(FILE *out, const struct kp_agg *agg)
{
	size_t i, n = kp_agg_len(agg);

	kp_write_meta(out);
	for (i = 0; i < n; i++)
		kp_write_stack(out, kp_agg_get(agg, i));
	kp_write_end(out);
}
