#!/usr/bin/env bash
# Every filter gives a pipe on its standard input or output 1 MiB of
# room (kp_init, common/util.c), not Linux's 64 KiB: one that writes tens
# of MB into the next stops for it 16 times less often.  Asked of the
# pipe by its other end once all has gone through (F_GETPIPE_SZ): the
# filter set it before it read or wrote a byte.  Where the limit for
# everyone is lower (/proc/sys/fs/pipe-max-size) and we are not root,
# the pipe keeps what it had; so do files and terminals.
set -u
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: '$3', expected '$2'"; fail=1; fi; }

want=1048576
max=$(cat /proc/sys/fs/pipe-max-size 2> /dev/null || echo 0)
if [ "$(id -u)" != 0 ] && [ "$max" -lt "$want" ]; then
	echo "skipped: pipe-max-size $max and not root"
	exit 77
fi
# 2000 distinct stacks: 200 KB of kp, more than a 64 KiB pipe holds
awk 'BEGIN { for (i = 0; i < 2000; i++)
	printf "!\n 0x%x : leaf%d [kernel]\n : mid%d [kernel]\n : main\n\t%d\n", 4096 + i * 16, i, i % 7, i + 1 }' > "$t/big.kp"

# the pipe a filter writes to, as its reader sees it after the last byte
size_of_stdin='import fcntl, sys; sys.stdin.buffer.read(); print(fcntl.fcntl(0, 1032))'
# the pipe a filter reads from, as its writer sees it after writing all
# (the writes end only once the filter reads, after its kp_init)
write_then_size='import fcntl, sys; sys.stdout.buffer.write(open(sys.argv[1], "rb").read()); sys.stdout.flush(); print(fcntl.fcntl(1, 1032), file=sys.stderr)'

for p in kp-fold kp-grep perf2kp; do
	case $p in
	kp-grep) args=(main) ;;
	*) args=() ;;
	esac
	in=$t/big.kp
	[ $p = perf2kp ] && in=$KP_TOP/samples/perf-dd-a-g.txt
	got=$("$p" "${args[@]}" < "$in" 2> /dev/null | python3 -c "$size_of_stdin")
	check "$p: the pipe it writes to has 1 MiB" "$want" "$got"
	got=$(python3 -c "$write_then_size" "$in" 2>&1 > >("$p" "${args[@]}" > /dev/null 2>&1))
	check "$p: the pipe it reads from has 1 MiB" "$want" "$got"
done
# a pipe no kp filter touches keeps the kernel's size (the check above
# is not the system's default)
# shellcheck disable=SC2002 # (cat: a pipe into python, not a file)
got=$(cat "$t/big.kp" | python3 -c "$size_of_stdin")
check "cat | python: the kernel's default, not 1 MiB" "yes" "$([ "$got" != "$want" ] && echo yes)"
# a file as output: nothing to set, no error, the same bytes
kp-fold "$t/big.kp" > "$t/a.txt" 2> "$t/a.err"
check "kp-fold > FILE: exit 0, nothing said" "0:" "$?:$(cat "$t/a.err")"
check "kp-fold > FILE and through a pipe: the same bytes" \
	"$(md5sum < "$t/a.txt")" "$(kp-fold "$t/big.kp" | cat | md5sum)"

# The reader of a filter's pipe sees its end after the filter's last
# write, not when the filter exits (kp_close_output): fd 1 is pointed at
# /dev/null there, after every byte went out and before exit_group; the
# memory freed and the pages given back then overlap the reader's end.
# A file is left as it is.  (LeakSanitizer cannot run under ptrace: the
# sanitized build's leaks are checked everywhere else.)
if command -v strace > /dev/null; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
	for p in kp-fold perf2kp; do
		in=$t/big.kp
		[ $p = perf2kp ] && in=$KP_TOP/samples/perf-dd-a-g.txt
		strace -f -qq -e trace=dup2 -o "$t/tr" "$p" < "$in" > "$t/file" 2> /dev/null
		check "$p > FILE: exit 0, fd 1 left as it is" "0 0" "$? $(grep -c 'dup2(' "$t/tr")"
		strace -f -qq -e trace=write,dup2,exit_group -o "$t/tr" \
			"$p" < "$in" 2> /dev/null | cat > "$t/out"
		check "$p | cat: exit 0" "0" "${PIPESTATUS[0]}"
		# the syscalls on fd 1, in order: W (a write), D (the dup2), E
		seq=$(awk '/^[0-9]+ +write\(1,/ { print "W"; next }
			/^[0-9]+ +dup2\([0-9]+, 1\)/ { print "D"; next }
			/exit_group/ { print "E" }' "$t/tr" | uniq | tr -d '\n')
		check "$p | cat: fd 1 to /dev/null after its last write, before exit" "WDE" "$seq"
		check "$p | cat: every byte through" "$(md5sum < "$t/file")" "$(md5sum < "$t/out")"
	done
else
	echo "skipped: no strace (the pipe's end before exit)"
fi
exit $fail
