#!/bin/bash
# What is sampled and how often: -C one CPU, -c a period, -F another
# frequency, -p a process (its own samples only, until it exits), -e
# task-clock with a command.  Counts are checked against the rate x the
# "# duration:" x the CPUs sampled, within 10%.
. "$(dirname "$0")/lib.inc"

near() { # near FILE RATE CPUS WHAT STOLEN
	local n dur want
	n=$(meta "$1" samples)
	dur=$(meta "$1" duration | cut -d' ' -f1)
	want=$(awk -v d="$dur" -v r="$2" -v c="$3" -v s="$5" \
		'BEGIN { printf "%d", r * (d * c - s) }')
	echo "$4: $n samples, expected $want ($2/s x ($dur s x $3 - $5 s stolen)), lost $(meta "$1" lost)"
	awk -v n="$n" -v w="$want" 'BEGIN { exit !(w > 0 && n >= 0.9 * w && n <= 1.1 * w) }' ||
		fail "$4: $n samples, not within 10% of $want"
	[ "$n" = "$(total "$1")" ] || fail "$4: the records do not add up to # samples"
	complete "$1" || fail "$4: no final '!'"
}

busy 5
sleep 0.1
# -C 0: one CPU
s0=$(stolen cpu0)
kp-sample -e cpu-clock -C 0 -d 0.7 > "$T/c0" || fail "-C 0: exit $?"
st=$(stolen cpu0 "$s0")
[ "$(meta "$T/c0" cpus)" = 0 ] || fail "-C 0: # cpus: $(meta "$T/c0" cpus)"
near "$T/c0" 997 1 "-C 0" "$st"
# -c: one sample every 2 ms of cpu-clock = 500/s
s0=$(stolen cpu)
kp-sample -e cpu-clock -a -c 2000000 -d 0.7 > "$T/c" || fail "-c: exit $?"
st=$(stolen cpu "$s0")
[ "$(meta "$T/c" period)" = 2000000 ] && [ -z "$(meta "$T/c" frequency)" ] || fail "-c: # period"
near "$T/c" 500 "$NCPU" "-c 2000000" "$st"
# -F 1999
s0=$(stolen cpu)
kp-sample -e cpu-clock -a -F 1999 -d 0.7 > "$T/f" || fail "-F: exit $?"
st=$(stolen cpu "$s0")
[ "$(meta "$T/f" frequency)" = 1999 ] || fail "-F: # frequency"
near "$T/f" 1999 "$NCPU" "-F 1999" "$st"

# -a with a command, the CPUs held by loops ahead of it (a negative
# nice, as root): the command waits for a CPU before its exec, sampled
# already, and "# duration:" counts that wait (until 2026-11 it counted
# from the exec: 0.000 s for "true" with 0.1 s of samples)
if [ "$(id -u)" = 0 ]; then
	hogs=
	for i in $(seq "$NCPU"); do
		nice -n -15 sh -c 'while :; do :; done' &
		hogs="$hogs $!"
	done
	BUSY_PIDS="$BUSY_PIDS $hogs"
	sleep 0.1
	s0=$(stolen cpu)
	kp-sample -e cpu-clock -a -F 1999 sleep 0.3 > "$T/ac" 2> /dev/null || fail "-a with a command: exit $?"
	st=$(stolen cpu "$s0")
	kill $hogs
	near "$T/ac" 1999 "$NCPU" "-a with a command, the CPUs busy" "$st"
fi

# -p: one busy process among several; it ends, and so does sampling
sh -c 'while :; do :; done' &
target=$!
(sleep 1.5; kill $target) &
sleep 0.2 # until the subshell has become sh
kp-sample -e cpu-clock -p $target --pid > "$T/p" 2> "$T/perr" || fail "-p: exit $?: $(cat "$T/perr")"
[ "$(meta "$T/p" pids)" = "$target" ] || fail "-p: # pids"
roots "$T/p" | sort -u > "$T/roots"
[ "$(cat "$T/roots")" = " : sh-$target" ] || fail "-p: other processes sampled: $(cat "$T/roots")"
# it competes for the CPUs (its share depends on the load): at most one
# CPU's worth of samples, and sampling ended when it did
n=$(meta "$T/p" samples)
dur=$(meta "$T/p" duration | cut -d' ' -f1)
awk -v n="$n" -v d="$dur" 'BEGIN { exit !(d > 0.3 && d < 3 && n >= 20 && n <= 997 * d * 1.1) }' ||
	fail "-p: $n samples in $dur s"
echo "-p: $n samples in $dur s, ended with the process"

# -e task-clock, a command
kp-sample -e task-clock sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' > "$T/t" ||
	fail "task-clock: exit $?"
[ "$(meta "$T/t" event)" = task-clock ] || fail "task-clock: # event: $(meta "$T/t" event)"
[ "$(meta "$T/t" samples)" -gt 50 ] || fail "task-clock: $(meta "$T/t" samples) samples"
complete "$T/t" || fail "task-clock: no final '!'"
echo ok
