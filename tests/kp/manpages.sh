#!/usr/bin/env bash
# Every program has a man page that renders without warnings, and every
# long option and environment variable its -h prints is in that man page.
set -u
fail=0
command -v groff > /dev/null || { echo "skipped: groff is not installed"; exit 77; }
for m in "$KP_TOP"/man/*.[1-8]; do
	if groff -man -Tutf8 -ww -z "$m" 2> /tmp/kp-man.$$ && [ ! -s /tmp/kp-man.$$ ]; then
		echo "ok: $(basename "$m") renders"
	else
		echo "FAILED: $(basename "$m"):"; cat /tmp/kp-man.$$; fail=1
	fi
done
rm -f /tmp/kp-man.$$
for p in "$KP_BIN"/*; do
	[ -x "$p" ] || continue
	n=$(basename "$p")
	m="$KP_TOP/man/$n.1"
	if [ ! -f "$m" ]; then echo "FAILED: $n has no man page man/$n.1"; fail=1; continue; fi
	opts=$("$p" -h 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	[ -n "$opts" ] || { echo "FAILED: $n -h prints no long option"; fail=1; continue; }
	text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$m")
	for o in $opts; do
		if ! grep -q -- "$o" <<< "$text"; then
			echo "FAILED: $n: option $o is in -h but not in man/$n.1"; fail=1
		fi
	done
	envs=$("$p" -h 2>/dev/null | grep -o '\b[A-Z][A-Z0-9]*_[A-Z0-9_]*\b' | sort -u)
	for e in $envs; do
		if ! grep -q "^\.B $e\$" "$m" || ! grep -q '^\.SH ENVIRONMENT' "$m"; then
			echo "FAILED: $n: $e is in -h but not under ENVIRONMENT in man/$n.1"; fail=1
		fi
	done
	echo "ok: $n: $(echo $opts | wc -w) options and $(echo $envs | wc -w) variables of -h are in its man page"
done
exit $fail
