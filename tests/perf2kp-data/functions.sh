#!/usr/bin/env bash
# perf2kp --functions: one frame per function.  On every perf.data
# capture in samples/ and on the perf script text captures, under
# options that change what a sample makes, what the function-level
# filters make of "perf2kp --functions" must be byte for byte what they
# make of "perf2kp" (kp-fold, kp-fold --all, kp-inclusive, kp-top: each
# names frames by function; perf-report.sh checks kp-inclusive's numbers
# against perf report).  And the --functions stream must have no frame
# with both a symbol and an address (a frame without a symbol keeps its
# address), and no more records than the default one: on the captures of
# a whole machine, far fewer.  The frames without a symbol, which keep
# their address, must be the default stream's, each with the address of
# its own process: perf2kp --functions names a user address once per
# place in its file, not once per process, and a library's unnamed
# address in two processes (two bases) is two frames.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
mkdir "$t/empty"
xz -dc "$S/perf-build-a-g.txt.xz" > "$t/build.txt"

# check NAME FILE OPTS...
check() {
	local name=$1 f=$2 a b c
	shift 2
	HOME=$t/empty perf2kp --kallsyms "$t/kallsyms" "$@" "$f" > "$t/a" 2> /dev/null || true
	HOME=$t/empty perf2kp --kallsyms "$t/kallsyms" --functions "$@" "$f" > "$t/b" 2> "$t/b.err" || true
	for c in "kp-fold" "kp-fold --all" "kp-inclusive --format tsv" "kp-top -n 0"; do
		# shellcheck disable=SC2086
		if ! cmp -s <($c < "$t/a" 2>&1) <($c < "$t/b" 2>&1); then
			echo "FAIL: $name $*: $c differs with --functions"
			# shellcheck disable=SC2086
			diff <($c < "$t/a" 2>&1) <($c < "$t/b" 2>&1) | head -n 4
			fail=1
		fi
	done
	if grep -q '^ 0x[0-9a-f]* : ' "$t/b"; then
		echo "FAIL: $name $*: a frame with a symbol kept its address:"
		grep -m 2 '^ 0x[0-9a-f]* : ' "$t/b"
		fail=1
	fi
	if ! cmp -s <(grep '^ 0x[0-9a-f]*\( \[.*\]\)\?$' "$t/a" | sort -u) \
		<(grep '^ 0x[0-9a-f]*\( \[.*\]\)\?$' "$t/b" | sort -u); then
		echo "FAIL: $name $*: the frames without a symbol differ with --functions:"
		diff <(grep '^ 0x[0-9a-f]*\( \[.*\]\)\?$' "$t/a" | sort -u) \
			<(grep '^ 0x[0-9a-f]*\( \[.*\]\)\?$' "$t/b" | sort -u) | head -n 4
		fail=1
	fi
	a=$(grep -c '^!' "$t/a" || true)
	b=$(grep -c '^!' "$t/b" || true)
	[ "$b" -le "$a" ] || { echo "FAIL: $name $*: $b records, more than $a"; fail=1; }
	echo "$name $*: $a records, $b with --functions"
}

for d in "$S"/perfdata-*.data; do
	check "$(basename "$d")" "$d"
done
check perfdata-user.data "$S/perfdata-user.data" --pid --weight period
check perfdata-two-events.data "$S/perfdata-two-events.data" --event page-faults --kernel-only
check perfdata-a-g.data "$S/perfdata-a-g.data" --tid --user-only --raw-names --no-demangle
check perfdata-dwarf.data "$S/perfdata-dwarf.data" --inline
for opts in "" "--pid --weight period" "--kernel-only" "--comm --inline --raw-names"; do
	# shellcheck disable=SC2086
	check perf-build-a-g.txt "$t/build.txt" $opts
done
check perf-dd-a-g-ipdso.txt "$S/perf-dd-a-g-ipdso.txt"
check perf-dd-a-g.txt "$S/perf-dd-a-g.txt" --user-only

# a machine's capture: stacks that differ only in addresses are many
a=$(perf2kp "$t/build.txt" 2> /dev/null | grep -c '^!')
b=$(perf2kp --functions "$t/build.txt" 2> /dev/null | grep -c '^!')
[ $((b * 10)) -lt $((a * 9)) ] ||
	{ echo "FAIL: perf-build-a-g.txt: $b records with --functions, not 10% fewer than $a"; fail=1; }

# the option is perf2kp's: the usage names it and an unknown one is refused
perf2kp -h | grep -q -- '--functions' || { echo "FAIL: perf2kp -h has no --functions"; fail=1; }
exit $fail
