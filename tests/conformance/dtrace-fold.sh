#!/usr/bin/env bash
# dtrace2kp | kp-fold (default names, no module) on FlameGraph's
# example-dtrace-stacks.txt equals stackcollapse.pl's and
# inferno-collapse-dtrace's output (the expected files of the corpus)
# with each frame's "module`" removed and equal lines merged: a frame
# without a symbol, "unix`0xfffffffffb800c91", keeps its address.
set -u
export LC_ALL=C
C=${KP_CORPUS:-../shared/corpus}
in=$C/dtrace/flamegraph/example-dtrace-stacks.txt
if [ ! -f "$in" ]; then
	echo "skipped: no corpus"
	exit 77
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
dtrace2kp "$in" | kp-fold > "$t/kp" || fail=1
# the peers' folded lines without "module`", merged and sorted
strip() {
	sed 's/[^;`]*`//g' "$1" | awk '{ c = $NF; sub(/[ \t]+[^ \t]+$/, ""); s[$0] += c }
		END { for (k in s) print k " " s[k] }' | sort
}
n=0
for exp in dtrace/inferno/results/dtrace-example.txt; do
	strip "$C/$exp" > "$t/want"
	if ! diff -u "$t/want" "$t/kp" > "$t/diff"; then
		echo "FAILED: differs from $exp (module\` removed):"
		head -20 "$t/diff"
		fail=1
	fi
	n=$((n + 1))
done
grep -q '^unix`0x' "$C/dtrace/inferno/results/dtrace-example.txt" &&
	! grep -q '0xfffffffffb8' "$t/kp" && { echo "FAILED: addresses lost"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $n expected file(s), $(wc -l < "$t/kp") lines"
exit $fail
