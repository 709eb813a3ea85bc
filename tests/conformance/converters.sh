#!/usr/bin/env bash
# Conformance of perf2kp, dtrace2kp and bpftrace2kp with the peers.
#
# For every perf, DTrace and bpftrace row of $KP_CORPUS/index.tsv:
#
#	CONVERTER [options] < input | kp-fold [options]
#
# must equal the peer's expected folded output, compared as the row's
# "compare" column says (exact, lines, lines-strip-quotes), or print the
# warnings/errors a warn:/error: row asks for.  The peer options map to
# kp's as in map_opts below.  A case where kp deliberately differs is in
# LISTED with its reason; a listed case that passes is a failure too (the
# list must stay true).  No row is skipped silently: a row this script
# cannot map is a failure.  The bpftrace captures in corpus/bpftrace/
# must convert with no skipped line.  Each perf row that passes must pass
# again with perf2kp --functions (one frame per function).
set -u
export LC_ALL=C
C=${KP_CORPUS:-../shared/corpus}
if [ ! -f "$C/index.tsv" ]; then
	echo "skipped: no corpus"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# id (a glob) -> why kp's output differs from the peer's
declare -A LISTED=(
	# --no-aggregate-stacks keeps each sample on its own line in input
	# order; kp merges identical stacks by design (its records may still
	# be kept apart by kp's own tools, but the folded output is merged).
	['fg-pr257/*/no-aggregate-stacks']="kp always merges identical stacks (kp-fold output is sorted and merged)"
	# FlameGraph master drops the last sample of a file without a final
	# blank line (FlameGraph #230); kp counts it, as PR #231 does.
	['fg-master/perf-dd-stacks-01/*']="master drops the last sample (FlameGraph #230); kp keeps it, as PR #231"
	['fg-master/perf-iperf-stacks-pidtid-01/*']="master drops the last sample (FlameGraph #230)"
	['fg-master/perf-java-stacks-01/*']="master drops the last sample (FlameGraph #230)"
	['fg-master/perf-mirageos-stacks-01/*']="master drops the last sample (FlameGraph #230)"
	['fg-master/perf-numa-stacks-01/*']="master drops the last sample (FlameGraph #230)"
	['fg-master/perf-vertx-stacks-01/*']="master drops the last sample (FlameGraph #230)"
	['fg-master/perf-java-faults-01/pid']="stale result: still has the Ljava/ prefixes master's own script removes (corpus README, item 1)"
	['fg-master/perf-java-faults-01/tid']="stale result: still has the Ljava/ prefixes master's own script removes (corpus README, item 1)"
	['fg-master/perf-java-stacks-02/pid']="stale result: still has the Ljava/ prefixes master's own script removes (corpus README, item 1)"
	['fg-master/perf-java-stacks-02/tid']="stale result: still has the Ljava/ prefixes master's own script removes (corpus README, item 1)"
	# A frame printed "7f1e2215d058  (/lib/.../libc-2.15.so)" (no symbol,
	# two blanks): stackcollapse-perf.pl names it " " (one blank), and
	# inferno copies that on purpose; kp cannot hold a blank symbol and
	# names it by its module, [libc-2.15.so].
	['fg-pr231/perf-vertx-stacks-01/*']="a symbol-less frame 'ADDR  (libc-2.15.so)' is named ' ' by the peers, [libc-2.15.so] by kp"
	['inferno/perf-vertx-stacks-01/*']="a symbol-less frame 'ADDR  (libc-2.15.so)' is named ' ' by the peers, [libc-2.15.so] by kp"
	# kp's module for [kernel.kallsyms] and vmlinux files is "kernel"
	# (issue 3, man/kp.5), so an unsymbolized kernel frame folds to
	# [kernel]; the peers print the dso's file name.
	['inferno/cpp-stacks-std-function/*']="unsymbolized kernel frame: kp [kernel], peers [[kernel.kallsyms]]"
	['inferno-guess/cpp-stacks-std-function']="unsymbolized kernel frame: kp [kernel], peers [[kernel.kallsyms]]"
	['generated/speedscope/forks.linux-perf/*']="unsymbolized kernel frame: kp [kernel], peers [[kernel.kallsyms]]"
	['generated/speedscope/simple-with-pid.linux-perf/*']="unsymbolized kernel frame: kp [kernel], peers [[kernel.kallsyms]]"
	['generated/speedscope/system-wide.linux-perf/*']="unsymbolized kernel frame: kp [kernel], peers [[kernel.kallsyms]]"
	['inferno/versioned-vmlinux/kernel']="unsymbolized kernel frame: kp [kernel], inferno [vmlinux-5.4.14-cloudflare-2020.1.11]"
	# inferno rewrites legacy Rust mangling ($LT$, $u7b$, ::h<hash>);
	# kp keeps the names perf printed, as FlameGraph does (the FlameGraph
	# rows of the same input pass).
	['inferno/perf-rust-Yamakaky-dcpu/*']="inferno demangles legacy Rust names; kp keeps perf's names, as FlameGraph (its rows pass)"
	['inferno/single-event/default']="inferno demangles legacy Rust names; kp keeps perf's names, as FlameGraph"
	# The two samples carry different events (cycles:u, cycles); kp keeps
	# the first event only, as stackcollapse-perf.pl does; inferno does
	# not filter when the frame is on the header line.
	['inferno/single-line-stacks/default']="samples of two events (cycles:u, cycles): kp keeps the first event, as stackcollapse-perf.pl does"
	# DTrace
	['fg-dtrace/example/includeoffset']="stackcollapse.pl's leaf-offset trim strips the previous frame's offset when the leaf has none (FlameGraph #202); kp keeps it, as inferno"
	['inferno-dtrace/stack-ustack']="inferno demangles Rust names (drops ::h<hash>); kp keeps the names DTrace printed"
	['inferno-dtrace/rust-names']="inferno demangles legacy Rust names; kp keeps the names DTrace printed"
	['generated/dtrace/freebsd-dtrace_fbt.4-example6-stack-count']="stackcollapse.pl skips the first 3 lines blindly and loses the leaf frame dtrace.ko\`dtrace_dof_create; kp keeps it"
	['generated/dtrace/freebsd-dtrace_mib.4-example1-trace-stack']="a stack with no count line (stack() as a trace action): the script drops it silently, kp names it on stderr and exits 1"
	# bpftrace: stackcollapse-bpftrace.pl keeps bpftrace's decimal
	# offsets (and, in perf mode, the address) in each name, so stacks
	# that differ only in offsets stay apart; kp folds by function.
	# These rows are still checked: the peer's output with the offsets
	# and addresses removed (and the lines merged) must equal kp's.
	['generated/bpftrace/*']="names keep bpftrace's '+DEC' offsets (and perf-mode addresses) in the script's output; kp folds by function (checked with them removed)"
	['generated/bpftrace/biostacks_example']="histogram values: the script emits nothing; kp counts each stack's events (the sum of its buckets)"
	['inferno-historical/*']="needs inferno's inline-counter ELF binary, which is not in the corpus (compiled code)"
)

pass=0 fail=0 listed=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL $1: $2"
	[ -f "$tmp/diff" ] && head -n 8 "$tmp/diff" | sed 's/^/    /'
	rm -f "$tmp/diff"
}

reason_for() {
	local id=$1 pat
	for pat in "${!LISTED[@]}"; do
		# shellcheck disable=SC2053
		[[ $id == $pat ]] && { echo "${LISTED[$pat]}"; return 0; }
	done
	return 1
}

# peer options -> CONV_OPTS and FOLD_OPTS; false if kp has no equivalent
map_opts() {
	local fmt=$1 opts=$2 o
	CONV_OPTS=() FOLD_OPTS=()
	case $fmt in
	perf)
		CONV_OPTS=(--weight period)
		FOLD_OPTS=(--inlined)
		local proc=--comm
		[ "$opts" = "(default)" ] && opts=
		for o in $opts; do
			case $o in
			--pid) proc=--pid ;;
			--tid) proc=--tid ;;
			--kernel) FOLD_OPTS+=(--modules) ;;
			--jit) FOLD_OPTS+=(--jit) ;;
			--all) FOLD_OPTS+=(--all) ;;
			--addrs) FOLD_OPTS+=(--perf-addrs) ;;
			--event-filter=*) CONV_OPTS+=(--event "${o#*=}") ;;
			--no-aggregate-stacks) ;; # listed
			--inline | --context) ;;  # listed
			*) return 1 ;;
			esac
		done
		CONV_OPTS+=("$proc")
		;;
	dtrace)
		FOLD_OPTS=(--backtick --inlined)
		case $opts in
		"(default)") ;;
		--includeoffset | "[edit script: my \$includeoffset = 1]")
			CONV_OPTS=(--offsets)
			FOLD_OPTS+=(--offsets)
			;;
		*) return 1 ;;
		esac
		;;
	bpftrace)
		[ "$opts" = "(default)" ] || return 1
		FOLD_OPTS=(--addrs) # the script keeps unresolved 0xADDR frames
		;;
	*) return 1 ;;
	esac
	return 0
}

conv_for() {
	case $1 in
	perf) echo perf2kp ;;
	dtrace) echo dtrace2kp ;;
	bpftrace) echo bpftrace2kp ;;
	esac
}

# compare $1 (actual) with $2 (expected) the way $3 says
compare() {
	local act=$1 exp=$2 how=$3
	case $how in
	exact)
		diff -u "$exp" "$act" > "$tmp/diff"
		;;
	lines | lines-strip-quotes)
		sed 's/[[:space:]]*$//' "$exp" > "$tmp/exp"
		# a missing final newline does not matter
		[ -s "$tmp/exp" ] && [ -n "$(tail -c 1 "$tmp/exp")" ] && echo >> "$tmp/exp"
		if [ "$how" = lines-strip-quotes ]; then
			tr -d "'\"" < "$act" > "$tmp/act"
		else
			cp "$act" "$tmp/act"
		fi
		diff -u "$tmp/exp" "$tmp/act" > "$tmp/diff"
		;;
	*) return 2 ;;
	esac
}

run_case() {
	local id=$1 fmt=$2 input=$3 expected=$4 opts=$5 how=$6 conv why st
	conv=$(conv_for "$fmt")
	if ! map_opts "$fmt" "$opts"; then
		if why=$(reason_for "$id"); then
			listed=$((listed + 1))
			return
		fi
		bad "$id" "options '$opts' have no kp mapping and the case is not listed"
		return
	fi
	# one converter run per input and option set (rows differ mostly in
	# kp-fold's options)
	local key
	key=$(printf '%s|%s' "$input" "${CONV_OPTS[*]}" | cksum | tr ' ' _)
	if [ ! -f "$tmp/cache.$key.st" ]; then
		case $input in
		*.gz) gzip -dc "$C/$input" > "$tmp/in" ;;
		*) cp "$C/$input" "$tmp/in" ;;
		esac
		"$conv" "${CONV_OPTS[@]}" < "$tmp/in" 2> "$tmp/cache.$key.err" > "$tmp/cache.$key.kp"
		echo $? > "$tmp/cache.$key.st"
	fi
	cp "$tmp/cache.$key.err" "$tmp/err1"
	st=$(cat "$tmp/cache.$key.st")
	kp-fold "${FOLD_OPTS[@]}" < "$tmp/cache.$key.kp" > "$tmp/out" 2> "$tmp/err2"
	local result=pass detail=""
	case $how in
	warn:*)
		# warn:N:TEXT - kp names each odd line once on stderr
		local n=${how#warn:}
		n=${n%%:*}
		local got
		got=$(grep -c "^$conv: <stdin>:[0-9]*: " "$tmp/err1")
		if [ "$got" -ne "$n" ] || { [ "$n" -gt 0 ] && [ $st -ne 1 ]; }; then
			result=fail
			detail="expected $n skipped-line message(s), got $got (exit $st)"
		fi
		;;
	error:*)
		if [ $st -ne 2 ] || [ "$(wc -l < "$tmp/err1")" -ne 1 ]; then
			result=fail
			detail="expected one error line and exit 2, got exit $st"
		fi
		;;
	*)
		if [ $st -ne 0 ]; then
			result=fail
			detail="$conv exit $st: $(head -n 3 "$tmp/err1" | tr '\n' ' ')"
		elif ! compare "$tmp/out" "$C/$expected" "$how"; then
			result=fail
			detail="output differs ($how)"
		fi
		;;
	esac
	# bpftrace rows: compare with the peer's offsets and addresses removed
	if [ "$fmt" = bpftrace ] && [ $result = fail ] && [ "${id##*/}" != biostacks_example ]; then
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); s = ""
			for (i = 1; i <= k; i++) { x = f[i]; sub(/^[0-9a-f]+ /, "", x); sub(/\+[0-9]+$/, "", x)
				s = s (i > 1 ? ";" : "") x }
			c[s] += n } END { for (s in c) print s, c[s] }' "$C/$expected" | sort > "$tmp/norm"
		if sort "$tmp/out" | diff -u "$tmp/norm" - > "$tmp/diff"; then
			listed=$((listed + 1))
			rm -f "$tmp/diff"
		else
			bad "$id" "differs from the peer even with offsets removed"
		fi
		return
	fi
	if why=$(reason_for "$id"); then
		if [ $result = pass ]; then
			bad "$id" "listed ('$why') but passes: take it off the list"
		else
			listed=$((listed + 1))
			rm -f "$tmp/diff"
		fi
		return
	fi
	if [ $result = pass ]; then
		ok
		rm -f "$tmp/diff"
	else
		bad "$id" "$detail"
		return
	fi
	# perf2kp --functions (one frame per function) must fold to the
	# same peer output: it drops only what folding drops
	if [ "$fmt" = perf ] && [ "$how" = "${how#warn:}" ] && [ "$how" = "${how#error:}" ]; then
		case $input in
		*.gz) gzip -dc "$C/$input" > "$tmp/in" ;;
		*) cp "$C/$input" "$tmp/in" ;;
		esac
		perf2kp "${CONV_OPTS[@]}" --functions < "$tmp/in" 2> /dev/null |
			kp-fold "${FOLD_OPTS[@]}" > "$tmp/out" 2> /dev/null
		if compare "$tmp/out" "$C/$expected" "$how"; then
			ok
			rm -f "$tmp/diff"
		else
			bad "$id" "perf2kp --functions: output differs ($how)"
		fi
	fi
}

while IFS=$'\t' read -r id fmt input expected peer commit tool opts how status notes; do
	case $fmt in perf | dtrace | bpftrace) ;; *) continue ;; esac
	[ "$expected" = "-" ] && case $how in warn:* | error:*) ;; *) continue ;; esac
	run_case "$id" "$fmt" "$input" "$expected" "$opts" "$how"
done < <(tail -n +2 "$C/index.tsv")

# local bpftrace captures: no skipped line
for f in "$C"/bpftrace/local/*.txt "$C"/bpftrace/extra/*/*.txt; do
	[ -e "$f" ] || continue
	if bpftrace2kp < "$f" > /dev/null 2> "$tmp/err"; then
		ok
	else
		fail=$((fail + 1))
		echo "FAIL bpftrace2kp ${f#"$C"/}: $(head -n 3 "$tmp/err" | tr '\n' ' ')"
	fi
done

echo "conformance: $pass passed, $listed listed (differences kept on purpose), $fail failed"
for pat in $(printf '%s\n' "${!LISTED[@]}" | sort); do
	echo "  listed $pat: ${LISTED[$pat]}"
done
[ "$fail" -eq 0 ]
