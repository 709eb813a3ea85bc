#!/usr/bin/env bash
# tests/run.sh - kp's test runner.  Ends with the line "N passed, N failed".
#
#   golden   tests/<prog>/<case>.in with <case>.out, and optional
#            <case>.args (options), <case>.err (expected stderr, naming the
#            input "<stdin>") and <case>.status (expected exit status,
#            default 0).  Each case runs twice: file argument and stdin.
#            Instead of <case>.in, <case>.from may name a fixture that
#            many cases share (a path below tests/, e.g. fixtures/grep.kp).
#   scripts  tests/<dir>/*.sh: exit 0 pass, 77 skip, anything else fail.
#            They get KP_BIN (the programs), KP_TOP (the source tree),
#            KP_BUILD and KP_CORPUS (../shared/corpus, may be absent).
#   unit     $KP_BUILD/tests/*: C unit tests of common/.
#   replay   $KP_BUILD/fuzz-replay/<target> on tests/fuzz/corpus/<target>/*.
#
# KP_BLESS=1 rewrites the .out/.err/.status of golden cases from the
# current output (review the diff before committing).  Arguments filter
# the cases by substring.
set -u
export LC_ALL=C
KP_TOP=$(cd "$(dirname "$0")/.." && pwd)
KP_BUILD=${KP_BUILD:-build}
case "$KP_BUILD" in /*) ;; *) KP_BUILD="$KP_TOP/$KP_BUILD" ;; esac
KP_BIN="$KP_BUILD/bin"
KP_CORPUS=${KP_CORPUS:-$KP_TOP/../shared/corpus}
export KP_TOP KP_BUILD KP_BIN KP_CORPUS
export PATH="$KP_BIN:$PATH"

pass=0 fail=0 skip=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
filter=("$@")

selected() {
	[ ${#filter[@]} -eq 0 ] && return 0
	local f
	for f in "${filter[@]}"; do
		case "$1" in *"$f"*) return 0 ;; esac
	done
	return 1
}

ok() { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | head -40; }
skipped() { skip=$((skip + 1)); echo "SKIP $1${2:+: $2}"; }

# one run of a golden case; $4 is "file" or "stdin"
golden_run() {
	local prog=$1 case=$2 how=$4 name
	name="$prog/$(basename "$case") ($how)"
	local args=() want_status=0 status input="$case.in"
	[ -f "$case.from" ] && input="$KP_TOP/tests/$(cat "$case.from")"
	[ -f "$case.args" ] && read -r -a args < "$case.args"
	[ -f "$case.status" ] && want_status=$(cat "$case.status")
	if [ "$how" = file ]; then
		"$KP_BIN/$prog" "${args[@]}" "$input" > "$tmp/out" 2> "$tmp/err.raw"
		status=$?
		sed "s|$input|<stdin>|g" "$tmp/err.raw" > "$tmp/err"
	else
		"$KP_BIN/$prog" "${args[@]}" < "$input" > "$tmp/out" 2> "$tmp/err"
		status=$?
	fi
	if [ -n "${KP_BLESS:-}" ] && [ "$how" = stdin ]; then
		cp "$tmp/out" "$case.out"
		if [ -s "$tmp/err" ]; then cp "$tmp/err" "$case.err"; else rm -f "$case.err"; fi
		if [ "$status" -ne 0 ]; then echo "$status" > "$case.status"; else rm -f "$case.status"; fi
		ok "$name (blessed)"
		return
	fi
	{
		diff -u "$case.out" "$tmp/out" > "$tmp/d1" 2>&1; d1=$?
		if [ -f "$case.err" ]; then diff -u "$case.err" "$tmp/err" > "$tmp/d2" 2>&1; d2=$?
		else diff -u /dev/null "$tmp/err" > "$tmp/d2" 2>&1; d2=$?; fi
	}
	if [ "$d1" -eq 0 ] && [ "$d2" -eq 0 ] && [ "$status" -eq "$want_status" ]; then
		ok "$name"
	else
		{ cat "$tmp/d1" "$tmp/d2"; echo "exit status $status, expected $want_status"; } > "$tmp/why"
		bad "$name" "$tmp/why"
	fi
}

# golden cases
for dir in "$KP_TOP"/tests/*/; do
	prog=$(basename "$dir")
	for in in "$dir"*.in "$dir"*.from; do
		[ -e "$in" ] || continue
		case=${in%.*}
		selected "$prog/$(basename "$case")" || continue
		if [ ! -x "$KP_BIN/$prog" ]; then
			skipped "$prog/$(basename "$case")" "no program $prog"
			continue
		fi
		golden_run "$prog" "$case" - file
		golden_run "$prog" "$case" - stdin
	done
done

# script tests
for t in "$KP_TOP"/tests/*/*.sh; do
	[ -e "$t" ] || continue
	name=${t#"$KP_TOP"/tests/}
	case "$name" in fuzz/run-fuzz.sh) continue ;; esac
	selected "$name" || continue
	bash "$t" > "$tmp/log" 2>&1
	st=$?
	if [ $st -eq 0 ]; then ok "$name"
	elif [ $st -eq 77 ]; then skipped "$name" "$(tail -n 1 "$tmp/log")"
	else bad "$name" "$tmp/log"; fi
done

# unit tests
for t in "$KP_BUILD"/tests/*; do
	[ -x "$t" ] || continue
	name="unit/$(basename "$t")"
	selected "$name" || continue
	if "$t" > "$tmp/log" 2>&1; then ok "$name"; else bad "$name" "$tmp/log"; fi
done

# saved fuzz inputs, replayed by plain builds of the fuzz targets
for t in "$KP_BUILD"/fuzz-replay/*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	name="fuzz-replay/$n"
	selected "$name" || continue
	d="$KP_TOP/tests/fuzz/corpus/$n"
	if [ ! -d "$d" ]; then skipped "$name" "no saved inputs"; continue; fi
	if "$t" "$d"/* > "$tmp/log" 2>&1; then ok "$name"; else bad "$name" "$tmp/log"; fi
done

echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
