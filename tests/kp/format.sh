#!/usr/bin/env bash
# The kp format and the error conventions, end to end (man/kp.5).
set -u
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
. "$KP_TOP/tests/pipe.inc"

# canonical output is a fixed point: write(read(x)) == x for canonical x
# (an input that is fatal, exit 2, writes nothing: there is no output to
# read again)
for f in "$KP_TOP"/tests/stap2kp/*.in; do
	stap2kp "$f" > "$t/a" 2>/dev/null
	[ $? -eq 2 ] && [ ! -s "$t/a" ] && continue
	stap2kp "$t/a" > "$t/b" 2>/dev/null
	check "round trip $(basename "$f")" 'cmp -s "$t/a" "$t/b"'
done
check "canonical stays byte-identical through stap2kp" \
	'stap2kp "$KP_TOP/tests/stap2kp/seed-variants.out" | cmp -s - "$KP_TOP/tests/stap2kp/seed-variants.out"'

# a 10,000-frame stack and a 1 MiB symbol pass whole
awk 'BEGIN { print "!"; for (i = 0; i < 10000; i++) printf " 0x%016x : f%d+0x1/0x10 [kernel]\n", 4096 + i, i; print "\t3"; print "!" }' > "$t/deep"
stap2kp "$t/deep" > "$t/deep.kp"; st=$?
check "10,000-frame stack: exit 0" '[ $st -eq 0 ]'
check "10,000-frame stack: 10,000 frames out" '[ "$(grep -c " : f" "$t/deep.kp")" -eq 10000 ]'
check "10,000-frame stack: identical after a round trip" 'cmp -s "$t/deep" "$t/deep.kp"'
kp-fold "$t/deep" > "$t/deep.folded"
check "10,000-frame stack folds to one line of 10,000 names" \
	'[ "$(tr ";" "\n" < "$t/deep.folded" | wc -l)" -eq 10000 ] && grep -q "^f9999;f9998;.*;f1;f0 3$" "$t/deep.folded"'
head -c 1048576 /dev/zero | tr '\0' 'x' > "$t/sym"
{ echo "!"; printf ' 0xffffffff81000000 : '; cat "$t/sym"; printf '+0x1/0x2 [kernel]\n\t5\n!\n'; } > "$t/big"
stap2kp "$t/big" > "$t/big.kp"; st=$?
check "1 MiB symbol: exit 0 and byte-identical" '[ $st -eq 0 ] && cmp -s "$t/big" "$t/big.kp"'
check "1 MiB symbol: folded" '[ "$(kp-fold "$t/big" | wc -c)" -eq $((1048576 + 3)) ]'

# write errors: a full disk is reported (exit 2); a closed pipe ends quietly
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "!\n 0x%016x : f%d+0x1/0x10 [kernel]\n\t1\n", 4096 + i, i }' > "$t/many"
kp-fold "$t/many" > /dev/full 2> "$t/err"; st=$?
check "kp-fold > /dev/full: exit 2" '[ $st -eq 2 ]'
check "kp-fold > /dev/full: message" 'grep -q "^kp-fold: write error on <stdout>: No space left on device$" "$t/err"'
stap2kp "$t/many" > /dev/full 2> "$t/err"; st=$?
check "stap2kp > /dev/full: exit 2 and message" '[ $st -eq 2 ] && grep -q "write error" "$t/err"'
closed_pipe kp-fold "$t/many" 2> "$t/err"; st=$?
check "kp-fold into a closed pipe (as after | head -1): killed by SIGPIPE (141), nothing on stderr" '[ $st -eq 141 ] && [ ! -s "$t/err" ]'
(trap '' PIPE; closed_pipe kp-fold "$t/many" 2> "$t/err"); st=$?
check "SIGPIPE ignored by the parent: kp restores it and still ends quietly" '[ $st -eq 141 ] && [ ! -s "$t/err" ]'

# opening, usage and help
kp-fold "$t/no-such-file" > /dev/null 2> "$t/err"; st=$?
check "missing file: exit 2" '[ $st -eq 2 ]'
check "missing file: message" 'grep -q "^kp-fold: cannot open $t/no-such-file: No such file or directory$" "$t/err"'
for p in kp-fold stap2kp; do
	$p --no-such-option < /dev/null > /dev/null 2> "$t/err"; st=$?
	check "$p: unknown option: exit 64" '[ $st -eq 64 ] && grep -q "^usage: $p" "$t/err"'
	$p -h > "$t/out" 2> "$t/err"; st=$?
	check "$p -h: usage on stdout, exit 0" '[ $st -eq 0 ] && grep -q "^usage: $p" "$t/out" && [ ! -s "$t/err" ]'
	$p --help > "$t/out2"
	check "$p --help is -h" 'cmp -s "$t/out" "$t/out2"'
done

# two inputs: counts of identical stacks add across files
printf '!\n 0xffffffff81000000 : a+0x1/0x2 [kernel]\n\t2\n!\n' > "$t/one"
check "two files merge" '[ "$(kp-fold "$t/one" "$t/one")" = "a 4" ]'
check "two files merge (stap2kp)" '[ "$(stap2kp "$t/one" - < "$t/one" | grep -c "^	4$")" -eq 1 ]'

# metadata passes through once
printf '# event: cpu-clock\n!\n 0x1 : a\n\t1\n!\n' > "$t/m"
check "metadata passes through, deduplicated" '[ "$(stap2kp "$t/m" "$t/m" | grep -c "^# event: cpu-clock$")" -eq 1 ]'
exit $fail
