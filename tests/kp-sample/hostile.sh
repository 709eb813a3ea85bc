#!/bin/bash
# Hostile places and stubborn commands (issue 16):
#  - --archive DIR with a symbolic link planted at DIR/kallsyms: the
#    link is replaced, its target never written (root overwrote it);
#  - --archive of a directory another user owns is refused;
#  - --archive FILE (not a directory) says so;
#  - a command that ignores SIGTERM is killed (SIGKILL) a grace period
#    after -d runs out, and the profile is still written;
#  - -o FILE with a command that cannot run leaves FILE as it was.
. "$(dirname "$0")/lib.inc"

# a planted symlink
mkdir "$T/a"
echo "victim" > "$T/victim"
ln -s "$T/victim" "$T/a/kallsyms"
kp-sample -e cpu-clock -a -d 0.2 --archive "$T/a" > "$T/out" 2> "$T/err" || fail "archive: exit $?: $(cat "$T/err")"
[ "$(cat "$T/victim")" = victim ] || fail "--archive wrote through a planted symlink"
[ -f "$T/a/kallsyms" ] && [ ! -L "$T/a/kallsyms" ] || fail "--archive: kallsyms is not a file of its own"
grep -q ' _stext$' "$T/a/kallsyms" || fail "--archive: kallsyms is not a kallsyms"
ls -a "$T/a" | grep -q '^\.kallsyms\.' && fail "--archive: a temporary file left behind"

# a directory someone else owns
if id nobody > /dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	mkdir "$T/b"
	chown nobody "$T/b"
	kp-sample -e cpu-clock -a -d 0.1 --archive "$T/b" > "$T/out" 2> "$T/err"
	st=$?
	[ $st = 2 ] || fail "another user's directory: exit $st"
	grep -q "kp-sample: --archive $T/b: owned by uid $(id -u nobody), not by us (uid 0): refusing to write into it" "$T/err" ||
		fail "another user's directory: $(cat "$T/err")"
	[ -z "$(ls -A "$T/b")" ] || fail "wrote into another user's directory: $(ls -A "$T/b")"
else
	echo "(not root, or no user nobody: the ownership check is not run)"
fi

# a file, not a directory
: > "$T/file"
kp-sample -e cpu-clock -a -d 0.1 --archive "$T/file" > "$T/out" 2> "$T/err"
st=$?
[ $st = 2 ] || fail "--archive FILE: exit $st"
grep -qx "kp-sample: --archive $T/file: not a directory" "$T/err" || fail "--archive FILE: $(cat "$T/err")"

# a command that ignores SIGTERM: -d 1, then SIGTERM, SIGKILL 2 s later
start=$(date +%s%N)
kp-sample -e cpu-clock -d 1 -o "$T/term.kp" sh -c 'trap "" TERM; sleep 15 & wait; sleep 15' 2> "$T/err"
st=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "a command ignoring SIGTERM: ended after $ms ms"
[ $st = 0 ] || fail "SIGTERM ignored: exit $st: $(cat "$T/err")"
[ $ms -lt 6000 ] || fail "SIGTERM ignored: kp-sample waited $ms ms for the command"
complete "$T/term.kp" || fail "SIGTERM ignored: no complete profile"
[ "$(meta "$T/term.kp" command-status)" = "signal 9 (Killed)" ] ||
	fail "SIGTERM ignored: # command-status: $(meta "$T/term.kp" command-status)"
grep -q "kp-sample: sh did not end on SIGTERM: killing it" "$T/err" || fail "the SIGKILL is not said: $(cat "$T/err")"

# ... or a second signal to kp-sample kills it at once
kp-sample -e cpu-clock -o "$T/int.kp" sh -c 'trap "" TERM INT; sleep 15 & wait; sleep 15' 2> "$T/err" &
pid=$!
sleep 0.5
start=$(date +%s%N)
kill -INT $pid
sleep 0.3
kill -INT $pid
wait $pid
st=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "a second SIGINT: ended after $ms ms"
[ $st = 0 ] || fail "second signal: exit $st: $(cat "$T/err")"
[ $ms -lt 1800 ] || fail "second signal: kp-sample waited $ms ms"
complete "$T/int.kp" || fail "second signal: no complete profile"

# -o FILE and a command that cannot run: FILE keeps what it had
echo old > "$T/c.kp"
kp-sample -e cpu-clock -o "$T/c.kp" /nonexistent/cmd 2> /dev/null
[ $? = 2 ] || fail "a missing command: not exit 2"
[ "$(cat "$T/c.kp")" = old ] || fail "-o FILE was emptied by a command that could not run"
echo ok
