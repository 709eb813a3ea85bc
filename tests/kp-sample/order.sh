#!/bin/bash
# The side-band records of different CPUs are taken in time order, so a
# process is named by its last exec even when its fork, its exec and its
# exit are read from different CPUs' rings.  Pinned, so that it happens
# every run: sh, on CPU 1, forks a child that execs taskset there, and
# taskset moves to CPU 0 and execs dd, which exits there.  The fork and
# the first exec are in CPU 1's ring, dd's exec and exit in CPU 0's, read
# first.  Taken ring by ring, all of dd's samples were named taskset
# (the cause of CI's kp-sample/command.sh failures, where all of them
# were named sh: a child run on the other CPU from its parent).
. "$(dirname "$0")/lib.inc"
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs; this machine has $NCPU"
command -v taskset > /dev/null || skip "no taskset(1)"
taskset -c 0,1 true 2> /dev/null || skip "CPUs 0 and 1 are not both ours"

dd='taskset -c 0 dd if=/dev/zero of=/dev/null bs=4k count=100000 2>/dev/null'
for run in 1 2 3; do
	kp-sample -e cpu-clock --pid taskset -c 1 sh -c "$dd" > "$T/out" 2> "$T/err" ||
		fail "run $run: exit $?: $(cat "$T/err")"
	roots "$T/out" | sort | uniq -c > "$T/roots"
	cat "$T/roots"
	grep -q ' : dd-[0-9]*$' "$T/roots" || fail "run $run: no samples named dd"
	# taskset's own (a sample in its millisecond, read before dd's exec)
	# is named taskset
	grep -v -e ' : dd-[0-9]*$' -e ' : sh-[0-9]*$' -e ' : taskset-[0-9]*$' "$T/roots" |
		grep -q . && fail "run $run: samples of no program of the command"
done
# the same with --comm, and with --user (whose mappings come in order too)
kp-sample -e cpu-clock --comm --user taskset -c 1 sh -c "$dd" > "$T/out" 2> "$T/err" ||
	fail "--comm --user: exit $?: $(cat "$T/err")"
roots "$T/out" | sort | uniq -c > "$T/roots"
cat "$T/roots"
grep -q ' : dd$' "$T/roots" || fail "--comm --user: no samples named dd"
grep -v -e ' : dd$' -e ' : sh$' -e ' : taskset$' "$T/roots" | grep -q . &&
	fail "--comm --user: samples of no program of the command"
echo ok
