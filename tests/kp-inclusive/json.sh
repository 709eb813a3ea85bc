#!/usr/bin/env bash
# Every --format json output parses as JSON and carries the numbers of
# the text table, including names that need escaping.
set -eu
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf '!\n : quo"te\\back [kernel]\n : tab\there [/bin/a]\n : main [/bin/a]\n\t3\n!\n : main [/bin/b]\n\t1\n!\n' > "$t/a.kp"
printf '!\n : main [/bin/b]\n\t2\n!\n' > "$t/b.kp"
check() {
	python3 -c 'import json, sys; json.load(sys.stdin)' < "$1" || {
		echo "not JSON: $2"; cat "$1"; exit 1; }
}
for args in "" "--modules" "--by module" "--by address" "-C main --modules" \
	"-c main -d 5 --modules" "-C nothing_here"; do
	kp-inclusive --format json $args "$t/a.kp" > "$t/out" 2> /dev/null || true
	[ -s "$t/out" ] || [ "$args" = "-C nothing_here" ] || { echo "empty: $args"; exit 1; }
	[ -s "$t/out" ] && check "$t/out" "$args"
done
kp-inclusive --format json "$t/a.kp" "$t/b.kp" > "$t/out"
check "$t/out" diff
# the escaped names round-trip, and the counts match the table
python3 - "$t/a.kp" <<'PY'
import json, subprocess, sys
j = json.loads(subprocess.run(["kp-inclusive", "--format", "json", "--modules", sys.argv[1]],
                              capture_output=True, check=True).stdout)
rows = {(r["function"], r["module"]): r for r in j["rows"]}
assert j["total"] == 4, j
assert rows[('quo"te\\back', "kernel")]["exclusive"] == 3, rows
assert rows[("tab\there", "/bin/a")]["inclusive"] == 3, rows
assert rows[("main", "/bin/a")]["inclusive_pct"] == 75.0, rows
assert rows[("main", "/bin/b")]["exclusive_pct"] == 25.0, rows
t = json.loads(subprocess.run(["kp-inclusive", "--format", "json", "--modules", "-c", "main", "-d", "3", sys.argv[1]],
                              capture_output=True, check=True).stdout)
# main in two modules: two trees
assert [x["module"] for x in t["trees"]] == ["/bin/a", "/bin/b"], t
assert t["trees"][0]["callees"][0]["function"] == "tab\there", t
assert t["trees"][0]["callees"][0]["children"][0]["self"] == 3, t
PY
echo ok
