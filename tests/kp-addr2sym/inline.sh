#!/usr/bin/env bash
# inline.sh - kp-addr2sym -e PROG -l -i against eu-addr2line -f -i on a
# program built here with -g -O2 and inline functions: for every byte
# address of its functions, the chain of (function, file:line) must be
# the same, innermost first.  Once as leaf frames (the address itself),
# once as return addresses (kp looks up pc - 1: compared with
# eu-addr2line on address - 1).
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "skipped: no C compiler"; exit 77; }
command -v eu-addr2line > /dev/null || { echo "skipped: no eu-addr2line (elfutils)"; exit 77; }
command -v nm > /dev/null || { echo "skipped: no nm (binutils)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/t.c" <<'C'
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;

static inline __attribute__((always_inline)) int
leaf(int x)
{
	sink = x * 3;
	return sink + 1;
}

static inline __attribute__((always_inline)) int
mid(int x)
{
	int r = leaf(x + 1);

	return r * 2 + leaf(r);
}

__attribute__((noinline)) int
helper(int x)
{
	sink = x;
	return sink ^ 0x55;
}

__attribute__((noinline)) int
outer(int x)
{
	int s = mid(x) + mid(x * 5);

	if (s & 1)
		s += helper(s);
	return s + leaf(helper(x));
}

int
main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", outer(argc));
	return 0;
}
C
"$cc" -g -O2 -o "$tmp/prog" "$tmp/t.c" || { echo "cannot compile"; exit 1; }
# every byte address of outer and helper
nm -S "$tmp/prog" | awk '$4 == "outer" || $4 == "helper" { print $1, $2 }' |
while read -r a n; do
	for ((i = 0; i < 16#$n; i++)); do printf '%x\n' $((16#$a + i)); done
done > "$tmp/addrs"
[ -s "$tmp/addrs" ] || { echo "no addresses (nm -S)"; exit 1; }
main=$(nm "$tmp/prog" | awk '$3 == "main" { print $1 }')

# eu-addr2line -a -f -i: "0xADDR", then "name[ inlined at ...]" and
# "file:line:col" for each level; to "name file:line" lines.
eu() {
	eu-addr2line -a -f -i -e "$tmp/prog" $(cat "$1") | awk '
		/^0x/ { if (n++) print "--"; next }
		!name { sub(/ inlined at .*/, ""); name = $0; next }
		{ sub(/:[0-9]+$/, "", $0); print name, $0; name = "" }
		END { print "--" }'
}
# kp: each distinct record once; frames leaf first
awk '{ printf "!\n 0x%s\n\t1\n", $1 } END { print "!" }' "$tmp/addrs" > "$tmp/leaf.kp"
awk -v m="$main" '{ printf "!\n 0x%s\n 0x%s\n\t1\n", m, $1 } END { print "!" }' "$tmp/addrs" > "$tmp/ret.kp"
while read -r a; do printf '%x\n' $((16#$a - 1)); done < "$tmp/addrs" > "$tmp/addrs-1"

kp-addr2sym -e "$tmp/prog" -l -i "$tmp/leaf.kp" > "$tmp/leaf.out" || exit 1
kp-addr2sym -e "$tmp/prog" -l -i "$tmp/ret.kp" > "$tmp/ret.out" || exit 1

# leaf: all frames of each record; ret: the frames after main's
awk '/^!/ { if (n++) print "--"; next }
	/^ 0x/ { name = $3; sub(/\+0x.*/, "", name)
		file = "??"
		if (match($0, /\(at [^)]*\)$/))
			file = substr($0, RSTART + 4, RLENGTH - 5)
		print name, file }' "$tmp/leaf.out" | sed '$d' > "$tmp/kp-leaf"
awk '/^!/ { if (n++) print "--"; first = 1; next }
	/^ 0x/ { if (first && $0 !~ /\(inline\)/) { first = 0; next }
		if (first) next
		name = $3; sub(/\+0x.*/, "", name)
		file = "??"
		if (match($0, /\(at [^)]*\)$/))
			file = substr($0, RSTART + 4, RLENGTH - 5)
		print name, file }' "$tmp/ret.out" | sed '$d' > "$tmp/kp-ret"
eu "$tmp/addrs" | sed '$d' > "$tmp/eu-leaf"
eu "$tmp/addrs-1" | sed '$d' > "$tmp/eu-ret"

n=$(wc -l < "$tmp/addrs")
inl=$(grep -c '(inline)' "$tmp/leaf.out")
echo "$n addresses, $inl inline frames"
[ "$inl" -gt 0 ] || { echo "no inline frames: the test program is not inlined"; exit 1; }
ok=0
diff -u "$tmp/eu-leaf" "$tmp/kp-leaf" > "$tmp/d1" || { echo "leaf frames differ from eu-addr2line:"; head -40 "$tmp/d1"; ok=1; }
diff -u "$tmp/eu-ret" "$tmp/kp-ret" > "$tmp/d2" || { echo "return addresses differ from eu-addr2line at pc - 1:"; head -40 "$tmp/d2"; ok=1; }
exit $ok
