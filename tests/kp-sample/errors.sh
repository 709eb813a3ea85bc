#!/bin/bash
# -h; usage errors exit 64 with a hint; fatal errors exit 2 with one
# line naming the cause and the fix, and write nothing: not permitted
# (an unprivileged user, perf_event_paranoid), an event the machine
# cannot count, no such process, too many open files, a bad -o file.
. "$(dirname "$0")/lib.inc"

kp-sample -h > "$T/out" 2> "$T/err" || fail "-h: exit $?"
grep -q '^usage: kp-sample' "$T/out" && [ ! -s "$T/err" ] || fail "-h output"

usage() {
	kp-sample "$@" > "$T/out" 2> "$T/err"
	st=$?
	[ $st = 64 ] || fail "kp-sample $*: exit $st, not 64: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "kp-sample $*: output on a usage error"
	grep -q "Try 'kp-sample -h'\|^usage: kp-sample" "$T/err" || fail "kp-sample $*: no hint: $(cat "$T/err")"
	echo "64: kp-sample $*: $(head -n 1 "$T/err")"
}
usage
usage -d 1
usage -a -F 0
usage -a -F 99x
usage -a -F 997 -c 1000
usage -a -c 0
usage -a -m 3
usage -a -m 0
usage -a -e no-such-event
usage -a -C 0
usage -C 1-0 -d 1
usage -C x -d 1
usage -C 0-$NCPU -d 1
grep -q "CPU $NCPU is not online (online: " <(kp-sample -C 0-$NCPU -d 1 2>&1) || fail "-C offline message"
usage -a -d 0
usage -a -d -1
usage -p 1 true
usage -p 1,x
usage -p 0
usage -a -p 1
usage -a --no-such-option
grep -q "unknown event 'no-such-event'" <(kp-sample -a -e no-such-event 2>&1) || fail "-e message"

fatal() { # fatal PATTERN kp-sample args...
	local pat=$1
	shift
	"$@" > "$T/out" 2> "$T/err"
	st=$?
	[ $st = 2 ] || fail "$*: exit $st, not 2: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "$*: output on a fatal error"
	grep -q -- "$pat" "$T/err" || fail "$*: message: $(cat "$T/err")"
	[ "$(wc -l < "$T/err")" = 1 ] || fail "$*: more than one line: $(cat "$T/err")"
	echo "2: $*: $(cat "$T/err")"
}
# not permitted: an unprivileged user (skipped when paranoid allows it)
if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] &&
	command -v setpriv > /dev/null; then
	cp "$KP_BIN/kp-sample" "$T/kp-sample"
	chmod 755 "$T" "$T/kp-sample"
	fatal "Permission denied: kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid); run as root, or allow it with 'sysctl kernel.perf_event_paranoid=-1'" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$T/kp-sample" -a -d 0.1
fi
# an event this machine cannot count, asked for by name: no fallback
if ! perf stat -e cycles true 2>&1 | grep -q 'not supported' 2> /dev/null &&
	kp-sample -e cycles -a -d 0.01 -o /dev/null 2> /dev/null; then
	echo "cycles is supported here: the no-PMU error is not checked"
else
	fatal "event 'cycles' is not supported here (.*); try -e cpu-clock" kp-sample -e cycles -a -d 0.1
fi
fatal "no such process" kp-sample -p 999999999 -d 0.1
fatal "^kp-sample: /nonexistent/dir/out: No such file or directory$" \
	kp-sample -a -d 0.1 -o /nonexistent/dir/out
fatal "above kernel.perf_event_max_sample_rate" \
	kp-sample -a -d 0.1 -F $(($(cat /proc/sys/kernel/perf_event_max_sample_rate) + 1))
# too many open files: one event per CPU, and fds 0-2 and one more only
if [ -z "${KP_SANITIZED:-}" ] && [ "$NCPU" -ge 2 ]; then
	fatal "too many open files (1 events so far); raise the limit with 'ulimit -n'" \
		bash -c 'ulimit -n 4; exec kp-sample -e cpu-clock -a -d 0.1'
fi
echo ok
