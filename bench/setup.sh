#!/usr/bin/env bash
# bench/setup.sh - install the peers the benches compare kp with
# (FlameGraph's scripts, inferno, Google's pprof) into /usr/local/bin,
# through the project's shared installer ../shared/tools/install-peers.sh.
# That script builds from git snapshots of four public repositories
# (named at its top) found in $MIRROR_ROOT/<owner>+<name>/repo; set
# MIRROR_ROOT to the folder that holds them.  Nothing is downloaded here.
# bench/run.sh runs this first when a peer is missing; the tests never do.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
installer=$top/../shared/tools/install-peers.sh
need=(inferno-collapse-perf inferno-flamegraph flamegraph.pl stackcollapse-perf.pl)
missing=()
for p in "${need[@]}"; do command -v "$p" > /dev/null || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
	echo "bench setup: the peers are installed ($(inferno-collapse-perf --version 2>/dev/null || echo inferno))"
	exit 0
fi
if [ ! -f "$installer" ]; then
	echo "bench setup: missing ${missing[*]}, and no $installer to install them;" \
		"the benches leave their rows out"
	exit 0
fi
if [ -z "${MIRROR_ROOT:-}" ]; then
	echo "bench setup: missing ${missing[*]}: run" \
		"MIRROR_ROOT=DIR bash bench/setup.sh (DIR holds the snapshots $installer names)"
	exit 0
fi
bash "$installer"
