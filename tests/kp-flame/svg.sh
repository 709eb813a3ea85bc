#!/usr/bin/env bash
# kp-flame: the SVG is well-formed XML (xmllint), every frame's width,
# depth and tooltip numbers agree with the folded stacks of the input
# (svgcheck.py, computed from kp-fold output), names are escaped, the
# output is deterministic, the differential mode colours by change, and
# a full disk is exit 2 and a closed pipe SIGPIPE.
set -u
command -v xmllint > /dev/null || { echo "skipped: no xmllint (libxml2-utils)"; exit 77; }
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
T=$KP_TOP/tests/kp-flame
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$KP_TOP/tests/pipe.inc"

# every golden output and a few more are valid XML
for f in "$T"/*.out; do
	xmllint --noout "$f" || fail "xmllint $f"
done

# numbers against the folded input, in each orientation
for c in basic escape title-width-height colors-hot minwidth-2px; do
	kp-fold "$T/$c.in" > "$tmp/$c.fold"
done
for c in basic escape; do
	kp-flame "$T/$c.in" > "$tmp/$c.svg" || fail "kp-flame $c"
	python3 "$T/svgcheck.py" "$tmp/$c.svg" "$tmp/$c.fold" || fail "svgcheck $c"
done
kp-flame --inverted "$T/basic.in" > "$tmp/inv.svg"
python3 "$T/svgcheck.py" "$tmp/inv.svg" "$tmp/basic.fold" --inverted || fail "inverted"
kp-flame --width 600 "$T/basic.in" > "$tmp/w.svg"
python3 "$T/svgcheck.py" "$tmp/w.svg" "$tmp/basic.fold" || fail "width 600"
# --reverse: the same as the graph of the reversed stacks
awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, a, ";"); s = a[k];
	for (i = k - 1; i >= 1; i--) s = s ";" a[i]; print s, n }' \
	"$tmp/basic.fold" > "$tmp/rev.fold"
kp-flame --reverse "$T/basic.in" > "$tmp/rev.svg"
python3 "$T/svgcheck.py" "$tmp/rev.svg" "$tmp/rev.fold" || fail "reverse"
# with --minwidth 0 nothing is merged or dropped
kp-flame --minwidth 0 "$T/minwidth-2px.in" > "$tmp/mw0.svg"
python3 "$T/svgcheck.py" "$tmp/mw0.svg" "$tmp/minwidth-2px.fold" || fail "minwidth 0"
# with --minwidth 2, the merged boxes hold exactly the narrow frames
grep -c '<title>\[[0-9]* merged\]' "$T/minwidth-2px.out" | grep -qx 2 || fail "merged boxes"
grep -q '<title>lonely' "$T/minwidth-2px.out" && fail "a lone narrow frame was drawn"
grep -q '<title>\[12 merged\]' "$T/minwidth-2px.out" || fail "12 small_a frames merged"

# a real capture (perf2kp on samples/), each way perf2kp names processes
if [ -x "$KP_BIN/perf2kp" ]; then
	for o in "" --pid "--weight period"; do
		perf2kp $o < "$KP_TOP/samples/perf-report-kernel.script" > "$tmp/cap.kp"
		kp-fold "$tmp/cap.kp" > "$tmp/cap.fold"
		kp-flame --minwidth 0 "$tmp/cap.kp" > "$tmp/cap.svg" || fail "capture $o"
		xmllint --noout "$tmp/cap.svg" || fail "capture $o xml"
		python3 "$T/svgcheck.py" "$tmp/cap.svg" "$tmp/cap.fold" || fail "capture $o"
	done
	# weighted by period on cpu-clock: the counts are nanoseconds
	grep -q '^inclusive: 933933933 ns, 100.00%' "$tmp/cap.svg" || fail "countname ns"
fi

# examples/ holds what kp-flame makes of the capture today
if [ -x "$KP_BIN/perf2kp" ]; then
	perf2kp --comm < "$KP_TOP/samples/perf-report-kernel.script" |
		kp-flame --minwidth 2 --title "perf-report-kernel.work.sh: dd, gzip, cat, fork/exec (perf record -a -g, 933 samples)" > "$tmp/ex.svg"
	cmp -s "$tmp/ex.svg" "$KP_TOP/examples/flame-perf-report-kernel.svg" ||
		fail "examples/flame-perf-report-kernel.svg is stale (regenerate it: examples/pictures.md)"
fi

# escaping: the names are text; the only script element is kp-flame's
grep -c '<script' "$tmp/escape.svg" | grep -qx 1 || fail "a name made a <script>"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$tmp/escape.svg" || fail "escaped name"

# deterministic: same input, same bytes (and file or stdin alike)
kp-flame "$T/basic.in" > "$tmp/a.svg"
kp-flame < "$T/basic.in" > "$tmp/b.svg"
cmp "$tmp/a.svg" "$tmp/b.svg" || fail "not deterministic"

# frames without a module or symbol (perf's "[unknown]", bare addresses)
# merge by name, but take their colour from their address: the kernel's
# (orange: red high, blue low), or unknown (grey); two kernel addresses
# under one caller are one box of both counts
printf '!\n 0xffffffff81000000\n : main [/usr/bin/cat]\n\t5\n!\n 0xffffffff81000040\n : main [/usr/bin/cat]\n\t2\n!\n 0x0000000000401000\n : other [/usr/bin/cat]\n\t3\n' |
	kp-flame > "$tmp/bare.svg" || fail "bare addresses"
bare_fill() { # the fill of the [unknown] box of $1 samples
	awk -v n="$1" '/^<g><title>\[unknown\]$/ { u = 1; next }
		u && $0 ~ "^inclusive: " n " samples" { f = 1 }
		u && f && /fill="rgb/ { sub(/.*fill="rgb\(/, ""); sub(/\).*/, "");
			print; exit }
		/<\/g>/ { u = f = 0 }' "$tmp/bare.svg"
}
k=$(bare_fill 7) && u=$(bare_fill 3) || fail "bare boxes"
echo "$k" | awk -F, '!($1 > 200 && $3 < 80) { exit 1 }' ||
	fail "kernel [unknown] of 7 samples not orange: rgb($k)"
echo "$u" | awk -F, '!($1 == $2 && $2 == $3) { exit 1 }' ||
	fail "user [unknown] of 3 samples not grey: rgb($u)"
[ "$(grep -c '^<g><title>\[unknown\]$' "$tmp/bare.svg")" = 2 ] ||
	fail "bare addresses: not two [unknown] boxes"

# differential: widths are 'after', colours the change in share
cat > "$tmp/before.kp" <<'KP'
!
 : grew [kernel]
 : main [/bin/x]
	10
!
 : shrank [kernel]
 : main [/bin/x]
	60
!
 : same [kernel]
 : main [/bin/x]
	30
!
 : gone [kernel]
 : main [/bin/x]
	0
!
KP
cat > "$tmp/after.kp" <<'KP'
!
 : grew [kernel]
 : main [/bin/x]
	80
!
 : shrank [kernel]
 : main [/bin/x]
	20
!
 : same [kernel]
 : main [/bin/x]
	60
!
 : new [kernel]
 : other [/bin/x]
	40
!
KP
kp-fold "$tmp/before.kp" > "$tmp/before.fold"
kp-fold "$tmp/after.kp" > "$tmp/after.fold"
kp-flame "$tmp/before.kp" "$tmp/after.kp" > "$tmp/diff.svg" || fail "diff mode"
xmllint --noout "$tmp/diff.svg" || fail "diff xml"
python3 "$T/svgcheck.py" "$tmp/diff.svg" "$tmp/after.fold" --diff "$tmp/before.fold" || fail "diff colours"
grep -q 'change: +30.00 points inclusive' "$tmp/diff.svg" || fail "grew by 30 points"
grep -q '<title>gone' "$tmp/diff.svg" && fail "a frame absent from 'after' was drawn"

# empty input: a valid empty graph and a note
kp-flame < /dev/null > "$tmp/empty.svg" 2> "$tmp/err" || fail "empty exit"
xmllint --noout "$tmp/empty.svg" || fail "empty xml"
grep -q 'no samples' "$tmp/err" || fail "empty note"

# a total past 2^64-1 is fatal (kp.5): exit 2, named, nothing written
printf '!\n : a\n\t18446744073709551615\n!\n : b\n\t1\n!\n' > "$tmp/ov.kp"
kp-flame "$tmp/ov.kp" > "$tmp/ov.svg" 2> "$tmp/err"; st=$?
[ $st -eq 2 ] || fail "total overflow: exit $st"
[ -s "$tmp/ov.svg" ] && fail "total overflow: something written"
grep -qx "kp-flame: $tmp/ov.kp: the total count overflows 64 bits" "$tmp/err" || fail "total overflow: message"
kp-flame "$T/basic.in" "$tmp/ov.kp" > "$tmp/ov.svg" 2> "$tmp/err"; st=$?
[ $st -eq 2 ] && [ ! -s "$tmp/ov.svg" ] || fail "total overflow of 'after': exit $st"

# write errors: a full disk is exit 2; a closed pipe ends by SIGPIPE
if [ -w /dev/full ]; then
	kp-flame "$T/basic.in" > /dev/full 2> "$tmp/err"
	st=$?
	[ $st -eq 2 ] || fail "/dev/full: exit $st"
	grep -q 'write error' "$tmp/err" || fail "/dev/full message"
fi
# 3000 distinct stacks: far more SVG than a pipe holds
awk 'BEGIN { for (i = 0; i < 3000; i++)
	printf "!\n : leaf%d [kernel]\n : mid%d [kernel]\n : main\n\t%d\n", i, i % 7, i + 1 }' > "$tmp/big.kp"
closed_pipe kp-flame "$tmp/big.kp" 2> /dev/null; st=$?
[ $st -eq 141 ] || fail "closed pipe: exit $st (want SIGPIPE, 141)"

# -o: the same bytes; a file that cannot be written whole (a size
# limit: EFBIG) is exit 2 and removed rather than left truncated
kp-flame -o "$tmp/o.svg" "$T/basic.in" || fail "-o"
cmp "$tmp/o.svg" "$tmp/a.svg" || fail "-o differs from stdout"
( trap '' XFSZ; ulimit -f 8; kp-flame -o "$tmp/limited.svg" "$tmp/big.kp" 2> "$tmp/err" ); st=$?
[ $st -eq 2 ] || fail "file size limit: exit $st"
grep -q 'write error' "$tmp/err" || fail "file size limit: message"
[ -e "$tmp/limited.svg" ] && fail "a truncated SVG was left behind"
kp-flame -o "$tmp/no/such/dir/x.svg" "$T/basic.in" 2> /dev/null; st=$?
[ $st -eq 2 ] || fail "-o into a missing directory: exit $st"

# usage
kp-flame -h | grep -q '^usage: kp-flame' || fail "-h"
kp-flame a b c > /dev/null 2>&1; [ $? -eq 64 ] || fail "three inputs"
kp-flame --colors nope < /dev/null > /dev/null 2>&1; [ $? -eq 64 ] || fail "--colors nope"
kp-flame --minwidth x < /dev/null > /dev/null 2>&1; [ $? -eq 64 ] || fail "--minwidth x"
kp-flame --width 5 < /dev/null > /dev/null 2>&1; [ $? -eq 64 ] || fail "--width 5"
for p in hot mem io red green blue aqua yellow purple orange gray kp; do
	kp-flame --colors $p "$T/basic.in" > "$tmp/p.svg" || fail "--colors $p"
	xmllint --noout "$tmp/p.svg" || fail "--colors $p xml"
done
echo ok
