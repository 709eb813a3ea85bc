#!/usr/bin/env bash
# kp-inclusive's differential options: --absolute (counts, the Poisson
# test), several runs a side (A1 A2 -- B1 B2), --alpha, and the usage
# errors of runs.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
kp() { printf '!\n : x [kernel]\n\t%d\n!\n : y [kernel]\n\t%d\n!\n' "$1" "$2"; }
kp 100 100 > "$t/a.kp"   # x 50%
kp 150 50 > "$t/b.kp"    # x 75%
# --absolute: differences in samples, the Poisson test (x: z = 50/sqrt(250), y: z = 50/sqrt(150), then Benjamini-Hochberg over the two)
cat > "$t/want" <<'OUT'
# total before: 200
# total after: 200
before_pct	after_pct	diff	before	after	p_value	function
50.0000	75.0000	+50.0000	100	150	0.001565	x
50.0000	25.0000	-50.0000	100	50	8.911e-05	y
OUT
kp-inclusive --absolute --format tsv "$t/a.kp" "$t/b.kp" > "$t/got"
diff -u "$t/want" "$t/got"
kp-inclusive --absolute "$t/a.kp" "$t/b.kp" | grep -q 'poisson test'
# --normalize is the default, and undoes --absolute
kp-inclusive --absolute --normalize --format tsv "$t/a.kp" "$t/b.kp" | grep -q '^before_pct	after_pct	diff_pct'
# --percent-limit with --absolute is in samples
[ "$(kp-inclusive --absolute --percent-limit 50 --format tsv "$t/a.kp" "$t/b.kp" | grep -c '^50')" = 2 ]
[ "$(kp-inclusive --absolute --percent-limit 51 --format tsv "$t/a.kp" "$t/b.kp" | grep -c '^50')" = 0 ]
# --alpha: the '*' follows the level
kp-inclusive --alpha 0.001 --absolute "$t/a.kp" "$t/b.kp" > "$t/got"
grep -q '0.0016  x$' "$t/got"
grep -q "<0.0001\* y$" "$t/got"
# runs: three a side that agree, and that differ run to run
kp 100 100 > "$t/a2.kp"; kp 101 99 > "$t/a3.kp"
kp 150 50 > "$t/b2.kp"; kp 149 51 > "$t/b3.kp"
kp-inclusive --format json "$t/a.kp" "$t/a2.kp" "$t/a3.kp" -- "$t/b.kp" "$t/b2.kp" "$t/b3.kp" > "$t/got"
grep -q '"runs_before": 3, "runs_after": 3' "$t/got"
grep -q '"test": "runs"' "$t/got"
grep -q '"function": "x", "before": 301, "after": 449' "$t/got"
grep -q '"significant": true' "$t/got"
# the same shares, but runs that scatter: not significant
kp 60 140 > "$t/c1.kp"; kp 140 60 > "$t/c2.kp"
kp 90 110 > "$t/d1.kp"; kp 190 10 > "$t/d2.kp"
kp-inclusive --format json "$t/c1.kp" "$t/c2.kp" -- "$t/d1.kp" "$t/d2.kp" > "$t/got"
grep -q '"function": "x", "before": 200, "after": 280' "$t/got"
if grep -q '"significant": true' "$t/got"; then echo "scattered runs flagged"; cat "$t/got"; exit 1; fi
# ... which one run a side would have called significant
kp-inclusive --format json "$t/c1.kp" "$t/d2.kp" | grep -q '"significant": true'
# usage: one run on a side of --, three files without --
st=0; kp-inclusive "$t/a.kp" -- "$t/b.kp" "$t/b2.kp" 2> "$t/err" || st=$?
[ "$st" = 64 ]
grep -q 'at least two files each side' "$t/err"
st=0; kp-inclusive "$t/a.kp" "$t/b.kp" "$t/b2.kp" 2> /dev/null || st=$?
[ "$st" = 64 ]
st=0; kp-inclusive -c x "$t/a.kp" "$t/a2.kp" -- "$t/b.kp" "$t/b2.kp" 2> /dev/null || st=$?
[ "$st" = 64 ]
echo ok
