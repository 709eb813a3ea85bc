#!/usr/bin/env bash
# Damaged perf.data: each is refused with "perf2kp: FILE: offset N: what",
# exit 2, nothing on standard output (nothing half-written looks like a
# profile).  Made from samples/perfdata-a-g.data (file mode) and
# perfdata-pipe.data (pipe mode): a record size below its header, a file
# cut inside its data section, a data section past the end of the file,
# a callchain longer than its record, the other byte order, version 1.
set -eu
[ -x "$KP_BIN/perf2kp" ] || { echo "skipped: no perf2kp"; exit 77; }
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
S="$KP_TOP/samples"
python3 - "$S" "$t" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
d = bytearray(open(src + "/perfdata-a-g.data", "rb").read())
p = bytearray(open(src + "/perfdata-pipe.data", "rb").read())
data_off, data_size = struct.unpack_from("<QQ", d, 40)
def save(name, b): open(out + "/" + name, "wb").write(bytes(b))
# the first record of the data section: size 4
b = bytearray(d); struct.pack_into("<H", b, data_off + 6, 4); save("size4", b)
# cut in the middle of the data section
save("cut", d[: data_off + data_size // 2])
# a data section that runs past the end of the file
b = bytearray(d); struct.pack_into("<Q", b, 48, len(d)); save("data-past-end", b)
# the first sample's callchain nr: 2^40
off = data_off
while True:
    typ, misc, size = struct.unpack_from("<IHH", d, off)
    if typ == 9: break
    off += size
# sample_type IP|TID|TIME|CALLCHAIN|ID|CPU|PERIOD: nr after 6 u64s
b = bytearray(d); struct.pack_into("<Q", b, off + 8 + 6 * 8, 1 << 40); save("chain", b)
# the other byte order
b = bytearray(d); b[0:8] = b[0:8][::-1]; save("swapped", b)
b = bytearray(d); b[0:8] = b"PERFFILE"; save("v1", b)
# pipe mode: a record that claims 65535 bytes at the end
save("pipe-cut", p + struct.pack("<IHH", 9, 0, 65535) + b"\0" * 16)
PY
fail=0
check() { # file, expected message (after "perf2kp: FILE: ")
	local st=0
	perf2kp "$t/$1" > "$t/out" 2> "$t/err" || st=$?
	if [ "$st" -ne 2 ] || [ -s "$t/out" ] ||
	   [ "$(head -1 "$t/err")" != "perf2kp: $t/$1: $2" ]; then
		echo "FAIL $1: exit $st, $(wc -c < "$t/out") bytes out, stderr:"
		cat "$t/err"; echo "expected: perf2kp: $t/$1: $2"; fail=1
	else
		echo "ok $1: $2"
	fi
}
off=$(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1],"rb").read(), 40)[0])' "$S/perfdata-a-g.data")
check size4 "offset $off: record size 4 is less than its header"
check cut "offset 40: data section $off+$(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1],"rb").read(), 48)[0])' "$S/perfdata-a-g.data") outside the file ($(wc -c < "$t/cut") bytes)"
check data-past-end "offset 40: data section $off+$(wc -c < "$t/data-past-end") outside the file ($(wc -c < "$t/data-past-end") bytes)"
grep -q "callchain of 1099511627776 entries" <(perf2kp "$t/chain" 2>&1 > /dev/null) &&
	echo "ok chain: callchain of 1099511627776 entries" || { echo "FAIL chain"; perf2kp "$t/chain" 2>&1 >/dev/null | head -3; fail=1; }
check swapped "a perf.data of the other byte order (recorded on a machine of another endianness): convert it with 'perf script' there"
check v1 "a perf.data of version 1 (perf before 2.6.36): only version 2 (PERFILE2) is read"
check pipe-cut "offset $(wc -c < "$S/perfdata-pipe.data"): the file ends inside a record of 65535 bytes"
exit $fail
