#!/usr/bin/env bash
# tests/tsan.sh TSAN_BUILD PLAIN_BUILD - what runs on two threads, under
# ThreadSanitizer (make test-tsan builds TSAN_BUILD with -fsanitize=thread):
#
#   - test_idagg (the shared tables and the stack aggregation, filled by
#     two threads at once), 20 times: interleavings differ run to run;
#   - perf2kp split into chunks of 512 bytes and of 64 KiB
#     (PERF2KP_SPLIT=1, 2), so that both threads read every input, on
#     the perf script captures of samples/ and tests/perf2kp/, with and
#     without --functions and --pid, and on the perf.data captures of
#     samples/ (split: records on one thread, names on another): no
#     report, and the output of the plain build's perf2kp run whole
#     (PERF2KP_SPLIT=0).
#
# A case fails on any ThreadSanitizer report, a failed test or another
# output.  Ends with "N passed, N failed".
set -u
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
tsan=${1:?usage: tests/tsan.sh TSAN_BUILD PLAIN_BUILD}
plain=${2:?usage: tests/tsan.sh TSAN_BUILD PLAIN_BUILD}
case "$tsan" in /*) ;; *) tsan="$top/$tsan" ;; esac
case "$plain" in /*) ;; *) plain="$top/$plain" ;; esac
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}"
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fail NAME WHY [LOG]
failed() {
	echo "FAIL $1: $2"
	[ -z "${3:-}" ] || sed -n '1,40p' "$3"
	fail=$((fail + 1))
}

# ThreadSanitizer's own start-up failure (a kernel whose address space
# layout it cannot use) is no finding in kp: said, and the run stops
tsan_works() {
	"$tsan/tests/test_idagg" > "$tmp/probe" 2>&1 && return 0
	if grep -q "ThreadSanitizer: unexpected memory mapping\|FATAL: ThreadSanitizer" "$tmp/probe"; then
		echo "SKIP tsan: ThreadSanitizer cannot run here:"
		sed -n '1,3p' "$tmp/probe"
		return 1
	fi
	return 0
}
if ! tsan_works; then
	echo "0 passed, 0 failed"
	exit 0
fi

for i in $(seq 20); do
	if "$tsan/tests/test_idagg" > "$tmp/log" 2>&1 &&
		! grep -q "WARNING: ThreadSanitizer" "$tmp/log"; then
		pass=$((pass + 1))
	else
		failed "test_idagg run $i" "a report or a failed check" "$tmp/log"
	fi
done
echo "tsan: test_idagg, 20 runs"

inputs=("$top"/samples/perf-dd-a-g.txt "$top"/samples/perf-dd-a-g-ipdso.txt
	"$top"/tests/perf2kp/*.in)
if [ -f "$top/samples/perf-build-a-g.txt.xz" ]; then
	xz -dc "$top/samples/perf-build-a-g.txt.xz" > "$tmp/perf-build-a-g.txt"
	inputs+=("$tmp/perf-build-a-g.txt")
fi
# same SPLIT FILE [OPTION]: perf2kp OPTION FILE under TSan, split so,
# against the plain build's run whole: no report, the same output
n=0
same() {
	local split=$1 f=$2 name
	shift 2
	PERF2KP_SPLIT=0 "$plain/bin/perf2kp" "$@" "$f" > "$tmp/want" 2> /dev/null
	PERF2KP_SPLIT=$split "$tsan/bin/perf2kp" "$@" "$f" > "$tmp/got" 2> "$tmp/log"
	name="perf2kp $* ${f#"$top"/} (PERF2KP_SPLIT=$split)"
	n=$((n + 1))
	if grep -q "WARNING: ThreadSanitizer" "$tmp/log"; then
		failed "$name" "ThreadSanitizer report" "$tmp/log"
	elif ! cmp -s "$tmp/want" "$tmp/got"; then
		failed "$name" "output differs from the plain build's"
	else
		pass=$((pass + 1))
	fi
}
for f in "${inputs[@]}"; do
	[ -f "$f" ] || continue
	for split in 1 2; do
		same "$split" "$f"
		same "$split" "$f" --functions
		same "$split" "$f" --pid
	done
done
echo "tsan: perf2kp, $n runs"

# perf.data: the records read on one thread, named (symbols) on another
n=0
for f in "$top"/samples/perfdata-*.data "$top"/samples/perf-report-kernel.data; do
	[ -f "$f" ] || continue
	same 1 "$f"
done
echo "tsan: perf2kp on perf.data, $n runs"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
