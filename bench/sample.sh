#!/usr/bin/env bash
# bench/sample.sh - kp-sample (issue 6) against perf record.
#
#   overhead  a fixed kernel-heavy workload (one "dd if=/dev/zero
#             of=/dev/null bs=4k count=$DD_COUNT" per CPU) timed bare,
#             under "perf record -a -g" and under "kp-sample -a", at
#             997 and 4999 Hz: best of $REPEAT runs each; the slowdown
#             and the cost per sample (extra time / samples).
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

# the workload: one dd per CPU, all of them to the end; it times itself
# (so that a tool's start-up and its writing after are not counted)
cat > "$OUT/work.sh" << EOF
#!/bin/sh
t0=\$(date +%s.%N)
for i in \$(seq $NCPU); do
	dd if=/dev/zero of=/dev/null bs=4k count=$DD_COUNT 2> /dev/null &
done
wait
echo "\$t0 \$(date +%s.%N)" > "$OUT/wtime"
EOF
chmod +x "$OUT/work.sh"

# best SECONDS of REPEAT runs of CMD: the workload's own time
best() {
	local b= t
	for _ in $(seq "$REPEAT"); do
		"$@" > /dev/null 2>&1
		t=$(awk '{ printf "%.3f", $2 - $1 }' "$OUT/wtime")
		if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
	done
	echo "$b"
}

echo "workload: $NCPU x dd bs=4k count=$DD_COUNT, best of $REPEAT"
bare=$(best "$OUT/work.sh")
printf '%-34s %7.3f s\n' "bare" "$bare"
for hz in 997 4999; do
	if [ $have_perf = 1 ]; then
		t=$(best perf record -q -a -g -F $hz -o "$OUT/perf.data" -- "$OUT/work.sh")
		n=$(perf script -i "$OUT/perf.data" -F time 2> /dev/null | wc -l)
		awk -v n="perf record -a -g -F $hz" -v t="$t" -v b="$bare" -v s="$n" 'BEGIN {
			printf "%-34s %7.3f s  %+6.1f%%  %6d samples  %6.1f us/sample\n", n, t, (t - b) / b * 100, s, (t - b) / s * 1e6 }'
	fi
	t=$(best kp-sample -a -F $hz -o "$OUT/kp.kp" -- "$OUT/work.sh")
	n=$(sed -n 's/^# samples: //p' "$OUT/kp.kp")
	awk -v n="kp-sample -a -F $hz" -v t="$t" -v b="$bare" -v s="$n" 'BEGIN {
		printf "%-34s %7.3f s  %+6.1f%%  %6d samples  %6.1f us/sample\n", n, t, (t - b) / b * 100, s, (t - b) / s * 1e6 }'
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
	timeout 30 dd if=/dev/zero of=/dev/null bs=4k 2> /dev/null &
	BUSY="${BUSY:-} $!"
done
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
