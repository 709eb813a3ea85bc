#!/usr/bin/env bash
# modules.sh - kernel module frames with -l -i: symbols from kallsyms
# ([kp_testmod] column), source lines and inlined functions from the
# module's .ko under --modules (xz-compressed, in a subdirectory, named
# with '-' where kallsyms has '_'), its sections placed at the addresses
# saved by kp-sample --archive (DIR/sections, named by '# archive:').
# Lines are checked against eu-addr2line -j SECTION on the .ko.
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "skipped: no C compiler"; exit 77; }
command -v eu-addr2line > /dev/null || { echo "skipped: no eu-addr2line (elfutils)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cat > mod.c <<'C'
static volatile int s;

static inline __attribute__((always_inline)) int
helper(int x)
{
	s = x;
	return s * 5;
}

__attribute__((noinline)) int
kpmod_work(int x)
{
	return helper(x) + 1;
}

__attribute__((noinline)) int
kpmod_entry(int x)
{
	return kpmod_work(x) * 2;
}
C
mkdir -p lib/kernel/drivers/misc arch
"$cc" -g -O2 -c -o lib/kernel/drivers/misc/kp-testmod.ko mod.c || { echo "cannot compile"; exit 1; }
ko=lib/kernel/drivers/misc/kp-testmod.ko
# the .text offsets of the functions, from the object's own symbols
off() { nm "$ko" | awk -v s="$1" '$3 == s { print $1 }'; }
w=$((16#$(off kpmod_work))) e=$((16#$(off kpmod_entry)))
TEXT=$((0xffffffffc0a00000))
printf '%016x t kpmod_work\t[kp_testmod]\n%016x t kpmod_entry\t[kp_testmod]\n' \
	$((TEXT + w)) $((TEXT + e)) > arch/kallsyms.mod
{
	echo "ffffffff81000000 T _stext"
	echo "ffffffff81000000 T _text"
	echo "ffffffff81000010 T other_kernel_function"
	sort arch/kallsyms.mod
} > arch/kallsyms
printf 'kp_testmod .text 0x%x\nkp_testmod .data 0xffffffffc0a08000\n' $TEXT > arch/sections
if command -v xz > /dev/null; then xz "$ko"; fi
# kpmod_work+4 (in the inlined helper), as the leaf; kpmod_entry+5 as a
# return address (looked up at +4)
{
	echo "# archive: $tmp/arch"
	echo "!"
	printf ' 0x%016x\n 0x%016x\n\t1\n!\n' $((TEXT + w + 4)) $((TEXT + e + 5))
} > in.kp
kp-addr2sym -l -i -k arch/kallsyms --modules lib in.kp > out 2> err
st=$?
ko=$(ls lib/kernel/drivers/misc/kp-testmod.ko*)
[ "${ko%.xz}" != "$ko" ] && xz -dk "$ko" && ko=${ko%.xz}
eu-addr2line -f -i -e "$ko" -j .text "0x$(printf %x $((w + 4)))" "0x$(printf %x $((e + 4)))" > eu
mapfile -t l < eu
nocol() { local x=${1%:*}; echo "$x"; }
cat > want <<W
# archive: $tmp/arch
!
 $(printf '0x%016x' $((TEXT + w + 4))) : helper [kp_testmod] (inline) (at $(nocol "${l[1]}"))
 $(printf '0x%016x' $((TEXT + w + 4))) : kpmod_work+0x4/0x$(printf %x $((e - w))) [kp_testmod] (at $(nocol "${l[3]}"))
 $(printf '0x%016x' $((TEXT + e + 5))) : kpmod_entry+0x5/0x$(printf %x $(( (e + 4096) / 4096 * 4096 + 4096 - e ))) [kp_testmod] (at $(nocol "${l[5]}"))
	1
!
W
fail=0
diff -u want out || fail=1
[ $st -eq 0 ] || { echo "exit $st"; cat err; fail=1; }
echo "kp-addr2sym: no -e vmlinux: -l and -i add lines to module and user frames only" > want.err
diff -u want.err err || fail=1
# without the .ko: a warning, symbols still
kp-addr2sym -l -k arch/kallsyms --modules /nonexistent in.kp > out2 2> err2
grep -q "no kp_testmod.ko under /nonexistent: no source lines for it" err2 || { echo "no warning:"; cat err2; fail=1; }
grep -q 'kpmod_work+0x4/' out2 || { echo "symbols lost without the .ko"; fail=1; }
# no -k: the archive's kallsyms, said on stderr
kp-addr2sym -l -i --modules lib in.kp > out3 2> err3
diff -u want out3 || fail=1
grep -q "kernel symbols from $tmp/arch/kallsyms (# archive:)" err3 || { echo "archive not said:"; cat err3; fail=1; }
[ $fail -eq 0 ] && echo "ok: module lines and inlines as eu-addr2line -j .text gives them"
exit $fail
