#!/usr/bin/env bash
# perf-capture.sh - on a capture made here (samples/perf-report-kernel.*,
# perf 6.1 on Linux 6.18.44) kp-addr2sym with the kallsyms saved at
# capture time (samples/kallsyms-6.18.44-fc.xz) must give perf's own
# symbol and offset for every kernel frame perf resolved, except where
# pc - 1 names the true caller: a return address at offset 0 of perf's
# symbol (a call at the very end of the function before it).
set -u
export LC_ALL=C PATH="$KP_BIN:$PATH"
s=$KP_TOP/samples
[ -f "$s/perf-report-kernel.script" ] || { echo "skipped: no samples/perf-report-kernel.script"; exit 77; }
command -v xz > /dev/null || { echo "skipped: no xz"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xz -dc "$s/kallsyms-6.18.44-fc.xz" > "$tmp/kallsyms" || exit 1

# perf script: an event line, then "\tADDR SYM+0xOFF (DSO)" frames, leaf
# first, then a blank line:
#	work.sh  8201 [000]   517.654139:    1001001 cpu-clock:pppH:
#		ffffffff8168c196 __account_obj_stock+0x16 ([kernel.kallsyms])
# to kp with addresses only, and "ADDR leaf|ret SYM OFF" of perf's names
awk -v kp="$tmp/in.kp" -v names="$tmp/perf" '
	/^[^ \t]/ { if (n) printf "\t1\n", n > kp; print "!" > kp; n = 0; next }
	/^\t/ && $NF == "([kernel.kallsyms])" {
		printf " 0x%s [kernel]\n", $1 > kp
		if ($2 != "[unknown]") {
			sym = $2; off = "0x0"
			if (match(sym, /\+0x[0-9a-f]+$/)) {
				off = substr(sym, RSTART + 1); sym = substr(sym, 1, RSTART - 1)
			}
			print $1, (n ? "ret" : "leaf"), sym, off > names
		}
		n++
	}
	END { if (n) printf "\t1\n" > kp; print "!" > kp }' "$s/perf-report-kernel.script"
kp-addr2sym -k "$tmp/kallsyms" "$tmp/in.kp" > "$tmp/out.kp" 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
awk '/^!/ { n = 0; next }
	/^ 0x/ { a = substr($1, 3); sub(/^0+/, "", a)
		sym = $3; off = sym; sub(/\+.*/, "", sym); sub(/^[^+]*\+/, "", off); sub(/\/.*/, "", off)
		if ($2 == ":") print a, (n ? "ret" : "leaf"), sym, off
		n++ }' "$tmp/out.kp" > "$tmp/kp"
sort -u "$tmp/perf" > "$tmp/perf.s"
sort -u "$tmp/kp" > "$tmp/kp.s"
total=$(wc -l < "$tmp/perf.s")
[ "$total" -gt 100 ] || { echo "too few kernel frames in the capture: $total"; exit 1; }
# every perf frame must be in ours with the same name and offset
join -j1 <(awk '{ print $1 "/" $2, $3, $4 }' "$tmp/perf.s") \
	<(awk '{ print $1 "/" $2, $3, $4 }' "$tmp/kp.s") -a1 > "$tmp/j"
awk '
	NF < 5 { print "not resolved:", $0; bad++; next }
	$2 == $4 && $3 == $5 { same++; next }
	$1 ~ /\/ret$/ && $3 == "0x0" { caller++; print "pc - 1:", $0; next }
	{ print "differs:", $0; bad++ }
	END { printf "%d kernel frames: %d as perf, %d callers by pc - 1, %d wrong\n", NR, same, caller, bad
		exit bad > 0 }' "$tmp/j"
