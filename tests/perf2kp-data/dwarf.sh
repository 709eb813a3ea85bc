#!/usr/bin/env bash
# --call-graph dwarf: perf2kp unwinds each sample's user stack copy
# (REGS_USER + STACK_USER) with libdw, and its stacks are perf's own.  On
# samples/perfdata-dwarf.data and perfdata-dwarf-python.data (see their
# .how: a perl command with dwarf,4096; /usr/bin/python3 with -z and
# dwarf,8192, some of whose stacks are deeper than the copy, which perf
# ends with an "[unknown]" frame), checked against what perf printed
# when they were recorded:
#  - "perf2kp FILE | kp-fold" equals "perf script -i FILE | perf2kp |
#    kp-fold" (the .script.xz), under the default names, --raw-names,
#    --inline (with kp-fold --inlined), --kernel-only, --user-only and
#    --weight period: the same frames, the return addresses named at
#    pc - 1 and the inlined functions perf adds (from libc6-dbg's DWARF);
#  - "perf2kp --raw-names --weight period FILE | kp-inclusive" (perf's
#    names as they are) gives every symbol of 0.5% or more in "perf
#    report --children" (the .children.xz) its inclusive percentage
#    within 0.01 points, and its exclusive one too, except the one way
#    kp and perf report count self differently: a sample whose IP is in
#    inlined code has perf's self on the symbol of its IP, the function
#    the code is inlined into, kp's on the innermost inlined function (as
#    perf script's own stacks read through perf2kp give it; where perf
#    names that function's frame by DWARF alone, the symbol has perf's
#    self and no kp row).  Those differences are checked to balance;
#  - REGS_USER and STACK_USER of impossible sizes are refused by name.
# The captures' binaries (perl, python3.11, libc, libm) must be those of
# the capture (their build-ids: else that capture is skipped, and the
# test if both are), and libc's debug file must be installed.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
libc=/usr/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" 2> /dev/null | sed -n 's/.*Build ID: //p')
[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	{ echo "skipped: no debug file for $libc (libc6-dbg), whose DWARF names perf's inlined frames"; exit 77; }
status=0 compared=0

compare() { # capture, options...
	local d=$1 fold=kp-fold; shift
	case " $* " in *" --inline "*) fold="kp-fold --inlined" ;; esac
	perf2kp --kallsyms "$t/kallsyms" "$@" "$d.data" | $fold | sort > "$t/data.fold"
	perf2kp "$@" "$t/script" 2> /dev/null | $fold | sort > "$t/text.fold"
	if cmp -s "$t/text.fold" "$t/data.fold"; then
		echo "ok: $* $(wc -l < "$t/data.fold") stacks equal"
	else
		echo "FAIL: $*: stacks differ"; diff "$t/text.fold" "$t/data.fold" | cut -c1-300 | head; status=1
	fi
}

for capture in dwarf dwarf-python; do
d="$S/perfdata-$capture"
echo "== $capture"
perf2kp --kallsyms "$t/kallsyms" "$d.data" 2> "$t/err" > "$t/data.kp"
if grep -q "it had when sampled\|No such file" "$t/err"; then
	echo "skipped: a binary of the capture changed since it was made:"
	cat "$t/err"; continue
fi
compared=$((compared + 1))
want "no message on stderr" "" "$(cat "$t/err")"
xz -dc "$d.script.xz" > "$t/script"
compare "$d"
compare "$d" --raw-names
compare "$d" --inline
compare "$d" --kernel-only
compare "$d" --user-only
compare "$d" --weight period
# the user stacks are whole: as many samples as perf's reach _start, and
# the deepest stack has as many frames
perf2kp --kallsyms "$t/kallsyms" "$d.data" | kp-fold > "$t/fold"
want "samples reaching _start, as perf script's" \
	"$(awk 'BEGIN { RS = "" } { n = split($0, l, "\n"); if (l[n] ~ / _start\+/) k++ } END { print k + 0 }' "$t/script")" \
	"$(awk '/^_start;/ { n += $NF } END { print n + 0 }' "$t/fold")"
want "deepest stack's frames, as perf script's" \
	"$(awk 'BEGIN { RS = "" } { if (split($0, l, "\n") - 1 > m) m = split($0, l, "\n") - 1 } END { print m }' "$t/script")" \
	"$(awk '{ n = split($1, f, ";"); if (n > m) m = n } END { print m }' "$t/fold")"

# perf report --children
perf2kp --kallsyms "$t/kallsyms" --raw-names --weight period "$d.data" | kp-inclusive --format tsv > "$t/kp.tsv"
xz -dc "$d.children.xz" | awk '/^ +[0-9.]+% +[0-9.]+% +\[.\] / {
	name = $0; sub(/^ +[0-9.]+% +[0-9.]+% +\[.\] /, "", name)
	sub(/ +- +- *$/, "", name); sub(/ +$/, "", name)
	inl = sub(/ \(inlined\)$/, "", name)
	sub(/%/, "", $1); sub(/%/, "", $2)
	print $1 "\t" $2 "\t" name "\t" inl }' > "$t/children.tsv"
awk -F '\t' -v kp="$t/kp.tsv" '
function unresolved(n) { return n ~ /^0x[0-9a-f]+$/ }
function off(a, b) { d = a - b; if (d < 0) d = -d; return d > 0.01 }
BEGIN {
	while ((getline l < kp) > 0) {
		split(l, f, "\t")
		if (l ~ /^#/ || f[1] == "inclusive_pct") continue
		incl[f[5]] = f[1]; excl[f[5]] = f[3]
	}
}
unresolved($3) { skipped++; next }
{ np[$3]++ }
np[$3] > 1 { print "two perf rows of " $3 ": not compared"; dup++; next }
{
	# the self of inlined code: kp gives it to the inlined function
	# (perf 0), perf to the symbol of the IP, the function it is
	# inlined into (kp less, or none when perf names that frame by
	# DWARF alone: unlink_chunk (inlined) in unlink_chunk.constprop.0)
	if (!($3 in incl)) {
		if ($1 == $2) { outer += $2; nouter++; next }
		if ($1 >= 0.5) { print "missing in kp-inclusive: " $3; bad++ }
		next
	}
	# (perf rounds to 0.01: a row differs when past half of that)
	if ($4 && $2 == 0) { if (excl[$3] > 0.005) { inlined += excl[$3]; ninl++ } }
	else if (excl[$3] < $2 - 0.005) { outer += $2 - excl[$3]; nouter++ }
	if ($1 < 0.5) next
	n++
	if (off(incl[$3], $1) || (!($4 && $2 == 0) && excl[$3] > $2 + 0.01)) {
		printf "%s: perf %s%% %s%%, kp %s%% %s%%\n", $3, $1, $2, incl[$3], excl[$3]; bad++
	}
}
END {
	printf "%d symbols of 0.5%% or more compared (%d unresolved perf rows left out); self of inlined code: %.4f%% on %d inlined functions in kp, %.2f%% on %d functions they are inlined into in perf; %d bad\n", n, skipped, inlined, ninl, outer, nouter, bad
	# perf rounds each row to 0.01: within half of that a row
	d = inlined - outer; if (d < 0) d = -d
	if (d > 0.005 * nouter + 0.0001) { print "the self of inlined code does not balance"; bad++ }
	if (dup) { print dup " names in two perf rows"; bad++ }
	if (n < 40) { print "too few rows compared"; bad++ }
	exit bad > 0
}' "$t/children.tsv" || status=1
want "total" "$(xz -dc "$d.children.xz" | sed -n 's/^# Event count (approx.): //p')" "$(sed -n 's/^# total: //p' "$t/kp.tsv")"
done
[ $compared -gt 0 ] || { echo "skipped: every capture's binaries changed"; exit 77; }

# impossible REGS_USER and STACK_USER: the first sample of perfdata-dwarf
# (offset 7544: REGS_USER abi at +56, STACK_USER size at +224, its
# dyn_size at +4328) changed in one field
d="$S/perfdata-dwarf" at=7544
field() { python3 -c 'import struct, sys; print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(), int(sys.argv[2]))[0])' "$d.data" $((at + $1)); }
want "the first sample's abi, stack size, dyn_size" "2 4096 4096" "$(field 56) $(field 224) $(field 4328)"
bad() { # field offset, value, message
	python3 -c 'import struct, sys; b = bytearray(open(sys.argv[1], "rb").read()); struct.pack_into("<Q", b, int(sys.argv[2]), int(sys.argv[3])); open(sys.argv[4], "wb").write(b)' \
		"$d.data" $((at + $1)) "$2" "$t/bad.data"
	rc=0; perf2kp "$t/bad.data" > /dev/null 2> "$t/bad.err" || rc=$?
	want "field +$1 = $2: exit" 2 $rc
	want "field +$1 = $2: message" "perf2kp: $t/bad.data: offset $at: $3" "$(cat "$t/bad.err")"
}
bad 56 7 "REGS_USER abi 7 is none of perf's (0 none, 1 32-bit, 2 64-bit)"
bad 224 4097 "STACK_USER of 4097 bytes in a record of 4344 bytes"
bad 224 8192 "STACK_USER of 8192 bytes in a record of 4344 bytes"
bad 4328 4104 "STACK_USER dyn_size 4104 is more than its 4096 bytes"
# a 32-bit process's stack is not unwound, and perf2kp says so
python3 -c 'import struct, sys; b = bytearray(open(sys.argv[1], "rb").read()); struct.pack_into("<Q", b, int(sys.argv[2]), 1); open(sys.argv[3], "wb").write(b)' \
	"$d.data" $((at + 56)) "$t/abi32.data"
rc=0; perf2kp --kallsyms "$t/kallsyms" "$t/abi32.data" 2> "$t/abi32.err" | kp-fold > "$t/abi32.fold" || rc=$?
want "32-bit: exit" 0 $rc
want "32-bit: message" "perf2kp: $t/abi32.data: 1 sample with a user stack copy not unwound (a 32-bit process): counted by their IP and kernel frames" "$(cat "$t/abi32.err")"
want "32-bit: that sample, by its IP" "Perl_sv_2mortal 1" "$(grep -x 'Perl_sv_2mortal [0-9]*' "$t/abi32.fold")"
[ $fail = 0 ] || status=1
exit $status
