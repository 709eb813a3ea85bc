#!/bin/bash
# --data: the mapping of each sample's data address as the outermost
# frame.  A program that fills 64 MB of fresh memory takes most of its
# page faults in an anonymous mapping: most of the samples of
# page-faults -c 1 are under [anon] or [heap].
. "$(dirname "$0")/lib.inc"
command -v python3 > /dev/null || skip "no python3"

kp-sample -e page-faults -c 1 --data python3 -c 'b = bytearray(64 << 20)' > "$T/d" 2> "$T/err" ||
	fail "--data: exit $?: $(cat "$T/err")"
complete "$T/d" || fail "--data: incomplete output"
[ -n "$(meta "$T/d" data)" ] || fail "--data: no '# data:' line"
kp-fold "$T/d" | awk '{ n = split($1, f, ";"); r[f[1]] += $NF; t += $NF }
	END { for (k in r) printf "%d %s\n", r[k], k; printf "%d TOTAL\n", t }' | sort -rn > "$T/roots"
head -6 "$T/roots"
t=$(awk '$2 == "TOTAL" { print $1 }' "$T/roots")
a=$(awk '$2 == "[anon]" || $2 == "[heap]" { s += $1 } END { print s + 0 }' "$T/roots")
# 64 MB in 4 KiB pages is 16384 faults
[ "$a" -ge 16384 ] || fail "--data: $a faults under [anon] or [heap], fewer than 64 MB of pages"
[ $((a * 2)) -gt "$t" ] || fail "--data: $a of $t faults under [anon] or [heap]"
# every root frame is a mapping's name
bad=$(awk '$2 != "TOTAL" && $2 !~ /^(\[(anon|heap|stack|vdso|vvar|kernel|unknown)\]|\/)/' "$T/roots")
[ -z "$bad" ] || fail "--data: roots that name no mapping: $bad"
