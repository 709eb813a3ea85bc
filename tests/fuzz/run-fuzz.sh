#!/usr/bin/env bash
# Run every fuzz target in $1 for $2 seconds each, starting from the saved
# inputs in tests/fuzz/corpus/<target>/.  A crash fails the run and leaves
# the crasher in build-fuzz/crashers/<target>/: copy it to
# tests/fuzz/corpus/<target>/ so it replays as an ordinary test.
set -euo pipefail
dir=$1 secs=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
status=0
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
	else
		grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$top/build-fuzz/$n.log" | sed "s/^/fuzz: $n /"
	fi
done
exit $status
