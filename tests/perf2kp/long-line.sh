#!/usr/bin/env bash
# A line longer than 256 MiB is fatal, and the message names that line
# with its number in the whole input, on one thread and on two (the
# chunks before it read and counted first): here line 6, after a whole
# sample and a header.
set -u
fail=0
for split in 0 1; do
	out=$( { printf 'a 1 [000] 1.000001: 1 cpu-clock:\n\tffffffff81000010 f+0x10 ([kernel.kallsyms])\n\n'
		printf 'a 1 [000] 1.000002: 1 cpu-clock:\n\tffffffff81000010 f+0x10 ([kernel.kallsyms])\n'
		head -c $((257 << 20)) /dev/zero | tr '\0' a; printf '\n\n'; } |
		PERF2KP_SPLIT=$split perf2kp 2>&1 >/dev/null)
	st=$?
	want="perf2kp: <stdin>:6: line longer than 256 MiB"
	if [ $st -ne 2 ] || [ "$out" != "$want" ]; then
		echo "FAILED: PERF2KP_SPLIT=$split: exit $st, stderr: $out"
		echo "expected exit 2, stderr: $want"
		fail=1
	else
		echo "ok: PERF2KP_SPLIT=$split: $want"
	fi
done
exit $fail
