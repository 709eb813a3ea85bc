#!/usr/bin/env bash
# perf.data's events, metadata and modes (captures of samples/, see
# their .how files; the numbers are perf report's own):
# - two events and no --event: the one with the most samples is kept
#   (perf report: cpu-clock 1098, page-faults 289), every event named
#   with its count on stderr, the kept one in "# event:"; --event picks;
#   an event that is not there is said;
# - perf's hidden dummy event of an -a capture is not an event; a file
#   that says it sampled (it cannot) has its samples named, and kept
#   only when no other event has any, or with --event;
# - -c fixed period: the attr's period is each sample's weight;
# - the header's metadata: hostname, kernel, cpus, command, build-id,
#   lost, throttled, samples, frequency or period;
# - pipe mode from a pipe, file mode from standard input as a file, and
#   file mode from a pipe refused with what to do;
# - C++ names demangled as perf shows them, --no-demangle keeps them.
. "$KP_TOP/tests/perf2kp-data/setup.bash"

perf2kp --kallsyms "$t/kallsyms" "$S/perfdata-two-events.data" > "$t/two" 2> "$t/two.err"
want "two events: the message" \
	"perf2kp: $S/perfdata-two-events.data: cpu-clock 1098 samples, page-faults 289: kept cpu-clock; --event to choose" \
	"$(cat "$t/two.err")"
want "two events: # event" "cpu-clock" "$(meta event "$t/two")"
want "two events: # samples" "1098" "$(meta samples "$t/two")"
want "two events: the total" "1098" "$(kp-inclusive --format tsv "$t/two" | sed -n "s/^# total: //p")"
perf2kp --kallsyms "$t/kallsyms" --event page-faults "$S/perfdata-two-events.data" > "$t/pf" 2> "$t/pf.err"
want "--event page-faults: # event" "page-faults" "$(meta event "$t/pf")"
want "--event page-faults: the total" "289" "$(kp-inclusive --format tsv "$t/pf" | sed -n "s/^# total: //p")"
want "--event page-faults: weight period = perf's Event count" "63763" \
	"$(perf2kp --kallsyms "$t/kallsyms" --event page-faults --weight period "$S/perfdata-two-events.data" 2> /dev/null | kp-inclusive --format tsv | sed -n "s/^# total: //p")"
want "--event page-faults: the message" \
	"perf2kp: $S/perfdata-two-events.data: cpu-clock 1098 samples, page-faults 289: kept page-faults" \
	"$(cat "$t/pf.err")"
perf2kp --kallsyms "$t/kallsyms" --event cycles "$S/perfdata-two-events.data" > "$t/none" 2> "$t/none.err" || true
want "--event cycles: said" \
	"perf2kp: $S/perfdata-two-events.data: no event cycles in it (cpu-clock 1098 samples, page-faults 289)" \
	"$(cat "$t/none.err")"

perf2kp --kallsyms "$t/kallsyms" "$S/perfdata-a-g.data" > "$t/ag" 2> "$t/ag.err"
want "-a: the dummy event is not named" "" "$(grep -i dummy "$t/ag.err" || true)"
want "-a: # event" "cpu-clock:pppH" "$(meta event "$t/ag")"
want "-a: # hostname" "vm" "$(meta hostname "$t/ag")"
want "-a: # kernel" "6.18.44-fc-v769" "$(meta kernel "$t/ag")"
want "-a: # cpus" "2" "$(meta cpus "$t/ag")"
want "-a: # command" "/usr/bin/perf record -q -o perfdata-a-g.data -a -g -F 999 -- ./perf-report-kernel.work.sh" "$(meta command "$t/ag")"
want "-a: # build-id" "abf9ec0ec5946600c90641cf5db998472fac410b" "$(meta build-id "$t/ag")"
want "-a: # frequency" "999" "$(meta frequency "$t/ag")"
want "-a: # lost" "0" "$(meta lost "$t/ag")"
want "-a: # throttled" "0" "$(meta throttled "$t/ag")"
want "-a: # source" "perf.data" "$(meta source "$t/ag")"

perf2kp --kallsyms "$t/kallsyms" --weight period "$S/perfdata-fixed-period.data" > "$t/fp" 2> /dev/null
want "-c 500000: # period" "500000" "$(meta period "$t/fp")"
want "-c 500000: perf's Event count" "1206500000" "$(kp-inclusive --format tsv "$t/fp" | sed -n "s/^# total: //p")"

# modes: pipe mode through a pipe; file mode on standard input
cat "$S/perfdata-pipe.data" | perf2kp --kallsyms "$t/kallsyms" > "$t/pipe" 2> /dev/null
perf2kp --kallsyms "$t/kallsyms" "$S/perfdata-pipe.data" > "$t/pipe2" 2> /dev/null
want "pipe mode through a pipe = as a file" "" "$(cmp "$t/pipe" "$t/pipe2" 2>&1)"
want "pipe mode: samples" "1174" "$(meta samples "$t/pipe")"
perf2kp --kallsyms "$t/kallsyms" < "$S/perfdata-a-g.data" > "$t/stdin" 2> /dev/null
want "file mode on standard input = as an operand" "" "$(cmp "$t/stdin" "$t/ag" 2>&1)"
st=0; cat "$S/perfdata-a-g.data" | perf2kp > "$t/out" 2> "$t/err" || st=$?
want "file mode through a pipe: exit 2" "2" "$st"
want "file mode through a pipe: what to do" \
	"perf2kp: <stdin>: a perf.data file (not 'perf record -o -' pipe output) must be a regular file: name it as an operand" \
	"$(cat "$t/err")"
want "file mode through a pipe: nothing written" "0" "$(wc -c < "$t/out")"

# samples that say they are the dummy event's (its ids 108 and 109 in
# perfdata-a-g.data, cpu-clock's 106 and 107): the first K, or all
if command -v python3 > /dev/null; then
	dummy() { # K (-1: all), out
		python3 - "$S/perfdata-a-g.data" "$2" "$1" <<'PY2'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
k = int(sys.argv[3])
off, size = struct.unpack_from("<QQ", d, 40)
end, n = off + size, 0
while off < end:
    typ, misc, sz = struct.unpack_from("<IHH", d, off)
    if typ == 9 and (k < 0 or n < k):  # IP TID TIME ID ...: ID at 32
        i, = struct.unpack_from("<Q", d, off + 32)
        struct.pack_into("<Q", d, off + 32, i + 2)
        n += 1
    off += sz
open(sys.argv[2], "wb").write(d)
PY2
	}
	n=$(meta samples "$t/ag")
	dummy 10 "$t/d10"
	perf2kp --kallsyms "$t/kallsyms" "$t/d10" > "$t/d10.kp" 2> "$t/d10.err"
	want "10 dummy samples: named" \
		"perf2kp: $t/d10: cpu-clock:pppH $((n - 10)) samples, dummy:HG 10: kept cpu-clock:pppH; --event to choose" \
		"$(grep ": kept " "$t/d10.err")"
	want "10 dummy samples: the rest kept" $((n - 10)) "$(kp-inclusive --format tsv "$t/d10.kp" | sed -n "s/^# total: //p")"
	dummy $((n - 10)) "$t/dmost"
	perf2kp --kallsyms "$t/kallsyms" "$t/dmost" > "$t/dmost.kp" 2> "$t/dmost.err"
	want "more dummy samples than others: the others kept" \
		"perf2kp: $t/dmost: cpu-clock:pppH 10 samples, dummy:HG $((n - 10)): kept cpu-clock:pppH; --event to choose" \
		"$(grep ": kept " "$t/dmost.err")"
	want "more dummy samples than others: 10 kept" 10 "$(kp-inclusive --format tsv "$t/dmost.kp" | sed -n "s/^# total: //p")"
	perf2kp --kallsyms "$t/kallsyms" --event dummy:HG "$t/dmost" 2> /dev/null | kp-fold | sort > "$t/dmost.fold"
	dummy -1 "$t/dall"
	perf2kp --kallsyms "$t/kallsyms" "$t/dall" > "$t/dall.kp" 2> "$t/dall.err"
	want "only dummy samples: kept" \
		"perf2kp: $t/dall: cpu-clock:pppH 0 samples, dummy:HG $n: kept dummy:HG; --event to choose" \
		"$(grep ": kept " "$t/dall.err")"
	want "only dummy samples: the stacks of all" "" \
		"$(cmp <(kp-fold < "$t/dall.kp" | sort) <(kp-fold < "$t/ag" | sort) 2>&1)"
	want "--event dummy:HG: its stacks" "$((n - 10))" "$(awk '{ s += $NF } END { print s }' "$t/dmost.fold")"
else
	echo "not checked: samples of the dummy event (no python3)"
fi

# C++: cc1 is in the fixed-period capture
perf2kp --kallsyms "$t/kallsyms" --raw-names "$S/perfdata-fixed-period.data" 2> /dev/null | kp-fold > "$t/dm"
perf2kp --kallsyms "$t/kallsyms" --raw-names --no-demangle "$S/perfdata-fixed-period.data" 2> /dev/null | kp-fold > "$t/nodm"
want "demangled as perf shows it" "1" \
	"$(grep -c ';bitmap_set_bit;\|;bitmap_set_bit ' "$t/dm" | awk '{ print ($1 > 0) }')"
want "--no-demangle: mangled" "1" \
	"$(grep -c '_Z14bitmap_set_bitP11bitmap_headi' "$t/nodm" | awk '{ print ($1 > 0) }')"
want "--no-demangle: none demangled" "0" "$(grep -c ';bitmap_set_bit;\|;bitmap_set_bit ' "$t/nodm" || true)"
exit $fail
