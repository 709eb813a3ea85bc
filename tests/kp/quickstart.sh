#!/usr/bin/env bash
# The README's first command after the build: examples/quickstart.sh gives
# the inclusive table (live where perf events are allowed, else from the
# bundled capture, which must itself give a table).
set -u
out=$(KP_BIN="$KP_BIN" bash "$KP_TOP/examples/quickstart.sh" 2> /tmp/kp-qs.$$)
st=$?
err=$(cat /tmp/kp-qs.$$); rm -f /tmp/kp-qs.$$
echo "$err" | head -3
fail=0
[ $st -eq 0 ] || { echo "FAILED: exit $st"; fail=1; }
grep -q '^  incl%  inclusive    excl%  exclusive  function$' <<< "$out" || { echo "FAILED: no table header"; fail=1; }
grep -q '^100.00% .* Total$' <<< "$out" || { echo "FAILED: no Total line"; fail=1; }
[ "$(grep -c '%' <<< "$out")" -ge 10 ] || { echo "FAILED: fewer than 10 rows"; fail=1; }
# kp runs from the tree (build/bin on PATH), and the table is the
# workload's, not the idle loop's (issue 16 items 17, 19): the command is
# sampled alone, never -a, and no idle function is a row
grep -q '^== kp from the tree: PATH=' <<< "$err" || { echo "FAILED: not run from the tree"; fail=1; }
grep -q 'kp-sample -a' <<< "$err" && { echo "FAILED: samples the whole machine (-a)"; fail=1; }
if grep -Eq ' (do_idle|cpu_startup_entry|default_idle|default_idle_call|cpuidle_idle_call|cpuidle_enter|pv_native_safe_halt|arch_cpu_idle|start_secondary|rest_init|__pfx_[a-z_]*)$' <<< "$out"; then
	echo "FAILED: the idle loop is in the table"; fail=1
fi
grep -Eq ' (read_zero|vfs_read|ksys_read)$' <<< "$out" || { echo "FAILED: dd's reads are not in the table"; fail=1; }
# the fallback's capture
kp-inclusive -n 5 "$KP_TOP/samples/kp-sample-dd-user-pid.kp" > /dev/null || { echo "FAILED: the bundled capture"; fail=1; }
[ $fail -eq 0 ] && echo "ok: quickstart gives the inclusive table"
exit $fail
