#!/usr/bin/env bash
# kp-stat on real captures (samples/): each number against awk over the
# kp text, or against kp-inclusive.
set -eu
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
caps=()
perf2kp "$KP_TOP/samples/perf-report-kernel.script" > "$t/kernel.kp"; caps+=("$t/kernel.kp")
cp "$KP_TOP/samples/kp-sample-dd-a.kp" "$t/dd.kp"; caps+=("$t/dd.kp")
if command -v xz > /dev/null; then
	xz -dc "$KP_TOP/samples/perf-build-a-g.txt.xz" | perf2kp > "$t/build.kp"
	caps+=("$t/build.kp")
fi
for cap in "${caps[@]}"; do
	name=$(basename "$cap")
	kp-stat --format tsv "$cap" > "$t/tsv"
	kp-stat --format json "$cap" > "$t/json"
	kp-stat "$cap" > "$t/text"
	v() { awk -F '\t' -v s="$1" -v n="$2" '$1 == s && $2 == n { print $3 }' "$t/tsv"; }
	# samples, records, depth, truncation, roots and spaces, from the text:
	# per record its frame count, whether a frame is in the kernel half,
	# whether its root is a bare address
	awk '
	/^[ \t]*!/ || /^#/ || /^[ \t]*$/ { next }
	/^[ \t]*[0-9]+[ \t]*$/ { c = $1 + 0; s += c; r++; if (n > max) max = n
		if (n + k + u >= 127) tr += c
		if (k && u) mixed += c; else if (k) kern += c; else user += c
		if (rootaddr) ra += c
		n = 0; k = 0; u = 0; next }
	{ n++; line = $0; sub(/^[ \t]+/, "", line)
	  kernel = (line ~ /^0xffff[89a-f]/) || (line ~ /^: .+ \[(kernel|vmlinux[^]]*|\[kernel\.kallsyms\]|[a-z0-9_]+)\]$/)
	  if (kernel) k = 1; else u = 1
	  rootaddr = (line ~ /^0x[0-9a-f]+( \[[^]]*\])?$/) }
	END { print s, r, max, tr + 0, kern + 0, user + 0, mixed + 0, ra + 0 }' "$cap" > "$t/awk"
	read -r s r max tr kern user mixed ra < "$t/awk"
	got="$(v count samples) $(v count records) $(v depth max) $(v trust truncated) $(v space kernel) $(v space user) $(v space mixed) $(v trust root_address)"
	[ "$got" = "$s $r $max $tr $kern $user $mixed $ra" ] || { echo "$name: kp-stat $got, awk $s $r $max $tr $kern $user $mixed $ra"; exit 1; }
	# distinct stacks: the records of kp-top --by stack, which merges them
	[ "$(v count stacks)" = "$(kp-top --by stack -n 0 "$cap" | grep -c '^[0-9	]*[0-9]$')" ]
	# the contexts are kp-inclusive --by context's, the modules --by module's
	kp-inclusive --by context --format tsv "$cap" | awk -F '\t' 'NR > 2 { print $5, $2 }' | sort > "$t/a"
	awk -F '\t' '$1 == "context" && $3 > 0 { print $2, $3 }' "$t/tsv" | sort > "$t/b"
	diff "$t/a" "$t/b"
	kp-inclusive --by module --format tsv "$cap" | awk -F '\t' 'NR > 2 { print $5, $2, $4 }' > "$t/a"
	awk -F '\t' '$1 == "module" { m = $2; i = $3 } $1 == "module_leaf" { print m, i, $3 }' "$t/tsv" > "$t/b"
	diff "$t/a" "$t/b"
	# json and text carry the same numbers
	python3 - "$t/json" "$s" "$r" "$max" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["samples"] == int(sys.argv[2]) and j["records"] == int(sys.argv[3]), j
assert j["depth"]["max"] == int(sys.argv[4]), j["depth"]
assert sum(h["samples"] for h in j["depth"]["histogram"]) == j["samples"]
assert sum(c["samples"] for c in j["contexts"].values()) == j["samples"]
assert sum(c["samples"] for c in j["space"].values()) == j["samples"]
assert j["depth"]["min"] <= j["depth"]["median"] <= j["depth"]["p90"] <= j["depth"]["p99"] <= j["depth"]["max"]
PY
	grep -qx "samples          $s" "$t/text"
	grep -q "^truncated        $tr samples" "$t/text"
	echo "$name: ok"
done
# --max-stack: a 127-frame kernel stack (and its marker) is cut; at 200 not
awk 'BEGIN { print "!"; for (i = 0; i < 126; i++) printf " 0xffffffff8100%04x : f%d [kernel]\n", i, i; print "\t3" }' > "$t/cut.kp"
[ "$(kp-stat --format tsv "$t/cut.kp" | awk -F '\t' '$2 == "truncated" { print $3 }')" = 3 ]
[ "$(kp-stat --format tsv --max-stack 200 "$t/cut.kp" | awk -F '\t' '$2 == "truncated" { print $3 }')" = 0 ]
echo ok
