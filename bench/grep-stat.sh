#!/usr/bin/env bash
# bench/grep-stat.sh - kp-grep, kp-stat and kp-inclusive's differences
# (issue 13) on a real capture, samples/perf-build-a-g (80k samples,
# 54k distinct stacks), as it is and replicated GREP_TIMES times (default
# 20), against the peers where one does the same job:
#  - kp-grep --collapse-recursion and inferno-collapse-recursive, on the
#    same profile folded by function name (fold2kp makes the kp side);
#  - kp-inclusive A B (with a p-value a row) and difffolded.pl, the same.
# Peak RSS must not grow with the replication (distinct stacks do not).
set -eu
. "$(dirname "$0")/lib.sh"
command -v xz > /dev/null || { echo "skipped: no xz"; exit 0; }
out="$KP_TOP/bench/out"
n=${GREP_TIMES:-20}
xz -dc "$KP_TOP/samples/perf-build-a-g.txt.xz" | perf2kp > "$out/build.kp"
kp-fold "$out/build.kp" > "$out/build.folded"
fold2kp "$out/build.folded" > "$out/build-fn.kp"
for _ in $(seq "$n"); do cat "$out/build.kp"; done > "$out/build-x.kp"
for _ in $(seq "$n"); do cat "$out/build.folded"; done > "$out/build-x.folded"
for _ in $(seq "$n"); do cat "$out/build-fn.kp"; done > "$out/build-fn-x.kp"
sz() { stat -c %s "$1"; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for f in build build-x; do
	measure "kp-grep --no-idle ($f)" "$(sz "$out/$f.kp")" kp-grep --no-idle "$out/$f.kp"
	measure "kp-grep --merge-clones --hide ^_raw_ ($f)" "$(sz "$out/$f.kp")" kp-grep --merge-clones --hide '^_raw_' "$out/$f.kp"
	measure "kp-stat ($f)" "$(sz "$out/$f.kp")" kp-stat "$out/$f.kp"
done
for f in build-fn build-fn-x; do
	measure "kp-grep --collapse-recursion ($f)" "$(sz "$out/$f.kp")" kp-grep --collapse-recursion "$out/$f.kp"
done
if command -v inferno-collapse-recursive > /dev/null; then
	for f in build build-x; do
		measure "inferno-collapse-recursive ($f)" "$(sz "$out/$f.folded")" inferno-collapse-recursive "$out/$f.folded"
	done
fi
measure "kp-inclusive A B (build-fn, build-fn-x)" "$(($(sz "$out/build-fn.kp") + $(sz "$out/build-fn-x.kp")))" kp-inclusive "$out/build-fn.kp" "$out/build-fn-x.kp"
if command -v difffolded.pl > /dev/null; then
	measure "difffolded.pl A B (build, build-x)" "$(($(sz "$out/build.folded") + $(sz "$out/build-x.folded")))" difffolded.pl "$out/build.folded" "$out/build-x.folded"
fi
measure "kp-inclusive 3 runs -- 3 runs (build)" "$(($(sz "$out/build.kp") * 6))" kp-inclusive "$out/build.kp" "$out/build.kp" "$out/build.kp" -- "$out/build.kp" "$out/build.kp" "$out/build.kp"
