#!/usr/bin/env bash
# user-time.sh - one name for time spent in user mode when user stacks
# are not kept: "[user]" (kp.5), from kp-sample (without --user), from
# perf2kp --kernel-only (it was "[no stack]") and in kp-top --by module
# (it was "[unknown]").
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# perf script output: one sample with user frames only, one with kernel
# and user frames
cat > "$tmp/perf.txt" <<'P'
dd 100 [000] 1.000000: 1 cpu-clock:
	    7f0000001234 __libc_read+0x14 (/usr/lib/x86_64-linux-gnu/libc.so.6)
	    55d0c9a01234 main+0x44 (/usr/bin/dd)

dd 100 [000] 1.001000: 1 cpu-clock:
	ffffffff81001040 read_zero+0x10 ([kernel.kallsyms])
	    7f0000001234 __libc_read+0x14 (/usr/lib/x86_64-linux-gnu/libc.so.6)

P
perf2kp --kernel-only "$tmp/perf.txt" > "$tmp/k.kp" || { echo "FAIL: perf2kp exit $?"; fail=1; }
grep -q '^ : \[no stack\]$' "$tmp/k.kp" && { echo "FAIL: perf2kp --kernel-only names user time [no stack]"; fail=1; }
[ "$(grep -c '^ : \[user\]$' "$tmp/k.kp")" = 1 ] || { echo "FAIL: perf2kp --kernel-only: no [user] frame:"; cat "$tmp/k.kp"; fail=1; }
# the kernel sample keeps its kernel frame and gets no [user]
grep -A1 'read_zero' "$tmp/k.kp" | grep -q '^	1$' || { echo "FAIL: perf2kp --kernel-only: the kernel sample changed"; fail=1; }

kp-top --by module "$tmp/k.kp" > "$tmp/top" || { echo "FAIL: kp-top exit $?"; fail=1; }
grep -qE '^ +1 +50\.00% .* \[user\]$' "$tmp/top" || { echo "FAIL: kp-top --by module does not say [user]:"; cat "$tmp/top"; fail=1; }
grep -q 'unknown' "$tmp/top" && { echo "FAIL: kp-top --by module says [unknown]"; fail=1; }

# kp-sample, where it may sample
if kp-sample -e cpu-clock -a -d 0.05 -o /dev/null 2> /dev/null; then
	kp-sample -e cpu-clock -F 1999 sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' > "$tmp/s.kp" 2> /dev/null ||
		{ echo "FAIL: kp-sample exit $?"; fail=1; }
	grep -q '^ : \[user\]$' "$tmp/s.kp" || { echo "FAIL: kp-sample: no [user] frame"; fail=1; }
else
	echo "(perf_event_open refused: kp-sample not checked)"
fi
exit $fail
