#!/bin/bash
# kp-sample and kp-addr2sym name frames the same way (issue 11):
#  - a -no-pie program sampled stripped with --user, its frames pointed
#    at the unstripped file: kp-addr2sym resolves every frame (the
#    [FILE+0xOFF] kp-sample writes is the file offset, which kp-addr2sym
#    read as an ELF address: 0 frames resolved); a PIE too;
#  - a call at the very end of a function (to a noreturn one) names
#    that function, not the one after it: pc - 1 for return addresses,
#    in kp-sample as in kp-addr2sym;
#  - the same addresses get the same names from both, user and kernel
#    (one capture, its kernel frames stripped to addresses and named
#    again by kp-addr2sym from the capture's --archive);
#  - 'kp-sample -a -d 1 | kp-fold' has no __pfx_* caller frame.
. "$(dirname "$0")/lib.inc"
cc=${CC:-cc}
command -v "$cc" > /dev/null || skip "no C compiler"
command -v strip > /dev/null || skip "no strip (binutils)"
cd "$T" || exit 1
cat > prog.c <<'C'
volatile unsigned long n;

__attribute__((noinline)) void
tick(void)
{
	n++;
}

/* not a leaf, so that it has a frame of its own */
__attribute__((noinline, noreturn)) void
spin(void)
{
	for (;;)
		tick();
}

/* its last instruction is the call: the return address is past its end */
__attribute__((noinline, noreturn)) void
caller(void)
{
	n = 1;
	spin();
}

__attribute__((noinline)) void
after_caller(void)
{
	n = 2;
}

int
main(int argc, char **argv)
{
	(void)argv;
	if (argc > 5)
		after_caller();
	caller();
}
C
flags="-O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-reorder-functions"
$cc $flags -no-pie -fno-pie -o nopie prog.c || fail "cannot build -no-pie"
$cc $flags -pie -fpie -o pie prog.c || fail "cannot build -pie"
[ "$(nm nopie | awk '$3 == "after_caller" { print $1 }')" \> "$(nm nopie | awk '$3 == "caller" { print $1 }')" ] ||
	skip "the compiler did not place after_caller after caller"

# the round trip: sample the stripped copy, name with the unstripped file
for kind in nopie pie; do
	strip -o "$kind.stripped" "$kind"
	kp-sample -e cpu-clock -F 999 --user -d 1 "./$kind.stripped" > "$kind.raw.kp" 2> "$kind.err" ||
		fail "$kind: kp-sample exit $?: $(cat "$kind.err")"
	grep -q "\[$T/$kind.stripped+0x[0-9a-f]*\]$" "$kind.raw.kp" ||
		fail "$kind: no [FILE+0xOFF] frame of the stripped program: $(grep -m3 stripped "$kind.raw.kp")"
	sed "s|$T/$kind.stripped|$T/$kind|" "$kind.raw.kp" > "$kind.addr.kp"
	kp-addr2sym "$kind.addr.kp" > "$kind.named.kp" 2> "$kind.err2" || fail "$kind: kp-addr2sym exit $?"
	left=$(grep -c "\[$T/$kind+0x" "$kind.named.kp")
	total=$(grep -c "\[$T/$kind+0x" "$kind.addr.kp")
	echo "$kind: $total frame lines of the program, $left left unresolved"
	[ "$left" = 0 ] || fail "$kind: $left of $total frames not resolved: $(grep -m3 "\[$T/$kind+0x" "$kind.named.kp")"
	# each stack: spin, then caller (not after_caller), then main
	grep -qE " : (spin|tick)\+0x[0-9a-f]*/0x[0-9a-f]* \[$T/$kind\]$" "$kind.named.kp" || fail "$kind: no spin frame"
	grep -q " : caller+0x[0-9a-f]*/0x[0-9a-f]* \[$T/$kind\]$" "$kind.named.kp" ||
		fail "$kind: the call at the end of caller is not named caller: $(grep -A1 -m1 ' : spin' "$kind.named.kp")"
	grep -q " : after_caller" "$kind.named.kp" && fail "$kind: a return address named after_caller (pc, not pc - 1)"
	grep -q " : main+0x[0-9a-f]*/0x[0-9a-f]* \[$T/$kind\]$" "$kind.named.kp" || fail "$kind: no main frame"
done

# kp-sample names the unstripped -no-pie program itself: the same name
# for every address (-no-pie: the same addresses in both runs)
kp-sample -e cpu-clock -F 999 --user -d 1 ./nopie > direct.kp 2> /dev/null || fail "direct: exit $?"
grep -q " : after_caller" direct.kp && fail "kp-sample: a return address named after_caller"
names() { grep -E "^ 0x[0-9a-f]+ : .*\[$T/nopie\]$" "$1" | sed -E 's/^ (0x[0-9a-f]+) : ([^ ]+) .*/\1 \2/' | sort -u; }
names direct.kp > direct.names
names nopie.named.kp > addr2sym.names
join direct.names addr2sym.names | awk '$2 != $3' > differ
echo "same addresses named by both: $(join direct.names addr2sym.names | wc -l)"
[ "$(join direct.names addr2sym.names | wc -l)" -gt 0 ] || fail "no address in both captures"
[ ! -s differ ] || fail "kp-sample and kp-addr2sym name an address differently: $(head -3 differ)"

# kernel frames: one capture, named by kp-sample, then stripped to their
# addresses and named by kp-addr2sym from the capture's archive
kp-sample -e cpu-clock -F 1999 --archive "$T/arch" -- dd if=/dev/zero of=/dev/null bs=4k count=200000 \
	> k.kp 2> /dev/null || fail "kernel capture: exit $?"
sed -E 's/^ (0x[0-9a-f]+) : [^ ]+ \[([^]]+)\]$/ \1 [kernel]/' k.kp > k.addr.kp
grep -q '^ 0x[0-9a-f]* : ' k.addr.kp && fail "stripping the kernel names left some: $(grep -m1 '^ 0x[0-9a-f]* : ' k.addr.kp)"
kp-addr2sym k.addr.kp > k.named.kp 2> k.err || fail "kp-addr2sym (kernel) exit $?"
grep -q "kernel symbols from $T/arch/kallsyms (# archive:)" k.err || fail "the archive's kallsyms not used: $(cat k.err)"
diff k.kp k.named.kp > k.diff || fail "kernel frames named differently: $(head -5 k.diff)"
echo "kernel: $(grep -c '^ 0xffff' k.kp) frame lines named alike"

# no __pfx_* padding symbol as a caller (what the idle loop showed)
kp-sample -a -d 1 2> /dev/null | kp-fold > a.fold || fail "-a -d 1: exit $?"
grep -E '(^|;)__pfx_[^;]*;' a.fold && fail "a __pfx_ caller frame"
echo "-a -d 1: $(wc -l < a.fold) folded stacks, no __pfx_ caller"
echo ok
