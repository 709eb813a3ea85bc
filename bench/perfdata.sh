#!/usr/bin/env bash
# bench/perfdata.sh - perf.data to an inclusive table, against perf's own
# ways there: "perf report --children --stdio" and "perf script |
# inferno-collapse-perf".  Two system-wide captures (>= 100k samples,
# mostly distinct stacks), each made here once, as root, into bench/out/:
#
#   perfdata-bench.data  a build: perf record -a -g -F 4999 for 14 s while
#                        kp's build and clean run three times beside
#                        "find /" (many short-lived processes: compilers)
#   perfdata-check.data  like the issue's capture: perf record -a -g
#                        -F 4999 -e cpu-clock for 30 s while kp's test
#                        suite runs (kp built first; close to how
#                        samples/perf-real-a-g.txt.xz was made)
#
# (or give one: PERFDATA=FILE, and only it is timed).  The commands run
# in $REPEAT rounds (default 5), each once a round, in turn; printed: the
# median seconds, MB/s and samples/s at it, the median CPU time and the
# largest peak RSS of each, then how many times faster each of kp's
# commands is than each peer: the median of the rounds' ratios (each
# round's pair ran back to back, so the machine's drift cancels), with
# the lowest and highest.
set -u
. "$KP_TOP/bench/lib.sh"
mkdir -p "$KP_TOP/bench/out"

# record FILE SECONDS PREP WORK: in a copy of kp's tree, PREP (a shell
# command, not recorded), then perf record -a -g for SECONDS while WORK runs
record() {
	local f=$1 secs=$2 prep=$3 work=$4 tree w
	command -v perf > /dev/null || { echo "skipped: no perf and no PERFDATA"; return 1; }
	tree=$(mktemp -d)
	git -C "$KP_TOP" archive HEAD | tar -x -C "$tree"
	( cd "$tree" && sh -c "$prep" ) > /dev/null 2>&1
	( cd "$tree" && exec setsid sh -c "$work" ) > /dev/null 2>&1 &
	w=$!
	sleep 1
	perf record -q -a -g -F 4999 -e cpu-clock -o "$f.tmp" -- sleep "$secs" > /dev/null 2>&1 ||
		{ echo "skipped: perf record failed (not root?)"; rm -f "$f.tmp"; }
	kill -- -"$w" 2> /dev/null
	wait "$w" 2> /dev/null
	rm -rf "$tree"
	[ -s "$f.tmp" ] && mv "$f.tmp" "$f"
}

# bench FILE: the three ways, timed on FILE in rounds (each command once
# a round, in turn; kp's also with perf2kp --functions: one frame per
# function, the same table from fewer bytes), and each of kp's two
# against each peer round by round
bench() {
	local f=$1 n o kp=() peers=() k p
	n=$(perf2kp "$f" 2> /dev/null | sed -n 's/^# samples: //p')
	echo "capture: $f, $n samples, $(( $(wc -c < "$f") / 1000000 )) MB"
	[ "${n:-0}" -ge 100000 ] || echo "note: fewer than 100k samples"
	bytes=$(wc -c < "$f")
	o="$KP_TOP/bench/out/.perfdata"
	kp=("perf2kp FILE | kp-inclusive" "perf2kp --functions FILE | kp-inclusive")
	peers=("perf report --children --stdio")
	set -- "${kp[0]}" "perf2kp '$f' 2>/dev/null | kp-inclusive" \
		"${kp[1]}" "perf2kp --functions '$f' 2>/dev/null | kp-inclusive" \
		"${peers[0]}" "perf report -i '$f' --children --stdio --sort sym 2>/dev/null"
	if command -v inferno-collapse-perf > /dev/null; then
		peers+=("perf script | inferno-collapse-perf")
		set -- "$@" "${peers[1]}" "perf script -i '$f' 2>/dev/null | inferno-collapse-perf"
	else
		echo "inferno-collapse-perf: not on PATH, its rows left out" \
			"(install: MIRROR_ROOT=DIR bash bench/setup.sh)"
	fi
	rounds "$o" "${REPEAT:-5}" "$@" || return 1
	round_table "$o" "$bytes" "$n"
	for p in "${peers[@]}"; do
		for k in "${kp[@]}"; do
			speedup "$o" "$k" "$p"
		done
	done
}

if [ -n "${PERFDATA:-}" ]; then
	bench "$PERFDATA"
	exit 0
fi
f=$KP_TOP/bench/out/perfdata-bench.data
[ -s "$f" ] || record "$f" 14 true '( for i in 1 2 3; do make -s -j2 all; make -s clean; done ) &
	find / -xdev; wait' || exit 0
bench "$f"
f=$KP_TOP/bench/out/perfdata-check.data
[ -s "$f" ] || record "$f" 30 'make -s -j2 all' 'KP_BUILD=build bash tests/run.sh' || exit 0
bench "$f"
