#!/usr/bin/env bash
# Install the Debian packages kp needs (deps/*.txt, one package a line,
# '#' comments) that are not installed yet.  Run as root, or with sudo.
#   .ci/deps.sh            everything: the build, the tests, the benchmarks
#   .ci/deps.sh run        deps/run.txt only: build and run kp
set -euo pipefail
cd "$(dirname "$0")/.."
files=(deps/*.txt)
if [ $# -gt 0 ]; then
	files=()
	for n in "$@"; do files+=("deps/$n.txt"); done
fi
want=$(sed 's/#.*//' "${files[@]}" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
missing=()
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all $(echo "$want" | wc -l) packages are installed"
	exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
