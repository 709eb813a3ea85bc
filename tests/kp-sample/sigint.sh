#!/bin/bash
# SIGINT (and SIGTERM) stop sampling and flush a complete record set:
# metadata, records whose counts add up to "# samples:", the final "!",
# exit 0.  Nothing collected before the signal is lost.
. "$(dirname "$0")/lib.inc"

busy 4
for sig in INT TERM; do
	s0=$(stolen cpu)
	kp-sample -a > "$T/out.$sig" 2> "$T/err.$sig" &
	pid=$!
	sleep 1.2
	kill -$sig $pid
	wait $pid
	st=$?
	st_s=$(stolen cpu "$s0")
	[ $st = 0 ] || fail "SIG$sig: exit $st: $(cat "$T/err.$sig")"
	complete "$T/out.$sig" || fail "SIG$sig: no final '!'"
	n=$(meta "$T/out.$sig" samples)
	[ "$n" = "$(total "$T/out.$sig")" ] || fail "SIG$sig: # samples $n != the records' sum"
	# all that was sampled until the signal: 997 Hz x (duration x CPUs
	# - the time the host stole from them, lib.inc: stolen)
	dur=$(meta "$T/out.$sig" duration | cut -d' ' -f1)
	want=$(awk -v d="$dur" -v c="$NCPU" -v s="$st_s" 'BEGIN { printf "%d", 997 * (d * c - s) }')
	awk -v n="$n" -v w="$want" 'BEGIN { exit !(w > 0 && n >= 0.9 * w && n <= 1.1 * w) }' ||
		fail "SIG$sig: $n samples in $dur s ($st_s s stolen), expected $want"
	grep -q '^!$' "$T/out.$sig" && [ "$(grep -c '^!$' "$T/out.$sig")" -gt 1 ] ||
		fail "SIG$sig: no records"
	echo "SIG$sig: $n samples, complete"
done
echo ok
