#!/usr/bin/env bash
# Names with any bytes (issue 16 item 10): tsv escapes tab, carriage
# return and backslash (\t \r \\) so the columns never shift; json is
# valid (strict UTF-8) whatever the bytes: controls escaped, each byte
# of invalid UTF-8 as U+FFFD.
set -eu
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# tab, backslash, CR, a control, DEL, stray byte, truncated sequence,
# overlong '/', a surrogate, over U+10FFFF, and valid UTF-8 (é, €, 😀)
printf '!\n : a\tb\\c [m\tod]\n : x\001y\177z\n : bad\377\303(\300\257\355\240\200\364\220\200\200end\n : ok\303\251\342\202\254\360\237\230\200\n\t3\n!\n : cr\rx\n\t1\n!\n' > "$t/a.kp"
kp-inclusive --format tsv --modules "$t/a.kp" > "$t/tsv"
python3 - "$t/tsv" <<'PY'
import sys
rows = open(sys.argv[1], "rb").read().split(b"\n")
assert rows[0].startswith(b"# total: 4"), rows
head = rows[1].split(b"\t")
body = [r.split(b"\t") for r in rows[2:] if r]
assert all(len(r) == len(head) for r in body), body
def unescape(s):
    out, i = bytearray(), 0
    while i < len(s):
        if s[i:i+1] == b"\\":
            out += {b"t": b"\t", b"n": b"\n", b"r": b"\r", b"\\": b"\\"}[s[i+1:i+2]]
            i += 2
        else:
            out.append(s[i]); i += 1
    return bytes(out)
names = {unescape(r[4]): unescape(r[5]) for r in body}
assert names[b"a\tb\\c"] == b"m\tod", names
assert b"cr\rx" in names, names
assert b"x\x01y\x7fz" in names, names
PY
ok=$(printf 'ok\303\251\342\202\254\360\237\230\200')
for args in "--modules" "-C|a	b\\c|--modules" "-c|$ok|-d|5" "--by|module"; do
	IFS='|' read -r -a argv <<< "$args"
	kp-inclusive --format json "${argv[@]}" "$t/a.kp" > "$t/json"
	python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$t/json" || {
		echo "not JSON: $args"; cat -A "$t/json"; exit 1; }
done
kp-inclusive --format json "$t/a.kp" "$t/a.kp" > "$t/json"
python3 - "$t/a.kp" <<'PY'
import json, subprocess, sys
raw = subprocess.run(["kp-inclusive", "--format", "json", "--modules", sys.argv[1]],
                     capture_output=True, check=True).stdout
j = json.loads(raw.decode("utf-8", "strict"))
names = {r["function"]: r for r in j["rows"]}
assert names["a\tb\\c"]["module"] == "m\tod", names
assert "x\x01y\x7fz" in names, names
assert "cr\rx" in names, names
# 7 invalid bytes... each byte not in a valid sequence is one U+FFFD:
# \377, \303 (then '('), \300, \257, \355 \240 \200, \364 \220 \200 \200
assert "bad\ufffd\ufffd(\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffdend" in names, list(names)
assert "ok\u00e9\u20ac\U0001F600" in names, list(names)
PY
echo ok
