#!/usr/bin/env bash
# kp-top --by stack writes kp that other filters read: piped into kp-fold
# and kp-inclusive, the heaviest stacks come through whole.
set -euo pipefail
in="$KP_TOP/tests/fixtures/analysis.kp"
got=$(kp-top --by stack -n 2 "$in" | kp-fold)
want='top;leaf_a 3
top;mid;mid;leaf_a 4'
[ "$got" = "$want" ] || { printf 'got:\n%s\n' "$got"; exit 1; }
# all stacks (-n 0) keep every sample: the same table as the input gives
diff <(kp-inclusive "$in") <(kp-top --by stack -n 0 "$in" | kp-inclusive)
# on the real capture: the 5 heaviest stacks
[ -x "$KP_BIN/perf2kp" ] || { echo "skipped: no perf2kp"; exit 77; }
perf2kp "$KP_TOP/samples/perf-report-kernel.script" | kp-top --by stack -n 5 | kp-fold > /dev/null
n=$(perf2kp "$KP_TOP/samples/perf-report-kernel.script" | kp-top --by stack -n 5 | grep -c '^!$')
[ "$n" = 6 ] || { echo "expected 5 records and the end mark, got $n '!' lines"; exit 1; }
echo ok
