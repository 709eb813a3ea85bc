#!/usr/bin/env bash
# bench/analysis.sh - kp-inclusive, kp-top and fold2kp figures (issue 4).
#
# Input: bench/gen-kp's deterministic kp with 100,000 distinct stacks
# (depth 8-40, 4,000 functions), ANALYSIS_MB megabytes (default 1024:
# the issue's 1 GB) and a quarter of that, so that peak RSS can be seen
# not to grow with the input (it is bounded by the distinct stacks and
# functions).  Target: kp-inclusive and kp-top at 500 MB/s or more.
# kp-fold on the same file and "wc -l" are references; REPEAT (default
# 3) runs each, best time.  With shared CPUs the MB/s are noisy: the
# load average is printed first.
set -eu
. "$(dirname "$0")/lib.sh"
# measure_cpu NAME BYTES CMD...: like measure, and also the MB per second
# of CPU time (user + system), which other work on shared CPUs disturbs
# much less than the wall-clock figure.  Best of $REPEAT runs.
measure_cpu() {
	local name=$1 bytes=$2 best= bestcpu= out
	shift 2
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -o "$KP_TOP/bench/out/.time-analysis" -f "%e %U %S %M" "$@" > /dev/null 2> /dev/null
		out=$(tail -n 1 "$KP_TOP/bench/out/.time-analysis")
		read -r e u s m <<< "$out"
		if [ -z "$best" ] || awk -v a="$e" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$e; bestrss=$m; fi
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
		if [ -z "$bestcpu" ] || awk -v a="$c" -v b="$bestcpu" 'BEGIN { exit !(a < b) }'; then bestcpu=$c; fi
	done
	awk -v n="$name" -v b="$bytes" -v t="$best" -v c="$bestcpu" -v r="$bestrss" 'BEGIN {
		if (t < 0.005) t = 0.005; if (c < 0.005) c = 0.005
		printf "%-40s %8.1f MB  %6.2f s  %6.0f MB/s  cpu %5.2f s  %6.0f MB/cpu-s  peak RSS %6.1f MB\n",
			n, b / 1e6, t, b / 1e6 / t, c, b / 1e6 / c, r / 1024 }'
}
big=${ANALYSIS_MB:-1024}
small=$((big / 4))
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for mb in $small $big; do
	f=$(gen_kp "$mb" 100000)
	sz=$(stat -c %s "$f")
	measure_cpu "kp-inclusive ($mb MB, 100000 stacks)" "$sz" kp-inclusive "$f"
	measure_cpu "kp-top ($mb MB)" "$sz" kp-top "$f"
done
f=$(gen_kp "$big" 100000)
sz=$(stat -c %s "$f")
measure "kp-inclusive --by address ($big MB)" "$sz" kp-inclusive --by address "$f"
measure "kp-inclusive --modules --format tsv" "$sz" kp-inclusive --modules --format tsv "$f"
measure "kp-inclusive -C vfs_read_1400 ($big MB)" "$sz" kp-inclusive -C vfs_read_1400 "$f"
measure "kp-inclusive -c do_syscall_64_2720 -d 3" "$sz" kp-inclusive -c do_syscall_64_2720 -d 3 "$f"
measure "kp-top --by stack -n 20 ($big MB)" "$sz" kp-top --by stack -n 20 "$f"
fs=$(gen_kp "$small" 100000)
measure "kp-inclusive before after (2 x $small MB)" "$(($(stat -c %s "$fs") * 2))" kp-inclusive "$fs" "$fs"
measure_cpu "kp-fold   (reference, $big MB)" "$sz" kp-fold "$f"
measure "wc -l     (reference, $big MB)" "$sz" wc -l "$f"

# fold2kp: the folded form of the 100,000 stacks, repeated to ~100 MB
folded="$KP_TOP/bench/out/analysis-100000.folded"
if [ ! -s "$folded" ]; then
	kp-fold "$fs" > "$folded.1"
	: > "$folded.tmp"
	while [ "$(stat -c %s "$folded.tmp")" -lt 100000000 ]; do
		cat "$folded.1" >> "$folded.tmp"
	done
	mv "$folded.tmp" "$folded"
	rm -f "$folded.1"
fi
measure "fold2kp   (folded, 100000 stacks)" "$(stat -c %s "$folded")" fold2kp "$folded"
