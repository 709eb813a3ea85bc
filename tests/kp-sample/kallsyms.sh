#!/bin/bash
# Kernel frames of a kernel-heavy workload resolve to names found in
# /proc/kallsyms, at the address kallsyms gives (ADDR - OFF = the
# symbol's address), with the size up to the next symbol; callchain
# context markers (PERF_CONTEXT_*) never appear as frames; _stext and
# the kernel release are in the metadata.
. "$(dirname "$0")/lib.inc"

kp-sample -e cpu-clock -F 1999 -- dd if=/dev/zero of=/dev/null bs=4k count=300000 \
	> "$T/out" 2> "$T/err" || fail "exit $?: $(cat "$T/err")"
complete "$T/out" || fail "no final '!'"
grep -E '^ 0xffffffff[0-9a-f]{8} : ' "$T/out" > "$T/kframes" || fail "no kernel frames"
echo "$(wc -l < "$T/kframes") kernel frame lines"
grep -qiE '^ 0xffffffffffff[ef]' "$T/out" && fail "a context marker is printed as a frame"
grep -q 'read_zero\|__x64_sys_read\|ksys_read\|vfs_read' "$T/out" || fail "dd's read path is missing"
# "ADDR : SYM+0xOFF/0xSIZE [kernel]" -> "SYMADDR SYM"
sed -E 's/^ 0x([0-9a-f]+) : ([^ +]+)\+0x([0-9a-f]+)\/0x([0-9a-f]+) \[([^]]+)\]$/\1 \2 \3 \5/' \
	"$T/kframes" | sort -u > "$T/parsed"
grep -vqE '^[0-9a-f]+ [^ ]+ [0-9a-f]+ [^ ]+$' "$T/parsed" && fail "unparsable frame: $(grep -vE '^[0-9a-f]+ [^ ]+ [0-9a-f]+ [^ ]+$' "$T/parsed" | head -1)"
while read -r a s o m; do
	printf '%016x %s\n' $((0x$a - 0x$o)) "$s"
done < "$T/parsed" | sort -u > "$T/want"
awk '{ print $1, $3 }' /proc/kallsyms | sort -u > "$T/kallsyms"
missing=$(comm -23 "$T/want" "$T/kallsyms")
[ -z "$missing" ] || fail "not in /proc/kallsyms (address name): $missing"
echo "$(wc -l < "$T/want") distinct symbols, all in /proc/kallsyms"
grep -q "^# stext: 0x$(awk '$3 == "_stext" { print $1 }' /proc/kallsyms)$" "$T/out" || fail "# stext wrong"
[ "$(meta "$T/out" kernel)" = "$(uname -r)" ] || fail "# kernel: $(meta "$T/out" kernel)"
echo ok
