#!/usr/bin/env bash
# elf.sh - kp-addr2sym -e on ELF files built here: a small "vmlinux"
# (linked at 0xffffffff81000000, with _text/_stext/_etext, a build-id,
# DWARF and an inlined function) used at a KASLR shift, and a stripped
# shared library whose symbols and lines are only in its separate debug
# file (.gnu_debuglink, in .debug/).  Expected output is below.
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "skipped: no C compiler"; exit 77; }
for t in objcopy strip; do
	command -v $t > /dev/null || { echo "skipped: no $t (binutils)"; exit 77; }
done
tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0 dropped=

cat > vm.c <<'C'
asm(".text\n.globl _text\n.globl _stext\n_text:\n_stext:\n");
static volatile int sink;

static inline __attribute__((always_inline)) int
deep(int x)
{
	sink = x;
	return sink * 7;
}

__attribute__((noinline, noreturn)) void
do_idle(void)
{
	for (;;)
		sink++;
}

__attribute__((noinline)) int
schedule(int x)
{
	return deep(x) + 1;
}

__attribute__((noinline, noreturn)) void
start_kernel(void)
{
	schedule(3);
	do_idle();
}

/* a function that ends in a call that never returns */
asm(".text\n"
    ".globl x86_64_start_reservations\n"
    ".type x86_64_start_reservations, @function\n"
    "x86_64_start_reservations:\n"
    "	call start_kernel\n"
    ".size x86_64_start_reservations, . - x86_64_start_reservations\n"
    ".globl clear_bss\n"
    ".type clear_bss, @function\n"
    "clear_bss:\n"
    "	ret\n"
    ".size clear_bss, . - clear_bss\n");

const char linux_banner[] = "Linux version 6.18.0-kp-test";
asm(".text\n.globl _etext\n_etext:\n");
C
"$cc" -g -O2 -fno-toplevel-reorder -mcmodel=kernel -fno-pic -no-pie \
	-nostdlib -static -ffreestanding -fno-asynchronous-unwind-tables \
	-Wl,--build-id -Wl,-Ttext=0xffffffff81000000 -Wl,-e,start_kernel \
	-o vmlinux vm.c || { echo "cannot build the test vmlinux"; exit 1; }
sym() { nm vmlinux | awk -v s="$1" '$3 == s { print $1 }'; }
size() { printf '0x%x' $((16#$(nm -S vmlinux | awk -v s="$1" '$4 == s { print $2 }'))); }
hex() { printf '0x%016x' $((16#$1 + $2)); }
SHIFT=$((0x1e000000))
sched=$(sym schedule) sk=$(sym start_kernel) xr=$(sym x86_64_start_reservations)
cb=$(sym clear_bss) idle=$(sym do_idle)

# check NAME EXPECTED-FILE ARGS...: stdout, stderr, exit; $tmp -> TMP
check() {
	local name=$1 want=$2
	shift 2
	"$@" > out 2> err
	echo "exit $?" >> err
	cat out err | sed "s|$tmp|TMP|g" > got
	if ! diff -u "$want" got; then echo "FAIL $name"; fail=1; else echo "ok $name"; fi
}

# the stack of an idle CPU, at run-time addresses (KASLR shift 0x1e000000)
{
	echo "# kaslr: 0x1e000000"
	echo "!"
	echo " $(hex "$idle" $((SHIFT + 2)))"
	echo " $(hex "$sk" $((SHIFT + 10)))"
	echo " $(hex "$cb" $SHIFT)"
	printf '\t7\n!\n'
	echo " $(hex "$sched" $((SHIFT + 3)))"
	echo " $(hex "$sk" $((SHIFT + 5)))"
	printf '\t1\n!\n'
} > idle.kp
cat > want1 <<W
# kaslr: 0x1e000000
!
 $(hex "$idle" $((SHIFT + 2))) : do_idle+0x2/$(size do_idle) [kernel]
 $(hex "$sk" $((SHIFT + 10))) : start_kernel+0xa/$(size start_kernel) [kernel]
 $(hex "$cb" $SHIFT) : x86_64_start_reservations+0x5/0x5 [kernel]
	7
!
 $(hex "$sched" $((SHIFT + 3))) : schedule+0x3/$(size schedule) [kernel]
 $(hex "$sk" $((SHIFT + 5))) : start_kernel+0x5/$(size start_kernel) [kernel]
	1
!
kp-addr2sym: KASLR shift 0x1e000000 (from # kaslr: metadata)
exit 0
W
check "vmlinux, # kaslr:" want1 kp-addr2sym -e vmlinux idle.kp

# the same from a run-time _stext recorded in the capture, and from
# --kaslr-offset; without any: a warning, and addresses stay addresses
sed 's/^# kaslr: .*/# stext: 0xffffffff9f000000/' idle.kp > stext.kp
sed 's/^# kaslr: .*/# stext: 0xffffffff9f000000/; s/(from # kaslr: metadata)/(from _stext and # stext: metadata)/' want1 > want2
check "vmlinux, # stext:" want2 kp-addr2sym -e vmlinux stext.kp
sed '/^# kaslr/d' idle.kp > noshift.kp
sed '/^# kaslr/d; s/(from # kaslr: metadata)/(from --kaslr-offset)/' want1 > want3
check "vmlinux, --kaslr-offset" want3 kp-addr2sym -e vmlinux --kaslr-offset 0x1e000000 noshift.kp
{
	sed 's/ : .*//; /^kp-addr2sym/d; /^exit/d; /^#/d' want1
	echo "kp-addr2sym: no KASLR shift known (no --kaslr-offset, '# kaslr:', '# stext:' or -k): assuming 0"
	echo "kp-addr2sym: 5 of 5 distinct addresses not resolved"
	echo "exit 0"
} > want4
check "vmlinux, no shift" want4 kp-addr2sym -e vmlinux noshift.kp

# a capture of another kernel: its build-id differs
{ echo "# build-id: 0123456789abcdef0123456789abcdef01234567"; cat idle.kp; } > other.kp
id=$(eu-readelf -n vmlinux 2> /dev/null | awk '/Build ID:/ { print $3 }')
cat > want5 <<W
kp-addr2sym: vmlinux: build-id $id does not match the capture's 0123456789abcdef0123456789abcdef01234567 (--force to use it anyway)
exit 2
W
if [ -n "$id" ]; then
	check "vmlinux, wrong build-id" want5 kp-addr2sym -e vmlinux other.kp
	{ echo "# build-id: 0123456789abcdef0123456789abcdef01234567"; sed '/^kp-addr2sym/d; /^exit/d' want1
	  echo "kp-addr2sym: vmlinux: build-id $id does not match the capture's 0123456789abcdef0123456789abcdef01234567; used anyway (--force)"
	  echo "kp-addr2sym: KASLR shift 0x1e000000 (from # kaslr: metadata)"
	  echo "exit 0"; } > want6
	check "vmlinux, wrong build-id, --force" want6 kp-addr2sym -f -e vmlinux other.kp
	{ echo "# build-id: $id"; cat idle.kp; } > same.kp
	{ echo "# build-id: $id"; cat want1; } > want7
	check "vmlinux, right build-id" want7 kp-addr2sym -e vmlinux same.kp
else
	dropped="$dropped build-id cases (no eu-readelf);"
fi
printf 'kp-addr2sym: -m and -e with a vmlinux: give one of them\nTry '"'"'kp-addr2sym -h'"'"' for more information.\nexit 64\n' > want8
check "-m and -e vmlinux" want8 kp-addr2sym -m /dev/null -e vmlinux idle.kp

# -l -i on the kernel: schedule+3 is in the inlined deep(); the return
# address start_kernel+5 is looked up at +4 (the call to schedule)
if command -v eu-addr2line > /dev/null; then
	eu-addr2line -f -i -e vmlinux "0x$(printf %x $((16#$sched + 3)))" "0x$(printf %x $((16#$sk + 4)))" > eu.txt
	# "deep inlined at F:L:C in schedule" / "F:L:C" / "schedule" / "F:L:C" / "start_kernel" / "F:L:C"
	mapfile -t e < eu.txt
	nocol() { echo "${1%:*}"; }
	{
		echo "# kaslr: 0x1e000000"
		echo "!"
		echo " $(hex "$sched" $((SHIFT + 3))) : deep [kernel] (inline) (at $(nocol "${e[1]}"))"
		echo " $(hex "$sched" $((SHIFT + 3))) : schedule+0x3/$(size schedule) [kernel] (at $(nocol "${e[3]}"))"
		echo " $(hex "$sk" $((SHIFT + 5))) : start_kernel+0x5/$(size start_kernel) [kernel] (at $(nocol "${e[5]}"))"
		printf '\t1\n!\n'
		echo "kp-addr2sym: KASLR shift 0x1e000000 (from # kaslr: metadata)"
		echo "exit 0"
	} | sed "s|$tmp|TMP|g" > want9
	sed -n '1,2p;8,11p' idle.kp > lines.kp
	check "vmlinux -l -i" want9 kp-addr2sym -l -i -e vmlinux lines.kp
	# a frame with a symbol of its own keeps it; -l -i add to it
	sed "s/^\( $(hex "$sched" $((SHIFT + 3)))\)\$/\1 : kept_name+0x3\/0x99 [kernel]/" lines.kp > kept.kp
	sed "s/ : schedule+0x3\/$(size schedule) / : kept_name+0x3\/0x99 /" want9 > want12
	check "vmlinux -l -i, symbol kept" want12 kp-addr2sym -l -i -e vmlinux kept.kp
else
	dropped="$dropped -l/-i checks (no eu-addr2line);"
fi

# a stripped shared library: hidden_fn is only in the separate debug
# file, found through .gnu_debuglink in .debug/
cat > lib.c <<'C'
static volatile int s;

__attribute__((noinline)) static int
hidden_fn(int x)
{
	s = x;
	return s + 1;
}

int
exported_fn(int x)
{
	return hidden_fn(x) * 2 + 1;
}
C
"$cc" -g -O2 -shared -fPIC -Wl,--build-id -o libkt.so lib.c &&
	objcopy --only-keep-debug libkt.so libkt.so.debug &&
	strip --strip-all libkt.so &&
	objcopy --add-gnu-debuglink=libkt.so.debug libkt.so &&
	mkdir .debug && mv libkt.so.debug .debug/ ||
	{ echo "cannot build the test library"; exit 1; }
dsym() { nm .debug/libkt.so.debug | awk -v s="$1" '$3 == s { print $1 }'; }
dsize() { printf '0x%x' $((16#$(nm -S .debug/libkt.so.debug | awk -v s="$1" '$4 == s { print $2 }'))); }
h=$(dsym hidden_fn) x=$(dsym exported_fn)
if nm -D libkt.so | grep -q hidden_fn || nm libkt.so 2> /dev/null | grep -q hidden_fn; then
	echo "FAIL the stripped library still has hidden_fn"; fail=1
fi
# exported_fn's call to hidden_fn, and the return address after it
objdump -d --no-show-raw-insn libkt.so |
	awk '/^ *[0-9a-f]+:/ { a = $1; sub(/:/, "", a); print a, $2 }' > insns
call= ret=
while read -r a op; do
	if [ -n "$call" ]; then ret=$a; break; fi
	if [ $((16#$a)) -ge $((16#$x)) ] && [ "$op" = call ]; then call=$a; fi
done < insns
lib=$tmp/libkt.so
{
	echo "!"
	echo " $(hex "$h" 2) [$lib]"
	echo " $(hex "$ret" 0) [$lib]"
	printf '\t2\n!\n'
	echo " $(hex "$sched" $((SHIFT + 3))) [kernel]"
	echo " $(hex "$x" 0) [$lib]"
	echo " $(hex "$h" $((0x7f0000000000 + 2))) [$lib+$(printf 0x%x $((16#$h + 2)))]"
	printf '\t1\n!\n'
} > dso.kp
cat > want10 <<W
# kaslr: 0x1e000000
!
 $(hex "$h" 2) : hidden_fn+0x2/$(dsize hidden_fn) [TMP/libkt.so]
 $(hex "$ret" 0) : exported_fn+0x$(printf %x $((16#$ret - 16#$x)))/$(dsize exported_fn) [TMP/libkt.so]
	2
!
 $(hex "$sched" $((SHIFT + 3))) : schedule+0x3/$(size schedule) [kernel]
 $(hex "$x" 0) : exported_fn+0x0/$(dsize exported_fn) [TMP/libkt.so]
 $(hex "$h" $((0x7f0000000000 + 2))) : hidden_fn+0x2/$(dsize hidden_fn) [TMP/libkt.so]
	1
!
kp-addr2sym: KASLR shift 0x1e000000 (from # kaslr: metadata)
exit 0
W
{ echo "# kaslr: 0x1e000000"; cat dso.kp; } > dso2.kp
if [ -n "$call" ] && [ -n "$ret" ]; then
	check "stripped DSO, debuglink, first user frame exact" want10 kp-addr2sym -e vmlinux dso2.kp
else
	echo "FAIL cannot find the call in exported_fn"; fail=1
fi
# -l through the debug file: the line of hidden_fn+2 as eu-addr2line says
if command -v eu-addr2line > /dev/null; then
	l=$(eu-addr2line -e libkt.so "0x$(printf %x $((16#$h + 2)))")
	l=${l%:*}
	sed -n 1,2p dso.kp > dso3.kp; printf '\t1\n!\n' >> dso3.kp
	printf '!\n %s : hidden_fn+0x2/%s [TMP/libkt.so] (at %s)\n\t1\n!\n%s\nexit 0\n' \
		"$(hex "$h" 2)" "$(dsize hidden_fn)" "$l" \
		"kp-addr2sym: KASLR shift 0x0 (from --kaslr-offset)" |
		sed "s|$tmp|TMP|g" > want11
	check "stripped DSO -l" want11 kp-addr2sym -l -e vmlinux --kaslr-offset 0 dso3.kp
else
	dropped="$dropped -l/-i checks (no eu-addr2line);"
fi
[ $fail -ne 0 ] && exit 1
# checks that could not run make the test skipped, never a silent pass
[ -n "$dropped" ] && { echo "skipped:$dropped"; exit 77; }
exit 0
