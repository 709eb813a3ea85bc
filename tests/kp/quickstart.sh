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
# the fallback's capture
kp-inclusive -n 5 "$KP_TOP/samples/kp-sample-dd-a.kp" > /dev/null || { echo "FAILED: the bundled capture"; fail=1; }
[ $fail -eq 0 ] && echo "ok: quickstart gives the inclusive table"
exit $fail
