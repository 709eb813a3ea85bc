#!/usr/bin/env bash
# Run every fuzz target in $1 for $2 seconds each, starting from the saved
# inputs in tests/fuzz/corpus/<target>/.  A crash fails the run and leaves
# the crasher in build-fuzz/crashers/<target>/: copy it to
# tests/fuzz/corpus/<target>/ so it replays as an ordinary test.
#
# The crasher is lost with the machine when CI runs on one of its own,
# and a CI log may be shown by its last lines only: so each failure is
# summed up once more at the very end, last, in a few lines: what the
# sanitizer or libFuzzer said, where in kp's sources (the stack's frames
# in common/ and tests/fuzz/), and the crasher itself in base64 (up to
# 16 KiB), which `base64 -d` turns back into the file to replay.
set -euo pipefail
dir=$1 secs=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
status=0
failed=()
for t in "$dir"/*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	work="$top/build-fuzz/work/$n"
	crash="$top/build-fuzz/crashers/$n"
	mkdir -p "$work" "$crash"
	seeds=()
	[ -d "$top/tests/fuzz/corpus/$n" ] && seeds+=("$top/tests/fuzz/corpus/$n")
	echo "fuzz: $n for ${secs}s"
	if ! "$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 \
		-artifact_prefix="$crash/" -print_final_stats=1 \
		"$work" "${seeds[@]}" > "$top/build-fuzz/$n.log" 2>&1; then
		echo "fuzz: $n FAILED; see build-fuzz/$n.log and $crash"
		tail -n 30 "$top/build-fuzz/$n.log"
		status=1
		failed+=("$n")
	else
		grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$top/build-fuzz/$n.log" | sed "s/^/fuzz: $n /"
	fi
done
for n in "${failed[@]}"; do
	log="$top/build-fuzz/$n.log"
	echo "fuzz: $n FAILED, in short:"
	grep -E -m 3 'ERROR: |runtime error|SUMMARY: ' "$log" | cut -c1-300 | sed 's/^/  /' || true
	grep -E '^ *#[0-9]+ .*(common|tests/fuzz)/' "$log" | head -n 8 |
		sed -E 's/^ *(#[0-9]+) 0x[0-9a-f]+ in /  \1 /' | cut -c1-200 || true
	for f in "$top/build-fuzz/crashers/$n"/*; do
		[ -f "$f" ] || continue
		sz=$(stat -c %s "$f")
		echo "  crasher $(basename "$f"), $sz bytes$([ "$sz" -le 16384 ] && echo ', base64:')"
		[ "$sz" -le 16384 ] && base64 -w 0 "$f" && echo
	done
done
exit $status
