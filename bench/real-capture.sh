#!/usr/bin/env bash
# bench/real-capture.sh - kp on a real capture whose stacks are mostly
# distinct, beside inferno-collapse-perf (default threads), in one run:
#
#	bash bench/real-capture.sh [RUNS]
#
# Input: samples/perf-real-a-g.txt.xz (one 30 s system-wide capture at
# 4999 Hz, 133 MB of perf script text, 299k samples; see its .how),
# decompressed once to bench/out/ and read from the page cache.  Each
# command runs RUNS times (default 5) in turn under GNU time -v; printed:
# the median wall time, MB/s and samples/s at that median, the median
# user+system CPU time, and the largest peak RSS of the runs (a
# pipeline's is its largest process's); the pipelines also with
# perf2kp --functions (one frame per function, the same folded stacks
# and report in fewer bytes).  Then the replicated case:
# samples/perf-dd-a-g.txt replicated to REPL_MB megabytes (default 300),
# perf2kp alone, as bench/converters.sh runs it.
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

# row NAME CMD...: RUNS runs; median wall, MB/s, samples/s, cpu, max RSS
row() {
	local name=$1 i f
	shift
	f=$out/.real-times
	: > "$f"
	for i in $(seq "$runs"); do
		/usr/bin/time -v -o "$out/.tv" "$@" > /dev/null 2> "$out/.err" ||
			{ echo "$name: failed:"; cat "$out/.err" "$out/.tv"; return 1; }
		awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); w = 0
				for (i = 1; i <= n; i++) w = w * 60 + t[i] }
			/User time/ { u = $2 } /System time/ { s = $2 }
			/Maximum resident/ { r = $2 }
			END { print w, u + s, r }' "$out/.tv" >> "$f"
	done
	mid=$(( (runs + 1) / 2 ))
	w=$(awk '{ print $1 }' "$f" | sort -g | sed -n "${mid}p")
	c=$(awk '{ print $2 }' "$f" | sort -g | sed -n "${mid}p")
	r=$(awk '{ print $3 }' "$f" | sort -g | tail -n 1)
	awk -v n="$name" -v b="$bytes" -v s="$samples" -v m="$w" -v c="$c" -v r="$r" 'BEGIN {
		if (m < 0.01) m = 0.01
		printf "%-34s wall %6.2f s %6.0f MB/s %9.0f samples/s  cpu %6.2f s  peak RSS %7.1f MB\n",
			n, m, b / 1e6 / m, s / m, c, r / 1024 }'
	echo "$w" > "$out/.median.$(echo "$name" | tr -c 'a-z0-9\n' _)"
}
median() { cat "$out/.median.$(echo "$1" | tr -c 'a-z0-9\n' _)"; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $runs runs each, medians"
echo "real capture: $((bytes / 1000000)) MB of perf script text, $samples samples"
if command -v inferno-collapse-perf > /dev/null; then
	row "inferno-collapse-perf" inferno-collapse-perf "$txt"
	peer=1
else
	echo "inferno-collapse-perf: not on PATH, its rows left out" \
		"(install: MIRROR_ROOT=DIR bash bench/setup.sh)"
	peer=0
fi
row "perf2kp | kp-fold" sh -c '"$0/perf2kp" "$1" | "$0/kp-fold"' "$bin" "$txt"
row "perf2kp | kp-inclusive" sh -c '"$0/perf2kp" "$1" | "$0/kp-inclusive"' "$bin" "$txt"
row "perf2kp --functions | kp-fold" sh -c '"$0/perf2kp" --functions "$1" | "$0/kp-fold"' "$bin" "$txt"
row "perf2kp --functions | kp-inclusive" sh -c '"$0/perf2kp" --functions "$1" | "$0/kp-inclusive"' "$bin" "$txt"
row "perf2kp" "$bin/perf2kp" "$txt"
if [ $peer = 1 ]; then
	for n in "perf2kp | kp-fold" "perf2kp | kp-inclusive" \
		"perf2kp --functions | kp-fold" "perf2kp --functions | kp-inclusive"; do
		awk -v a="$(median "$n")" -v b="$(median inferno-collapse-perf)" -v n="$n" \
			'BEGIN { printf "%-34s %.2fx the speed of inferno-collapse-perf (median wall)\n", n, b / a }'
	done
fi

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
row "perf2kp (replicated)" "$bin/perf2kp" "$txt"
if [ $peer = 1 ]; then
	row "inferno-collapse-perf (replicated)" inferno-collapse-perf "$txt"
fi
