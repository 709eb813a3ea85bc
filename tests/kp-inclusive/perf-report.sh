#!/usr/bin/env bash
# Checked against perf itself: on two real captures (samples/perf-report-
# kernel.* of cpu-clock, and samples/perf-report-faults.* of page-faults,
# whose period varies from sample to sample; see the .how files), "perf script | perf2kp --weight period |
# kp-inclusive" gives every function the inclusive and exclusive
# percentages of "perf report --stdio --children --sort symbol -g none"
# and the exclusive percentage of "--no-children", within 0.01
# percentage points, and the same total.  perf report lists each
# unresolved address as a row of its own ("[.] 0x0000000000004ce8"),
# where kp counts such frames per module ("[/usr/bin/gzip]"): those rows
# are the only ones not compared.
set -eu
[ -x "$KP_BIN/perf2kp" ] || { echo "skipped: no perf2kp"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for capture in kernel faults; do
s="$KP_TOP/samples/perf-report-$capture"
echo "== $capture"
perf2kp --weight period "$s.script" | kp-inclusive --format tsv > "$t/kp.tsv"

# perf report rows: "    30.46%     6.81%  [k] do_syscall_64   -   -"
awk '/^#/ || NF == 0 { next }
     /^ +[0-9.]+% +[0-9.]+% +\[.\] / {
	name = $0
	sub(/^ +[0-9.]+% +[0-9.]+% +\[.\] /, "", name)
	sub(/ +- +- *$/, "", name)
	sub(/%/, "", $1); sub(/%/, "", $2)
	print $1 "\t" $2 "\t" name; next }
     { print "unparsed perf line: " $0 > "/dev/stderr"; exit 1 }' \
	"$s.children" > "$t/children.tsv"
awk '/^#/ || NF == 0 { next }
     /^ +[0-9.]+% +\[.\] / {
	name = $0
	sub(/^ +[0-9.]+% +\[.\] /, "", name)
	sub(/ +- +- *$/, "", name)
	sub(/%/, "", $1)
	print $1 "\t" name; next }
     { print "unparsed perf line: " $0 > "/dev/stderr"; exit 1 }' \
	"$s.self" > "$t/self.tsv"

awk -F '\t' -v kp="$t/kp.tsv" -v self="$t/self.tsv" '
function unresolved(n) { return n ~ /^0x[0-9a-f]+$/ || (n ~ /^[0-9a-f]+$/ && length(n) == 16) }
function bracketed(n) { return n ~ /^\[.*\]$/ }
function off(a, b) { d = a - b; if (d < 0) d = -d; return d > 0.01 }
BEGIN {
	while ((getline l < kp) > 0) {
		if (l ~ /^# total: /) continue
		split(l, f, "\t")
		if (f[1] == "inclusive_pct") continue
		incl[f[5]] = f[1]; excl[f[5]] = f[3]
	}
	while ((getline l < self) > 0) {
		split(l, f, "\t")
		if (unresolved(f[2])) continue
		nps[f[2]]++
		pself[f[2]] = f[1]
	}
}
# perf report splits a name that is in two programs (or two static
# functions of one name) into rows kp cannot tell apart without the
# program: such names are counted and left out
{ if (!unresolved($3)) { np[$3]++; pin[$3] = $1; pex[$3] = $2 } else skipped++ }
END {
	for (k in np) {
		if (np[k] > 1) { dup++; continue }
		if (!(k in incl)) { print "missing in kp-inclusive: " k; bad++; continue }
		n++
		if (off(incl[k], pin[k]) || off(excl[k], pex[k])) {
			printf "%s: perf %s%% %s%%, kp %s%% %s%%\n", k, pin[k], pex[k], incl[k], excl[k]
			bad++
		}
	}
	for (k in pself) {
		if (nps[k] > 1 || np[k] > 1) continue
		nself++
		if (!(k in excl)) { print "self row missing in kp: " k; bad++ }
		else if (off(excl[k], pself[k])) { printf "%s: perf self %s%%, kp %s%%\n", k, pself[k], excl[k]; bad++ }
	}
	for (k in incl)
		if (!(k in np) && !bracketed(k)) { print "in kp but not in perf report: " k; bad++ }
	printf "%d functions compared (%d self rows); left out: %d unresolved perf rows, %d names perf splits by program; %d bad\n", n, nself, skipped, dup, bad
	if (n < 150 || nself < 100) { print "too few rows compared"; exit 1 }
	exit bad > 0
}' "$t/children.tsv"

# the same total: perf's "Event count (approx.)" is the sum of periods
want=$(sed -n 's/^# Event count (approx.): //p' "$s.children")
got=$(sed -n 's/^# total: //p' "$t/kp.tsv")
[ "$want" = "$got" ] || { echo "total: perf $want, kp $got"; exit 1; }
echo "total $got matches"
done
