#!/usr/bin/env bash
# bench/offcpu.sh - what off-CPU profiling costs a context-switch-heavy
# workload: kp-sample --off-cpu beside perf record -e sched:sched_switch -g
# (issue 14).
#
#   workload  "perf bench sched pipe -l $LOOPS": two tasks passing a
#             token through pipes, two context switches a loop; it
#             reports its own time (usecs/op), which is what is compared
#   modes     system-wide (-a) and following the command; bare, under
#             perf record -e sched:sched_switch -g, under kp-sample
#             --off-cpu; $REPEAT interleaved rounds, medians
#   also      the samplers' own CPU time (the whole command's user +
#             sys, the workload's included) and what each wrote
#
# Needs root and perf, and tracefs mounted
# (mount -t tracefs nodev /sys/kernel/tracing).  Environment: REPEAT
# (5), LOOPS (100000).
set -u
export LC_ALL=C
: "${KP_TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${KP_BIN:=$KP_TOP/build/bin}"
export PATH="$KP_BIN:$PATH"
OUT="$KP_TOP/bench/out/offcpu"
mkdir -p "$OUT"
REPEAT=${REPEAT:-5}
LOOPS=${LOOPS:-100000}

command -v perf > /dev/null || { echo "offcpu: skipped: no perf"; exit 0; }
if ! kp-sample --off-cpu -a -d 0.05 -o /dev/null 2> "$OUT/probe.err"; then
	echo "offcpu: skipped: $(tail -n 1 "$OUT/probe.err")"
	exit 0
fi
WORK="perf bench sched pipe -l $LOOPS"

# run NAME CMD...: appends "usecs/op cpu-seconds" to $OUT/NAME.runs
run() {
	local name=$1
	shift
	/usr/bin/time -o "$OUT/time" -f "%U %S" "$@" $WORK > "$OUT/out" 2> /dev/null
	awk -v t="$(cat "$OUT/time")" '/usecs\/op/ { u = $1 }
		END { split(t, a, " "); printf "%s %.3f\n", u, a[1] + a[2] }' "$OUT/out" >> "$OUT/$name.runs"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

rm -f "$OUT"/*.runs
for _ in $(seq "$REPEAT"); do
	run bare env
	run perf-a perf record -q -e sched:sched_switch -g -a -o "$OUT/perf.data" --
	run kp-a kp-sample --off-cpu -a -o "$OUT/kp.kp" --
	run perf-cmd perf record -q -e sched:sched_switch -g -o "$OUT/perf.data" --
	run kp-cmd kp-sample --off-cpu -o "$OUT/kp.kp" --
done
echo "perf bench sched pipe -l $LOOPS, $REPEAT interleaved rounds, medians:"
printf '  %-46s %10s %9s\n' "" "usecs/op" "CPU s"
for n in bare perf-a kp-a perf-cmd kp-cmd; do
	case $n in
	bare) l="bare" ;;
	perf-a) l="perf record -e sched:sched_switch -g -a" ;;
	kp-a) l="kp-sample --off-cpu -a" ;;
	perf-cmd) l="perf record -e sched:sched_switch -g CMD" ;;
	kp-cmd) l="kp-sample --off-cpu CMD" ;;
	esac
	printf '  %-46s %10s %9s\n' "$l" "$(cut -d' ' -f1 "$OUT/$n.runs" | median)" \
		"$(cut -d' ' -f2 "$OUT/$n.runs" | median)"
done
echo "written: perf.data $(du -h "$OUT/perf.data" | cut -f1), kp $(du -h "$OUT/kp.kp" | cut -f1)" \
	"(the last run: $(sed -n 's/^# samples: //p' "$OUT/kp.kp") waits, $(sed -n 's/^# lost: //p' "$OUT/kp.kp") lost)"
