#!/usr/bin/env bash
# Every filter run with no file and a terminal on standard input prints a
# usage hint on stderr and exits 64, instead of waiting silently for
# typed input (common/input.c).  The terminal is a pty from script(1).
# kp-sample reads no input and is left out.
set -u
command -v script > /dev/null || { echo "skipped: no script (bsdutils)"; exit 77; }
command -v timeout > /dev/null || { echo "skipped: no timeout"; exit 77; }
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
printf '!\n : a [kernel]\n\t1\n!\n' > "$t/a.kp"

n=0
for p in "$KP_BIN"/*; do
	prog=$(basename "$p")
	[ "$prog" = kp-sample ] && continue
	n=$((n + 1))
	# the pty carries the program's stdout and stderr
	timeout 10 script -qec "'$p'" /dev/null > "$t/out" 2>&1 < /dev/null; st=$?
	check "$prog on a terminal: exit 64, not a wait" '[ $st -eq 64 ]'
	check "$prog on a terminal: the hint" 'grep -q "^$prog: no input: name a file, or pipe or redirect one (standard input is a terminal)" "$t/out" && grep -q "^Try .$prog -h. for more information" "$t/out"'
	timeout 10 script -qec "'$p' - " /dev/null > "$t/out" 2>&1 < /dev/null; st=$?
	check "$prog - on a terminal: exit 64" '[ $st -eq 64 ]'
done
check "programs checked" '[ $n -ge 12 ]'
# a file operand with a terminal on stdin reads the file
for prog in kp-fold kp-top kp-flame stap2kp; do
	timeout 10 script -qec "'$KP_BIN/$prog' '$t/a.kp' > '$t/o'" /dev/null > /dev/null 2>&1 < /dev/null; st=$?
	check "$prog FILE with a terminal on stdin: exit 0, output" '[ $st -eq 0 ] && [ -s "$t/o" ]'
done
exit $fail
