#!/usr/bin/env bash
# kp-inclusive with two inputs: the differential table.  before: 10
# samples, after: 20.  A function on one side only shows 0 on the other.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat > "$t/before.kp" <<'KP'
!
 : leaf_a [kernel]
 : mid [kernel]
 : top [kernel]
	6
!
 : gone [kernel]
 : top [kernel]
	4
!
KP
cat > "$t/after.kp" <<'KP'
!
 : leaf_a [kernel]
 : mid [kernel]
 : top [kernel]
	4
!
 : new_hot [kernel]
 : mid [kernel]
 : top [kernel]
	16
!
KP
# inclusive: top 100 -> 100, mid 60 -> 100 (+40), leaf_a 60 -> 20 (-40),
# gone 40 -> 0 (-40), new_hot 0 -> 80 (+80); by |diff|, ties by diff
# then name
cat > "$t/want" <<'OUT'
 before%    after%      diff         p  function
   0.00%    80.00%   +80.00%    0.0002* new_hot
  60.00%   100.00%   +40.00%    0.0040* mid
  40.00%     0.00%   -40.00%    0.0040* gone
  60.00%    20.00%   -40.00%    0.0356* leaf_a
 100.00%   100.00%    +0.00%    1.0000  top
      10        20                      Total samples
* adjusted p < 0.05: more than sampling noise (two-proportion test, Benjamini-Hochberg over 5 rows)
OUT
kp-inclusive "$t/before.kp" "$t/after.kp" > "$t/got"
diff -u "$t/want" "$t/got"

# --sort exclusive compares exclusive percentages: mid and top are 0
cat > "$t/want" <<'OUT'
# total before: 10
# total after: 20
before_pct	after_pct	diff_pct	before	after	p_value	function
0.0000	80.0000	+80.0000	0	16	0.0001734	new_hot
40.0000	0.0000	-40.0000	4	0	0.00595	gone
60.0000	20.0000	-40.0000	6	4	0.04743	leaf_a
0.0000	0.0000	+0.0000	0	0	1	mid
0.0000	0.0000	+0.0000	0	0	1	top
OUT
kp-inclusive --sort exclusive --format tsv "$t/before.kp" "$t/after.kp" > "$t/got"
diff -u "$t/want" "$t/got"

# -n and --percent-limit (in points of difference) cut the table
kp-inclusive -n 2 "$t/before.kp" "$t/after.kp" | grep -c % > "$t/got"
[ "$(cat "$t/got")" = 3 ]  # header and two rows
kp-inclusive --percent-limit 50 "$t/before.kp" "$t/after.kp" > "$t/got"
[ "$(sed -n 2p "$t/got")" = "   0.00%    80.00%   +80.00%    0.0002* new_hot" ]
[ "$(wc -l < "$t/got")" = 4 ]

# stdin as one side
kp-inclusive - "$t/after.kp" < "$t/before.kp" | sed -n 2p | grep -q 'new_hot$'

# json carries the same numbers
kp-inclusive --format json "$t/before.kp" "$t/after.kp" > "$t/got"
grep -q '"function": "gone", "before": 4, "after": 0, "before_pct": 40.0000, "after_pct": 0.0000, "diff_pct": -40.0000' "$t/got"

# a third input, or -C with two: usage errors
st=0; kp-inclusive "$t/before.kp" "$t/after.kp" "$t/after.kp" 2> /dev/null || st=$?
[ "$st" = 64 ]
st=0; kp-inclusive -C top "$t/before.kp" "$t/after.kp" 2> /dev/null || st=$?
[ "$st" = 64 ]
echo ok
