#!/usr/bin/env bash
# examples/quickstart.sh - kp's main job on real data.
#
# kp runs from the tree: build/bin goes first on PATH here, as the README
# says to do in a shell (after `make install` the programs are in
# /usr/local/bin, already on PATH).
#
# Where perf events are allowed (root, or perf_event_paranoid <= 1): a
# live profile of a kernel-heavy command, sampled alone (kp-sample with a
# command samples it and its children, not the idle CPUs), shown as the
# inclusive table.  Where they are not: the same report on the bundled
# capture of the same command on the project's machine.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${KP_BIN:-$top/build/bin}
for p in kp-sample kp-inclusive; do
	[ -x "$bin/$p" ] || { echo "quickstart: $bin/$p is missing: run 'make' first" >&2; exit 2; }
done
export PATH="$bin:$PATH"
echo "== kp from the tree: PATH=$bin:\$PATH" >&2
work="dd if=/dev/zero of=/dev/null bs=4k count=1500000 status=none"
if kp-sample -d 0.1 -o /dev/null true 2> /dev/null; then
	echo "== kp-sample $work | kp-inclusive -n 25" >&2
	kp-sample $work | kp-inclusive -n 25
else
	why=$(kp-sample -d 0.1 -o /dev/null true 2>&1 | tail -n 1 || true)
	echo "== perf events are not allowed here ($why);" >&2
	echo "== the bundled capture of dd instead: kp-inclusive -n 25 samples/kp-sample-dd-user-pid.kp" >&2
	kp-inclusive -n 25 "$top/samples/kp-sample-dd-user-pid.kp"
fi
