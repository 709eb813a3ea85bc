#!/bin/bash
# A command: only it (and its children) is sampled, from its exec; its
# exit status is reported on stderr and in "# command-status:"; a command
# that cannot be started is a fatal error (exit 2) with no kp output;
# -d ends a command still running with SIGTERM.
. "$(dirname "$0")/lib.inc"

# the command and its child, and nothing else (--pid: the outermost frame
# is NAME-PID, so that the busy loops, also sh, are told from the command)
busy 2
kp-sample -e cpu-clock --pid sh -c 'dd if=/dev/zero of=/dev/null bs=4k count=300000 2>/dev/null; exit 3' \
	> "$T/out" 2> "$T/err"
st=$?
[ $st = 0 ] || fail "exit $st: $(cat "$T/err")"
grep -qx "kp-sample: sh exited with status 3" "$T/err" || fail "status not reported: $(cat "$T/err")"
[ "$(meta "$T/out" command-status)" = "exit 3" ] || fail "# command-status: $(meta "$T/out" command-status)"
[ "$(meta "$T/out" command)" = "sh -c dd if=/dev/zero of=/dev/null bs=4k count=300000 2>/dev/null; exit 3" ] ||
	fail "# command: $(meta "$T/out" command)"
# the outermost frame of each record: only dd (and sh), never the busy loops
roots "$T/out" | sort | uniq -c > "$T/roots"
cat "$T/roots"
if ! grep -q ' : dd-[0-9]*$' "$T/roots"; then
	# what the samples were, for the report (twice in CI all of them were
	# under "sh": dd exec'd on another CPU than sh forked it on, and the
	# rings were read one after the other, not in time order: order.sh)
	echo "$(meta "$T/out" samples) samples; the first records:"
	head -n 40 "$T/out"
	fail "no dd samples"
fi
grep -v ' : dd-[0-9]*$' "$T/roots" | grep -qv ' : sh-[0-9]*$' && fail "samples from outside the command"
for b in $BUSY_PIDS; do
	grep -q " : sh-$b\$" "$T/roots" && fail "samples of a busy loop (pid $b)"
done
n=$(meta "$T/out" samples)
[ "$n" -lt 997 ] || fail "$n samples of a short command: the busy loops were sampled"

# exit 0 is quiet; a signal is reported
kp-sample -e cpu-clock true > "$T/out" 2> "$T/err" || fail "true: exit $?"
[ ! -s "$T/err" ] || fail "stderr for a command that exited 0: $(cat "$T/err")"
[ "$(meta "$T/out" command-status)" = "exit 0" ] || fail "true: # command-status"
complete "$T/out" || fail "true: no final '!'"
kp-sample -e cpu-clock sh -c 'kill -KILL $$' > "$T/out" 2> "$T/err" || fail "kill: exit $?"
grep -q "sh was killed by signal 9" "$T/err" || fail "signal not reported: $(cat "$T/err")"
[ "$(meta "$T/out" command-status)" = "signal 9 (Killed)" ] || fail "# command-status: $(meta "$T/out" command-status)"

# a command that cannot be started
kp-sample -e cpu-clock /nonexistent/cmd > "$T/out" 2> "$T/err"
st=$?
[ $st = 2 ] || fail "a missing command: exit $st"
grep -qx "kp-sample: cannot run '/nonexistent/cmd': No such file or directory" "$T/err" ||
	fail "message: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "output for a command that never ran"

# latency: the profile is written the moment the command exits
kp-sample -e cpu-clock -a -- sh -c "sleep 1; date +%s%N > $T/end" 2> /dev/null |
	{ cat > "$T/lat"; date +%s%N > "$T/eof"; }
ms=$((($(cat "$T/eof") - $(cat "$T/end")) / 1000000))
limit=300
[ -n "${KP_SANITIZED:-}" ] && limit=2000
echo "command exit -> last byte: $ms ms (limit $limit)"
[ "$ms" -lt $limit ] || fail "the profile came $ms ms after the command's exit"
complete "$T/lat" || fail "latency: no final '!'"

# -d stops a longer command with SIGTERM, and the output is complete
start=$(date +%s%N)
kp-sample -e cpu-clock -d 0.3 sleep 10 > "$T/out" 2> "$T/err" || fail "-d: exit $?"
ms=$((($(date +%s%N) - start) / 1000000))
[ $ms -lt 3000 ] || fail "-d 0.3 took $ms ms"
[ "$(meta "$T/out" command-status)" = "signal 15 (Terminated)" ] || fail "-d: # command-status: $(meta "$T/out" command-status)"
complete "$T/out" || fail "-d: no final '!'"
echo ok
