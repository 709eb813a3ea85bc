#!/usr/bin/env bash
# Install the Debian packages kp needs (deps/*.txt, one package a line,
# '#' comments) that are not installed yet.  Run as root, or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(sed 's/#.*//' deps/*.txt | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
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
