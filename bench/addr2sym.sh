#!/usr/bin/env bash
# bench/addr2sym.sh - kp-addr2sym figures.
#
# 1. 1,000,000 frames with 100,000 distinct kernel addresses (10 frames
#    a record, 100,000 records) resolved against the kallsyms snapshot
#    samples/kallsyms-6.18.44-fc.xz.  Target: under 1 s.  Peak RSS.
# 2. Optional, with a vmlinux that has DWARF (Debian's
#    linux-image-*-cloud-amd64-dbg, ~280 MB: not fetched here; set
#    KP_VMLINUX=/usr/lib/debug/boot/vmlinux-VERSION): 10,000 addresses of
#    its text resolved with kp-addr2sym -e -l -i, eu-addr2line -f -i and
#    binutils addr2line -f -i; names, lines and inline chains compared
#    with eu-addr2line's (they must agree), and the three timed.  Target:
#    kp-addr2sym at least 10x faster than eu-addr2line.
set -eu
. "$(dirname "$0")/lib.sh"
out=$KP_TOP/bench/out
mkdir -p "$out"
ks=$out/kallsyms-6.18.44-fc
[ -s "$ks" ] || xz -dc "$KP_TOP/samples/kallsyms-6.18.44-fc.xz" > "$ks"

# 100,000 distinct text addresses (a symbol, its last hex digit replaced
# by a small offset when it is 0), then records of 10 of them; awk keeps
# the addresses as strings (they do not fit a double).
in=$out/addr2sym-1M.kp
if [ ! -s "$in" ]; then
	awk 'tolower($2) == "t" && !seen[$1]++ {
		a = $1
		if (substr(a, 16, 1) == "0") a = substr(a, 1, 15) sprintf("%x", n % 16)
		if (used[a]++) { a = $1; if (used[a]++) next }
		addr[n++] = a
		if (n == 100000) exit }
	END {
		if (n < 100000) { print "too few symbols" > "/dev/stderr"; exit 1 }
		for (r = 0; r < 100000; r++) {
			print "!"
			for (j = 0; j < 10; j++)
				printf " 0x%s [kernel]\n", addr[(r * 10 + j) * 7919 % n]
			print "\t1"
		}
		print "!" }' "$ks" > "$in"
fi
frames=$(grep -c '^ 0x' "$in")
distinct=$(grep '^ 0x' "$in" | sort -u | wc -l)
echo "input: $frames frames, $distinct distinct addresses, $(stat -c %s "$in") bytes"
measure "kp-addr2sym -k kallsyms (1M frames)" "$(stat -c %s "$in")" \
	kp-addr2sym -k "$ks" "$in"
# cpu time too: elapsed time is noisy on a shared machine
/usr/bin/time -f "%e %U %S" -o "$out/.cpu" kp-addr2sym -k "$ks" "$in" > /dev/null 2> /dev/null
read -r e u sy < "$out/.cpu"
awk -v e="$e" -v u="$u" -v s="$sy" 'BEGIN {
	printf "  one more run: %.2f s elapsed, %.2f s cpu (user %.2f, sys %.2f)\n", e, u + s, u, s }'
kp-addr2sym -k "$ks" "$in" 2>&1 > /dev/null | sed 's/^/  stderr: /' | head -3
measure "kp-addr2sym load kallsyms only" 0 kp-addr2sym -k "$ks" /dev/null

vm=${KP_VMLINUX:-}
if [ -z "$vm" ] || [ ! -f "$vm" ]; then
	echo "vmlinux comparison not run: set KP_VMLINUX to a vmlinux with DWARF"
	echo "  (apt-get download linux-image-\$(uname -r)-dbg or the cloud-amd64-dbg package;"
	echo "   dpkg-deb -x it; KP_VMLINUX=.../usr/lib/debug/boot/vmlinux-VERSION)"
	exit 0
fi
bash "$KP_TOP/bench/addr2sym-vmlinux.sh" "$vm"
