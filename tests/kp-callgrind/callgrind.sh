#!/usr/bin/env bash
# kp-callgrind, checked by valgrind's callgrind_annotate: with
# --inclusive=yes it reports the same inclusive samples per function as
# kp-inclusive, and with --inclusive=no the same exclusive samples, and
# the same program total (recursion counted once per sample, functions
# both outermost and called, inline chains, a real capture).  Also: the
# file is deterministic, empty input gives a valid empty profile, write
# errors exit 2.
set -u
command -v callgrind_annotate > /dev/null || { echo "skipped: no callgrind_annotate (valgrind)"; exit 77; }
T=$KP_TOP/tests/kp-callgrind
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$KP_TOP/tests/pipe.inc"

# "name<TAB>samples" per function and "total N" from callgrind_annotate
annotate() { # file yes|no
	callgrind_annotate --inclusive="$2" --auto=no --threshold=100 "$1" 2> "$tmp/ca.err" |
	awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print "total\t" $1; next }
	     body && NF { n = $1; gsub(/,/, "", n); if (n == ".") n = 0
			  s = $0; sub(/^ *[^ ]+ +(\([^)]*\) +)?/, "", s)   # count and (pct)
			  sub(/ \[[^]]*\]$/, "", s)                          # [module]
			  sub(/^[^:]*:/, "", s)                              # file:
			  if (s != "[all]") print s "\t" n }
	     /file:function/ { getline; body = 1 }' | LC_ALL=C sort
}
expect() { # input column(2 incl, 4 excl)
	kp-inclusive --format tsv "$1" |
	awk -F'\t' -v c="$2" '/^# total: / { sub(/^# total: /, ""); print "total\t" $0; next }
			      NR > 2 { print $5 "\t" $c }' | LC_ALL=C sort
}
check() { # input label
	kp-callgrind "$1" > "$tmp/cg" || fail "kp-callgrind $2"
	annotate "$tmp/cg" yes > "$tmp/got"
	[ -s "$tmp/ca.err" ] && { cat "$tmp/ca.err"; fail "$2: callgrind_annotate warned"; }
	expect "$1" 2 > "$tmp/want"
	diff -u "$tmp/want" "$tmp/got" > "$tmp/d" || { head -30 "$tmp/d"; fail "$2: inclusive differs from kp-inclusive"; }
	annotate "$tmp/cg" no | grep -v '	0$' > "$tmp/got"
	expect "$1" 4 | grep -v '	0$' > "$tmp/want"
	diff -u "$tmp/want" "$tmp/got" > "$tmp/d" || { head -30 "$tmp/d"; fail "$2: exclusive differs from kp-inclusive"; }
	echo "ok: $2: $(grep -c . "$tmp/want") functions with exclusive samples and the total agree"
}

check "$T/recursion.kp" recursion
check "$KP_TOP/tests/kp-flame/basic.in" basic
check "$KP_TOP/tests/kp-pprof/inline-labels.kp" inline
if [ -x "$KP_BIN/perf2kp" ]; then
	for o in "" --pid "--weight period"; do
		perf2kp $o < "$KP_TOP/samples/perf-report-kernel.script" > "$tmp/cap.kp" || fail perf2kp
		check "$tmp/cap.kp" "real capture perf2kp $o"
	done
fi

# the format: names compressed, the recursion's cost once, [all] on top
kp-callgrind "$T/recursion.kp" > "$tmp/r.cg"
[ "$(grep -c '^fn=([0-9]*) rec$' "$tmp/r.cg")" -eq 1 ] || fail "rec named once"
grep -q '^cfn=([0-9]*)$' "$tmp/r.cg" || fail "compressed cfn"
grep -q '^summary: 18$' "$tmp/r.cg" || fail summary
grep -q '^events: Samples$' "$tmp/r.cg" || fail events
grep -q '^fl=([0-9]*) kernel/rec.c$' "$tmp/r.cg" || fail "source file"

# deterministic; -o and stdout alike
kp-callgrind "$T/recursion.kp" > "$tmp/a"
kp-callgrind -o "$tmp/b" < "$T/recursion.kp"
cmp "$tmp/a" "$tmp/b" || fail "not deterministic"

# empty input: a valid empty profile and a note
kp-callgrind < /dev/null > "$tmp/e.cg" 2> "$tmp/err" || fail "empty exit"
grep -q 'no samples' "$tmp/err" || fail "empty note"
callgrind_annotate --auto=no "$tmp/e.cg" > /dev/null 2>&1 || fail "empty profile unreadable"

# write errors: exit 2
if [ -w /dev/full ]; then
	kp-callgrind "$T/recursion.kp" > /dev/full 2> /dev/null; st=$?
	[ $st -eq 2 ] || fail "/dev/full: exit $st"
	kp-callgrind -o /dev/full "$T/recursion.kp" 2> /dev/null; st=$?
	[ $st -eq 2 ] || fail "-o /dev/full: exit $st"
fi
awk 'BEGIN { for (i = 0; i < 3000; i++)
	printf "!\n : leaf%d [kernel]\n : mid%d [kernel]\n : main\n\t%d\n", i, i % 7, i + 1 }' > "$tmp/big.kp"
closed_pipe kp-callgrind "$tmp/big.kp" 2> /dev/null; st=$?
[ $st -eq 141 ] || fail "closed pipe: exit $st (want SIGPIPE, 141)"
# a file that cannot be written whole (a size limit: EFBIG) is an
# error, exit 2, and is removed rather than left truncated
( trap '' XFSZ; ulimit -f 8; kp-callgrind -o "$tmp/limited.cg" "$tmp/big.kp" 2> "$tmp/err" ); st=$?
[ $st -eq 2 ] || fail "file size limit: exit $st"
grep -q 'write error' "$tmp/err" || fail "file size limit: message"
[ -e "$tmp/limited.cg" ] && fail "a truncated file was left behind"

kp-callgrind -h | grep -q '^usage: kp-callgrind' || fail "-h"
kp-callgrind --bogus < /dev/null > /dev/null 2>&1; [ $? -eq 64 ] || fail "usage exit"
echo ok
