# tests/perf2kp-data/setup.bash - sourced by the tests of this directory:
# skip without perf2kp or xz; $t a temporary directory, removed at exit;
# $S the samples; $t/kallsyms the saved kallsyms of the captures' boot.
set -eu
[ -x "$KP_BIN/perf2kp" ] || { echo "skipped: no perf2kp"; exit 77; }
command -v xz > /dev/null || { echo "skipped: no xz"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
S="$KP_TOP/samples"
xz -dc "$S/kallsyms-6.18.44-fc-v769.xz" > "$t/kallsyms"
# want WHAT EXPECTED GOT: "ok: WHAT" or "FAIL: ..." and fail=1; meta KEY FILE
fail=0
want() { # what, expected, got
	if [ "$2" = "$3" ]; then echo "ok: $1"
	else echo "FAIL: $1: expected '$2', got '$3'"; fail=1; fi
}
meta() { sed -n "s/^# $1: //p" "$2"; }
