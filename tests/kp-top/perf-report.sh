#!/usr/bin/env bash
# kp-top (--by module, and by function) against perf itself: on the real capture
# samples/perf-report-kernel.* (see the .how files), each program image's
# share of "perf script | perf2kp --weight period | kp-top --by module"
# equals perf report --sort dso --no-children within 0.01 points.  perf
# names an image by its file name and the kernel "[kernel.kallsyms]";
# kp-top by its path and "kernel".
set -euo pipefail
[ -x "$KP_BIN/perf2kp" ] || { echo "skipped: no perf2kp"; exit 77; }
s="$KP_TOP/samples/perf-report-kernel"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
perf2kp --weight period "$s.script" | kp-top --by module -n 0 > "$t/top"
# "    41.26%  [kernel.kallsyms]      " -> "41.26<TAB>[kernel.kallsyms]"
awk '/^#/ || NF == 0 { next }
     { pct = $1; sub(/%$/, "", pct); name = $0
       sub(/^ *[0-9.]+% +/, "", name); sub(/ +$/, "", name)
       print pct "\t" name }' "$s.dso" > "$t/perf"
# "385385385   41.26%   41.26%  kernel" -> "41.26<TAB>kernel"
awk 'NR == 1 || $NF == "Total" { next }
     { pct = $2; sub(/%$/, "", pct); name = $0
       sub(/^ *[0-9]+ +[0-9.]+% +[0-9.]+% +/, "", name)
       if (name == "kernel") name = "[kernel.kallsyms]"
       else sub(/.*\//, "", name)
       print pct "\t" name }' "$t/top" > "$t/kp"
awk -F '\t' -v kp="$t/kp" '
BEGIN { while ((getline l < kp) > 0) { split(l, f, "\t"); got[f[2]] = f[1] } }
# perf2kp does not parse a "(memfd:... (deleted))" image name yet
/\(deleted\)$/ { left++; next }
{ n++
  if (!($2 in got)) { print "missing in kp-top: " $2; bad++; next }
  d = got[$2] - $1; if (d < 0) d = -d
  if (d > 0.01) { printf "%s: perf %s%%, kp-top %s%%\n", $2, $1, got[$2]; bad++ } }
END { printf "%d images compared, %d left out, %d bad\n", n, left, bad
      exit !(n >= 8 && bad == 0) }' "$t/perf"

# and each leaf function's share equals perf report --no-children --sort
# symbol (rows perf splits by program, and unresolved addresses, left out)
perf2kp --weight period "$s.script" | kp-top -n 0 > "$t/top"
awk '/^#/ || NF == 0 { next }
     { pct = $1; sub(/%$/, "", pct); name = $0
       sub(/^ *[0-9.]+% +\[.\] /, "", name); sub(/ +- +- *$/, "", name)
       print pct "\t" name }' "$s.self" > "$t/perf"
awk 'NR == 1 || $NF == "Total" { next }
     { pct = $2; sub(/%$/, "", pct); name = $0
       sub(/^ *[0-9]+ +[0-9.]+% +[0-9.]+% +/, "", name)
       print pct "\t" name }' "$t/top" > "$t/kp"
awk -F '\t' -v kp="$t/kp" '
BEGIN { while ((getline l < kp) > 0) { split(l, f, "\t"); got[f[2]] = f[1] } }
{ if ($2 ~ /^0x[0-9a-f]+$/ || ($2 ~ /^[0-9a-f]+$/ && length($2) == 16)) { left++; next }
  cnt[$2]++; want[$2] = $1 }
END { for (k in want) {
	if (cnt[k] > 1) { left++; continue }
	n++
	if (!(k in got)) { print "missing in kp-top: " k; bad++; continue }
	d = got[k] - want[k]; if (d < 0) d = -d
	if (d > 0.01) { printf "%s: perf %s%%, kp-top %s%%\n", k, want[k], got[k]; bad++ } }
      printf "%d leaf functions compared, %d perf rows left out, %d bad\n", n, left, bad
      exit !(n >= 100 && bad == 0) }' "$t/perf"
