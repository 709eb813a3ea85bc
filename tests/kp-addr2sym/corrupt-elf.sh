#!/usr/bin/env bash
# corrupt-elf.sh - kp-addr2sym -e FILE -l -i on 200 truncated or mutated
# copies of a small program built here with -g -O2 (the seeds of
# tests/fuzz/fuzz_elf, which libFuzzer mutates further): each run must
# end with exit 0 (used what it could) or 2 (named the file and why),
# never crash or trip a sanitizer.
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "skipped: no C compiler"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cat > p.c <<'C'
static volatile int v;
static inline __attribute__((always_inline)) int in1(int x) { v = x; return v + 1; }
__attribute__((noinline)) int f(int x) { return in1(x) * 3; }
int main(int argc, char **argv) { (void)argv; return f(argc); }
C
"$cc" -g -O2 -o prog p.c || { echo "cannot compile"; exit 1; }
# libdw 0.188 leaks inside dwarf_getscopes() on some corrupt DWARF
echo "leak:libdw.so" > lsan.supp
export LSAN_OPTIONS="suppressions=$tmp/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
size=$(stat -c %s prog)
addrs=$(nm prog | awk '$3 == "main" || $3 == "f" { print $1 }')
{ echo "!"; for a in $addrs; do echo " 0x$a"; done; printf '\t1\n!\n'; } > in.kp
bad=0 n=0 fatal=0
for ((i = 0; i < 200; i++)); do
	cp prog m
	if ((i % 4 == 0)); then
		truncate -s $((size * i / 200)) m
	else
		# overwrite 1 to 8 bytes at a spread of offsets (headers,
		# section table, DWARF) with values from a fixed pattern
		off=$(((i * 7919 * 13 + i * i) % size))
		if ((i % 4 == 1)); then off=$((i % 64)); fi
		if ((i % 4 == 2)); then off=$((size - 64 * 10 + i % 640)); fi
		b=""
		for ((k = 0; k < 1 + i % 8; k++)); do
			b+=$(printf '\\x%02x' $(((i * 31 + k * 97) % 256)))
		done
		printf "$b" | dd of=m bs=1 seek=$off conv=notrunc status=none
	fi
	kp-addr2sym -e m -l -i in.kp > out 2> err
	st=$?
	n=$((n + 1))
	[ $st -eq 2 ] && fatal=$((fatal + 1))
	if { [ $st -ne 0 ] && [ $st -ne 2 ]; } || grep -q -e Sanitizer -e 'runtime error' err; then
		echo "mutation $i: exit $st"
		head -5 err
		bad=$((bad + 1))
	fi
done
echo "$n corrupt files: $fatal refused (exit 2), $((n - fatal - bad)) used, $bad crashed"
[ $bad -eq 0 ]
