#!/usr/bin/env bash
# perf2kp reads perf script text in chunks (cut where a sample header
# follows an empty line, else at a line's end and read on by the same
# thread), two threads taking the next chunk in turn where two
# processors may be used.  So one thread (PERF2KP_SPLIT=0) and two, on
# a file, on a pipe and in small chunks (PERF2KP_SPLIT=1: 512 bytes;
# =2: 64 KiB) must give the same bytes, messages (with their line
# numbers in the whole input) and exit status: on a real capture under
# the options that change what a sample makes, and on one built to put
# events first seen in any chunk, skipped lines in many, and samples
# longer than a chunk.  (fuzz_perf2kp cuts small inputs in chunks of 64
# bytes and compares them with one thread.)
set -u
S=$KP_TOP/samples
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
n=0

# compare FILE OPTS...: one thread on the file, then two on the file,
# on a pipe and in small chunks: bytes, messages, status
compare() {
	local f=$1 sa sb how
	shift
	PERF2KP_SPLIT=0 perf2kp "$@" "$f" > "$t/a" 2> "$t/a.err"; sa=$?
	sed -i "s|$f|<stdin>|" "$t/a.err"
	for how in file pipe 1 2; do
		case $how in
		file) perf2kp "$@" "$f" > "$t/b" 2> "$t/b.err"; sb=$? ;;
		# shellcheck disable=SC2002
		pipe) cat "$f" | perf2kp "$@" > "$t/b" 2> "$t/b.err"; sb=$? ;;
		*) PERF2KP_SPLIT=$how perf2kp "$@" "$f" > "$t/b" 2> "$t/b.err"; sb=$? ;;
		esac
		sed -i "s|$f|<stdin>|" "$t/b.err"
		n=$((n + 1))
		if [ $sa -ne $sb ] || ! cmp -s "$t/a" "$t/b" || ! cmp -s "$t/a.err" "$t/b.err"; then
			echo "FAILED: $(basename "$f") $* ($how): two threads and one differ (exit $sa, $sb)"
			diff "$t/a" "$t/b" | head -n 5
			diff "$t/a.err" "$t/b.err" | head -n 5
			fail=1
		fi
	done
}

for f in perf-build-a-g.txt.xz perfdata-two-events.script.xz perfdata-tracepoint.script.xz; do
	[ -f "$S/$f" ] || { echo "skipped: no samples/$f"; exit 77; }
done
xz -dc "$S/perf-build-a-g.txt.xz" > "$t/build.txt"
for opts in "" "--pid --weight period" "--tid --kernel-only" \
	"--comm --user-only --raw-names --inline" "--functions --pid"; do
	# shellcheck disable=SC2086
	compare "$t/build.txt" $opts
done

# events and bad lines in many chunks: the two-events capture, bad
# lines, the build, a sample of a new event in the middle of it, more
# bad lines, a sample of 400 KiB (longer than a chunk of 512 bytes or 64
# KiB: read on by one thread), the tracepoint capture (an event first
# seen late)
{
	xz -dc "$S/perfdata-two-events.script.xz"
	printf 'not a header at all\n\tffffffff810a4b1c x ([kernel.kallsyms])\n\n'
	printf 'dd  4021 [001]  1000.000001:     250000 cpu-clock:ppp: \n\tzzzz bad frame\n\n'
	xz -dc "$S/perf-build-a-g.txt.xz" | head -c 6000000 | sed '$d'
	printf '\nsleep  4100 [002]  1000.000006:          7 major-faults: \n\tffffffff810a4b1c finish_task_switch+0x7c ([kernel.kallsyms])\n\n'
	xz -dc "$S/perf-build-a-g.txt.xz" | tail -c 6000000 | sed '1,/^$/d'
	printf 'dd  4021 [001]  1000.000001:     250000 cpu-clock:ppp: \n\tffffffff810a4b1c x \001 ([kernel.kallsyms])\n\tyyyy\n\n'
	printf 'dd  4022 [001]  1000.000002:     250000 cpu-clock:ppp: \n'
	for i in $(seq 8000); do printf '\t%x f%d+0x1 (/usr/bin/dd)\n' $((0x400000 + i)) $i; done
	printf '\n'
	xz -dc "$S/perfdata-tracepoint.script.xz"
} > "$t/mixed.txt"
[ "$(wc -c < "$t/mixed.txt")" -ge 8000000 ] || { echo "FAILED: mixed input under 8 MB"; fail=1; }
for opts in "" "--event cpu-clock" "--event major-faults --pid" "--weight period --kernel-only"; do
	# shellcheck disable=SC2086
	compare "$t/mixed.txt" $opts
done
# the skipped lines of both halves are named, with their lines
grep -q 'mixed.txt\|<stdin>' "$t/b.err" || { echo "FAILED: no skipped line named"; fail=1; }

# PERF2KP_SPLIT: 0, 1 and 2 (and empty, as unset) give the same output;
# any other value is a usage error, not silently the default
perf2kp "$t/mixed.txt" > "$t/a" 2> /dev/null
for v in 0 1 2 ""; do
	PERF2KP_SPLIT=$v perf2kp "$t/mixed.txt" > "$t/b" 2> /dev/null
	cmp -s "$t/a" "$t/b" || { echo "FAILED: PERF2KP_SPLIT='$v' changed the output"; fail=1; }
done
for v in 3 yes " 1"; do
	PERF2KP_SPLIT=$v perf2kp "$t/mixed.txt" > "$t/b" 2> "$t/b.err"; st=$?
	if [ $st -ne 64 ] || [ -s "$t/b" ] ||
		! grep -qF "perf2kp: PERF2KP_SPLIT is 0, 1 or 2, not '$v'" "$t/b.err"; then
		echo "FAILED: PERF2KP_SPLIT='$v': exit $st, $(wc -c < "$t/b") bytes out: $(head -n 1 "$t/b.err")"
		fail=1
	fi
done

echo "$n comparisons"
exit $fail
