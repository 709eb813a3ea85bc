#!/usr/bin/env bash
# The foundation's figures: stap2kp and kp-fold on generated kp input
# (5,000 distinct stacks, depth 8-40), at two sizes to show that peak RSS
# does not grow with the input.  BENCH_MB sets the large size (default 500).
set -eu
. "$(dirname "$0")/lib.sh"
big=${BENCH_MB:-500}
small=$((big / 5))
for mb in $small $big; do
	f=$(gen_kp "$mb" 5000)
	sz=$(stat -c %s "$f")
	measure "kp-fold   ($mb MB, 5000 stacks)" "$sz" kp-fold "$f"
	measure "stap2kp   ($mb MB, 5000 stacks)" "$sz" stap2kp "$f"
	measure "kp-fold --modules --offsets ($mb MB)" "$sz" kp-fold --modules --offsets "$f"
done
f=$(gen_kp "$small" 100000)
measure "kp-fold   ($small MB, 100000 stacks)" "$(stat -c %s "$f")" kp-fold "$f"
measure "wc -l     (reference, $big MB)" "$(stat -c %s "$(gen_kp "$big" 5000)")" wc -l "$(gen_kp "$big" 5000)"
