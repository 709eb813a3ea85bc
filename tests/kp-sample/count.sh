#!/bin/bash
# Busy loops on every CPU for a second: the number of samples is within
# 10% of HZ x (seconds x CPUs - seconds the host stole from them), the records add up to the "# samples:"
# metadata, none were lost, and the event is named (cpu-clock where the
# machine has no PMU, said once on stderr).
. "$(dirname "$0")/lib.inc"

busy 1.6
sleep 0.2
s0=$(stolen cpu)
kp-sample -a -d 1 -F 997 > "$T/out" 2> "$T/err" || fail "exit $?: $(cat "$T/err")"
st=$(stolen cpu "$s0")
complete "$T/out" || fail "no final '!'"
n=$(meta "$T/out" samples)
sum=$(total "$T/out")
[ "$n" = "$sum" ] || fail "# samples: $n, but the records add up to $sum"
dur=$(meta "$T/out" duration | cut -d' ' -f1)
want=$(awk -v d="$dur" -v c="$NCPU" -v s="$st" 'BEGIN { printf "%d", 997 * (d * c - s) }')
echo "samples $n, expected $want (997 Hz x ($dur s x $NCPU CPUs - $st s stolen by the host))"
awk -v n="$n" -v w="$want" 'BEGIN { exit !(n >= 0.9 * w && n <= 1.1 * w) }' ||
	fail "$n samples is not within 10% of $want"
[ "$(meta "$T/out" lost)" = 0 ] || fail "lost $(meta "$T/out" lost) samples at 997 Hz"
[ "$(meta "$T/out" frequency)" = 997 ] || fail "no '# frequency: 997'"
[ "$(meta "$T/out" cpus)" = "0-$((NCPU - 1))" ] || [ "$NCPU" = 1 ] ||
	fail "# cpus: $(meta "$T/out" cpus)"
ev=$(meta "$T/out" event)
if kp-sample -e cycles -a -d 0.01 -o /dev/null 2>/dev/null; then
	[ "$ev" = cycles ] || fail "cycles works here but the event is '$ev'"
else
	case "$ev" in "cpu-clock (cycles not supported"*) ;; *) fail "event '$ev'" ;; esac
	grep -q "cycles: not supported here.*sampling cpu-clock instead" "$T/err" ||
		fail "the fallback is not said on stderr: $(cat "$T/err")"
	[ "$(wc -l < "$T/err")" = 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
fi
# a busy loop runs in user mode: its samples are [user]
kp-sample -e cpu-clock -d 0.5 sh -c 'while :; do :; done' > "$T/u" 2> /dev/null
n=$(meta "$T/u" samples)
u=$(awk '/^!/ { u = 0 } /^ : \[user\]$/ { u = 1 } u && /^\t[0-9]+$/ { s += $1 } END { print s + 0 }' "$T/u")
awk -v u="$u" -v n="$n" 'BEGIN { exit !(n > 100 && u > 0.8 * n) }' || fail "only $u of $n samples under [user]"
echo "a busy loop: $u of $n samples under [user]"
echo ok
