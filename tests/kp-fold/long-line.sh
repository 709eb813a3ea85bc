#!/usr/bin/env bash
# A line longer than 256 MiB is fatal, and the message names that line,
# not the one before it (issue 16): here line 3.
set -u
out=$( { printf '!\n : a\n'; head -c $((257 << 20)) /dev/zero | tr '\0' a; printf '\n\t1\n!\n'; } |
	kp-fold 2>&1 >/dev/null)
st=$?
want="kp-fold: <stdin>:3: line longer than 256 MiB"
if [ $st -ne 2 ] || [ "$out" != "$want" ]; then
	echo "FAILED: exit $st, stderr: $out"
	echo "expected exit 2, stderr: $want"
	exit 1
fi
echo "ok: $want"
