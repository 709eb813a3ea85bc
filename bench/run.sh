#!/usr/bin/env bash
# bench/run.sh - run every bench/*.sh (make bench).  Each prints its own
# figures; generated inputs go to bench/out/ (git-ignored).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
KP_BUILD=${KP_BUILD:-build}
case "$KP_BUILD" in /*) ;; *) KP_BUILD="$top/$KP_BUILD" ;; esac
export KP_TOP=$top KP_BUILD KP_BIN="$KP_BUILD/bin" KP_CORPUS=${KP_CORPUS:-$top/../shared/corpus}
export PATH="$KP_BIN:$PATH"
mkdir -p "$top/bench/out"
bash "$top/bench/setup.sh"
status=0
for b in "$top"/bench/*.sh; do
	case "$(basename "$b")" in run.sh | setup.sh) continue ;; esac
	if [ -n "${1:-}" ] && [[ "$b" != *"$1"* ]]; then continue; fi
	echo "== $(basename "$b")"
	bash "$b" || { echo "bench: $(basename "$b") failed"; status=1; }
done
exit $status
