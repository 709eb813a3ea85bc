#!/usr/bin/env bash
# golden.sh - kp-addr2sym golden cases that need symbol files: each
# cases/NAME.in runs with the options in cases/NAME.args (one line, paths
# relative to cases/), from a file and from stdin, and must give
# NAME.out, NAME.err (stderr, input named <stdin>; none: empty) and
# NAME.status (default 0).  KP_BLESS=1 rewrites the expected files.
set -u
cd "$(dirname "$0")/cases" || exit 2
export PATH="$KP_BIN:$PATH"
prog=kp-addr2sym
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for in in *.in; do
	c=${in%.in}
	args=()
	[ -f "$c.args" ] && read -r -a args < "$c.args"
	want=0
	[ -f "$c.status" ] && want=$(cat "$c.status")
	for how in file stdin; do
		if [ $how = file ]; then
			"$prog" "${args[@]}" "$in" > "$tmp/out" 2> "$tmp/err.raw"
			st=$?
			sed "s|$in|<stdin>|g" "$tmp/err.raw" > "$tmp/err"
		else
			"$prog" "${args[@]}" < "$in" > "$tmp/out" 2> "$tmp/err"
			st=$?
		fi
		n=$((n + 1))
		if [ -n "${KP_BLESS:-}" ] && [ $how = stdin ]; then
			cp "$tmp/out" "$c.out"
			if [ -s "$tmp/err" ]; then cp "$tmp/err" "$c.err"; else rm -f "$c.err"; fi
			if [ $st -ne 0 ]; then echo $st > "$c.status"; else rm -f "$c.status"; fi
			continue
		fi
		errf=/dev/null
		[ -f "$c.err" ] && errf=$c.err
		if ! diff -u "$c.out" "$tmp/out" || ! diff -u "$errf" "$tmp/err" ||
			[ "$st" -ne "$want" ]; then
			echo "FAIL $c ($how): exit $st, expected $want"
			fail=$((fail + 1))
		fi
	done
done
echo "$n runs, $fail failed"
[ $fail -eq 0 ]
