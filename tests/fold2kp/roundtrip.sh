#!/usr/bin/env bash
# fold2kp | kp-fold gives back the input, sorted bytewise, identical
# stacks merged; and on every folded file of the peer corpus
# (FlameGraph's and inferno's expected collapse outputs) too.
set -euo pipefail
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# sort bytewise and add the counts of equal stacks: the expected kp-fold
merge() {
	# ("a;  1": the leaf is named " ", the peers' name of a frame perf
	# printed without a symbol)
	LC_ALL=C sort "$1" | awk '{ c = $NF; l = $0; sub(/[ \t]+[^ \t]+$/, "")
		if (l ~ /;[ \t][ \t]+[^ \t]+[ \t]*$/) $0 = $0 " "
		if (NR > 1 && $0 == p) { s += c; next }
		if (NR > 1) print p " " s
		p = $0; s = c }
		END { if (NR) print p " " s }'
}
cat > "$t/in" <<'IN'
swapper;start_kernel;rest_init;cpu_idle;default_idle 1168
bash;[unknown];__libc_start_main;main 12
swapper;start_kernel;rest_init;cpu_idle;default_idle 32
java;Foo::bar(int) const;operator new 3
java;Foo::bar(int) const 3
single_frame 1
dd;sys_write_[k];vfs_write_[k] 5
IN
fold2kp "$t/in" | kp-fold > "$t/got"
merge "$t/in" > "$t/want"
diff -u "$t/want" "$t/got"
[ "$(wc -l < "$t/got")" = 6 ]

[ -d "$KP_CORPUS" ] || { echo "skipped: no corpus"; exit 77; }
files=0 clean=0
while IFS=$'\t' read -r id format input expected rest; do
	case "$expected" in ''|-|*.svg|*.gz|*.json) continue ;; esac
	f="$KP_CORPUS/$expected"
	[ -f "$f" ] || continue
	# folded files only: every line "something COUNT"
	grep -qv '^[^ ].* [0-9][0-9]*$' "$f" && continue
	[ -s "$f" ] || continue
	files=$((files + 1))
	st=0
	fold2kp "$f" 2> "$t/err" | kp-fold > "$t/got" || st=$?
	merge "$f" > "$t/want"
	# kp holds every name (the writer quotes what bare would misread),
	# so every file must come back whole, with nothing skipped
	[ "$st" = 0 ] && [ ! -s "$t/err" ] || { echo "FAIL $expected: exit $st"; cat "$t/err"; exit 1; }
	diff -u "$t/want" "$t/got" > "$t/diff" || { echo "FAIL $expected"; head -20 "$t/diff"; exit 1; }
	clean=$((clean + 1))
done < <(tail -n +2 "$KP_CORPUS/index.tsv" | sort -u -t $'\t' -k4,4)
echo "$files corpus files: all $clean round-trip exactly"
[ "$files" -gt 100 ]
