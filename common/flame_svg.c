/*
 * flame_svg.c - a flame graph as an interactive SVG (flame.h).
 *
 * Self-contained: common/flame.js (embedded at build time as
 * kp_flame_js) gives tooltips and a details line, click to zoom, Reset
 * Zoom, and a search (a regular expression) that highlights the matching
 * frames and prints the share of samples they cover.  Names are escaped
 * for XML (a symbol "<script>" stays text) and bytes that are not UTF-8
 * become '?' (svg.h), so the output is always well-formed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame_int.h"
#include "svg.h"

#define FONTSIZE 12.0
#define FONTWIDTH 0.59 /* average glyph width, in font sizes */
#define XPAD 10.0

/* common/flame.js (build/gen/flame_js.c) */
extern const unsigned char kp_flame_js[];
extern const size_t kp_flame_js_len;

static void
put_pct(FILE *out, uint64_t v, uint64_t total)
{
	fprintf(out, "%.2f%%", total ? 100.0 * (double)v / (double)total : 0.0);
}

/* A colour from a palette, varied by a hash of the name. */
static void
color(char *buf, size_t len, const char *pal, uint8_t kind, const char *name)
{
	uint64_t h = kp_hash(name, strlen(name));
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)(h >> 16 & 0xffff) / 65535.0;
	double v3 = (double)(h >> 32 & 0xffff) / 65535.0;
	double r, g, b;

	if (kind == K_MERGED) {
		snprintf(buf, len, "rgb(200,200,200)");
		return;
	}
	if (strcmp(pal, "kp") == 0)
		pal = kind == K_KERNEL	 ? "kernel"
		      : kind == K_KMOD	 ? "kmod"
		      : kind == K_USER	 ? "aqua"
		      : kind == K_ROOT	 ? "kernel"
					 : "gray";
	if (strcmp(pal, "kernel") == 0 || strcmp(pal, "orange") == 0) {
		r = 230 + 25 * v1, g = 100 + 70 * v2, b = 30 + 30 * v3;
	} else if (strcmp(pal, "kmod") == 0 || strcmp(pal, "yellow") == 0) {
		r = 195 + 40 * v1, g = 185 + 40 * v1, b = 40 + 30 * v2;
	} else if (strcmp(pal, "hot") == 0) {
		r = 205 + 50 * v3, g = 230 * v1, b = 55 * v2;
	} else if (strcmp(pal, "mem") == 0) {
		r = 0, g = 190 + 50 * v2, b = 230 * v1;
	} else if (strcmp(pal, "io") == 0) {
		r = 80 + 60 * v1, g = r, b = 190 + 55 * v2;
	} else if (strcmp(pal, "red") == 0) {
		r = 200 + 55 * v1, g = 50 + 80 * v1, b = g;
	} else if (strcmp(pal, "green") == 0) {
		g = 200 + 55 * v1, r = 50 + 60 * v1, b = r;
	} else if (strcmp(pal, "blue") == 0) {
		b = 205 + 50 * v1, r = 80 + 60 * v1, g = r;
	} else if (strcmp(pal, "aqua") == 0) {
		r = 50 + 60 * v1, g = 165 + 55 * v1, b = 165 + 55 * v1;
	} else if (strcmp(pal, "purple") == 0) {
		r = 190 + 65 * v1, g = 80 + 60 * v1, b = r;
	} else {
		r = 170 + 50 * v1, g = r, b = r;
	}
	snprintf(buf, len, "rgb(%d,%d,%d)", (int)r, (int)g, (int)b);
}

static const char *palettes[] = { "kp",	  "hot",    "mem",    "io",
				  "red",  "green",  "blue",   "aqua",
				  "yellow", "purple", "orange", "gray" };

bool
kp_flame_palette_ok(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(palettes) / sizeof(palettes[0]); i++)
		if (strcmp(name, palettes[i]) == 0)
			return true;
	return false;
}

static void
diff_color(char *buf, size_t len, const struct kp_flame *fg,
	   const struct kp_flame_node *n)
{
	double d = kp_flame_share(fg, n, 1) - kp_flame_share(fg, n, 0);
	double r = fg->maxdelta > 0 ? fabs(d) / fg->maxdelta : 0;
	int c = (int)lround(210 * (1 - r));

	/* changes below 1e-9 of the total are noise from rounding; those
	 * that may be sampling noise are not coloured either */
	if (fabs(d) < 1e-9 || !kp_flame_significant(fg, n))
		snprintf(buf, len, "rgb(250,250,250)");
	else if (d > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
}

static void
put_title(FILE *out, const struct kp_flame *fg, const struct kp_flame_opts *o,
	  bool diff, const struct kp_flame_node *n, const struct kp_flame_box *b)
{
	uint64_t t = fg->grand[1];

	if (b->node == UINT32_MAX) {
		fprintf(out, "[%" PRIu32 " merged]\n%" PRIu32
			     " neighbouring frames, each too narrow to draw\n"
			     "inclusive: %" PRIu64 " ",
			b->nmerged, b->nmerged, b->width);
		kp_svg_text(out, o->countname, 0);
		fputs(", ", out);
		put_pct(out, b->width, t);
		return;
	}
	kp_svg_text(out, n->name, 0);
	putc('\n', out);
	if (n->module) {
		fputs("module: ", out);
		kp_svg_text(out, n->module, 0);
		putc('\n', out);
	}
	fprintf(out, "inclusive: %" PRIu64 " ", n->total[1]);
	kp_svg_text(out, o->countname, 0);
	fputs(", ", out);
	put_pct(out, n->total[1], t);
	fprintf(out, "\nexclusive: %" PRIu64 " ", n->self[1]);
	kp_svg_text(out, o->countname, 0);
	fputs(", ", out);
	put_pct(out, n->self[1], t);
	if (diff) {
		fprintf(out, "\nbefore: %" PRIu64 " ", n->total[0]);
		kp_svg_text(out, o->countname, 0);
		fputs(", ", out);
		put_pct(out, n->total[0], fg->grand[0]);
		fputs(" inclusive, ", out);
		put_pct(out, n->self[0], fg->grand[0]);
		fprintf(out, " exclusive\nchange: %+.2f points inclusive, "
			     "%+.2f exclusive",
			100 * (kp_flame_share(fg, n, 1) - kp_flame_share(fg, n, 0)),
			fg->grand[0] && fg->grand[1]
				? 100 * ((double)n->self[1] / (double)fg->grand[1] -
					 (double)n->self[0] / (double)fg->grand[0])
				: 0.0);
		if (fg->alpha > 0)
			fprintf(out, "\np = %.4g (adjusted): %s",
				fg->p_value[n - fg->nodes],
				kp_flame_significant(fg, n)
					? "significant"
					: "may be sampling noise");
	}
}

static void
put_legend(FILE *out, const char *pal, double y)
{
	static const struct {
		uint8_t kind;
		const char *name;
	} keys[] = { { K_KERNEL, "kernel" },
		     { K_KMOD, "kernel module" },
		     { K_USER, "user" },
		     { K_UNKNOWN, "unknown" } };
	char fill[32];
	double x = XPAD;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		color(fill, sizeof(fill), pal, keys[i].kind, keys[i].name);
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%.1f\" width=\"10\" height=\"10\" "
			"fill=\"%s\"/><text x=\"%.2f\" y=\"%.1f\" "
			"class=\"s\">%s</text>\n",
			x, y - 9, fill, x + 14, y, keys[i].name);
		x += 14 + (double)strlen(keys[i].name) * 11 * FONTWIDTH + 16;
	}
}

void
kp_flame_write_svg(FILE *out, struct kp_flame *fg,
		   const struct kp_flame_opts *o, bool diff)
{
	double W = o->width, fh = o->height;
	double ypad1 = FONTSIZE * 4, ypad2 = FONTSIZE * 2 + 10;
	double scale = fg->grand[1] ? (W - 2 * XPAD) / (double)fg->grand[1] : 0;
	double minpx = o->minwidth_pct ? o->minwidth / 100 * (W - 2 * XPAD)
					: o->minwidth;
	double H;
	const char *title = o->title ? o->title
			    : o->inverted ? "Icicle Graph"
					   : "Flame Graph";
	char fill[32];
	size_t i;

	fg->alpha = diff ? o->alpha : 0;
	kp_flame_layout(fg, scale, minpx);
	H = ypad1 + ypad2 + (fg->nboxes ? fg->maxdepth + 1 : 1) * fh;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		"\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" "
		"data-fh=\"%g\" data-inverted=\"%d\" onload=\"kp_init()\">\n"
		"<!-- kp-flame: a flame graph from kp stacks -->\n"
		"<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" "
		"x2=\"0\"><stop stop-color=\"#eeeeee\" offset=\"5%%\"/>"
		"<stop stop-color=\"%s\" offset=\"95%%\"/></linearGradient>"
		"</defs>\n"
		"<style type=\"text/css\">\n"
		"text{font-family:Verdana,'DejaVu Sans',sans-serif;"
		"font-size:12px;fill:#000}\n"
		"#title{font-size:17px;text-anchor:middle}\n"
		".s{font-size:11px;fill:#444}\n"
		"#frames rect{stroke:#fff;stroke-width:0.5}\n"
		"#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
		"#frames text{pointer-events:none}\n"
		"#frames g{cursor:pointer}\n"
		"#unzoom,#search{cursor:pointer}\n"
		".h{display:none}\n"
		".p{opacity:0.5}\n"
		"</style>\n",
		W, H, W, H, fh, o->inverted ? 1 : 0,
		"#eeeeb0");
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fwrite(kp_flame_js, 1, kp_flame_js_len, out);
	fputs("]]></script>\n", out);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
		"fill=\"url(#bg)\"/>\n"
		"<text id=\"title\" x=\"%.2f\" y=\"%.1f\">",
		W, H, W / 2, FONTSIZE * 2);
	kp_svg_text(out, title, 0);
	fputs("</text>\n", out);
	if (diff) {
		fprintf(out,
			"<text x=\"%.2f\" y=\"%.1f\" class=\"s\" "
			"text-anchor=\"middle\">widths: after (%" PRIu64
			" ",
			W / 2, FONTSIZE * 3.3, fg->grand[1]);
		kp_svg_text(out, o->countname, 0);
		fprintf(out, "); colours: change in share since before (%" PRIu64
			     " ",
			fg->grand[0]);
		kp_svg_text(out, o->countname, 0);
		fputs("), red grew, blue shrank", out);
		if (fg->alpha > 0)
			fprintf(out, ", white may be noise (adjusted p >= %g)",
				fg->alpha);
		fputs("</text>\n", out);
	} else if (strcmp(o->colors, "kp") == 0) {
		put_legend(out, o->colors, FONTSIZE * 3.3);
	}
	fprintf(out,
		"<text id=\"unzoom\" x=\"%.2f\" y=\"%.1f\" class=\"h\">"
		"Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%.2f\" y=\"%.1f\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%.2f\" y=\"%.1f\"> </text>\n"
		"<text id=\"matched\" x=\"%.2f\" y=\"%.1f\" "
		"text-anchor=\"end\"> </text>\n",
		XPAD, FONTSIZE * 2, W - XPAD, FONTSIZE * 2, XPAD,
		H - ypad2 / 2 + 3, W - XPAD, H - ypad2 / 2 + 3);
	if (!fg->grand[1]) {
		fprintf(out,
			"<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">"
			"No samples</text>\n",
			W / 2, ypad1 + fh / 2 + 4);
	}
	fputs("<g id=\"frames\">\n", out);
	for (i = 0; i < fg->nboxes; i++) {
		const struct kp_flame_box *b = &fg->boxes[i];
		const struct kp_flame_node *n =
			b->node == UINT32_MAX ? NULL : &fg->nodes[b->node];
		double x = XPAD + (double)b->off * scale;
		double w = (double)b->width * scale;
		double y = o->inverted ? ypad1 + b->depth * fh
					: H - ypad2 - (b->depth + 1) * fh;
		size_t nch = w > 6 ? (size_t)floor((w - 6) /
						(FONTSIZE * FONTWIDTH))
				   : 0;
		char merged[48];
		const char *name;

		if (n) {
			name = n->name;
			if (diff)
				diff_color(fill, sizeof(fill), fg, n);
			else
				color(fill, sizeof(fill), o->colors,
				      b->node == 0 ? K_ROOT : n->kind, name);
		} else {
			snprintf(merged, sizeof(merged), "[%" PRIu32 " merged]",
				 b->nmerged);
			name = merged;
			color(fill, sizeof(fill), o->colors, K_MERGED, name);
		}
		fputs(b->node == 0 ? "<g data-all=\"1\"><title>" : "<g><title>",
		      out);
		put_title(out, fg, o, diff, n, b);
		fprintf(out,
			"</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"%.1f\" fill=\"%s\"/>",
			x, y, w, fh - 1, fill);
		if (w >= 6 && nch >= 3) {
			fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
				y + fh / 2 + 4);
			kp_svg_text(out, name, nch);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
}
