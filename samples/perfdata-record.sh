#!/bin/sh
# record the perf.data captures of samples/ (perfdata-*), with perf's own
# reports beside them; run as root from samples/ (perf 6.1, software events).
# With arguments, only those named of the later ones: cache, pseudo.
set -eu
want() { [ -z "$ONLY" ] || case " $ONLY " in *" $1 "*) ;; *) false ;; esac; }
ONLY=$*
W=./perf-report-kernel.work.sh
P='my $s = 0; for my $i (1 .. 3000000) { $s += sqrt($i) * sin($i) } my @a = sort { $a <=> $b } map { ($_ * 7919) % 100003 } 1 .. 300000; print $s + $a[0], "\n"'
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
rec() { name=$1; shift; perf record -q -o "perfdata-$name.data" "$@" > /dev/null; }
report() { # the reports of perfdata-$1.data
	f=perfdata-$1.data
	perf report -i "$f" --stdio --children --sort symbol -g none 2>/dev/null | xz -9 > "${f%.data}.children.xz"
	perf script -i "$f" 2>/dev/null | xz -9 > "${f%.data}.script.xz"
}
if [ -z "$ONLY" ]; then
rec a-g -a -g -F 999 -- $W
rec user -g -F 1999 -- perl -e "$P"
rec two-events -a -g -F 999 -e cpu-clock -e page-faults -- $W
rec fixed-period -a -g -c 500000 -e cpu-clock -- $W
rec dwarf --call-graph dwarf,4096 -F 499 -- perl -e "$P"
# the system's python3 (not one a PATH shim runs): stacks deeper than the
# 8192-byte copies too; -z keeps the capture small
PY='import json, re
d = [{"k": i, "v": [str(j) for j in range(20)]} for i in range(30000)]
s = json.dumps(d)
x = json.loads(s)
r = sorted(x, key=lambda e: -e["k"])
print(len(re.findall(r"\d+", s)))'
rec dwarf-python -z --call-graph dwarf,8192 -F 999 -- /usr/bin/python3 -c "$PY"
perf record -q -o - -a -g -F 999 -- $W > perfdata-pipe.data
rec z -z -g -F 999 -- $W
dd if=/dev/zero of=/dev/null bs=64 count=100000000 2>/dev/null & pid=$!
rec p -g -F 999 -p $pid -- sleep 2
kill $pid
rec tracepoint -a -g -e sched:sched_switch -- $W
for f in a-g user two-events fixed-period dwarf dwarf-python pipe z p tracepoint; do
	report $f
done
fi
if want cache; then
# perf's build-id cache: a program run from a directory removed after the
# capture, which only the copy perf record kept in ~/.debug still names;
# its reports made with that copy, and perf script's without it (HOME an
# empty directory).  perfdata-cache.elf is the program (the copy).
d=$(mktemp -d)
cc -O1 -fno-omit-frame-pointer -nostdlib -static-pie -Wl,--export-dynamic \
	-Wl,--eh-frame-hdr -o "$d/prog" perfdata-cache.c
cp "$d/prog" perfdata-cache.elf
rec cache -e cpu-clock:u -g -F 999 -- "$d/prog"
rec cache-dwarf -e cpu-clock:u --call-graph dwarf,512 -F 199 -- "$d/prog"
rm -r "$d"
report cache
report cache-dwarf
h=$(mktemp -d)
HOME=$h perf script -i perfdata-cache.data 2>/dev/null | xz -9 > perfdata-cache.nocache.script.xz
HOME=$h perf script -i perfdata-cache-dwarf.data 2>/dev/null | xz -9 > perfdata-cache-dwarf.nocache.script.xz
rmdir "$h"
fi
if want pseudo; then
# code in memory no file backs (x86-64): run, and running before a -p
# capture began (its mappings read from /proc); the program (static: one
# file) and any copy of it perf kept removed before the reports, so that
# its own frames stay addresses for perf as for perf2kp anywhere
d=$(mktemp -d)
cc -O1 -fno-omit-frame-pointer -static -o "$d/pseudo" perfdata-pseudo.c
rec pseudo -e cpu-clock:u -g -F 499 -- "$d/pseudo" 50
"$d/pseudo" 40 1 > "$d/pid" &
sleep 0.5
rec pseudo-p -e cpu-clock:u -g -F 499 -p "$(cat "$d/pid")"
wait
rm -r "$d"
rm -rf "$HOME/.debug$d"
find "$HOME/.debug/.build-id" -lname "*$d/*" -delete
report pseudo
report pseudo-p
fi
