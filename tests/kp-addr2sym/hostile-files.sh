#!/usr/bin/env bash
# hostile-files.sh - files named in the input are opened as regular
# files only: a FIFO as a user frame's module is refused with a warning
# and its frame keeps its address (it hung kp-addr2sym forever); so is a
# directory.  A '# archive:' naming a directory that is not there is
# said, not silently replaced by /proc/kallsyms.
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
ks="$(dirname "$0")/cases/kallsyms.txt"
case "$ks" in /*) ;; *) ks="$OLDPWD/$ks" ;; esac

mkfifo f
mkdir d
printf '!\n 0x2955 [%s/f]\n\t1\n!\n 0x2956 [%s/d]\n\t1\n!\n' "$tmp" "$tmp" > in.kp
timeout 10 kp-addr2sym -k "$ks" in.kp > out 2> err
st=$?
[ $st -eq 124 ] && { echo "FAIL: kp-addr2sym hangs on a FIFO"; exit 1; }
[ $st -eq 0 ] || { echo "FAIL: exit $st"; cat err; fail=1; }
printf '!\n 0x0000000000002955 [%s/f]\n\t1\n!\n 0x0000000000002956 [%s/d]\n\t1\n!\n' "$tmp" "$tmp" > want
diff -u want out || { echo "FAIL: the frames must keep their addresses"; fail=1; }
grep -qx "kp-addr2sym: $tmp/f: not a regular file; its frames stay addresses" err ||
	{ echo "FAIL: FIFO not named:"; cat err; fail=1; }
grep -qx "kp-addr2sym: $tmp/d: Is a directory; its frames stay addresses" err ||
	{ echo "FAIL: directory not named:"; cat err; fail=1; }

# '# archive:' of a directory that is gone: said, and what is used instead
printf '# archive: %s/gone\n!\n 0xffffffff81000000 [kernel]\n\t1\n!\n' "$tmp" > arch.kp
kp-addr2sym arch.kp > out 2> err
grep -qx "kp-addr2sym: # archive: $tmp/gone: No such file or directory; kernel symbols from /proc/kallsyms" err ||
	{ echo "FAIL: a missing archive is not said:"; cat err; fail=1; }
# with -k the archive's kallsyms is not wanted, but its absence is still said
kp-addr2sym -k "$ks" arch.kp > out 2> err
grep -qx "kp-addr2sym: # archive: $tmp/gone: No such file or directory; not used" err ||
	{ echo "FAIL: -k, missing archive:"; cat err; fail=1; }
# '# archive:' whose kallsyms is a FIFO planted there: named, not read
mkdir fifo-arch
mkfifo fifo-arch/kallsyms
printf '# archive: %s/fifo-arch\n!\n 0xffffffff81000010 [kernel]\n\t1\n!\n' "$tmp" > fa.kp
timeout 10 kp-addr2sym fa.kp > out 2> err
st=$?
[ $st -eq 124 ] && { echo "FAIL: kp-addr2sym hangs on an archive's FIFO kallsyms"; exit 1; }
grep -qx "kp-addr2sym: $tmp/fifo-arch/kallsyms: not a regular file; kernel frames stay addresses" err ||
	{ echo "FAIL: the archive's FIFO is not named:"; cat err; fail=1; }
grep -q '^ 0xffffffff81000010 \[kernel\]$' out || { echo "FAIL: the frame must keep its address"; cat out; fail=1; }
exit $fail
