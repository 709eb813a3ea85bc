#!/usr/bin/env python3
"""svgcheck.py - check a kp-flame SVG against the folded stacks of its input.

	svgcheck.py SVG FOLDED [--inverted] [--diff BEFORE_FOLDED]

FOLDED is `kp-fold` output of the same input ("root;...;leaf COUNT"),
computed here independently of kp-flame: every prefix of a folded stack
is one frame of the graph, its inclusive count the sum of the counts of
the stacks it begins, its exclusive count that of the stacks it ends.
Checks that the SVG parses as XML with exactly one <script> (ours), and
that every frame drawn has the right name, depth, inclusive and
exclusive counts and percentages in its tooltip, a width proportional to
its inclusive count, and lies inside its parent.  Every frame is
expected to be drawn (use inputs whose frames are all wider than
--minwidth).  With --diff, also checks each frame's colour: red when its
share grew since BEFORE, blue when it shrank.
"""
import collections
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("svgcheck: " + msg)
    sys.exit(1)


def folded(path):
    incl = collections.Counter()
    excl = collections.Counter()
    total = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            n = int(n)
            total += n
            # kp-flame writes '?' for bytes that are not UTF-8 and
            # for control characters
            stack = "".join("?" if c in "\ufffe\uffff\ufffd" or
                            (ord(c) < 0x20 and c != "\t") or
                            0x7f <= ord(c) <= 0x9f else c for c in stack)
            names = stack.split(";")
            for d in range(1, len(names) + 1):
                incl[tuple(names[:d])] += n
            excl[tuple(names)] += n
    return incl, excl, total


def main():
    args = sys.argv[1:]
    inverted = "--inverted" in args
    before = None
    if "--diff" in args:
        before = args[args.index("--diff") + 1]
    svg, fold = args[0], args[1]
    tree = ET.parse(svg)
    root = tree.getroot()
    scripts = root.findall(".//" + NS + "script")
    if len(scripts) != 1:
        fail("%d <script> elements, expected 1" % len(scripts))
    W = float(root.get("width"))
    fh = float(root.get("data-fh"))
    incl, excl, total = folded(fold)
    if before:
        bincl, _, btotal = folded(before)
    frames = root.find(".//" + NS + "g[@id='frames']")
    gs = list(frames)
    if total == 0:
        if gs:
            fail("frames drawn for an empty input")
        print("svgcheck: empty graph ok")
        return
    rows = []
    yroot = None
    for g in gs:
        title = g.find(NS + "title").text
        rect = g.find(NS + "rect")
        x, y, w = (float(rect.get(a)) for a in ("x", "y", "width"))
        if g.get("data-all"):
            yroot = y
        rows.append((title.split("\n"), x, y, w, rect.get("fill")))
    if yroot is None:
        fail("no 'all' frame")
    scale = (W - 20) / total
    # the path of each frame: its parent is the frame one level down
    # that contains it (frames are written parents first)
    placed = []  # (depth, x, w, path)
    seen = collections.Counter()
    for lines, x, y, w, fill in rows:
        depth = round((y - yroot) / fh) if inverted else round((yroot - y) / fh)
        name = lines[0]
        if depth == 0:
            path = ()
        else:
            par = [p for p in placed if p[0] == depth - 1 and
                   p[1] - 0.015 <= x and x + w <= p[1] + p[2] + 0.025]
            if len(par) != 1:
                fail("frame %r at depth %d has %d parents" %
                     (name, depth, len(par)))
            path = par[0][3] + (name,)
        placed.append((depth, x, w, path))
        want = total if not path else incl.get(path)
        if want is None:
            fail("frame %r is not in the input" % (path,))
        seen[path] += 1
        if abs(w - want * scale) > 0.011:
            fail("%r: width %.2f, expected %.2f" % (path, w, want * scale))
        info = dict(l.split(": ", 1) for l in lines[1:] if ": " in l)
        n, pct = info["inclusive"].split(", ")
        if int(n.split()[0]) != want:
            fail("%r: inclusive %s, expected %d" % (path, n, want))
        if pct != "%.2f%%" % (100.0 * want / total):
            fail("%r: inclusive %s, expected %.2f%%" %
                 (path, pct, 100.0 * want / total))
        ex = excl.get(path, 0) if path else 0
        n, pct = info["exclusive"].split(", ")
        if int(n.split()[0]) != ex:
            fail("%r: exclusive %s, expected %d" % (path, n, ex))
        if before and path:
            d = want / total - bincl.get(path, 0) / btotal
            r, gg, b = (int(c) for c in fill[4:-1].split(","))
            grew, shrank = r == 255 and b < 255, b == 255 and r < 255
            if (d > 1e-9 and not grew) or (d < -1e-9 and not shrank) or \
               (abs(d) <= 1e-9 and (grew or shrank)):
                fail("%r: change %+.4f but colour %s" % (path, d, fill))
    for path in incl:
        if seen[path] != 1:
            fail("%r drawn %d times" % (path, seen[path]))
    print("svgcheck: %d frames ok" % len(rows))


if __name__ == "__main__":
    main()
