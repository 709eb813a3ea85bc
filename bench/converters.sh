#!/usr/bin/env bash
# bench/converters.sh - throughput and peak RSS of perf2kp, dtrace2kp and
# bpftrace2kp on real captures replicated to a large input.
#
#	KP_BIN=build/bin bash bench/converters.sh [MB]
#
# perf: samples/perf-dd-a-g.txt (a real perf record -a -g capture)
# replicated to MB megabytes (default 1000: the target, 1.5 GB/s, is
# stated for ~1 GB), and samples/perf-build-a-g.txt.xz as it is (25.6 MB
# of a real capture whose stacks are mostly distinct, so that the caches
# rarely hit); dtrace and bpftrace: the peer corpus's DTrace example and
# our bpftrace capture, replicated to MB/10.  Inputs are generated
# deterministically under bench/out/ (git-ignored) and read from the page
# cache (one warm-up pass first).  Prints MB/s (best of 3) and peak RSS.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${KP_BIN:-$top/build/bin}
mb=${1:-1000}
out=$top/bench/out
mkdir -p "$out"
C=${KP_CORPUS:-$top/../shared/corpus}

replicate() { # src dst megabytes
	local src=$1 dst=$2 want=$(($3 * 1000000)) size n
	size=$(wc -c < "$src")
	n=$(( (want + size - 1) / size ))
	if [ ! -f "$dst" ] || [ "$(wc -c < "$dst")" -ne $((n * size)) ]; then
		rm -f "$dst"
		for _ in $(seq "$n"); do cat "$src"; done > "$dst"
	fi
}

# report NAME FILE COMMAND...: best of 3 runs by wall time and by CPU
# time (user + system; the CPUs are shared, so CPU time is the steadier
# figure), and peak RSS.
report() {
	local name=$1 file=$2 bytes r wall cpu rss bw="" bc="" brss=0
	shift 2
	bytes=$(wc -c < "$file")
	cat "$file" > /dev/null
	for _ in 1 2 3; do
		r=$(/usr/bin/time -f '%e %U %S %M' "$@" "$file" 2>&1 > /dev/null | tail -n 1)
		wall=$(echo "$r" | awk '{ print $1 }')
		cpu=$(echo "$r" | awk '{ print $2 + $3 }')
		rss=$(echo "$r" | awk '{ print $4 }')
		if [ -z "$bw" ] || [ "$(echo "$wall < $bw" | bc -l)" = 1 ]; then bw=$wall; fi
		if [ -z "$bc" ] || [ "$(echo "$cpu < $bc" | bc -l)" = 1 ]; then bc=$cpu; fi
		[ "$rss" -gt "$brss" ] && brss=$rss
	done
	[ "$(echo "$bw < 0.01" | bc -l)" = 1 ] && bw=0.01
	[ "$(echo "$bc < 0.01" | bc -l)" = 1 ] && bc=0.01
	printf '%-32s %7.1f MB  wall %6.2f s %7.0f MB/s  cpu %6.2f s %7.0f MB/s  RSS %6d KB\n' \
		"$name" "$(echo "$bytes / 1000000" | bc -l)" "$bw" \
		"$(echo "$bytes / 1000000 / $bw" | bc -l)" "$bc" \
		"$(echo "$bytes / 1000000 / $bc" | bc -l)" "$brss"
}

replicate "$top/samples/perf-dd-a-g.txt" "$out/perf-$mb.txt" "$mb"
replicate "$top/samples/perf-dd-a-g.txt" "$out/perf-$((mb / 10)).txt" $((mb / 10))
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "perf2kp on samples/perf-dd-a-g.txt replicated (1 thread):"
report "wc -l (reading speed)" "$out/perf-$mb.txt" wc -l
report "perf2kp" "$out/perf-$mb.txt" "$bin/perf2kp"
report "perf2kp --comm --weight period" "$out/perf-$mb.txt" "$bin/perf2kp" --comm --weight period
report "perf2kp (1/10 input: RSS flat?)" "$out/perf-$((mb / 10)).txt" "$bin/perf2kp"
report "perf2kp | kp-fold" "$out/perf-$((mb / 10)).txt" sh -c "\"$bin/perf2kp\" \"\$0\" | \"$bin/kp-fold\""
if [ ! -f "$out/perf-build-a-g.txt" ]; then
	xz -dc "$top/samples/perf-build-a-g.txt.xz" > "$out/perf-build-a-g.txt"
fi
report "perf2kp (perf-build-a-g, distinct)" "$out/perf-build-a-g.txt" "$bin/perf2kp"
if [ -f "$top/samples/perf-report-kernel.script" ]; then
	# a second real capture, with deeper kernel stacks
	replicate "$top/samples/perf-report-kernel.script" "$out/kernel-$mb.txt" "$mb"
	report "perf2kp (perf-report-kernel)" "$out/kernel-$mb.txt" "$bin/perf2kp"
fi
if [ -f "$C/dtrace/flamegraph/example-dtrace-stacks.txt" ]; then
	replicate "$C/dtrace/flamegraph/example-dtrace-stacks.txt" "$out/dtrace-$((mb / 10)).txt" $((mb / 10))
	report "dtrace2kp" "$out/dtrace-$((mb / 10)).txt" "$bin/dtrace2kp"
fi
replicate "$top/samples/bpftrace-kstack-ustack-perf.txt" "$out/bpftrace-$((mb / 10)).txt" $((mb / 10))
report "bpftrace2kp" "$out/bpftrace-$((mb / 10)).txt" "$bin/bpftrace2kp"
