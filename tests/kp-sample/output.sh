#!/bin/bash
# Where and what is written: -o FILE (nothing on stdout), --archive DIR
# (kallsyms, notes, uname, sections, the "# archive:" line), --user
# (user frames named by their file and offset, no [user] frame), -m
# (a small ring), and the live status line on a terminal.
. "$(dirname "$0")/lib.inc"

# -o
kp-sample -e cpu-clock -o "$T/o.kp" true > "$T/out" || fail "-o: exit $?"
[ ! -s "$T/out" ] || fail "-o: output on stdout"
complete "$T/o.kp" && grep -q '^# tool: kp-sample$' "$T/o.kp" || fail "-o: the file is not complete kp"

# --archive
kp-sample -e cpu-clock --archive "$T/arch" true > "$T/out" || fail "--archive: exit $?"
[ "$(meta "$T/out" archive)" = "$T/arch" ] || fail "--archive: no # archive line"
for f in kallsyms notes uname sections; do
	[ -f "$T/arch/$f" ] || fail "--archive: no $f"
done
[ "$(awk '$3 == "_stext" { print $1 }' "$T/arch/kallsyms")" = \
	"$(awk '$3 == "_stext" { print $1 }' /proc/kallsyms)" ] || fail "--archive: kallsyms is not a copy"
a=$(wc -l < "$T/arch/kallsyms")
b=$(wc -l < /proc/kallsyms)
[ $((a - b)) -le 100 ] && [ $((b - a)) -le 100 ] || fail "--archive: kallsyms has $a lines, /proc/kallsyms $b"
grep -q "$(uname -r)" "$T/arch/uname" || fail "--archive: uname"
cmp -s "$T/arch/notes" /sys/kernel/notes || fail "--archive: notes differ"
if [ -s /proc/modules ]; then
	[ -s "$T/arch/modules" ] && [ -s "$T/arch/sections" ] || fail "--archive: modules or sections missing"
	grep -qvE '^[^ ]+ [^ ]+ 0x[0-9a-f]+$' "$T/arch/sections" && fail "--archive: a bad sections line"
fi
echo "--archive: $(ls "$T/arch" | tr '\n' ' ')"

# --user: dd's frames in libc (or dd), by file and offset
kp-sample -e cpu-clock -F 1999 --user dd if=/dev/zero of=/dev/null bs=4k count=300000 2> /dev/null \
	> "$T/u" || fail "--user: exit $?"
grep -q '^ : \[user\]$' "$T/u" && fail "--user: a [user] frame"
grep -qE '^ 0x0000[0-9a-f]{12} .*\[/usr/(lib|bin)/[^]]*(libc\.so\.6|dd)(\+0x[0-9a-f]+)?\]' "$T/u" ||
	fail "--user: no user frame in libc or dd: $(grep -m3 '^ 0x0000' "$T/u")"
# named from libc's symbol table: dd's read and write calls, by names
# libc's own table has, at an offset inside the symbol
libc=$(grep -oE '\[/[^]]*/libc\.so\.6\]' "$T/u" | head -n 1 | tr -d '[]')
[ -n "$libc" ] || fail "--user: no libc frame named by symbol"
grep -E "^ 0x0000[0-9a-f]{12} : [^ ]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[$libc\]$" "$T/u" |
	sed -E 's/.* : ([^+]+)\+0x([0-9a-f]+)\/0x([0-9a-f]+) .*/\1 \2 \3/' | sort -u > "$T/usyms"
grep -qE '(read|write)' "$T/usyms" || fail "--user: no read or write in libc: $(cat "$T/usyms")"
while read -r name off size; do
	[ $((0x$off)) -lt $((0x$size)) ] || fail "--user: $name+0x$off is beyond its size 0x$size"
	if command -v nm > /dev/null; then
		# its .dynsym, or the .symtab of its debug file (by build-id)
		bid=$(readelf -n "$libc" 2> /dev/null | sed -n 's/.*Build ID: //p')
		dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
		case $name in
		*@plt)
			# a PLT stub, named as perf names it: its target's
			# name (a dynamic symbol), or none for an IRELATIVE
			# slot ("@plt"); libc must have a PLT
			readelf -SW "$libc" 2> /dev/null | grep -qE ' \.plt(\.sec)? ' ||
				fail "--user: $name, but $libc has no PLT"
			t=${name%@plt}
			[ -z "$t" ] || nm -D "$libc" 2> /dev/null | grep -qE " $t(@.*)?$" ||
				fail "--user: $name: $t is not a dynamic symbol of $libc"
			;;
		*)
			{ nm -D --defined-only "$libc"; [ -f "$dbg" ] && nm --defined-only "$dbg"; } 2> /dev/null |
				grep -qE " $name(@.*)?$" || fail "--user: $name is not a symbol of $libc"
			;;
		esac
	fi
done < "$T/usyms"
echo "--user: libc symbols $(cut -d' ' -f1 "$T/usyms" | tr '\n' ' ')"
grep -qE '^ 0xffffffff' "$T/u" || fail "--user: no kernel frames left"
echo "--user: $(grep -cE '^ 0x0000' "$T/u") user frame lines"
# without --user the same command has [user] and no user address
kp-sample -e cpu-clock -F 1999 dd if=/dev/zero of=/dev/null bs=4k count=300000 2> /dev/null > "$T/k" ||
	fail "no --user: exit $?"
grep -q '^ : \[user\]$' "$T/k" || fail "no --user: no [user] frame"
grep -qE '^ 0x0000' "$T/k" && fail "no --user: user addresses"

# -m 1: a one-page ring still works, and loses what it cannot hold
busy 1.5
kp-sample -e cpu-clock -a -m 1 -d 0.5 > "$T/m" || fail "-m 1: exit $?"
complete "$T/m" || fail "-m 1: no final '!'"
echo "-m 1: $(meta "$T/m" samples) samples, $(meta "$T/m" lost) lost"

# the status line, on a terminal only
if command -v script > /dev/null; then
	script -qec "kp-sample -e cpu-clock -a -d 0.8 -o $T/s.kp" /dev/null > "$T/tty" < /dev/null ||
		fail "status: exit $?"
	grep -aqE 'kp-sample: 0\.[0-9] s, [0-9]+ samples, 0 lost' "$T/tty" || fail "no status line: $(cat -v "$T/tty")"
	grep -aq $'\r\033\[K$' "$T/tty" || grep -aq $'\r\033\[K' "$T/tty" || fail "the status line is not erased"
	complete "$T/s.kp" || fail "status: no final '!'"
	kp-sample -e cpu-clock -a -d 0.3 -o /dev/null 2> "$T/notty" || fail "no tty: exit $?"
	[ ! -s "$T/notty" ] || fail "a status line without a terminal: $(cat -v "$T/notty")"
	echo "status line: $(tr '\r' '\n' < "$T/tty" | grep -a 'samples' | tail -1 | cat -v)"
fi
echo ok
