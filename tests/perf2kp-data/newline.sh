#!/usr/bin/env bash
# A process name holding a newline (prctl PR_SET_NAME, as any program may
# set it): perf2kp --comm and --pid wrote the frame over two lines, and
# the kp reader dropped those records ("not a frame line").  The name is
# now what a kp line can hold, what is before the newline: every record
# reads back, and the renamed process's samples are under it.  Capture
# made here.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
command -v perf > /dev/null || { echo "skipped: no perf"; exit 77; }
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
cat > "$t/nl.py" << 'EOF'
import ctypes, time
ctypes.CDLL(None).prctl(15, b"kpnl\nb c", 0, 0, 0)
t = time.time()
while time.time() - t < 0.3:
    pass
EOF
if ! perf record -q -e cpu-clock -g -o "$t/nl.data" python3 "$t/nl.py" \
	> /dev/null 2> "$t/rec.err"; then
	echo "skipped: perf cannot record cpu-clock: $(head -1 "$t/rec.err")"
	exit 77
fi
for opt in --comm --pid; do
	perf2kp "$opt" "$t/nl.data" > "$t/out" 2> /dev/null
	kp-fold "$t/out" > "$t/fold" 2> "$t/fold.err" && rc=0 || rc=$?
	want "$opt: kp-fold reads every record: exit" 0 "$rc"
	n=$(grep -c "^kpnl[;-]" "$t/fold" || true)
	[ "$n" -gt 0 ] && echo "ok: $opt: $n stacks under kpnl" ||
		{ echo "FAIL: $opt: no stack under kpnl"; fail=1; }
	samples=$(meta samples "$t/out")
	total=$(awk '{ s += $NF } END { print s + 0 }' "$t/fold")
	want "$opt: every sample read back" "$samples" "$total"
done
exit $fail
