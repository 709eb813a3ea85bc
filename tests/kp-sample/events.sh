#!/bin/bash
# -e takes every form of event perf takes, --list names what this
# machine offers: software events always, tracepoints where tracefs is
# mounted, hardware ones marked where perf_event_open refuses them (a
# machine without a PMU: the hardware and cache events fail with a
# clear message, exit 2).  -e sched:sched_switch -a gives kernel stacks
# through __schedule.
. "$(dirname "$0")/lib.inc"

kp-sample --list > "$T/list" 2> "$T/err" || fail "--list: exit $?: $(cat "$T/err")"
for e in cpu-clock task-clock 'page-faults OR faults' 'context-switches OR cs' \
	'cpu-migrations OR migrations' minor-faults major-faults dummy \
	'cpu-cycles OR cycles' L1-dcache-load-misses dTLB-load-misses LLC-load-misses rNNN; do
	grep -q "^  $e  " "$T/list" || fail "--list lacks '$e'"
done
grep -q '^  cpu-clock .*\[Software event\]$' "$T/list" || fail "--list: cpu-clock not a usable software event"
tracefs=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -r $d/events/sched/sched_switch/id ] && { tracefs=$d; break; }
done
if [ -n "$tracefs" ]; then
	grep -q '^  sched:sched_switch .*\[Tracepoint event\]$' "$T/list" || fail "--list lacks sched:sched_switch"
	n=$(ls -d $tracefs/events/*/*/ | wc -l)
	m=$(grep -c 'Tracepoint event' "$T/list")
	[ "$m" -ge $((n * 9 / 10)) ] || fail "--list names $m tracepoints of $n"
else
	grep -q 'tracefs is not mounted.*mount -t tracefs nodev /sys/kernel/tracing' "$T/list" ||
		fail "--list without tracefs: no hint"
fi

# hardware: where perf_event_open refuses cycles, every hardware and
# cache event is marked, and sampling one fails with the reason
if ! grep -q '^  cpu-cycles OR cycles .*not supported here' "$T/list"; then
	echo "this machine counts cycles: the no-PMU checks are left out"
else
	[ "$(grep -c 'Hardware.*event, not supported here' "$T/list")" -ge 40 ] ||
		fail "--list: hardware events not all marked"
	for e in cycles instructions dTLB-load-misses L1-dcache-load-misses r1a8 cycles:u; do
		kp-sample -e $e -a -d 0.1 > "$T/out" 2> "$T/err"
		st=$?
		[ $st = 2 ] || fail "-e $e: exit $st, not 2"
		[ ! -s "$T/out" ] || fail "-e $e: output written"
		grep -q "event '$e' is not supported here (.*no hardware PMU" "$T/err" || fail "-e $e: $(cat "$T/err")"
	done
fi

# names perf would refuse: usage errors that say why
u() { # u PATTERN EVENT
	kp-sample -e "$2" -a -d 0.1 > "$T/out" 2> "$T/err"
	st=$?
	[ $st = 64 ] || fail "-e $2: exit $st, not 64: $(cat "$T/err")"
	grep -q -- "$1" "$T/err" || fail "-e $2: message: $(cat "$T/err")"
}
u "unknown event 'no-such-event' (kp-sample --list" no-such-event
u "unknown modifier 'q'" cpu-clock:q
u "the L1-icache cache cannot count stores" L1-icache-stores
u "no PMU 'nopmu' in /sys/bus/event_source/devices (this machine has: .*software" nopmu/event=1/
[ -d /sys/bus/event_source/devices/msr ] &&
	u "PMU 'msr' has no term or event 'umask' (its terms: event" msr/umask=1/
[ -n "$tracefs" ] && u "no tracepoint 'sched:no_such' (none in $tracefs/events/sched/)" sched:no_such

# modifiers: cpu-clock:k counts kernel mode only (no [user] record)
# (user-mode loops on every CPU, and a dd that lives in the kernel beside
# them: a quiet machine's busy loops alone leave no kernel sample)
busy 1
timeout 0.8 dd if=/dev/zero of=/dev/null bs=4k status=none &
kdd=$!
kp-sample -e cpu-clock:k -a -d 0.5 > "$T/k" 2> "$T/err" || fail "cpu-clock:k: $(cat "$T/err")"
wait "$kdd"
[ "$(meta "$T/k" event)" = cpu-clock:k ] || fail "cpu-clock:k: event metadata"
! grep -q '^ : \[user\]$' "$T/k" || fail "cpu-clock:k: user-mode samples"
[ "$(total "$T/k")" -gt 0 ] || fail "cpu-clock:k: no samples"
# a software event with a period, on a command
kp-sample -e minor-faults -c 1 -- sh -c 'true' > "$T/f" 2> "$T/err" || fail "minor-faults: $(cat "$T/err")"
[ "$(meta "$T/f" period)" = 1 ] && [ "$(total "$T/f")" -gt 10 ] || fail "minor-faults -c 1: $(meta "$T/f" samples) samples"

# several events: each its own profile under [EVENT], the outermost
# frame; each at its own rate (a tracepoint every hit, the clock at -F)
kp-sample -e cpu-clock -e minor-faults -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.1' \
	> "$T/m" 2> "$T/err" || fail "two -e: exit $?: $(cat "$T/err")"
[ "$(meta "$T/m" event)" = "cpu-clock, minor-faults" ] || fail "two -e: event metadata: $(meta "$T/m" event)"
kp-fold "$T/m" | awk '{ split($1, f, ";"); r[f[1]] += $NF } END { for (k in r) print k, r[k] }' | sort > "$T/roots"
cat "$T/roots"
[ "$(cut -d' ' -f1 "$T/roots" | tr '\n' ' ')" = "[cpu-clock] [minor-faults] " ] || fail "two -e: roots $(cat "$T/roots")"
[ "$(awk '{ s += $2 } END { print s }' "$T/roots")" = "$(meta "$T/m" samples)" ] || fail "two -e: samples"

# a tracepoint: every hit (period 1), the kernel stacks it fires from
[ -n "$tracefs" ] || skip "tracefs not mounted: mount -t tracefs nodev /sys/kernel/tracing"
# a quiet machine switches a few dozen times a second: give it switches
(for i in $(seq 300); do sleep 0.002; done) &
sleeper=$!
kp-sample -e sched:sched_switch -a -d 1 > "$T/ss" 2> "$T/err" || fail "sched:sched_switch: $(cat "$T/err")"
wait "$sleeper"
[ "$(meta "$T/ss" event)" = sched:sched_switch ] && [ "$(meta "$T/ss" period)" = 1 ] ||
	fail "sched:sched_switch: metadata"
n=$(total "$T/ss")
[ "$n" -gt 100 ] || fail "sched:sched_switch: $n switches in 1 s"
s=$(kp-fold "$T/ss" | awk '/(^|;)__schedule( |;)/ { s += $NF } END { print s + 0 }')
echo "sched:sched_switch: $s of $n stacks through __schedule"
[ "$s" = "$n" ] || fail "sched:sched_switch: $((n - s)) of $n stacks not through __schedule"
