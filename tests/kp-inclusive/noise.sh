#!/usr/bin/env bash
# Diffs that know noise, on a real capture (samples/perf-build-a-g, 80k
# samples of kp's own build): two samples of 20,000 drawn from it with a
# seeded PRNG differ only by sampling noise, so no row may be
# significant at p < 0.01 after the Benjamini-Hochberg adjustment; the
# same with the stacks through one function weighted +25% must flag that
# function.  The same for three runs a side (Welch's t-test across runs)
# and for --absolute.  The p-values of the tsv are checked against the
# two-proportion test and the adjustment written again here.
set -eu
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
command -v xz > /dev/null || { echo "skipped: no xz"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
xz -dc "$KP_TOP/samples/perf-build-a-g.txt.xz" | perf2kp > "$t/whole.kp"
kp-inclusive --format tsv "$t/whole.kp" > "$t/whole.tsv"
# the function: the heaviest with an inclusive share of 2% to 8%
func=$(awk -F '\t' 'NR > 2 && $1 >= 2 && $1 <= 8 { print $5; exit }' "$t/whole.tsv")
[ -n "$func" ]
echo "function weighted: $func"
python3 - "$t" "$func" <<'PY'
import random, re, sys
d, func = sys.argv[1], sys.argv[2]
recs, frames = [], []
for line in open(d + "/whole.kp", encoding="utf-8", errors="surrogateescape"):
    s = line.strip()
    if s == "!" or s.startswith("#") or not s:
        continue
    if s.isdigit():
        recs.append((frames, int(s)))
        frames = []
    else:
        frames.append(line.rstrip("\n"))
pat = re.compile(r":\s*" + re.escape(func) + r"(\+0x[0-9a-f]+(/0x[0-9a-f]+)?)?(\s+\[[^]]*\])?$")
hot = [any(pat.search(f) for f in fr) for fr, _ in recs]
assert sum(hot) > 0
def draw(name, seed, boost):
    w = [c * (1.25 if boost and h else 1.0) for (_, c), h in zip(recs, hot)]
    got = {}
    for i in random.Random(seed).choices(range(len(recs)), weights=w, k=20000):
        got[i] = got.get(i, 0) + 1
    with open(d + "/" + name, "w", encoding="utf-8", errors="surrogateescape") as f:
        for i in sorted(got):
            f.write("!\n" + "\n".join(recs[i][0]) + "\n\t%d\n" % got[i])
        f.write("!\n")
draw("a.kp", 1, False)
draw("b.kp", 2, False)
draw("c.kp", 3, True)
for r in range(3):
    draw("ra%d.kp" % r, 10 + r, False)
    draw("rb%d.kp" % r, 20 + r, False)
    draw("rc%d.kp" % r, 30 + r, True)
PY
# p-values below 0.01 in a tsv diff, as "name p" lines
significant() {
	awk -F '\t' '/^#/ || $1 == "before_pct" { next } $6 < 0.01 { print $7, $6 }' "$1"
}
check() { # name, tsv, expect: none or func
	significant "$2" > "$t/sig"
	if [ "$3" = none ]; then
		[ ! -s "$t/sig" ] || { echo "$1: rows flagged in noise:"; head "$t/sig"; exit 1; }
	else
		grep -q "^$func " "$t/sig" || { echo "$1: $func not flagged"; grep "	$func\$" "$2"; exit 1; }
	fi
}
kp-inclusive --format tsv "$t/a.kp" "$t/b.kp" > "$t/ab.tsv"
check "one run a side, same profile" "$t/ab.tsv" none
kp-inclusive --format tsv "$t/a.kp" "$t/c.kp" > "$t/ac.tsv"
check "one run a side, +25%" "$t/ac.tsv" func
kp-inclusive --format tsv --absolute "$t/a.kp" "$t/b.kp" > "$t/abs.tsv"
check "--absolute, same profile" "$t/abs.tsv" none
kp-inclusive --format tsv --absolute "$t/a.kp" "$t/c.kp" > "$t/abs.tsv"
check "--absolute, +25%" "$t/abs.tsv" func
kp-inclusive --format tsv "$t"/ra?.kp -- "$t"/rb?.kp > "$t/runs.tsv"
grep -qx '# runs before: 3' "$t/runs.tsv"
check "three runs a side, same profile" "$t/runs.tsv" none
kp-inclusive --format tsv "$t"/ra?.kp -- "$t"/rc?.kp > "$t/runs.tsv"
check "three runs a side, +25%" "$t/runs.tsv" func
# kp-flame colours only the significant changes: none between two
# samples of one profile, the function's boxes red after +25%
kp-flame --alpha 0.01 "$t/a.kp" "$t/b.kp" > "$t/ab.svg"
kp-flame --alpha 0.01 "$t/a.kp" "$t/c.kp" > "$t/ac.svg"
kp-flame --all-changes "$t/a.kp" "$t/b.kp" > "$t/all.svg"
python3 - "$t" "$func" <<'PY'
import re, sys, xml.etree.ElementTree as ET
d, func = sys.argv[1], sys.argv[2]
NS = "{http://www.w3.org/2000/svg}"
def boxes(name):
    out = []
    for g in ET.parse(d + "/" + name).getroot().iter(NS + "g"):
        t, r = g.find(NS + "title"), g.find(NS + "rect")
        if t is not None and r is not None and not re.match(r"\[\d+ merged\]$", t.text.split("\n")[0]):
            out.append((t.text.split("\n")[0], r.get("fill"), t.text))
    return out
def coloured(fill):
    return fill != "rgb(250,250,250)"
ab = boxes("ab.svg")
assert ab and not [b for b in ab if coloured(b[1])], [b[:2] for b in ab if coloured(b[1])][:5]
assert all("may be sampling noise" in b[2] for b in ab if b[0] != "all"), "tooltips"
ac = [b for b in boxes("ac.svg") if b[0] == func]
assert ac and any(re.match(r"rgb\(255,\d+,\d+\)", b[1]) and coloured(b[1]) for b in ac), ac[:3]
# every change coloured: most boxes of the same two samples are
al = boxes("all.svg")
assert sum(coloured(b[1]) for b in al) > len(al) / 2, "--all-changes"
PY
# json says the same
kp-inclusive --format json "$t/a.kp" "$t/c.kp" > "$t/ac.json"
python3 - "$t/ac.json" "$func" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["test"] == "two-proportion" and j["adjust"] == "benjamini-hochberg", j
row = [r for r in j["rows"] if r["function"] == sys.argv[2]][0]
assert row["significant"] and row["p_value"] < 0.01, row
assert row["after"] > row["before"], row
PY
# the p-values, computed again: pooled two-proportion z-test, then BH
python3 - "$t/ac.tsv" <<'PY'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")][1:]
ta = tb = None
for l in open(sys.argv[1]):
    if l.startswith("# total before:"): ta = int(l.split(":")[1])
    if l.startswith("# total after:"): tb = int(l.split(":")[1])
raw = []
for r in rows:
    a, b = int(r[3]), int(r[4])
    pool = (a + b) / (ta + tb)
    se = math.sqrt(pool * (1 - pool) * (1 / ta + 1 / tb))
    raw.append(1.0 if se == 0 else math.erfc(abs(b / tb - a / ta) / se / math.sqrt(2)))
order = sorted(range(len(raw)), key=lambda i: raw[i])
adj, run, m = [0.0] * len(raw), 1.0, len(raw)
for k in range(m - 1, -1, -1):
    run = min(run, raw[order[k]] * m / (k + 1))
    adj[order[k]] = run
for r, q in zip(rows, adj):
    got = float(r[5])
    assert abs(got - q) <= 1e-3 * max(q, 1e-12) + 1e-300, (r, q)
print("p-values agree on", len(rows), "rows")
PY
echo ok
