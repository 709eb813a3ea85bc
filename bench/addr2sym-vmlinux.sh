#!/usr/bin/env bash
# bench/addr2sym-vmlinux.sh VMLINUX - called by bench/addr2sym.sh when
# KP_VMLINUX names a vmlinux with DWARF (not run on its own by
# bench/run.sh: it needs that ~280 MB download).
#
# 10,000 addresses of its text (spread over all functions, an offset in
# each) resolved by kp-addr2sym -e VMLINUX -l -i, eu-addr2line -f -i and
# binutils addr2line -f -i.  The chains (function, file:line, innermost
# first) must be the same as eu-addr2line's; binutils' are compared too
# (reported, as its file names and inline choices differ in places).
# Times of all three, and kp-addr2sym's speed-up over eu-addr2line.
set -eu
vm=${1:-}
# bench/run.sh runs every bench/*.sh: without a vmlinux there is nothing to do
[ -n "$vm" ] || { echo "addr2sym-vmlinux: skipped: bench/addr2sym.sh runs it when KP_VMLINUX is set"; exit 0; }
out=${KP_TOP:-.}/bench/out/vmlinux-cmp
mkdir -p "$out"
n=${N:-10000}
nm -n "$vm" | awk '$2 ~ /^[tT]$/ && !seen[$1]++ { a[k++] = $1 }
	END { step = k / '"$n"'; if (step < 1) step = 1
		for (i = 0; i < '"$n"' && int(i * step) < k; i++) {
			s = a[int(i * step)]
			# an offset inside most functions: last hex digit 0 -> 4..b
			if (substr(s, 16, 1) == "0") s = substr(s, 1, 15) sprintf("%x", 4 + i % 8)
			print s } }' > "$out/addrs"
echo "vmlinux: $vm"
echo "addresses: $(wc -l < "$out/addrs")"
awk '{ printf "!\n 0x%s [kernel]\n\t1\n", $1 } END { print "!" }' "$out/addrs" > "$out/in.kp"

# t NAME OUT CMD...: run CMD > OUT, print its time and peak RSS
t() {
	local name=$1 o=$2
	shift 2
	/usr/bin/time -f "%e %U %S %M" -o "$out/time" "$@" > "$o" 2> "$o.err"
	read -r e u sy m < "$out/time"
	awk -v n="$name" -v e="$e" -v c="$u + $sy" -v u="$u" -v s="$sy" -v m="$m" 'BEGIN {
		printf "%-24s %6.2f s (cpu %5.2f s), peak RSS %6.1f MB\n", n, e, u + s, m / 1024 }'
	awk -v e="$e" -v u="$u" -v s="$sy" 'BEGIN { print e, u + s }' > "$o.secs"
}
t "kp-addr2sym -e -l -i" "$out/kp.out" kp-addr2sym -e "$vm" -l -i --kaslr-offset 0 "$out/in.kp"
t "eu-addr2line -f -i" "$out/eu.out" eu-addr2line -a -f -i -e "$vm" $(sed 's/^/0x/' "$out/addrs")
t "addr2line -f -i" "$out/bu.out" addr2line -a -f -i -e "$vm" $(sed 's/^/0x/' "$out/addrs")
read -r ke kc < "$out/kp.out.secs"
read -r ee ec < "$out/eu.out.secs"
awk -v ke="$ke" -v kc="$kc" -v ee="$ee" -v ec="$ec" 'BEGIN {
	if (ke < 0.01) ke = 0.01; if (kc < 0.01) kc = 0.01
	printf "kp-addr2sym is %.1fx faster than eu-addr2line (elapsed), %.1fx (cpu time)\n", ee / ke, ec / kc }'

# to "name file:line" lines, "--" between addresses
awk '/^!/ { if (n++) print "--"; next }
	/^ 0x/ { name = $2 == ":" ? $3 : "??"; sub(/\+0x.*/, "", name); file = "??:0"
		if (match($0, /\(at [^)]*\)$/)) file = substr($0, RSTART + 4, RLENGTH - 5)
		print name, file }' "$out/kp.out" | sed '$d' > "$out/kp.txt"
# eu-addr2line names the caller of an inlined function on its first
# line ("f inlined at FILE:LINE:COL in g") but in places (the kernel's
# trace_event_raw_event_* and fred_sysvec_* wrappers) prints no level for
# g after it; that level is rebuilt from the first line (counted).
norm_a2l() {
	awk 'function flush() { if (levels == 1 && caller != "") { print caller, callsite; rebuilt++ } }
		/^0x/ { flush(); if (n++) print "--"; levels = 0; caller = ""; next }
		!name { if (match($0, / inlined at .* in [^ ]+$/)) {
				callsite = substr($0, RSTART + 11); sub(/ in [^ ]+$/, "", callsite)
				sub(/:[0-9]+$/, "", callsite)
				caller = $0; sub(/.* in /, "", caller)
			}
			sub(/ inlined at .*/, ""); sub(/ \(inlined by\)/, ""); name = $1; next }
		{ sub(/ \(discriminator [0-9]+\)/, "")
		  if ($0 ~ /:[0-9]+:[0-9]+$/) sub(/:[0-9]+$/, "", $0)
		  if ($0 == "??:?" || $0 == "??") $0 = "??:0"
		  print name, $0; name = ""; levels++ }
		END { flush(); if (rebuilt) printf "%d levels rebuilt from \"inlined at ... in\"\n", rebuilt > "/dev/stderr" }' "$1"
}
norm_a2l "$out/eu.out" > "$out/eu.txt"
norm_a2l "$out/bu.out" > "$out/bu.txt"
# per address: the same chain?  The outermost name is the ELF symbol
# for kp-addr2sym (as perf and kallsyms show it: foo.constprop.0, for
# the DWARF function foo): clone suffixes are ignored.  File names agree when one is the other
# with a leading directory (libdw gives eu-addr2line's 0.188 build
# "debian/build/build_amd64_none_cloud-amd64/arch/x86/..." where it gives
# us "arch/x86/..." for the same line-table entry).
cmp_chains() {
	awk -v A="$1" -v B="$2" '
		function rd(f, arr,   l, i, s) { i = 0; s = ""
			while ((getline l < f) > 0) { if (l == "--") { arr[i++] = s; s = "" } else s = s l "\n" }
			arr[i++] = s; return i }
		function same_file(x, y) { return x == y || \
			(length(x) < length(y) && substr(y, length(y) - length(x)) == "/" x) || \
			(length(y) < length(x) && substr(x, length(x) - length(y)) == "/" y) }
		# 2: the same; 1: the same but for the outermost function name
		# (kp-addr2sym gives the ELF symbol, with perf'"'"'s choice among
		# aliases: __ia32_sys_gettid where DWARF says __do_sys_gettid);
		# 0: different
		function same(x, y,   nx, ny, lx, ly, i, fx, fy, r) {
			nx = split(x, lx, "\n"); ny = split(y, ly, "\n")
			if (nx != ny) return 0
			r = 2
			for (i = 1; i <= nx; i++) {
				if (lx[i] == ly[i]) continue
				split(lx[i], fx, " "); split(ly[i], fy, " ")
				# the symbol of a GCC clone is the function
				sub(/(\.(constprop|part|isra|cold|lto_priv)(\.[0-9]+)*)+$/, "", fx[1])
				sub(/(\.(constprop|part|isra|cold|lto_priv)(\.[0-9]+)*)+$/, "", fy[1])
				if (!same_file(fx[2], fy[2])) return 0
				if (fx[1] != fy[1]) {
					if (i != nx - 1) return 0
					r = 1
				}
			}
			return r }
		BEGIN { na = rd(A, a); nb = rd(B, b); ok = 0; alias = 0; bad = 0
			for (i = 0; i < na; i++) {
				r = same(a[i], b[i])
				if (r == 2) ok++
				else if (r == 1) alias++
				else { bad++; if (shown++ < ENVIRON["SHOW"] + 0) printf "  differs:\n%s  vs\n%s", a[i], b[i] }
			}
			printf "%d of %d addresses agree, %d but for the outermost name (ELF alias), %d differ\n", ok, na, alias, bad
			exit bad > 0 }'
}
st=0
echo "kp-addr2sym vs eu-addr2line (names, lines, inline chains):"
SHOW=10 cmp_chains "$out/kp.txt" "$out/eu.txt" || st=1
echo "kp-addr2sym vs binutils addr2line (for reference):"
cmp_chains "$out/kp.txt" "$out/bu.txt" | tail -1 || true
exit $st
