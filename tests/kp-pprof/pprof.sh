#!/usr/bin/env bash
# kp-pprof, checked by pprof itself (`go tool pprof`, or a `pprof` on
# PATH): on each input, `pprof -top` gives the same total and the same
# flat and cum figures for every function as kp-inclusive's exclusive and
# inclusive, and `pprof -traces` gives back the same stacks and counts as
# kp-fold.  Also: inline chains are one Location with several Lines,
# the kernel mapping is [kernel.kallsyms] with has_functions, process/pid
# /tid labels, the sample types for weight=period and fixed periods,
# duration, empty input, determinism, write errors.
set -u
T=$KP_TOP/tests/kp-pprof
# pprof itself, or the one golang-go ships (what "go tool pprof" runs)
if command -v pprof > /dev/null; then PPROF=(pprof)
elif command -v go > /dev/null && [ -x "$(go env GOTOOLDIR)/pprof" ]; then PPROF=("$(go env GOTOOLDIR)/pprof")
else echo "skipped: no pprof (golang-go's go tool pprof)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp PPROF_TMPDIR=$tmp # pprof may write ~/pprof
fail() { echo "FAIL: $*"; exit 1; }
. "$KP_TOP/tests/pipe.inc"
pp() { "${PPROF[@]}" -symbolize=none "$@" 2> "$tmp/pp.err" || { cat "$tmp/pp.err"; fail "pprof $*"; }; }

# "name<TAB>flat<TAB>cum" per function and "total N", from pprof -top
top() {
	# -unit=ns: nanosecond values as plain numbers (and an "ns")
	pp -top -nodecount=1000000 -nodefraction=0 -sample_index=0 -unit=ns "$1" |
	awk '/ of [0-9]+(ns)? total/ { for (i = 1; i <= NF; i++) if ($i == "total") t = $(i - 1)
				      sub(/ns$/, "", t); print "total", t }
	     body { name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", name)
		    sub(/ \(inline\)$/, "", name); f = $1; c = $4; sub(/ns$/, "", f); sub(/ns$/, "", c)
		    print name "\t" f "\t" c }
	     /^ +flat +flat%/ { body = 1 }' | LC_ALL=C sort
}
# the same from kp-inclusive
incl() {
	kp-inclusive --format tsv "$1" |
	awk -F'\t' '/^# total: / { print "total", $0; next }
		    NR > 2 { print $5 "\t" $4 "\t" $2 }' |
	sed 's/^total # total: /total /' | LC_ALL=C sort
}
# pprof -traces as folded stacks (root first), merged and sorted
traces() {
	pp -traces -sample_index=0 -unit=ns "$1" | awk '
	function flush() { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s] += v } n = 0 }
	/^-----------\+/ { flush(); inb = 1; next }
	!inb { next }
	/^ *[0-9]+(ns)? +[^ ]/ && n == 0 { v = $1; sub(/ns$/, "", v); name = $0; sub(/^ *[0-9]+(ns)?   /, "", name); f[++n] = name; next }
	/^             [^ ]/ && n > 0 { name = substr($0, 14); f[++n] = name; next }
	END { flush(); for (s in c) print s, c[s] }' | sed 's/ (inline)//g' | LC_ALL=C sort
}

norm() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, a, ";"); s = ""
	       for (i = 1; i <= k; i++) { if (a[i] ~ /^\[.*\]$/) a[i] = "[?]"; s = s (i > 1 ? ";" : "") a[i] }
	       c[s] += n } END { for (s in c) print s, c[s] }' | LC_ALL=C sort
}

check() { # input.kp label
	kp-pprof -o "$tmp/p.pb.gz" "$1" || fail "kp-pprof $2"
	top "$tmp/p.pb.gz" > "$tmp/top"
	incl "$1" > "$tmp/incl"
	diff -u "$tmp/incl" "$tmp/top" > "$tmp/d" || { head -30 "$tmp/d"; fail "$2: pprof -top differs from kp-inclusive"; }
	# kp-fold names a frame without symbol [file name of module],
	# kp-inclusive (and so kp-pprof) [module path]: compare those as [?]
	traces "$tmp/p.pb.gz" | norm > "$tmp/tr"
	kp-fold "$1" | norm > "$tmp/fold"
	diff -u "$tmp/fold" "$tmp/tr" > "$tmp/d" || { head -30 "$tmp/d"; fail "$2: pprof -traces differs from kp-fold"; }
	echo "ok: $2: $(grep -c . "$tmp/top") functions and total, $(grep -c . "$tmp/fold") stacks agree"
}

check "$KP_TOP/tests/kp-flame/basic.in" basic
check "$T/inline-labels.kp" inline-labels
if [ -x "$KP_BIN/perf2kp" ]; then
	for o in "" --pid --tid; do
		perf2kp $o < "$KP_TOP/samples/perf-report-kernel.script" > "$tmp/cap.kp" || fail perf2kp
		check "$tmp/cap.kp" "real capture perf2kp $o"
	done
	# weight period on cpu-clock: the values are nanoseconds
	perf2kp --weight period < "$KP_TOP/samples/perf-report-kernel.script" > "$tmp/ns.kp"
	kp-pprof "$tmp/ns.kp" > "$tmp/ns.pb.gz"
	pp -raw "$tmp/ns.pb.gz" > "$tmp/raw"
	grep -qx 'cpu/nanoseconds' "$tmp/raw" || fail "weight period: not cpu/nanoseconds"
	check "$tmp/ns.kp" "real capture, weight period"
fi

# one Location for an inline chain, innermost Line first, file and line
kp-pprof "$T/inline-labels.kp" > "$tmp/i.pb.gz"
pp -raw "$tmp/i.pb.gz" > "$tmp/raw"
grep -A1 ': 0xffffffff81001234 M=1 inner_helper fs/read_write.c:100 ' "$tmp/raw" |
	grep -q '^ *vfs_read fs/read_write.c:450' || fail "inline chain location"
grep -q '^1: 0x.* \[kernel.kallsyms\] .*\[FN\]' "$tmp/raw" || fail "kernel mapping with has_functions"
# labels: process and numeric pid, tid
pp -tags -sample_index=0 "$tmp/i.pb.gz" > "$tmp/tags"
grep -q 'process: Total 12.0' "$tmp/tags" || fail "process label"
grep -q '7.0 (58.33%): 43' "$tmp/tags" || fail "tid label"
grep -q '12.0 ( *100%): 42' "$tmp/tags" || fail "pid label"
# a fixed clock period: samples/count plus cpu/nanoseconds = count * period
grep -qx 'samples/count cpu/nanoseconds' "$tmp/raw" || fail "sample types"
grep -q '^ *7 *1750000: ' "$tmp/raw" || fail "cpu ns = 7 * 250000"
grep -q '^Duration: 1.5s' "$tmp/raw" || fail "duration"
grep -q '^Comment: period: 250000' "$tmp/raw" || fail "metadata as comments"
# --process: a bare outermost frame is the process name
printf '!\n : f [kernel]\n : bash\n\t3\n!\n' > "$tmp/c.kp"
kp-pprof --process "$tmp/c.kp" > "$tmp/c.pb.gz"
pp -tags -sample_index=0 "$tmp/c.pb.gz" | grep -q '3.0 ( *100%): bash' || fail "--process label"
kp-pprof "$tmp/c.kp" > "$tmp/c.pb.gz"
pp -tags -sample_index=0 "$tmp/c.pb.gz" | grep -q 'process' && fail "process label without --process"

# deterministic: same input, same bytes; stdin and -o alike
kp-pprof "$T/inline-labels.kp" > "$tmp/a"
kp-pprof -o "$tmp/b" < "$T/inline-labels.kp"
cmp "$tmp/a" "$tmp/b" || fail "not deterministic"
gzip -t "$tmp/a" || fail "not gzip"

# empty input: a valid empty profile and a note
kp-pprof < /dev/null > "$tmp/e.pb.gz" 2> "$tmp/err" || fail "empty exit"
grep -q 'no samples' "$tmp/err" || fail "empty note"
pp -raw "$tmp/e.pb.gz" | grep -q '^samples/count' || fail "empty profile"

# profile.proto's values are int64: a total above INT64_MAX (pprof would
# read it as negative), or its nanoseconds with a fixed clock period, is
# refused, exit 2, nothing written; INT64_MAX itself passes whole
printf '!\n : a [kernel]\n\t9223372036854775807\n!\n' | kp-pprof > "$tmp/max.pb.gz" || fail "INT64_MAX: exit $?"
pp -raw "$tmp/max.pb.gz" | grep -q '^ *9223372036854775807: 1 *$' || fail "INT64_MAX: not the value"
printf '!\n : a [kernel]\n\t9223372036854775808\n!\n' > "$tmp/big63.kp"
kp-pprof "$tmp/big63.kp" > "$tmp/o" 2> "$tmp/err"; st=$?
[ $st -eq 2 ] || fail "a count of 2^63: exit $st"
[ -s "$tmp/o" ] && fail "a count of 2^63: something written"
grep -q '^kp-pprof: the total count 9223372036854775808 is above 9223372036854775807 (INT64_MAX)' "$tmp/err" || fail "2^63: message"
printf '!\n : a [kernel]\n\t4611686018427387904\n!\n : b [kernel]\n\t4611686018427387904\n!\n' |
	kp-pprof > "$tmp/o" 2> /dev/null; st=$?
[ $st -eq 2 ] && [ ! -s "$tmp/o" ] || fail "two counts of 2^62: exit $st"
echo old > "$tmp/keep"
kp-pprof -o "$tmp/keep" "$tmp/big63.kp" 2> /dev/null
[ "$(cat "$tmp/keep")" = old ] || fail "a refused profile replaced the -o file"
printf '# event: cpu-clock\n# weight: samples\n# period: 1000\n!\n : a [kernel]\n\t9223372036854776\n!\n' |
	kp-pprof > "$tmp/o" 2> "$tmp/err"; st=$?
[ $st -eq 2 ] && [ ! -s "$tmp/o" ] || fail "count * period above INT64_MAX: exit $st"
grep -q 'samples of 1000 ns, is above' "$tmp/err" || fail "count * period: message"

# write errors are exit 2, and leave no file behind
if [ -w /dev/full ]; then
	kp-pprof "$T/inline-labels.kp" > /dev/full 2> "$tmp/err"; st=$?
	[ $st -eq 2 ] || fail "/dev/full: exit $st"
	kp-pprof -o /dev/full "$T/inline-labels.kp" 2> "$tmp/err"; st=$?
	[ $st -eq 2 ] || fail "-o /dev/full: exit $st"
	[ -c /dev/full ] || fail "/dev/full removed"
fi
kp-pprof -o "$tmp/no/such/dir/p.pb.gz" "$T/inline-labels.kp" 2> /dev/null; st=$?
[ $st -eq 2 ] || fail "-o bad dir: exit $st"
awk 'BEGIN { srand(1); for (i = 0; i < 20000; i++)
	printf "!\n 0x%x : f%d [kernel]\n 0x%x : g%d [kernel]\n\t%d\n", i * 16 + 4096, i, i * 64 + 1048576, int(rand() * 1e6), i + 1 }' > "$tmp/big.kp"
closed_pipe kp-pprof "$tmp/big.kp" 2> /dev/null; st=$?
[ $st -eq 141 ] || fail "closed pipe: exit $st (want SIGPIPE, 141)"

# pprof -http: its web UI (top table and flame graph) shows the functions
if command -v python3 > /dev/null; then
	port=$((20000 + $$ % 20000))
	"${PPROF[@]}" -symbolize=none -http="127.0.0.1:$port" -no_browser "$tmp/i.pb.gz" > "$tmp/http.log" 2>&1 &
	srv=$!
	python3 - "$port" <<'PY' || { kill $srv; cat "$tmp/http.log"; fail "pprof -http"; }
import sys, time, urllib.request
base = "http://127.0.0.1:%s" % sys.argv[1]
for _ in range(100):  # up to 10 s for the server to start
    try:
        urllib.request.urlopen(base + "/ui/top", timeout=5)
        break
    except OSError:
        time.sleep(0.1)
for page in ("/ui/top", "/ui/flamegraph"):
    text = urllib.request.urlopen(base + page, timeout=10).read().decode()
    for name in ("inner_helper", "vfs_read", "ksys_read"):
        if name not in text:
            sys.exit("%s: no %s" % (page, name))
print("pprof -http: top and flamegraph pages name the functions")
PY
	kill $srv
	wait $srv 2> /dev/null
fi

# a file that cannot be written whole (a size limit: EFBIG) is an
# error, exit 2, and is removed rather than left truncated
( trap '' XFSZ; ulimit -f 8; kp-pprof -o "$tmp/limited.pb.gz" "$tmp/big.kp" 2> "$tmp/err" ); st=$?
[ $st -eq 2 ] || fail "file size limit: exit $st"
grep -q 'write error' "$tmp/err" || fail "file size limit: message"
[ -e "$tmp/limited.pb.gz" ] && fail "a truncated file was left behind"

kp-pprof -h | grep -q '^usage: kp-pprof' || fail "-h"
kp-pprof --bogus < /dev/null > /dev/null 2>&1; [ $? -eq 64 ] || fail "usage exit"
echo ok
