#!/usr/bin/env bash
# The real captures in samples/ convert with no skipped line, and the
# conversion keeps every sample: perf2kp's counts add up to the number
# of sample headers perf script printed, bpftrace2kp's to the sum of the
# map values.  No capture found, or one with no sample in it, is not a
# pass: the first says skipped, the second fails.
set -u
S=$KP_TOP/samples
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
total() { awk '/^\t[0-9]+$/ { s += $1 } END { print s + 0 }' "$1"; }
seen=0

for f in "$S"/perf-*.txt "$S"/perf-*.txt.xz; do
	[ -e "$f" ] || continue
	n=$(basename "$f")
	case "$f" in *.xz) xz -dc "$f" > "$t/${n%.xz}"; f=$t/${n%.xz} ;; esac
	perf2kp "$f" > "$t/out" 2> "$t/err"; st=$?
	check "$n: exit 0, nothing on stderr" '[ $st -eq 0 ] && [ ! -s "$t/err" ]'
	want=$(grep -c '^[^ 	#].* [0-9][0-9]*\.[0-9]*: ' "$f")
	check "$n: $want samples in, $(total "$t/out") out" '[ "$want" -gt 0 ] && [ "$(total "$t/out")" -eq "$want" ]'
	seen=$((seen + 1))
done
for f in "$S"/bpftrace-*.txt; do
	[ -e "$f" ] || continue
	n=$(basename "$f")
	bpftrace2kp --key "$f" > "$t/out" 2> "$t/err"; st=$?
	check "$n: exit 0, nothing on stderr" '[ $st -eq 0 ] && [ ! -s "$t/err" ]'
	want=$(grep -o ']: [0-9]*$' "$f" | awk '{ s += $2 } END { print s + 0 }')
	check "$n: counts add up to $want" '[ "$want" -gt 0 ] && [ "$(total "$t/out")" -eq "$want" ]'
	seen=$((seen + 1))
done
if [ $seen -eq 0 ]; then
	echo "skipped: no capture in $S"
	exit 77
fi
exit $fail
