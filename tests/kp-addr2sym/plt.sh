#!/usr/bin/env bash
# plt.sh - PLT entries are named NAME@plt, as perf and objdump name them:
# .plt after its 16-byte header, and .plt.sec (IBT), for -no-pie and PIE
# programs, by address and by file offset ([FILE+0xOFF]).  (Entries of
# .plt.got, jumps through a GOT slot, are not named.)
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "skipped: no C compiler"; exit 77; }
for t in objdump readelf; do
	command -v $t > /dev/null || { echo "skipped: no $t (binutils)"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0 n=0
cat > plt.c <<'C'
#include <stdio.h>
#include <unistd.h>
int main(void) { for (int i = 0; i < 3; i++) printf("%d\n", getpid()); return 0; }
C
i=0
for flags in "-no-pie -fno-pie" "-pie -fpie" "-no-pie -fno-pie -fcf-protection=full -Wl,-z,ibtplt"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$cc" -O1 $flags -o "p$i" plt.c 2> /dev/null || { echo "(cannot build with $flags)"; continue; }
	# "ADDR NAME@plt" as objdump names them, and where .plt* lies in the file
	objdump -d "p$i" | sed -nE 's/^0*([0-9a-f]+) <([^>]+@plt)>:$/\1 \2/p' > ents
	[ -s ents ] || { echo "FAIL p$i: objdump shows no PLT entry"; fail=1; continue; }
	while read -r addr name; do
		a=$((16#$addr))
		# the section that holds it: file offset = addr - sh_addr + sh_offset
		off=
		while read -r sname _ saddr soff ssize _; do
			# .plt.got (__cxa_finalize's jump through the GOT) is not named
			case $sname in .plt | .plt.sec) ;; *) continue ;; esac
			if [ $a -ge $((16#$saddr)) ] && [ $a -lt $((16#$saddr + 16#$ssize)) ]; then
				off=$(printf %x $((a - 16#$saddr + 16#$soff)))
			fi
		done < <(readelf -SW "p$i" | sed -n 's/^ *\[ *[0-9]*\] //p')
		[ -n "$off" ] || continue
		printf '!\n 0x%016x [%s/p%d]\n\t1\n!\n 0x%016x [%s/p%d+0x%s]\n\t1\n!\n' \
			"$a" "$tmp" $i "$a" "$tmp" $i "$off" > in.kp
		printf '!\n 0x%016x : %s+0x0/0x10 [%s/p%d]\n\t2\n!\n' "$a" "$name" "$tmp" $i > want
		kp-addr2sym in.kp > out 2> err || { echo "FAIL p$i $name: exit $?"; cat err; fail=1; }
		n=$((n + 1))
		diff -u want out || { echo "FAIL p$i ($flags): $name"; fail=1; }
	done < ents
done
echo "$n PLT entries named"
[ $n -gt 0 ] || { echo "FAIL: no PLT entry checked"; fail=1; }
exit $fail
