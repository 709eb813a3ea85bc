/*
 * fuzz_flame_graph.c - libFuzzer target for kp-flame's call tree, layout
 * and SVG (common/flame.c, common/flame_svg.c).  The first byte picks
 * the options (reverse, inverted, differential, the minimum width); the
 * rest is read as kp, as kp-flame reads it.  Checked:
 *  - every node's count is its own plus its children's, on both sides,
 *    and the root holds the side's total;
 *  - every box lies inside the graph (offset + width <= the total) and
 *    within its parent's depth range; the root is the first box;
 *  - the SVG is whole: it ends with "</svg>\n" and holds the one script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_tree(const struct kp_flame *fg)
{
	uint64_t *sum[2];
	size_t i;
	int s;

	for (s = 0; s < 2; s++)
		sum[s] = calloc(fg->nnodes ? fg->nnodes : 1, sizeof(uint64_t));
	for (i = 1; i < fg->nnodes; i++)
		for (s = 0; s < 2; s++)
			sum[s][fg->nodes[i].parent] += fg->nodes[i].total[s];
	for (i = 0; i < fg->nnodes; i++)
		for (s = 0; s < 2; s++)
			if (fg->nodes[i].self[s] + sum[s][i] !=
			    fg->nodes[i].total[s])
				abort();
	for (s = 0; s < 2; s++) {
		if (fg->nodes[0].total[s] != fg->grand[s])
			abort();
		free(sum[s]);
	}
}

static void
check_boxes(const struct kp_flame *fg)
{
	size_t i;

	if (fg->grand[1] && (!fg->nboxes || fg->boxes[0].node != 0 ||
			     fg->boxes[0].width != fg->grand[1]))
		abort();
	for (i = 0; i < fg->nboxes; i++) {
		const struct kp_flame_box *b = &fg->boxes[i];

		if (b->width > fg->grand[1] || b->off > fg->grand[1] - b->width)
			abort();
		if (b->depth > fg->maxdepth)
			abort();
		if (b->node != UINT32_MAX &&
		    (b->node >= fg->nnodes ||
		     fg->nodes[b->node].depth != b->depth ||
		     fg->nodes[b->node].total[1] != b->width))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/kp-fuzz-flame-XXXXXX";
	struct kp_flame_opts o = { .countname = "samples", .colors = "kp",
				   .width = 1200, .height = 16 };
	struct kp_flame *fg;
	struct kp_reader *rd;
	const struct kp_stack *st;
	char *out = NULL;
	size_t outlen = 0, n = 0;
	bool diff, keyed, over = false;
	FILE *mem;
	int fd;

	kp_refuse_foreign = false; /* any bytes: read on */

	if (size < 1)
		return 0;
	diff = data[0] & 4;
	o.inverted = data[0] & 2;
	o.minwidth = (double)(data[0] >> 5) / 4;
	o.minwidth_pct = data[0] & 8;
	keyed = data[0] & 16; /* read as kp-flame reads: by kp_flame_key */
	fd = mkstemp(path);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	close(fd);
	kp_progname = "fuzz_flame_graph";
	kp_quiet = true;
	fg = kp_flame_new(data[0] & 1);
	rd = kp_reader_open(path);
	if (keyed) {
		kp_reader_set_key(rd, kp_flame_key);
		kp_reader_key_ignores(rd, KP_KEY_NAMED | KP_KEY_MODULE |
						  KP_KEY_BARE_KERNEL);
	}
	/* differential: every other record is "before"; the frames' ids
	 * given, or read from the frames, in turn two by two */
	while (!over && (st = kp_reader_next(rd)) != NULL) {
		over = kp_flame_add(fg, st, (n & 2) ? kp_reader_ids(rd) : NULL,
				    diff ? (int)(n & 1) : 1) < 0;
		n++;
	}
	kp_reader_close(rd);
	unlink(path);
	if (over) {
		kp_flame_free(fg);
		return 0;
	}
	mem = open_memstream(&out, &outlen);
	if (!mem)
		abort();
	kp_flame_write_svg(mem, fg, &o, diff);
	fclose(mem);
	check_tree(fg); /* (the inclusive counts: summed by the layout) */
	check_boxes(fg);
	if (outlen < 7 || strcmp(out + outlen - 7, "</svg>\n") != 0)
		abort();
	if (!strstr(out, "<script") || strstr(strstr(out, "<script") + 1,
					      "<script"))
		abort();
	free(out);
	kp_flame_free(fg);
	return 0;
}
