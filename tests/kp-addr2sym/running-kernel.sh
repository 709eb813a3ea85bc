#!/usr/bin/env bash
# running-kernel.sh - /proc/kallsyms names the running kernel only: a
# kp file whose "# build-id:" is another kernel's (captured on another
# boot of another build, or another machine, where the same _text says
# nothing) keeps its kernel frames as addresses with a message saying
# why, as perf report does ("No kallsyms or vmlinux with build-id ...
# was found"); --force uses /proc/kallsyms anyway, and the running
# kernel's own build-id, or none, uses it as before.  perf2kp's
# perf.data reader goes through the same resolver: a capture of
# samples/ made on another kernel than this one's is named from
# /proc/kallsyms only with a saved copy (--kallsyms).
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
[ -r /sys/kernel/notes ] || { echo "skipped: no /sys/kernel/notes"; exit 77; }
command -v perf > /dev/null || { echo "skipped: no perf (for the running kernel's build-id)"; exit 77; }
running=$(perf buildid-list -k 2> /dev/null)
[ -n "$running" ] || { echo "skipped: perf buildid-list -k gave nothing"; exit 77; }
# a text symbol with a real address (root: kptr_restrict shows zeros else)
read -r addr _ sym _ < <(awk '$2 == "T" && $1 !~ /^0+$/ && $3 == "schedule" { print; exit }' /proc/kallsyms)
[ -n "${addr:-}" ] || { echo "skipped: /proc/kallsyms has no address of schedule (not root?)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mk() { # build-id line (or none)
	{ [ -n "$1" ] && echo "# build-id: $1"; printf '!\n 0x%s [kernel]\n\t1\n' "$addr"; } > "$tmp/in.kp"
}
other=0000000000000000000000000000000000000001

mk "$other"
kp-addr2sym "$tmp/in.kp" > "$tmp/out" 2> "$tmp/err"
grep -q "^ 0x0*${addr#0x} \[kernel\]$" "$tmp/out" ||
	{ echo "FAIL: another kernel's build-id: the frame was named"; cat "$tmp/out"; fail=1; }
grep -q "/proc/kallsyms is of the running kernel, build-id $running; the capture's kernel is $other, another" "$tmp/err" ||
	{ echo "FAIL: no message saying why"; cat "$tmp/err"; fail=1; }

kp-addr2sym --force "$tmp/in.kp" > "$tmp/out" 2> "$tmp/err"
grep -q ": $sym+0x0/" "$tmp/out" ||
	{ echo "FAIL: --force: not named $sym"; cat "$tmp/out" "$tmp/err"; fail=1; }
grep -q "used anyway (--force)" "$tmp/err" ||
	{ echo "FAIL: --force: no message"; cat "$tmp/err"; fail=1; }

for id in "$running" ""; do
	mk "$id"
	kp-addr2sym "$tmp/in.kp" > "$tmp/out" 2> "$tmp/err" ||
		{ echo "FAIL: build-id '${id}': exit $?"; cat "$tmp/err"; fail=1; }
	grep -q ": $sym+0x0/" "$tmp/out" ||
		{ echo "FAIL: build-id '${id}': not named $sym"; cat "$tmp/out" "$tmp/err"; fail=1; }
	! grep -q "running kernel" "$tmp/err" ||
		{ echo "FAIL: build-id '${id}': a message"; cat "$tmp/err"; fail=1; }
done

# perf2kp: a capture of samples/ made on another kernel than this one
f=$KP_TOP/samples/perfdata-a-g.data
cap=$(perf2kp --kernel-only "$f" 2> /dev/null | sed -n 's/^# build-id: //p')
if [ -n "$cap" ] && [ "$cap" != "$running" ]; then
	perf2kp --kernel-only "$f" > "$tmp/out" 2> "$tmp/err"
	grep -q "/proc/kallsyms is of the running kernel, build-id $running; the capture's kernel is $cap, another; kernel frames stay addresses" "$tmp/err" ||
		{ echo "FAIL: perf2kp: no message"; cat "$tmp/err"; fail=1; }
	n=$(grep -c '^ 0x[0-9a-f]* \[kernel\]$' "$tmp/out")
	m=$(grep -c '^ .*\[kernel\]$' "$tmp/out")
	[ "$n" -gt 0 ] && [ "$n" = "$m" ] ||
		{ echo "FAIL: perf2kp: $((m - n)) of $m kernel frames named from this kernel's /proc/kallsyms"; fail=1; }
	# the peer does the same with that capture here: no kernel symbols
	HOME=$tmp perf report -i "$f" --stdio --sort sym > "$tmp/report" 2> "$tmp/report.err"
	grep -q "No kallsyms or vmlinux with build-id $cap was found" "$tmp/report.err" ||
		{ echo "FAIL: perf report named the kernel frames: the oracle disagrees"; head -5 "$tmp/report.err"; fail=1; }
	! grep -q '\[k\] [a-z_]' "$tmp/report" ||
		{ echo "FAIL: perf report has kernel symbols"; grep -m3 '\[k\] [a-z_]' "$tmp/report"; fail=1; }
else
	echo "note: $f is of this kernel (or has no build-id): its perf2kp case not run"
fi
exit $fail
