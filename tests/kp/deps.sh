#!/usr/bin/env bash
# deps/run.txt is what building and running kp needs, and no test tool
# (issue 16 item 18): every header the build includes comes from a
# package in its dependency closure, the libraries kp links are there,
# and none of the test or benchmark tools is.  .ci/deps.sh run reads it
# alone, .ci/deps.sh (make deps) every list.
set -u
command -v dpkg > /dev/null && command -v apt-cache > /dev/null || { echo "skipped: not Debian (no dpkg, apt-cache)"; exit 77; }
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
cd "$KP_TOP"
pkgs() { sed 's/#.*//' "$@" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u; }
run=$(pkgs deps/run.txt)

for p in libelf-dev libdw-dev zlib1g-dev libzstd-dev uthash-dev make pkg-config gcc; do
	check "run.txt has $p" 'grep -qx "$p" <<< "$run"'
done
for p in chromium golang-go valgrind bpftrace linux-perf clang python3 libxml2-utils; do
	check "run.txt has no test tool $p" '! grep -qx "$p" <<< "$run"'
done

# the headers of every source file, by package: all in run.txt's closure
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances $run 2> /dev/null |
	sed -n 's/^ *\(Pre\)\{0,1\}Depends: //p; /^[a-z0-9]/p' | tr -d '<>' | sort -u)
hdrs=$(for f in common/*.c filters/*.c; do
	gcc -std=gnu11 -D_GNU_SOURCE -Icommon $(pkg-config --cflags libdw libelf zlib 2> /dev/null) -M "$f"
done | tr ' \\' '\n\n' | grep '^/usr' | sort -u)
check "the build's headers were found" '[ -n "$hdrs" ]'
for p in $(xargs -r dpkg -S <<< "$hdrs" 2> /dev/null | cut -d: -f1 | tr ',' '\n' | tr -d ' ' | sort -u); do
	check "headers of $p: in run.txt's closure" 'grep -qx "$p" <<< "$closure"'
done

# .ci/deps.sh run: run.txt alone; no argument: every list
n_run=$(wc -l <<< "$run")
n_all=$(pkgs deps/*.txt | wc -l)
if [ "$(id -u)" = 0 ] && bash .ci/deps.sh run > /dev/null 2>&1; then
	check ".ci/deps.sh run counts only run.txt" '[ "$(bash .ci/deps.sh run)" = "deps: all $n_run packages are installed" ]'
	check ".ci/deps.sh counts every list" '[ "$(bash .ci/deps.sh)" = "deps: all $n_all packages are installed" ]'
fi
check "make deps-run is .ci/deps.sh run" 'make -n deps-run | grep -q "\.ci/deps\.sh run"'

# the README: how to put kp on PATH comes first; its first command on a
# new machine installs deps/run.txt alone, then builds and runs the
# quickstart
first=$(awk '/^## On a new Debian 12 machine/ { f = 1 } f && /^    / { print; exit }' README.md)
check "README's first command: run-time deps, build, quickstart" '[ "$first" = "    bash .ci/deps.sh run && make && examples/quickstart.sh" ]'
check "README says how to put kp on PATH before the first command" \
	'[ "$(grep -n "^## Putting kp on PATH" README.md | cut -d: -f1)" -lt "$(grep -n "^## On a new Debian 12 machine" README.md | cut -d: -f1)" ] && grep -q "make install" README.md && grep -q "build/bin:\$PATH" README.md'
exit $fail
