#!/usr/bin/env bash
# Checked against perf itself, on the captures of this machine in samples/
# (perfdata-*.data; see their .how files): "perf2kp FILE --weight period |
# kp-inclusive" gives every symbol of 0.5% or more in "perf report --stdio
# --children --sort symbol -g none" (the .children.xz beside each capture,
# made by perf when it was recorded) its inclusive and exclusive
# percentages within 0.01 points, and perf's total ("Event count").  (For
# pipe input perf report gives no Children column: only the self
# percentages are compared there; the whole stacks are compared with perf
# script's in fold.sh.)  perf
# report weighs each sample by its period, hence --weight period.  The
# kernel's symbols are the saved kallsyms of the capture's boot.
#
# Left out of the comparison, and counted: perf's rows of unresolved
# addresses ("[.] 0x0000000000004ce8", kp counts them per module), names
# perf splits into rows of several programs, and the symbols of programs
# rebuilt or removed since the capture (a system-wide capture holds other
# programs of the machine: perf2kp names a file whose build-id changed or
# that is gone, and perf script's text says which symbols were in it).  The --call-graph
# dwarf capture is compared in dwarf.sh.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
status=0
for capture in a-g user two-events fixed-period pipe z p tracepoint; do
d="$S/perfdata-$capture"
echo "== $capture"
perf2kp --kallsyms "$t/kallsyms" --weight period "$d.data" 2> "$t/err" |
	kp-inclusive --format tsv > "$t/kp.tsv"
# the files rebuilt since, and the symbols perf script found in them
sed -n -e 's/^perf2kp: \(.*\): build-id [0-9a-f]*, not the [0-9a-f]* it had when sampled.*/\1/p' \
		-e 's/^perf2kp: \(.*\): No such file or directory; its frames stay addresses$/\1/p' "$t/err" > "$t/changed"
xz -dc "$d.script.xz" | awk -v changed="$t/changed" '
BEGIN { while ((getline l < changed) > 0) gone["(" l ")"] = 1 }
/^\t/ && ($NF in gone) { s = $0; sub(/^\t *[0-9a-f]+ /, "", s); sub(/ \([^(]*\)$/, "", s)
	sub(/\+0x[0-9a-f]+$/, "", s); print s }' | sort -u > "$t/gone"
# the first event's table (two-events: perf2kp keeps the one with the
# most samples, cpu-clock, which perf report prints first)
xz -dc "$d.children.xz" | awk '/^# Samples: / { n++ } n <= 1' |
awk '/^#/ || NF == 0 { next }
     /^ +[0-9.]+% +[0-9.]+% +\[.\] / {
	name = $0
	sub(/^ +[0-9.]+% +[0-9.]+% +\[.\] /, "", name)
	sub(/ +- +- *$/, "", name); sub(/ +$/, "", name)
	sub(/%/, "", $1); sub(/%/, "", $2)
	print $1 "\t" $2 "\t" name; next }
     # pipe input: perf report has no Children column, only Overhead (self)
     /^ +[0-9.]+% +\[.\] / {
	name = $0
	sub(/^ +[0-9.]+% +\[.\] /, "", name)
	sub(/ +- +- *$/, "", name); sub(/ +$/, "", name)
	sub(/%/, "", $1)
	print "-\t" $1 "\t" name; next }
     { print "unparsed perf line: " $0 > "/dev/stderr"; exit 1 }' > "$t/children.tsv"

awk -F '\t' -v kp="$t/kp.tsv" -v gonef="$t/gone" '
function unresolved(n) { return n ~ /^0x[0-9a-f]+$/ || (n ~ /^[0-9a-f]+$/ && length(n) == 16) }
function off(a, b) { d = a - b; if (d < 0) d = -d; return d > 0.01 }
BEGIN {
	while ((getline l < kp) > 0) {
		if (l ~ /^# total: /) continue
		split(l, f, "\t")
		if (f[1] == "inclusive_pct") continue
		incl[f[5]] = f[1]; excl[f[5]] = f[3]
	}
	while ((getline l < gonef) > 0) gone[l] = 1
}
{ if (unresolved($3)) { skipped++; next }
  np[$3]++; pin[$3] = $1; pex[$3] = $2 }
END {
	for (k in np) {
		if ((pin[k] == "-" ? pex[k] : pin[k]) < 0.5) continue
		if (np[k] > 1) { dup++; continue }
		if (k in gone) { changed++; continue }
		if (!(k in incl)) { print "missing in kp-inclusive: " k " (perf " pin[k] "% " pex[k] "%)"; bad++; continue }
		n++
		if ((pin[k] != "-" && off(incl[k], pin[k])) || off(excl[k], pex[k])) {
			printf "%s: perf %s%% %s%%, kp %s%% %s%%\n", k, pin[k], pex[k], incl[k], excl[k]
			bad++
		}
	}
	printf "%d symbols of 0.5%% or more compared; left out: %d unresolved perf rows, %d names perf splits by program, %d symbols of files changed since; %d bad\n", n, skipped, dup, changed, bad
	if (n < 10) { print "too few rows compared"; exit 1 }
	exit bad > 0
}' "$t/children.tsv" || status=1

want=$(xz -dc "$d.children.xz" | sed -n 's/^# Event count (approx.): //p' | head -1)
got=$(sed -n 's/^# total: //p' "$t/kp.tsv")
if [ "$want" = "$got" ]; then echo "total $got matches"
else echo "total: perf $want, kp $got"; status=1; fi
done
exit $status
