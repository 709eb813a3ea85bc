#!/bin/bash
# --off-cpu: each stack a task left the CPU with, weighted by the
# nanoseconds until it ran again.  Three sleeps of 0.3, 0.3 and 0.4 s
# under a command: 1.0 s through do_nanosleep (+-15%), in state S with
# --state; system-wide (-a) the same metadata; the options it excludes.
. "$(dirname "$0")/lib.inc"
ok=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -r $d/events/sched/sched_switch/format ] && ok=1
done
[ -n "$ok" ] || skip "tracefs not mounted: mount -t tracefs nodev /sys/kernel/tracing"

kp-sample --off-cpu -- sh -c 'sleep 0.3; sleep 0.3; sleep 0.4' > "$T/o" 2> "$T/err" ||
	fail "--off-cpu: exit $?: $(cat "$T/err")"
[ "$(meta "$T/o" weight)" = off-cpu-ns ] || fail "weight: $(meta "$T/o" weight)"
[ "$(meta "$T/o" event)" = sched:sched_switch ] || fail "event: $(meta "$T/o" event)"
complete "$T/o" || fail "--off-cpu: incomplete output"
ns=$(kp-fold "$T/o" | awk '/(^|;)do_nanosleep(;| )/ { s += $NF } END { print s + 0 }')
echo "do_nanosleep: $ns ns"
[ "$ns" -ge 850000000 ] && [ "$ns" -le 1150000000 ] || fail "do_nanosleep: $ns ns, not 1.0 s +-15%"
# sh waits for each sleep: about as long, through do_wait
w=$(kp-fold "$T/o" | awk '/(^|;)do_wait(;| )/ { s += $NF } END { print s + 0 }')
[ "$w" -ge 850000000 ] || fail "do_wait: $w ns"

kp-sample --off-cpu --state -- sh -c 'sleep 0.3; sleep 0.3; sleep 0.4' > "$T/s" 2> "$T/err" ||
	fail "--state: exit $?: $(cat "$T/err")"
ns=$(kp-fold "$T/s" | awk '/^\[S\];.*do_nanosleep(;| )/ { s += $NF } END { print s + 0 }')
[ "$ns" -ge 850000000 ] && [ "$ns" -le 1150000000 ] || fail "--state: [S] ... do_nanosleep: $ns ns"

# -p: a process that sleeps 50 ms at a time, for 1 s: its waits are
# its sleep children's do_nanosleep (children start after -p: inherited)
# and its own do_wait, each at most the second it was watched
sh -c 'while :; do sleep 0.05; done' &
target=$!
(sleep 1.5; kill $target) &
sleep 0.2
kp-sample --off-cpu -p $target -d 1 > "$T/p" 2> "$T/err" || fail "--off-cpu -p: exit $?: $(cat "$T/err")"
ns=$(kp-fold "$T/p" | awk '/(^|;)do_nanosleep(;| )/ { s += $NF } END { printf "%.0f", s }')
w=$(kp-fold "$T/p" | awk '/(^|;)do_wait(;| )/ { s += $NF } END { printf "%.0f", s }')
echo "-p: do_nanosleep $ns ns, do_wait $w ns"
[ "$ns" -ge 500000000 ] && [ "$ns" -le 1100000000 ] || fail "--off-cpu -p: do_nanosleep $ns ns in 1 s"
[ "$w" -ge 500000000 ] && [ "$w" -le 1100000000 ] || fail "--off-cpu -p: do_wait $w ns in 1 s"

kp-sample --off-cpu -a -d 0.5 > "$T/a" 2> "$T/err" || fail "--off-cpu -a: exit $?: $(cat "$T/err")"
# sums past 2^31 ns: printed whole
t=$(awk '/^\t[0-9]+$/ { s += $1 } END { printf "%.0f", s }' "$T/a")
[ "$(meta "$T/a" weight)" = off-cpu-ns ] && [ "$t" != 0 ] || fail "--off-cpu -a: $(head -12 "$T/a")"
s=$(kp-fold "$T/a" | awk '/(^|;)__schedule( |;)/ { s += $NF } END { printf "%.0f", s }')
[ "$s" = "$t" ] || fail "--off-cpu -a: $s of $t ns not through __schedule"

for a in "-e cpu-clock" "-F 99" "-c 1" "--data"; do
	kp-sample --off-cpu $a -a -d 0.1 > /dev/null 2> "$T/err"
	[ $? = 64 ] && grep -q "excludes -e, -F, -c and --data" "$T/err" || fail "--off-cpu $a: $(cat "$T/err")"
done
kp-sample --state -a -d 0.1 > /dev/null 2> "$T/err"
[ $? = 64 ] && grep -q -- "--state goes with --off-cpu" "$T/err" || fail "--state alone: $(cat "$T/err")"
