#!/usr/bin/env bash
# make install puts every program and man page under DESTDIR/PREFIX.
set -u
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
make -s -C "$KP_TOP" B="$KP_BUILD" DESTDIR="$t" PREFIX=/opt/kp install > "$t/log" 2>&1 || { cat "$t/log"; exit 1; }
fail=0
for p in "$KP_BIN"/*; do
	n=$(basename "$p")
	if [ -x "$t/opt/kp/bin/$n" ]; then echo "ok: bin/$n"; else echo "FAILED: bin/$n missing"; fail=1; fi
done
for m in "$KP_TOP"/man/*.[1-8]; do
	s=${m##*.}
	if [ -f "$t/opt/kp/share/man/man$s/$(basename "$m")" ]; then echo "ok: man$s/$(basename "$m")"
	else echo "FAILED: man$s/$(basename "$m") missing"; fail=1; fi
done
"$t/opt/kp/bin/kp-fold" -h > /dev/null || { echo "FAILED: installed kp-fold does not run"; fail=1; }
exit $fail
