#!/usr/bin/env bash
# bench/perfdata-dwarf.sh - a --call-graph dwarf perf.data to an inclusive
# table: perf2kp unwinding each sample's user stack copy with libdw, against
# perf's own "perf report --children --stdio" (libunwind) and perf script.
# The capture (about 10,000 samples of 8 KB stack copies, 90 MB) is made
# here once, as root, into bench/out/perfdata-dwarf-bench.data:
#
#	perf record --call-graph dwarf,8192 -F 999 -- /usr/bin/python3 -c ...
#
# (or give one: PERFDATA=FILE).  Prints seconds, samples/s and peak RSS of
# each (the median of $REPEAT runs, /usr/bin/time), and the ratios.
set -u
. "$KP_TOP/bench/lib.sh"
mkdir -p "$KP_TOP/bench/out"
f=${PERFDATA:-$KP_TOP/bench/out/perfdata-dwarf-bench.data}
if [ ! -s "$f" ]; then
	command -v perf > /dev/null || { echo "skipped: no perf and no PERFDATA"; exit 0; }
	perf record -q --call-graph dwarf,8192 -F 999 -o "$f" -- /usr/bin/python3 -c '
import json, re
for k in range(36):
    d = [{"k": i, "v": [str(j) for j in range(20)]} for i in range(30000)]
    s = json.dumps(d)
    x = json.loads(s)
    r = sorted(x, key=lambda e: -e["k"])
    print(len(re.findall(r"\d+", s)))' > /dev/null 2>&1 ||
		{ echo "skipped: perf record failed (not root?)"; rm -f "$f"; exit 0; }
fi
n=$(perf2kp "$f" 2> /dev/null | sed -n 's/^# samples: //p')
echo "capture: $f, $n samples, $(( $(wc -c < "$f") / 1000000 )) MB"
bytes=$(wc -c < "$f")
o="$KP_TOP/bench/out/.perfdata-dwarf"
: > "$o"
rows "$o" "perf2kp FILE | kp-inclusive" sh -c "perf2kp '$f' 2>/dev/null | kp-inclusive > /dev/null"
rows "$o" "perf report --children --stdio" sh -c "perf report -i '$f' --children --stdio --sort sym > /dev/null 2>&1"
rows "$o" "perf2kp FILE" sh -c "perf2kp '$f' > /dev/null 2>&1"
rows "$o" "perf script" sh -c "perf script -i '$f' > /dev/null 2>&1"
ratios "$o" "$n"
