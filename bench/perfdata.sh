#!/usr/bin/env bash
# bench/perfdata.sh - perf.data to an inclusive table, against perf's own
# ways there: "perf report --children --stdio" and "perf script |
# inferno-collapse-perf".  The capture (>= 100k samples, mostly distinct
# stacks) is made here once, as root, into bench/out/perfdata-bench.data:
#
#	perf record -a -g -F 4999 -- (kp's build, find /, for 14 s)
#
# (or give one: PERFDATA=FILE).  Prints seconds, samples/s and peak RSS of
# each (best of $REPEAT runs, /usr/bin/time), and the ratios.
set -u
. "$KP_TOP/bench/lib.sh"
mkdir -p "$KP_TOP/bench/out"
f=${PERFDATA:-$KP_TOP/bench/out/perfdata-bench.data}
if [ ! -s "$f" ]; then
	command -v perf > /dev/null || { echo "skipped: no perf and no PERFDATA"; exit 0; }
	tree=$(mktemp -d)
	git -C "$KP_TOP" archive HEAD | tar -x -C "$tree"
	perf record -q -a -g -F 4999 -o "$f" -- sh -c "
		( for i in 1 2 3; do make -s -C '$tree' -j2 all; make -s -C '$tree' clean; done ) > /dev/null 2>&1 & a=\$!
		find / -xdev > /dev/null 2>&1 & b=\$!
		sleep 14; kill \$a \$b 2> /dev/null; wait; true" > /dev/null 2>&1 ||
		{ echo "skipped: perf record failed (not root?)"; rm -rf "$tree"; exit 0; }
	rm -rf "$tree"
fi
n=$(perf2kp "$f" 2> /dev/null | sed -n 's/^# samples: //p')
echo "capture: $f, $n samples, $(( $(wc -c < "$f") / 1000000 )) MB"
[ "${n:-0}" -ge 100000 ] || echo "note: fewer than 100k samples"
bytes=$(wc -c < "$f")
o="$KP_TOP/bench/out/.perfdata"
: > "$o"
rows "$o" "perf2kp FILE | kp-inclusive" sh -c "perf2kp '$f' 2>/dev/null | kp-inclusive > /dev/null"
rows "$o" "perf report --children --stdio" sh -c "perf report -i '$f' --children --stdio --sort sym > /dev/null 2>&1"
if command -v inferno-collapse-perf > /dev/null; then
	rows "$o" "perf script | inferno-collapse-perf" sh -c "perf script -i '$f' 2>/dev/null | inferno-collapse-perf > /dev/null"
fi
ratios "$o" "$n"
