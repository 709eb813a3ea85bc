#!/usr/bin/env bash
# Code in memory no file backs, named as perf names it (util/map.c
# map__new): anonymous memory ("//anon", "/dev/zero", "/anon_hugepage",
# MAP_HUGETLB), the heap, the stack and SysV shared memory are the
# process's JIT symbol file "/tmp/perf-PID.map" at the address itself; a
# memfd, a file deleted while mapped ("... (deleted)") and "[anon:NAME]"
# keep their names, at file offsets.  None is opened and none is warned
# about.  On samples/perfdata-pseudo.data (the kernel's MMAP2 records) and
# perfdata-pseudo-p.data (-p: the mappings perf read from /proc, where
# anonymous memory has no name and offset 0), see their .how, checked
# against what perf printed when they were recorded:
#  - the only message is the one of the program itself, removed since;
#  - every sample's innermost frame is perf script's (the .script.xz):
#    the same module and address or file offset;
#  - "perf2kp FILE | kp-fold" equals "perf script | perf2kp | kp-fold" but
#    for the samples in a file whose name holds a blank, which perf
#    script's text cannot delimit (counted, as in fold.sh).
# Then on copies of perfdata-pseudo-p.data whose //anon is "[anon:]" and
# whose memfd is MAP_HUGETLB (python3), what perf script gives for them:
# "[anon:]" at the file offset, the memfd "/tmp/perf-PID.map".
. "$KP_TOP/tests/perf2kp-data/setup.bash"
[ -x "$KP_BIN/kp-fold" ] || { echo "skipped: no kp-fold"; exit 77; }

# the innermost frame of each sample, "MODULE+0xOFF COUNT", sorted
kp_leaves() { # kp file
	awk '/^!/ { first = 1; next } first == 1 && /^ 0x/ { f = $0; first = 2; next }
	     first && /^\t[0-9]+$/ { print f "\t" substr($0, 2); first = 0 }' "$1" |
	sed 's/^ 0x[0-9a-f]* \[\(.*\)+0x\([0-9a-f]*\)\]\t/\1+0x\2 /' |
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); c[$0] += n } END { for (k in c) print k, c[k] }' | sort
}
perf_leaves() { # perf script text
	awk 'NF == 0 { first = 1; next } first && /^\t/ { print; first = 0 }
	     BEGIN { first = 0 } /^[^\t]/ { first = 1 }' "$1" |
	sed 's/^\t *\([0-9a-f]*\) \[unknown\] (\(.*\))$/\2+0x\1/' |
	awk '{ c[$0]++ } END { for (k in c) print k, c[k] }' | sort
}

for c in pseudo pseudo-p; do
	echo "== $c"
	d="$S/perfdata-$c"
	xz -dc "$d.script.xz" > "$t/script"
	prog=$(sed -n 's/^\t *[0-9a-f]* \[unknown\] (\(\/tmp\/tmp\.[^ ]*\/pseudo\))$/\1/p' "$t/script" | head -1)
	[ -n "$prog" ] || { echo "FAIL: no program in perf's script"; fail=1; continue; }
	if [ -e "$prog" ]; then echo "skipped: $prog exists here"; exit 77; fi
	HOME="$t" perf2kp "$d.data" 2> "$t/err" > "$t/data.kp"
	want "$c: only the program, removed since, is said" \
		"perf2kp: $prog: No such file or directory; its frames stay addresses" "$(cat "$t/err")"
	kp_leaves "$t/data.kp" > "$t/kp.leaves"
	perf_leaves "$t/script" > "$t/perf.leaves"
	if cmp -s "$t/perf.leaves" "$t/kp.leaves"; then
		echo "ok: $c: innermost frames as perf's: $(tr '\n' ' ' < "$t/kp.leaves")"
	else
		echo "FAIL: $c: innermost frames:"; diff "$t/perf.leaves" "$t/kp.leaves"; fail=1
	fi
	for kind in "/tmp/perf-[0-9]*\.map" "/memfd:kp-jit (deleted)" "/tmp/kp-pseudo-.* (deleted)"; do
		grep -q "^$kind+0x" "$t/kp.leaves" || { echo "FAIL: $c: no frame in $kind"; fail=1; }
	done
	# the heap, the stack, //anon and /dev/zero: four mappings of perf-PID.map
	want "$c: four mappings named /tmp/perf-PID.map" 4 "$(grep -c '^/tmp/perf-[0-9]*\.map+0x' "$t/kp.leaves")"
	# whole stacks, but those with a blank in a module name
	kp-fold < "$t/data.kp" | awk '{ s = $0; sub(/ [0-9]+$/, "", s) } s !~ / / { print }' | sort > "$t/data.fold"
	awk 'BEGIN { RS = ""; FS = "\n" } { for (i = 2; i <= NF; i++) if ($i ~ / \([^ ]+ .*\)$/) next; print; print "" }' \
		"$t/script" | perf2kp 2> /dev/null | kp-fold | sort > "$t/text.fold"
	if cmp -s "$t/text.fold" "$t/data.fold"; then
		left=$(( $(awk '{ s += $NF } END { print s }' < <(kp-fold < "$t/data.kp")) - $(awk '{ s += $NF } END { print s }' "$t/data.fold") ))
		echo "ok: $c: $(wc -l < "$t/data.fold") stacks equal; left out $left samples (a blank in a module)"
	else
		echo "FAIL: $c: stacks differ"; diff "$t/text.fold" "$t/data.fold" | head; fail=1
	fi
done

# perf's other rules, on copies of the -p capture's records
if command -v python3 > /dev/null; then
	python3 - "$S/perfdata-pseudo-p.data" "$t/patched.data" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
data_off, data_size = struct.unpack_from("<QQ", d, 40)
off, n = data_off, 0
while off < data_off + data_size:
    typ, misc, size = struct.unpack_from("<IHH", d, off)
    if typ == 10:  # MMAP2: pid tid start len pgoff maj min ino gen prot flags name
        name_off = off + 8 + 8 + 24 + 24 + 8
        name = bytes(d[name_off:off + size]).split(b"\0")[0]
        if name == b"//anon":
            d[name_off:name_off + 8] = b"[anon:]\0"
            n += 1
        elif name.startswith(b"/memfd:"):
            fl = name_off - 4
            struct.pack_into("<I", d, fl, struct.unpack_from("<I", d, fl)[0] | 0x40000)
            n += 1
    off += size
assert n == 2, n
open(sys.argv[2], "wb").write(d)
PY
	HOME="$t" perf2kp "$t/patched.data" 2> "$t/err" > "$t/data.kp"
	kp_leaves "$t/data.kp" > "$t/kp.leaves"
	# perf script -i of that copy: "7 [unknown] ([anon:])" for the one,
	# "7f0514887007 [unknown] (/tmp/perf-23175.map)" for the other
	anon=$(sed -n 's/^\/tmp\/perf-23175.map+0x\(7f0514889007\) .*/\1/p' < <(kp_leaves <(HOME="$t" perf2kp "$S/perfdata-pseudo-p.data" 2> /dev/null)))
	want "//anon at 0x7f0514889007 in the -p capture" 7f0514889007 "$anon"
	want "[anon:] at its file offset" "[anon:]+0x7" "$(grep -o '^\[anon:\]+0x[0-9a-f]*' "$t/kp.leaves")"
	want "a MAP_HUGETLB memfd: perf-PID.map at its address" "/tmp/perf-23175.map+0x7f0514887007" \
		"$(grep -o '^/tmp/perf-23175.map+0x7f0514887007' "$t/kp.leaves")"
	if grep -q memfd "$t/kp.leaves"; then echo "FAIL: the MAP_HUGETLB memfd kept its name"; fail=1; fi
	want "the copies: nothing more said" 1 "$(wc -l < "$t/err")"
else
	echo "not checked: [anon:NAME] and MAP_HUGETLB (no python3)"
fi
exit $fail
