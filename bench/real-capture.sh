#!/usr/bin/env bash
# bench/real-capture.sh - kp on a real capture whose stacks are mostly
# distinct, beside inferno-collapse-perf (default threads), in one run:
#
#	bash bench/real-capture.sh [RUNS]
#
# Input: samples/perf-real-a-g.txt.xz (one 30 s system-wide capture at
# 4999 Hz, 133 MB of perf script text, 299k samples; see its .how),
# decompressed once to bench/out/ and read from the page cache (read
# again before each run, untimed: WARM in bench/lib.sh's rounds).  The
# commands run in RUNS rounds (default 5), each once a round, in turn
# (bench/lib.sh, rounds); printed: the median wall time, MB/s and
# samples/s at that median, the median user+system CPU time, and the
# largest peak RSS of the runs (a pipeline's is its largest process's);
# the pipelines also with perf2kp --functions (one frame per function,
# the same folded stacks and report in fewer bytes), and perf2kp | cat:
# its output carried through a pipe and dropped, what any pipeline
# from perf2kp takes before its filter does any work.  Then how many
# times faster each pipeline (and perf2kp alone, and perf2kp | cat) is
# than inferno-collapse-perf: the median
# of the rounds' ratios (each round's pair ran back to back, so this
# machine's drift cancels), with the lowest and highest; perf2kp's peak
# RSS beside inferno-collapse-perf's; and the text
# to an SVG flame graph, perf2kp | kp-flame beside inferno-collapse-perf
# | inferno-flamegraph (when that is on PATH too).  Then the
# replicated case: samples/perf-dd-a-g.txt replicated to REPL_MB
# megabytes (default 300), perf2kp alone, as bench/converters.sh runs
# it, beside inferno.
#
# The peers are not fetched: inferno-collapse-perf is used if it is on
# PATH (else its rows are left out, with how to install it).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${KP_BIN:-$top/build/bin}
runs=${1:-5}
out=$top/bench/out
mkdir -p "$out"
txt=$out/perf-real-a-g.txt
if [ ! -s "$txt" ]; then
	xz -dc "$top/samples/perf-real-a-g.txt.xz" > "$txt.tmp" && mv "$txt.tmp" "$txt"
fi
bytes=$(wc -c < "$txt")
samples=$(grep -c '^[^[:space:]#]' "$txt")
cat "$txt" > /dev/null

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $runs rounds, medians"
echo "real capture: $((bytes / 1000000)) MB of perf script text, $samples samples"
# one round runs each command once, in turn (see rounds in lib.sh)
KP_TOP=${KP_TOP:-$top}
. "$top/bench/lib.sh"
kp=("perf2kp | kp-fold" "perf2kp | kp-inclusive"
	"perf2kp --functions | kp-fold" "perf2kp --functions | kp-inclusive")
set -- "${kp[0]}" "'$bin/perf2kp' '$txt' | '$bin/kp-fold'" \
	"${kp[1]}" "'$bin/perf2kp' '$txt' | '$bin/kp-inclusive'" \
	"${kp[2]}" "'$bin/perf2kp' --functions '$txt' | '$bin/kp-fold'" \
	"${kp[3]}" "'$bin/perf2kp' --functions '$txt' | '$bin/kp-inclusive'" \
	"perf2kp" "'$bin/perf2kp' '$txt'" \
	"perf2kp | cat" "'$bin/perf2kp' '$txt' | cat" \
	"perf2kp | kp-flame" "'$bin/perf2kp' '$txt' | '$bin/kp-flame'"
svg=0
if command -v inferno-collapse-perf > /dev/null; then
	set -- "inferno-collapse-perf" "inferno-collapse-perf '$txt'" "$@"
	peer=1
	if command -v inferno-flamegraph > /dev/null; then
		set -- "$@" "inferno (collapse | flamegraph)" \
			"inferno-collapse-perf '$txt' | inferno-flamegraph"
		svg=1
	fi
else
	echo "inferno-collapse-perf: not on PATH, its rows left out" \
		"(install: MIRROR_ROOT=DIR bash bench/setup.sh)"
	peer=0
fi
WARM=$txt rounds "$out/.real" "$runs" "$@" || exit 1
round_table "$out/.real" "$bytes" "$samples"
if [ $peer = 1 ]; then
	for n in "${kp[@]}" perf2kp "perf2kp | cat"; do
		speedup "$out/.real" "$n" inferno-collapse-perf
	done
	peak_vs "$out/.real" perf2kp inferno-collapse-perf
fi
[ $svg = 1 ] && speedup "$out/.real" "perf2kp | kp-flame" \
	"inferno (collapse | flamegraph)"

# the replicated case
mb=${REPL_MB:-300}
src=$top/samples/perf-dd-a-g.txt
rep=$out/perf-dd-$mb.txt
size=$(wc -c < "$src")
n=$(( (mb * 1000000 + size - 1) / size ))
if [ ! -f "$rep" ] || [ "$(wc -c < "$rep")" -ne $((n * size)) ]; then
	for _ in $(seq "$n"); do cat "$src"; done > "$rep"
fi
txt=$rep
bytes=$(wc -c < "$txt")
samples=$(grep -c '^[^[:space:]#]' "$txt")
cat "$txt" > /dev/null
echo "replicated: samples/perf-dd-a-g.txt to $((bytes / 1000000)) MB, $samples samples"
set -- "perf2kp (replicated)" "'$bin/perf2kp' '$txt'"
[ $peer = 1 ] && set -- "$@" "inferno-collapse-perf (replicated)" "inferno-collapse-perf '$txt'"
WARM=$txt rounds "$out/.repl" "$runs" "$@" || exit 1
round_table "$out/.repl" "$bytes" "$samples"
[ $peer = 1 ] && speedup "$out/.repl" "perf2kp (replicated)" "inferno-collapse-perf (replicated)"
exit 0
