#!/usr/bin/env bash
# A pipe's build-ids come as HEADER_BUILD_ID records, between the others
# (perf inject -b puts one before the first sample of each file), so a
# file mapped before its build-id is read has none, and one mapped after
# has it.  perf2kp keeps what it made of each path of an MMAP record (the
# path and build-id interned) and asks for the build-id again once more
# have been read.  On a copy of samples/perfdata-pipe.data (python3) with
# a record giving libc a build-id of no file here (bytes 1 to 20) after
# the first of its 202 mappings, read as its own round (two
# FINISHED_ROUNDs first, so that the mapping before it is taken first):
#  - the mappings of libc made after the record have its build-id, which
#    is not the file's: perf2kp says so once, and their frames stay
#    addresses in libc ([PATH+0xOFF]), as without the kept paths;
#  - the capture as it is: none of that.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
lib=/usr/lib/x86_64-linux-gnu/libc.so.6
[ -f "$lib" ] || { echo "skipped: no $lib"; exit 77; }
python3 - "$S/perfdata-pipe.data" "$t/bid.data" "$lib" <<'PY'
import struct, sys
src, out, lib = sys.argv[1], sys.argv[2], sys.argv[3].encode()
p = open(src, "rb").read()
off, after, n = 16, None, 0
while off + 8 <= len(p):
    typ, misc, size = struct.unpack_from("<IHH", p, off)
    # MMAP2: header, pid, tid, start, len, pgoff, 24 bytes of device or
    # build-id, prot, flags, then the path
    if typ == 10 and p[off + 72:].split(b"\0")[0] == lib:
        n += 1
        if after is None:
            after = off + size
    off += size
assert n > 1 and after, "libc mapped %d times" % n
name = lib + b"\0"
name += b"\0" * (-len(name) % 8)
# pid -1, 20 bytes of build-id, its size, then the path (user, sized)
body = struct.pack("<i", -1) + bytes(range(1, 21)) + bytes([20, 0, 0, 0]) + name
rec = struct.pack("<IHH", 67, 2 | 1 << 15, 8 + len(body)) + body
rnd = struct.pack("<IHH", 68, 0, 8)
open(out, "wb").write(p[:after] + rnd + rnd + rec + p[after:])
PY
mkdir -p "$t/home"
HOME=$t/home perf2kp "$t/bid.data" > "$t/bid.kp" 2> "$t/err" || true
want "the build-id named" 1 \
	"$(grep -c "^perf2kp: $lib: build-id [0-9a-f]*, not the 0102030405060708090a0b0c0d0e0f1011121314 it had when sampled; its frames stay addresses$" "$t/err")"
want "nothing else said" 1 "$(wc -l < "$t/err")"
n=$(grep -c "^ 0x[0-9a-f]* \[$lib+0x[0-9a-f]*\]$" "$t/bid.kp" || true)
if [ "$n" -gt 0 ]; then echo "ok: libc frames left addresses ($n)"
else echo "FAIL: no libc frame left an address"; fail=1; fi
HOME=$t/home perf2kp "$S/perfdata-pipe.data" > "$t/as.kp" 2> "$t/as.err" || true
want "the capture as it is: no libc address" 0 \
	"$(grep -c "\[$lib+0x" "$t/as.kp" || true)"
want "the capture as it is: no build-id said" 0 \
	"$(grep -c "build-id" "$t/as.err" || true)"
exit $fail
