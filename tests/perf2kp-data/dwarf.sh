#!/usr/bin/env bash
# --call-graph dwarf: perf2kp unwinds each sample's user stack copy
# (REGS_USER + STACK_USER) with libdw, and its stacks are perf's own.  On
# samples/perfdata-dwarf.data (see its .how; a perl command, whose user
# frames are all unwound from the copies), checked against what perf
# printed when it was recorded:
#  - "perf2kp FILE | kp-fold" equals "perf script -i FILE | perf2kp |
#    kp-fold" (the .script.xz), under the default names, --raw-names,
#    --inline (with kp-fold --inlined), --kernel-only, --user-only and
#    --weight period: the same frames, the return addresses named at
#    pc - 1 and the inlined functions perf adds (from libc6-dbg's DWARF);
#  - "perf2kp --weight period FILE | kp-inclusive" gives every symbol of
#    0.5% or more in "perf report --children" (the .children.xz) its
#    inclusive percentage within 0.01 points, and its exclusive one too,
#    except the one way kp and perf report count self differently: a
#    sample whose IP is in inlined code has perf's self on the function
#    the code is inlined into, kp's on the innermost inlined function (as
#    perf script's own stacks read through perf2kp give it).  Those
#    differences are checked to balance exactly;
#  - REGS_USER and STACK_USER of impossible sizes are refused by name.
# The capture's binaries (perl, libc, libm) and libc's debug file must be
# those of the capture (their build-ids): else "skipped".
. "$KP_TOP/tests/perf2kp-data/setup.bash"
d="$S/perfdata-dwarf"
perf2kp --kallsyms "$t/kallsyms" "$d.data" 2> "$t/err" > "$t/data.kp"
if grep -q "it had when sampled\|No such file" "$t/err"; then
	echo "skipped: a binary of the capture changed since it was made:"
	cat "$t/err"; exit 77
fi
libc=/usr/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" 2> /dev/null | sed -n 's/.*Build ID: //p')
[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	{ echo "skipped: no debug file for $libc (libc6-dbg), whose DWARF names perf's inlined frames"; exit 77; }
status=0
want "no message on stderr" "" "$(cat "$t/err")"

xz -dc "$d.script.xz" > "$t/script"
compare() { # options...
	local fold=kp-fold
	case " $* " in *" --inline "*) fold="kp-fold --inlined" ;; esac
	perf2kp --kallsyms "$t/kallsyms" "$@" "$d.data" | $fold | sort > "$t/data.fold"
	perf2kp "$@" "$t/script" 2> /dev/null | $fold | sort > "$t/text.fold"
	if cmp -s "$t/text.fold" "$t/data.fold"; then
		echo "ok: $* $(wc -l < "$t/data.fold") stacks equal"
	else
		echo "FAIL: $*: stacks differ"; diff "$t/text.fold" "$t/data.fold" | cut -c1-300 | head; status=1
	fi
}
compare
compare --raw-names
compare --inline
compare --kernel-only
compare --user-only
compare --weight period
# the user stacks are whole: every sample reaches _start, through perl's
# main and libc's inlined __libc_start_main_impl
perf2kp --kallsyms "$t/kallsyms" "$d.data" | kp-fold > "$t/fold"
want "samples reaching _start" 97 "$(awk '/^_start;__libc_start_main_impl;__libc_start_call_main;main;/ { n += $NF } END { print n + 0 }' "$t/fold")"
want "deepest stack's frames, as perf script's" \
	"$(awk 'BEGIN { RS = "" } { if (NF > 0 && split($0, l, "\n") - 1 > m) m = split($0, l, "\n") - 1 } END { print m }' "$t/script")" \
	"$(awk '{ n = split($1, f, ";"); if (n > m) m = n } END { print m }' "$t/fold")"

# perf report --children
perf2kp --kallsyms "$t/kallsyms" --weight period "$d.data" | kp-inclusive --format tsv > "$t/kp.tsv"
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
{
	if (!($3 in incl)) { if ($1 >= 0.5) { print "missing in kp-inclusive: " $3; bad++ }; next }
	# the self of inlined code: kp gives it to the inlined function
	# (perf 0), perf to the function it is inlined into (kp less)
	if ($4 && $2 == 0) inlined += excl[$3]
	else if (excl[$3] < $2) { outer += $2 - excl[$3]; nouter++ }
	if ($1 < 0.5) next
	n++
	if (off(incl[$3], $1) || (!($4 && $2 == 0) && excl[$3] > $2 + 0.01)) {
		printf "%s: perf %s%% %s%%, kp %s%% %s%%\n", $3, $1, $2, incl[$3], excl[$3]; bad++
	}
}
END {
	printf "%d symbols of 0.5%% or more compared (%d unresolved perf rows left out); self of inlined code: %.4f%% on the inlined functions in kp, %.2f%% on the functions they are inlined into in perf; %d bad\n", n, skipped, inlined, outer, bad
	# perf rounds each row to 0.01: within half of that a row
	d = inlined - outer; if (d < 0) d = -d
	if (d > 0.005 * nouter + 0.0001) { print "the self of inlined code does not balance"; bad++ }
	if (n < 40) { print "too few rows compared"; bad++ }
	exit bad > 0
}' "$t/children.tsv" || status=1
want "total" "$(xz -dc "$d.children.xz" | sed -n 's/^# Event count (approx.): //p')" "$(sed -n 's/^# total: //p' "$t/kp.tsv")"

# impossible REGS_USER and STACK_USER: the first sample of the capture
# (offset 7544: REGS_USER abi at +56, STACK_USER size at +224, its
# dyn_size at +4328) changed in one field
at=7544
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
rc=0; perf2kp "$t/abi32.data" 2> "$t/abi32.err" | kp-fold > "$t/abi32.fold" || rc=$?
want "32-bit: exit" 0 $rc
want "32-bit: message" "perf2kp: $t/abi32.data: 1 sample with a user stack copy not unwound (a 32-bit process): counted by their IP and kernel frames" "$(cat "$t/abi32.err")"
want "32-bit: that sample, by its IP" "Perl_sv_2mortal 1" "$(grep -x 'Perl_sv_2mortal [0-9]*' "$t/abi32.fold")"
[ $fail = 0 ] || status=1
exit $status
