#!/usr/bin/env bash
# bench/sample-cost.sh - what sampling at 4999 Hz costs a workload, and
# where kp-sample's own time goes (issue 14).
#
#   workload  one "dd if=/dev/zero of=/dev/null bs=4k count=$DD_COUNT",
#             run bare, under "perf record -a -g -F 4999" and under
#             "kp-sample -a -F 4999 -o /dev/null", $REPEAT interleaved
#             rounds: the medians of dd's own wall time and of its CPU
#             time (a sampling interrupt is charged to the task it
#             interrupts, so dd's CPU time carries the kernel's cost of
#             every sample), and of the sampler's own CPU time (the
#             whole command's, dd's taken out).
#   phases    kp-sample's own CPU time before the command starts (the
#             kernel's symbols: /proc/kallsyms), while it runs (reading
#             the rings: per-sample work and wakeups) and after (naming
#             the addresses, writing kp), from "perf record" of
#             kp-sample itself.
#
# Needs root (perf_event_open) and perf.  Environment: REPEAT (5),
# DD_COUNT (1500000).  Figures on a shared machine are noisy: the
# medians of interleaved rounds are what to quote.
set -u
export LC_ALL=C
: "${KP_TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${KP_BIN:=$KP_TOP/build/bin}"
export PATH="$KP_BIN:$PATH"
OUT="$KP_TOP/bench/out/sample-cost"
mkdir -p "$OUT"
REPEAT=${REPEAT:-5}
DD_COUNT=${DD_COUNT:-1500000}
DD="dd if=/dev/zero of=/dev/null bs=4k count=$DD_COUNT"

if ! kp-sample -e cpu-clock -a -d 0.05 -o /dev/null 2> "$OUT/probe.err"; then
	echo "sample-cost: skipped: $(tail -n 1 "$OUT/probe.err")"
	exit 0
fi
command -v perf > /dev/null || { echo "sample-cost: skipped: no perf"; exit 0; }

# run NAME CMD...: CMD runs dd under /usr/bin/time (dd's wall, user,
# sys) and is itself timed (its user + sys, dd's included)
run() {
	local name=$1
	shift
	/usr/bin/time -o "$OUT/all" -f "%U %S" "$@" \
		/usr/bin/time -o "$OUT/dd" -f "%e %U %S" $DD > /dev/null 2>&1
	read -r dw du ds < "$OUT/dd"
	read -r au as < "$OUT/all"
	awk -v dw="$dw" -v du="$du" -v ds="$ds" -v au="$au" -v as="$as" \
		'BEGIN { printf "%.3f %.3f %.3f\n", dw, du + ds, au + as - du - ds }' >> "$OUT/$name.runs"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

rm -f "$OUT"/*.runs
for _ in $(seq "$REPEAT"); do
	run bare env
	run perf perf record -q -a -g -F 4999 -o "$OUT/perf.data" --
	run kp kp-sample -a -F 4999 -o /dev/null --
done
echo "dd bs=4k count=$DD_COUNT, $REPEAT interleaved rounds, medians:"
printf '  %-34s %8s %8s %10s\n' "" "dd wall" "dd CPU" "sampler CPU"
for n in bare perf kp; do
	case $n in
	bare) l="bare" ;;
	perf) l="perf record -a -g -F 4999" ;;
	kp) l="kp-sample -a -F 4999" ;;
	esac
	printf '  %-34s %7ss %7ss %9ss\n' "$l" \
		"$(cut -d' ' -f1 "$OUT/$n.runs" | median)" \
		"$(cut -d' ' -f2 "$OUT/$n.runs" | median)" \
		"$([ $n = bare ] && echo - || cut -d' ' -f3 "$OUT/$n.runs" | median)"
done

# where kp-sample's own CPU time goes: perf samples of kp-sample itself,
# split at the first and last sample of dd.  At 3989 Hz, not kp-sample's
# 4999: two samplers of a CPU at one frequency keep one phase for the
# whole run, so one would always see the other's interrupt handler at
# the same point (see tests/kp-sample/perf.sh)
perf record -q -F 3989 -g -o "$OUT/self.data" -- \
	kp-sample -a -F 4999 -o /dev/null -- $DD > /dev/null 2>&1
perf script -i "$OUT/self.data" -F comm,time 2> /dev/null | awk '
	{ t = $2 + 0 }
	$1 == "dd" { if (!d0) d0 = t; d1 = t; next }
	$1 == "kp-sample" { k[++n] = t }
	END {
		for (i = 1; i <= n; i++)
			if (k[i] < d0) b++; else if (k[i] <= d1) w++; else a++
		printf "kp-sample'"'"'s own CPU, in perf samples at 3989 Hz (0.25 ms each):\n"
		printf "  before the command (kallsyms) %5d   while it runs %5d   after (naming, writing) %5d\n", b, w, a
		printf "  dd ran %.2f s: %d samples a second of it were kp-sample reading the rings\n", d1 - d0, w / (d1 - d0)
	}'
