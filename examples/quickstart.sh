#!/usr/bin/env bash
# examples/quickstart.sh - kp's main job on real data.
#
# Where perf events are allowed (root, or perf_event_paranoid <= 1):
# a live system-wide profile of this machine while a kernel-heavy command
# runs, shown as the inclusive table.  Where they are not: the same
# report on the bundled capture made on the project's machine.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${KP_BIN:-$top/build/bin}
for p in kp-sample kp-inclusive kp-top; do
	[ -x "$bin/$p" ] || { echo "quickstart: $bin/$p is missing: run 'make' first" >&2; exit 2; }
done
if "$bin/kp-sample" -a -d 0.1 -o /dev/null 2> /dev/null; then
	echo "== kp-sample -a dd if=/dev/zero of=/dev/null bs=4k count=1500000 | kp-inclusive -n 25" >&2
	"$bin/kp-sample" -a dd if=/dev/zero of=/dev/null bs=4k count=1500000 | "$bin/kp-inclusive" -n 25
else
	why=$("$bin/kp-sample" -a -d 0.1 -o /dev/null 2>&1 | tail -n 1 || true)
	echo "== perf events are not allowed here ($why);" >&2
	echo "== the bundled capture instead: kp-inclusive -n 25 samples/kp-sample-dd-a.kp" >&2
	"$bin/kp-inclusive" -n 25 "$top/samples/kp-sample-dd-a.kp"
fi
