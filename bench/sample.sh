#!/usr/bin/env bash
# bench/sample.sh - kp-sample (issue 6) against perf record.
#
#   overhead  a fixed kernel-heavy workload (one "dd if=/dev/zero
#             of=/dev/null bs=4k count=$DD_COUNT" per CPU) run bare,
#             under "perf record -a -g" and under "kp-sample -a", at
#             997 and 4999 Hz, $REPEAT interleaved rounds: the slowdown
#             in wall and in CPU time of the workload, and the CPU cost
#             per sample (extra CPU time / samples).
#   latency   from the command's exit to kp-sample's last byte, for a
#             $LAT_SECONDS s system-wide capture (and for perf record +
#             perf script + perf2kp, the way it was done before).
#   losses    busy CPUs sampled 2 s at rising -F: lost and throttled
#             counts, and the frequency at which losses begin.
#
# Needs root (perf_event_open).  Environment: REPEAT (3), DD_COUNT
# (1000000), LAT_SECONDS (30).  The machine is shared: figures are
# noisy; run it when quiet.
set -u
export LC_ALL=C
: "${KP_TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${KP_BIN:=$KP_TOP/build/bin}"
export PATH="$KP_BIN:$PATH"
OUT="$KP_TOP/bench/out/sample"
mkdir -p "$OUT"
REPEAT=${REPEAT:-3}
DD_COUNT=${DD_COUNT:-1000000}
LAT_SECONDS=${LAT_SECONDS:-30}
NCPU=$(getconf _NPROCESSORS_ONLN)

if ! kp-sample -e cpu-clock -a -d 0.05 -o /dev/null 2> "$OUT/probe.err"; then
	echo "sample: skipped: $(tail -n 1 "$OUT/probe.err")"
	exit 0
fi
have_perf=1
command -v perf > /dev/null || { have_perf=0; echo "sample: no perf: comparisons left out"; }

# the workload: one dd per CPU, all of them to the end.  It reports its
# own wall time (so that a tool's start-up and its writing after are not
# counted) and the CPU time of its dd's: a sampling interrupt is charged
# to the task it interrupts, so the CPU time shows the cost of sampling
# even when the machine is shared and wall times swing.
cat > "$OUT/work.sh" << EOF
#!/bin/bash
t0=\$(date +%s.%N)
for i in \$(seq $NCPU); do
	dd if=/dev/zero of=/dev/null bs=4k count=$DD_COUNT 2> /dev/null &
done
wait
t1=\$(date +%s.%N)
# bash's times: the children's user and system time, to the millisecond
times > "$OUT/times" # (not in a pipe: a subshell has no children)
echo "\$t0 \$t1 \$(tail -n 1 "$OUT/times")" > "$OUT/wtime"
EOF
chmod +x "$OUT/work.sh"

# run NAME CMD...: one run; appends "wall cpu samples" to $OUT/NAME.runs
run() {
	local name=$1 n=0
	shift
	rm -f "$OUT/wtime" "$OUT/run.kp" "$OUT/perf.data"
	"$@" > /dev/null 2>&1
	[ -f "$OUT/run.kp" ] && n=$(sed -n 's/^# samples: //p' "$OUT/run.kp")
	[ -f "$OUT/perf.data" ] && n=$(perf script -i "$OUT/perf.data" -F time 2> /dev/null | wc -l)
	# "T0 T1 0m1.234s 0m0.456s"
	awk -v n="$n" 'function sec(x) { split(x, a, /[ms]/); return a[1] * 60 + a[2] }
		{ printf "%.3f %.3f %d\n", $2 - $1, sec($3) + sec($4), n }' \
		"$OUT/wtime" >> "$OUT/$name.runs"
}
# report NAME LABEL: the run with the least CPU time, against bare's
report() {
	local w c n bw bc
	sort -k2,2n "$OUT/$1.runs" | head -n 1 > "$OUT/$1.best"
	read -r w c n < "$OUT/$1.best"
	read -r bw bc _ < "$OUT/bare.best"
	if [ "$1" = bare ]; then
		printf '%-28s wall %6.3f s          CPU %6.3f s\n' "$2" "$w" "$c"
		return
	fi
	awk -v l="$2" -v w="$w" -v c="$c" -v n="$n" -v bw="$bw" -v bc="$bc" 'BEGIN {
		printf "%-28s wall %6.3f s %+6.1f%%  CPU %6.3f s %+6.1f%%  %6d samples  %5.1f us/sample\n",
			l, w, (w - bw) / bw * 100, c, (c - bc) / bc * 100, n, n ? (c - bc) / n * 1e6 : 0 }'
}

echo "workload: $NCPU x dd bs=4k count=$DD_COUNT; $REPEAT rounds, each config"
echo "once a round (interleaved); the run with the least CPU time is kept"
rm -f "$OUT"/*.runs
for _ in $(seq "$REPEAT"); do
	run bare "$OUT/work.sh"
	for hz in 997 4999; do
		if [ $have_perf = 1 ]; then
			run perf$hz perf record -q -a -g -F $hz -o "$OUT/perf.data" -- "$OUT/work.sh"
		fi
		run kp$hz kp-sample -a -F $hz -o "$OUT/run.kp" -- "$OUT/work.sh"
	done
done
report bare "bare"
for hz in 997 4999; do
	[ $have_perf = 1 ] && report perf$hz "perf record -a -g -F $hz"
	report kp$hz "kp-sample -a -F $hz"
done
/usr/bin/time -f %M -o "$OUT/rss" kp-sample -a -F 4999 -o /dev/null -- "$OUT/work.sh" > /dev/null 2>&1
echo "kp-sample -a -F 4999 peak RSS: $(awk '{ printf "%.1f MB", $1 / 1024 }' "$OUT/rss")"

# latency: the command writes the time it ends; the reader, the time of
# the last byte (end of file)
echo "latency, $LAT_SECONDS s system-wide capture, command exit -> last byte:"
kp-sample -a -- sh -c "sleep $LAT_SECONDS; date +%s.%N > $OUT/end" 2> /dev/null |
	{ cat > "$OUT/lat.kp"; date +%s.%N > "$OUT/eof"; }
awk -v a="$(cat "$OUT/end")" -v b="$(cat "$OUT/eof")" -v n="$(sed -n 's/^# samples: //p' "$OUT/lat.kp")" \
	-v r="$(grep -c '^!$' "$OUT/lat.kp")" 'BEGIN {
	printf "  %-32s %7.1f ms  (%d samples, %d records)\n", "kp-sample -a", (b - a) * 1000, n, r - 1 }'
if [ $have_perf = 1 ] && command -v perf2kp > /dev/null; then
	{
		perf record -q -a -g -o "$OUT/lat.data" -- sh -c "sleep $LAT_SECONDS; date +%s.%N > $OUT/end" > /dev/null 2>&1
		perf script -i "$OUT/lat.data" 2> /dev/null | perf2kp
	} | { cat > "$OUT/lat-perf.kp"; date +%s.%N > "$OUT/eof"; }
	awk -v a="$(cat "$OUT/end")" -v b="$(cat "$OUT/eof")" 'BEGIN {
		printf "  %-32s %7.1f ms\n", "perf record + script + perf2kp", (b - a) * 1000 }'
fi

# losses: busy CPUs, rising frequency, the default ring (-m 128)
echo "losses, one dd per CPU, 2 s each, default -m:"
for i in $(seq "$NCPU"); do
	dd if=/dev/zero of=/dev/null bs=4k 2> /dev/null &
	BUSY="${BUSY:-} $!"
done
trap 'kill $BUSY 2> /dev/null' EXIT
first=
maxrate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
for hz in 997 4999 9999 19999 49999 69999 99999; do
	[ "$hz" -le "$maxrate" ] || { echo "  -F $hz: above perf_event_max_sample_rate ($maxrate)"; continue; }
	kp-sample -e cpu-clock -a -F $hz -d 2 -o "$OUT/loss.kp" 2> /dev/null
	m() { sed -n "s/^# $1: //p" "$OUT/loss.kp"; }
	printf '  -F %-6s %8s samples %6s lost %4s throttled  %s\n' "$hz" "$(m samples)" "$(m lost)" "$(m throttled)" \
		"$(awk -v n="$(m samples)" -v d="$(m duration | cut -d' ' -f1)" -v c="$NCPU" 'BEGIN { printf "(%.0f/s a CPU)", n / d / c }')"
	if [ -z "$first" ] && [ "$(m lost)" != 0 ]; then first=$hz; fi
done
kill $BUSY 2> /dev/null
wait 2> /dev/null
echo "losses begin at: ${first:-none up to the highest -F tried}"
