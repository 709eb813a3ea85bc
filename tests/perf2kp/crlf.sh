#!/usr/bin/env bash
# perf2kp reads a frame line it has read before as that line's record,
# looked up ahead of the line reader by the line's exact text up to its
# "\n": a line ending in "\r\n" never is one, and is read by the line
# reader and parsed (then found by its text without the "\r").  CRLF
# text has no empty line ("\n\n") to cut it in chunks at, so it is read
# on one thread too.  The two must give the same bytes, exit status and
# messages (line numbers included) for every perf input here and in the
# corpus, under each option that changes what a line makes.  Also: the
# same frame lines under two processes are two stacks, and weights are
# summed per sample.
set -u
C=$KP_CORPUS
S=$KP_TOP/samples
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
n=0

inputs=("$S"/perf-*.txt "$S"/perf-*.script "$KP_TOP"/tests/perf2kp/*.in)
if [ -f "$C/index.tsv" ]; then
	while IFS= read -r f; do
		inputs+=("$C/$f")
	done < <(awk -F'\t' '$2 == "perf" { print $3 }' "$C/index.tsv" | sort -u)
else
	echo "corpus: skipped: no corpus"
fi

for f in "${inputs[@]}"; do
	[ -f "$f" ] || continue
	# inputs that already hold a CR are not comparable this way
	grep -q $'\r' "$f" && continue
	sed 's/$/\r/' "$f" > "$t/crlf"
	# a last line without its newline stays without one
	[ "$(tail -c 1 "$f" | wc -l)" -eq 0 ] && [ -s "$f" ] && truncate -s -1 "$t/crlf"
	for opts in "" "--pid" "--tid --weight period" "--comm --kernel-only" \
		"--user-only --raw-names --inline"; do
		# shellcheck disable=SC2086
		perf2kp $opts "$f" > "$t/a" 2> "$t/a.err"; sa=$?
		# shellcheck disable=SC2086
		perf2kp $opts "$t/crlf" > "$t/b" 2> "$t/b.err"; sb=$?
		sed -i "s|$t/crlf|FILE|" "$t/b.err"
		sed -i "s|$f|FILE|" "$t/a.err"
		n=$((n + 1))
		if [ $sa -ne $sb ] || ! cmp -s "$t/a" "$t/b" || ! cmp -s "$t/a.err" "$t/b.err"; then
			echo "FAILED: $f $opts: LF and CRLF differ (exit $sa, $sb)"
			diff "$t/a" "$t/b" | head -n 5
			diff "$t/a.err" "$t/b.err" | head -n 5
			fail=1
		fi
	done
done
# a real capture whose stacks are mostly distinct, under many processes
if [ -f "$S/perf-build-a-g.txt.xz" ]; then
	xz -dc "$S/perf-build-a-g.txt.xz" > "$t/build"
	sed 's/$/\r/' "$t/build" > "$t/crlf"
	for opts in "" "--pid --weight period"; do
		# shellcheck disable=SC2086
		perf2kp $opts "$t/build" > "$t/a" 2> "$t/a.err"; sa=$?
		# shellcheck disable=SC2086
		perf2kp $opts "$t/crlf" > "$t/b" 2> "$t/b.err"; sb=$?
		n=$((n + 1))
		if [ $sa -ne 0 ] || [ $sb -ne 0 ] || ! cmp -s "$t/a" "$t/b"; then
			echo "FAILED: perf-build-a-g $opts: LF and CRLF differ (exit $sa, $sb)"
			fail=1
		fi
	done
fi
# a capture whose stacks repeat (perf-dd-a-g, 589 samples, 30 times):
# every line a record's after its first sighting, an odd one after them
if [ -f "$S/perf-dd-a-g.txt" ]; then
	for i in $(seq 30); do cat "$S/perf-dd-a-g.txt"; done > "$t/rep"
	echo "not a header" >> "$t/rep"
	cat "$S/perf-dd-a-g.txt" >> "$t/rep"
	sed 's/$/\r/' "$t/rep" > "$t/crlf"
	perf2kp "$t/rep" > "$t/a" 2> "$t/a.err"; sa=$?
	perf2kp "$t/crlf" > "$t/b" 2> "$t/b.err"; sb=$?
	sed -i "s|$t/crlf|FILE|" "$t/b.err"
	sed -i "s|$t/rep|FILE|" "$t/a.err"
	n=$((n + 1))
	if [ $sa -ne 1 ] || [ $sb -ne 1 ] || ! cmp -s "$t/a" "$t/b" ||
		! cmp -s "$t/a.err" "$t/b.err" || ! grep -q ':[0-9]*: not a sample header' "$t/a.err"; then
		echo "FAILED: perf-dd-a-g x30: LF and CRLF differ (exit $sa, $sb)"
		cat "$t/a.err" "$t/b.err" | head -n 4
		fail=1
	fi
fi
echo "$n conversions compared"
[ $n -ge 100 ] || { echo "FAILED: only $n conversions"; fail=1; }

# the same frame lines under two processes, and weights per sample
cat > "$t/two" << 'EOF'
a 1 [000] 1.000001: 10 cpu-clock:
	ffffffff81000010 f+0x10 ([kernel.kallsyms])
	ffffffff81000020 g+0x20 ([kernel.kallsyms])

b 2 [000] 1.000002: 20 cpu-clock:
	ffffffff81000010 f+0x10 ([kernel.kallsyms])
	ffffffff81000020 g+0x20 ([kernel.kallsyms])

a 1 [000] 1.000003: 30 cpu-clock:
	ffffffff81000010 f+0x10 ([kernel.kallsyms])
	ffffffff81000020 g+0x20 ([kernel.kallsyms])

b 2 [001] 1.000004: 40 cpu-clock:
	ffffffff81000010 f+0x10 ([kernel.kallsyms])
	ffffffff81000020 g+0x20 ([kernel.kallsyms])

EOF
perf2kp --comm --weight period "$t/two" | kp-fold > "$t/out"
printf 'a;g;f 40\nb;g;f 60\n' > "$t/want"
if cmp -s "$t/out" "$t/want"; then
	echo "ok: the same lines counted under each process, weights per sample"
else
	echo "FAILED: two processes:"; cat "$t/out"; fail=1
fi
# line numbers after lines read ahead: the odd line is line 17
{ cat "$t/two"; echo "not a header"; } > "$t/three"
perf2kp "$t/three" > /dev/null 2> "$t/err"; st=$?
if [ $st -eq 1 ] && grep -q "^perf2kp: $t/three:17: not a sample header" "$t/err"; then
	echo "ok: the line after four samples read ahead is named as line 17"
else
	echo "FAILED: exit $st, message: $(cat "$t/err")"; fail=1
fi
exit $fail
