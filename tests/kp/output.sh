#!/usr/bin/env bash
# -o FILE of kp-flame, kp-pprof and kp-callgrind: the whole file or none
# of it (common/output.c).  A failed write keeps the old file and leaves
# no partial or temporary file; a symbolic link stays a link and its
# target gets the new contents (a link owned by another user is refused);
# permissions of the old file are kept, a new one follows the umask;
# devices are written directly.  And on a closed pipe they end by SIGPIPE
# like every filter (man/kp.5).
set -u
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
. "$KP_TOP/tests/pipe.inc"

# 3000 distinct stacks: each output is far larger than 8 KiB
awk 'BEGIN { for (i = 0; i < 3000; i++)
	printf "!\n 0x%x : leaf%d [kernel]\n 0x%x : mid%d [kernel]\n : main\n\t%d\n", 4096 + i * 16, i, 1048576 + i % 7 * 64, i % 7, i + 1 }' > "$t/big.kp"
printf '!\n : a [kernel]\n\t1\n!\n' > "$t/small.kp"
# 20000 stacks of random names: more than a pipe holds even gzipped
awk 'BEGIN { srand(1); for (i = 0; i < 20000; i++)
	printf "!\n 0x%x : f%d [kernel]\n 0x%x : g%d [kernel]\n\t%d\n", i * 16 + 4096, i, i * 64 + 1048576, int(rand() * 1e6), i + 1 }' > "$t/huge.kp"

for p in kp-flame kp-pprof kp-callgrind; do
	d="$t/$p"
	mkdir "$d"
	"$p" "$t/big.kp" > "$d/want" 2> /dev/null
	# a file size limit, with SIGXFSZ at its default (the process would
	# die) and ignored (write fails with EFBIG)
	for how in default ignored; do
		echo old > "$d/f"
		if [ $how = default ]; then
			( ulimit -f 8; "$p" -o "$d/f" "$t/big.kp" 2> "$d/err" ); st=$?
		else
			( trap '' XFSZ; ulimit -f 8; "$p" -o "$d/f" "$t/big.kp" 2> "$d/err" ); st=$?
		fi
		check "$p: file size limit (SIGXFSZ $how): exit 2" '[ $st -eq 2 ]'
		check "$p: file size limit (SIGXFSZ $how): message" 'grep -q "^$p: write error on $d/f: File too large$" "$d/err"'
		check "$p: file size limit (SIGXFSZ $how): the old file kept" '[ "$(cat "$d/f")" = old ]'
		check "$p: file size limit (SIGXFSZ $how): no temporary file left" '[ "$(ls -A "$d" | sort | tr "\n" " ")" = "err f want " ]'
	done
	# a missing input is fatal before anything is written
	echo old > "$d/f"
	"$p" -o "$d/f" "$t/nosuch.kp" 2> /dev/null; st=$?
	check "$p: missing input: exit 2, the old file kept" '[ $st -eq 2 ] && [ "$(cat "$d/f")" = old ]'
	# success replaces the file, keeping its permission bits
	chmod 640 "$d/f"
	"$p" -o "$d/f" "$t/big.kp" 2> /dev/null; st=$?
	check "$p: -o over an old file: exit 0, the new bytes" '[ $st -eq 0 ] && cmp -s "$d/f" "$d/want"'
	check "$p: -o keeps the old file's mode" '[ "$(stat -c %a "$d/f")" = 640 ]'
	chmod 4755 "$d/f"
	"$p" -o "$d/f" "$t/small.kp" 2> /dev/null
	check "$p: -o keeps the mode but not set-uid" '[ "$(stat -c %a "$d/f")" = 755 ]'
	# a new file follows the umask
	( umask 027; "$p" -o "$d/new" "$t/small.kp" 2> /dev/null )
	check "$p: a new file follows the umask" '[ "$(stat -c %a "$d/new")" = 640 ]'
	# through a symbolic link: the link stays, its target is replaced
	echo old > "$d/target"
	ln -s target "$d/link"
	"$p" -o "$d/link" "$t/big.kp" 2> /dev/null; st=$?
	check "$p: -o LINK: exit 0, the link stays a link" '[ $st -eq 0 ] && [ -L "$d/link" ] && [ "$(readlink "$d/link")" = target ]'
	check "$p: -o LINK: the target has the new bytes" 'cmp -s "$d/target" "$d/want"'
	echo old > "$d/target"
	( ulimit -f 8; "$p" -o "$d/link" "$t/big.kp" 2> /dev/null ); st=$?
	check "$p: -o LINK, failed write: the link and the old target kept" '[ $st -eq 2 ] && [ -L "$d/link" ] && [ "$(cat "$d/target")" = old ]'
	# a link owned by another user (one planted in /tmp) is refused
	if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
		echo old > "$d/victim"
		ln -s victim "$d/planted"
		chown -h nobody "$d/planted"
		"$p" -o "$d/planted" "$t/small.kp" 2> "$d/err"; st=$?
		check "$p: a link owned by another user: exit 2, refused" '[ $st -eq 2 ] && grep -q "symbolic link owned by another user" "$d/err"'
		check "$p: a link owned by another user: its target untouched" '[ "$(cat "$d/victim")" = old ] && [ -L "$d/planted" ]'
	fi
	# devices are written directly and never removed
	"$p" -o /dev/null "$t/small.kp" 2> /dev/null; st=$?
	check "$p: -o /dev/null: exit 0" '[ $st -eq 0 ] && [ -c /dev/null ]'
	if [ -w /dev/full ]; then
		"$p" -o /dev/full "$t/small.kp" 2> "$d/err"; st=$?
		check "$p: -o /dev/full: exit 2, reported, the device kept" '[ $st -eq 2 ] && grep -q "write error" "$d/err" && [ -c /dev/full ]'
	fi
	# a directory, a missing directory
	"$p" -o "$d" "$t/small.kp" 2> /dev/null; st=$?
	check "$p: -o DIRECTORY: exit 2" '[ $st -eq 2 ] && [ -d "$d" ]'
	"$p" -o "$d/no/such/x" "$t/small.kp" 2> "$d/err"; st=$?
	check "$p: -o into a missing directory: exit 2, named" '[ $st -eq 2 ] && grep -q "cannot create $d/no/such/x: No such file or directory" "$d/err"'
	# a closed pipe: SIGPIPE (141), nothing on stderr, as kp-fold
	closed_pipe "$p" "$t/huge.kp" 2> "$d/err"; st=$?
	check "$p into a closed pipe: killed by SIGPIPE (141), nothing on stderr" '[ $st -eq 141 ] && [ ! -s "$d/err" ]'
	(trap '' PIPE; closed_pipe "$p" "$t/huge.kp" 2> "$d/err"); st=$?
	check "$p into a closed pipe, SIGPIPE ignored by the parent: still 141, nothing on stderr" '[ $st -eq 141 ] && [ ! -s "$d/err" ]'
done
exit $fail
