#!/usr/bin/env bash
# --off-cpu: a perf.data of sched:sched_switch with -g gives the profile
# kp-sample --off-cpu gives (tests/kp-sample/offcpu.sh): each stack a
# task left the CPU with, weighted by the nanoseconds until it ran
# again.  Captures made here, for a command and system-wide (-a): three
# sleeps of 0.3, 0.3 and 0.4 s give 1.0 s (+-15%) through do_nanosleep,
# in state S with --state; "# weight: off-cpu-ns".  A capture without
# sched_switch is refused (exit 2) with how to record one.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
near1s() { # what, ns: 1.0 s +-15%
	if [ "$2" -ge 850000000 ] && [ "$2" -le 1150000000 ]; then echo "ok: $1: $2 ns"
	else echo "FAIL: $1: $2 ns, not 1.0 s +-15%"; fail=1; fi
}
nanosleep() { # kp file [outer frame]: ns through do_nanosleep
	kp-fold "$1" | awk -v o="${2-}" '(o == "" || index($0, o ";") == 1) &&
		/(^|;)do_nanosleep(;| )/ { s += $NF } END { printf "%.0f\n", s }'
}

# the bad input first: it needs no tracepoints
perf2kp --off-cpu --kallsyms "$t/kallsyms" "$S/perfdata-two-events.data" > "$t/bad" 2> "$t/bad.err" && rc=0 || rc=$?
want "no sched_switch: exit" 2 "$rc"
grep -q "no sched:sched_switch samples in it.*perf record -e sched:sched_switch -g" "$t/bad.err" &&
	echo "ok: no sched_switch: the message" ||
	{ echo "FAIL: no sched_switch: the message: $(cat "$t/bad.err")"; fail=1; }
perf2kp --state "$S/perfdata-two-events.data" > /dev/null 2>&1 && rc=0 || rc=$?
want "--state without --off-cpu: usage" 64 "$rc"
perf2kp --off-cpu --event cpu-clock "$S/perfdata-two-events.data" > /dev/null 2>&1 && rc=0 || rc=$?
want "--off-cpu --event: usage" 64 "$rc"

command -v perf > /dev/null || { echo "skipped: no perf"; exit 77; }
if [ ! -r /sys/kernel/tracing/events/sched/sched_switch/format ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null || true
fi
if ! perf record -q -e sched:sched_switch -g -o "$t/cmd.data" -- \
	sh -c 'sleep 0.3; sleep 0.3; sleep 0.4' > /dev/null 2> "$t/rec.err"; then
	[ "$fail" = 0 ] || exit 1
	echo "skipped: perf cannot record sched:sched_switch: $(head -1 "$t/rec.err")"
	exit 77
fi

# for a command
perf2kp --off-cpu "$t/cmd.data" > "$t/cmd" 2> "$t/cmd.err" ||
	{ echo "FAIL: --off-cpu: exit $?: $(cat "$t/cmd.err")"; exit 1; }
want "command: # weight" off-cpu-ns "$(meta weight "$t/cmd")"
want "command: # event" sched:sched_switch "$(meta event "$t/cmd")"
near1s "command: do_nanosleep" "$(nanosleep "$t/cmd")"
near1s "command: kp-inclusive's do_nanosleep" \
	"$(kp-inclusive --format tsv "$t/cmd" | awk -F'\t' '$NF == "do_nanosleep" { print $2 }')"
perf2kp --off-cpu --state "$t/cmd.data" > "$t/state" 2> /dev/null
near1s "command --state: [S] ... do_nanosleep" "$(nanosleep "$t/state" '[S]')"

# system-wide: the sleeps by a name of their own among the machine's
cp /bin/sleep "$t/kpoffsleep"
if perf record -q -a -e sched:sched_switch -g -o "$t/all.data" -- \
	sh -c "$t/kpoffsleep 0.3; $t/kpoffsleep 0.3; $t/kpoffsleep 0.4" > /dev/null 2> "$t/rec.err"; then
	perf2kp --off-cpu --comm "$t/all.data" > "$t/all" 2> "$t/all.err" ||
		{ echo "FAIL: -a: exit $?: $(cat "$t/all.err")"; fail=1; }
	want "-a: # weight" off-cpu-ns "$(meta weight "$t/all")"
	near1s "-a: kpoffsleep's do_nanosleep" "$(nanosleep "$t/all" kpoffsleep)"
else
	echo "FAIL: perf record -a: $(head -1 "$t/rec.err")"; fail=1
fi
exit $fail
