#!/usr/bin/env bash
# A stack 100,000 frames deep: -C and -c print the whole tree as deep
# (walked without recursion, which overflowed the C stack: issue 16 item
# 1), and text indents at most KP_TREE_MAX_INDENT (32) levels, naming the
# depth of deeper nodes, so the output stays linear in the depth.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
awk 'BEGIN { print "!"; for (i = 0; i < 100000; i++) print " : f" i; print "\t1" }' > "$t/deep.kp"
kp-inclusive -C f0 "$t/deep.kp" > "$t/out"
# the function's line, two titles, and its 99,999 callers
[ "$(wc -l < "$t/out")" = 100002 ] || { echo "lines: $(wc -l < "$t/out")"; exit 1; }
[ "$(sed -n 4p "$t/out")" = "100.00%          1  f1" ]
[ "$(sed -n 5p "$t/out")" = "100.00%          1    f2" ]
# depth 33 is the last indented one, deeper nodes say their depth
grep -qx '100.00%          1  '"$(printf '%64s' '')"'f33' "$t/out"
grep -qx '100.00%          1  '"$(printf '%64s' '')"'\[33\] f34' "$t/out"
tail -n 1 "$t/out" | grep -qx '100.00%          1  '"$(printf '%64s' '')"'\[99998\] f99999'
awk 'length > 120 { print "line " NR " is " length " long"; bad = 1 } END { exit bad }' "$t/out"
# tsv: a row per level; json: balanced, every node closed
kp-inclusive --format tsv -c f99999 -d 200000 "$t/deep.kp" > "$t/tsv"
[ "$(wc -l < "$t/tsv")" = 100002 ]
tail -n 1 "$t/tsv" | grep -qx $'99999\t100.0000\t1\t100.0000\t1\tf0'
kp-inclusive --format json -C f0 "$t/deep.kp" > "$t/json"
[ "$(grep -o '{' "$t/json" | wc -l)" = 100001 ]
[ "$(grep -o '}' "$t/json" | wc -l)" = 100001 ]
[ "$(tr -d -c '[' < "$t/json" | wc -c)" = "$(tr -d -c ']' < "$t/json" | wc -c)" ]
echo ok
