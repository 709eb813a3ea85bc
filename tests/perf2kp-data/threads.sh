#!/usr/bin/env bash
# perf2kp reads a big perf.data (or a pipe) on two threads (common/
# perfdata_conv.c, "the naming thread"): the records read and the stacks
# built on one, each new address named on the other, what both say kept
# and said at the end in one thread's order.  PERF2KP_SPLIT=0 is one
# thread, =1 and =2 two for every input however small, and
# PERF2KP_SPLIT_TRACE says what the second named.  One thread and two
# must give the same bytes, messages and exit status:
#  - every capture of samples/ (and bench/out/perfdata-*.data, if made)
#    under options that change what a sample makes, with HOME an empty
#    directory and HOME holding perf's build-id cache of
#    samples/perfdata-cache.elf as buildid-cache.sh makes it;
#  - captures changed so that what is named depends on what was read
#    before: a program's exec, a process's exit and its pid forked again,
#    an event first sampled late, samples of no event, a record that
#    ends the file (exit 2) early or late, the kernel's _text said only
#    late (its symbols are loaded for what was said by its first
#    address), a --call-graph dwarf program's code mapped over, --weight
#    period totals that overflow, files that are not there (said once
#    each, in the order met).
. "$KP_TOP/tests/perf2kp-data/setup.bash"
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }

# perf's cache of the program of perfdata-cache*.data (buildid-cache.sh)
id=7a3bf4b0d0fc564b2fd7551b6bea65e690b75962
path=/tmp/tmp.iap7sQUAXo/prog
mkdir -p "$t/empty" "$t/home/.debug$path/$id" "$t/home/.debug/.build-id/${id:0:2}"
cp "$S/perfdata-cache.elf" "$t/home/.debug$path/$id/elf"
ln -s "../..$path/$id" "$t/home/.debug/.build-id/${id:0:2}/${id:2}"

n=0
# compare FILE OPTS...: one thread and two, with either HOME
compare() {
	local f=$1 h sa sb
	shift
	for h in "$t/empty" "$t/home"; do
		HOME=$h PERF2KP_SPLIT=0 perf2kp "$@" "$f" > "$t/a" 2> "$t/a.err" && sa=0 || sa=$?
		for s in 1 2; do
			HOME=$h PERF2KP_SPLIT=$s perf2kp "$@" "$f" > "$t/b" 2> "$t/b.err" && sb=0 || sb=$?
			n=$((n + 1))
			if [ "$sa" -ne "$sb" ] || ! cmp -s "$t/a" "$t/b" || ! cmp -s "$t/a.err" "$t/b.err"; then
				echo "FAIL: $(basename "$f") $* (HOME $(basename "$h"), PERF2KP_SPLIT=$s): one thread and two differ (exit $sa, $sb)"
				diff "$t/a" "$t/b" | head -n 5
				diff "$t/a.err" "$t/b.err" | head -n 5
				fail=1
			fi
		done
	done
}
# trace FILE OPTS...: the addresses a second thread named (its count)
trace() {
	local f=$1
	shift
	HOME=$t/empty PERF2KP_SPLIT=1 PERF2KP_SPLIT_TRACE=1 perf2kp "$@" "$f" 2>&1 > /dev/null |
		sed -n 's/^perf2kp: .*: \([0-9]*\) addresses named on a second thread$/\1/p'
}

set --
for f in "$S"/perfdata-*.data "$KP_TOP"/bench/out/perfdata-*.data; do
	[ -f "$f" ] && set -- "$@" "$f"
done
for f in "$@"; do
	for opts in "" "--pid" "--tid --weight period" "--kernel-only" \
		"--user-only" "--event cpu-clock" "--no-demangle" "--raw-names" \
		"--inline" "--comm --kallsyms $t/kallsyms" "--functions --tid"; do
		case "$f:$opts" in
		# the bench's big captures: fewer
		*/bench/out/*:--[eunr]*) continue ;;
		esac
		# shellcheck disable=SC2086
		compare "$f" $opts
	done
done
# each capture (a pipe too) has a second thread, which names its
# addresses: all of them but those one thread names at once (none)
for f in "$@"; do
	n1=$(trace "$f")
	n2=$(HOME=$t/empty PERF2KP_SPLIT=0 perf2kp "$f" 2>&1 > /dev/null | grep -c 'named on a second' || true)
	if [ -n "$n1" ] && [ "$n1" -gt 0 ] && [ "$n2" = 0 ]; then
		echo "ok: $(basename "$f"): $n1 addresses named on a second thread"
	else
		echo "FAIL: $(basename "$f"): named on a second thread: '$n1' (one thread: $n2 lines)"
		fail=1
	fi
done
# shellcheck disable=SC2002
n1=$(cat "$S/perfdata-pipe.data" | PERF2KP_SPLIT_TRACE=1 perf2kp 2>&1 > /dev/null |
	sed -n 's/^perf2kp: .*: \([0-9]*\) addresses named on a second thread$/\1/p')
want "a pipe: two threads, unless told" yes "$([ -n "$n1" ] && [ "$n1" -gt 0 ] && echo yes)"

# the changed captures
python3 - "$S" "$t" <<'PY'
import struct, sys
S, out = sys.argv[1], sys.argv[2]
TID, TIME, ID, STREAM, CPU, IDENT = 1 << 1, 1 << 2, 1 << 6, 1 << 9, 1 << 7, 1 << 16

class PD:
    def __init__(self, name):
        self.b = bytearray(open(S + "/" + name, "rb").read())
        _, _, self.asz, ao, _, self.doff, self.dsize = struct.unpack_from("<7Q", self.b, 0)
        self.st = struct.unpack_from("<Q", self.b, ao + 24)[0]  # event 0
        self.feat = struct.unpack_from("<4Q", self.b, 72)
        bits = [i for i in range(256) if self.feat[i // 64] >> (i % 64) & 1]
        tab = self.doff + self.dsize
        o = struct.unpack_from("<Q", self.b, tab + 16 * bits.index(21))[0]
        first, last = struct.unpack_from("<QQ", self.b, o)
        self.cut = first + (last - first) // 2  # perfdata_conv's
    def records(self):
        off = self.doff
        while off < self.doff + self.dsize:
            typ, misc, size = struct.unpack_from("<IHH", self.b, off)
            yield off, typ, misc, size
            off += size
    def samples(self):  # (offset, pid, time): IP TID TIME first
        for off, typ, _, _ in self.records():
            if typ == 9:
                pid, _, time = struct.unpack_from("<IIQ", self.b, off + 16)
                yield off, pid, time
    def sid(self, pid, time):
        s = b""
        if self.st & TID: s += struct.pack("<II", pid, pid)
        if self.st & TIME: s += struct.pack("<Q", time)
        for f in (ID, STREAM): s += struct.pack("<Q", 0) if self.st & f else b""
        if self.st & CPU: s += struct.pack("<II", 0, 0)
        if self.st & IDENT: s += struct.pack("<Q", 0)
        return s
    def insert(self, at, rec):
        # into the data section: its size and the feature sections after
        nfeat = sum(bin(x).count("1") for x in self.feat)
        tab = self.doff + self.dsize
        secs = [struct.unpack_from("<QQ", self.b, tab + 16 * i) for i in range(nfeat)]
        self.b[at:at] = rec
        self.dsize += len(rec)
        struct.pack_into("<Q", self.b, 48, self.dsize)
        for i, (o, s) in enumerate(secs):
            struct.pack_into("<QQ", self.b, tab + len(rec) + 16 * i, o + len(rec), s)
    def after(self, pid=None):  # the first sample of pid past the cut
        return next((o, t) for o, p, t in self.samples()
                    if t > self.cut and (pid is None or p == pid))
    def before(self):
        return next((o, t) for o, p, t in self.samples() if t < self.cut)
    def first(self, pid):
        return next((o, t) for o, p, t in self.samples() if p == pid)
    def save(self, name):
        open(out + "/" + name, "wb").write(bytes(self.b))

def rec(typ, misc, body):
    return struct.pack("<IHH", typ, misc, 8 + len(body)) + body

def cstr(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)

# perfdata-a-g: pid 26134 samples on both sides of the middle
p = PD("perfdata-a-g.data"); at, tm = p.after(26134)
p.insert(at, rec(3, 0x2000, struct.pack("<II", 26134, 26134) + cstr("newprog") + p.sid(26134, tm - 1)))
p.save("exec.data")
p = PD("perfdata-a-g.data"); at, tm = p.after(26134)
p.insert(at, rec(4, 0, struct.pack("<IIIIQ", 26134, 1, 26134, 1, tm - 2) + p.sid(26134, tm - 2)) +
         rec(7, 0, struct.pack("<IIIIQ", 26134, 1, 26134, 1, tm - 1) + p.sid(26134, tm - 1)))
p.save("exit.data")
# a record that ends the file: a callchain of 2^40 entries
for side in ("before", "after"):
    p = PD("perfdata-a-g.data"); at, _ = getattr(p, side)()
    struct.pack_into("<Q", p.b, at + 8 + 6 * 8, 1 << 40)
    p.save("bad-" + side + ".data")
# --weight period: 2^63 on each side
p = PD("perfdata-a-g.data")
for at, _ in (p.before(), p.after()):
    struct.pack_into("<Q", p.b, at + 8 + 5 * 8, 1 << 63)
p.save("period.data")
# the kernel's MMAP ([kernel.kallsyms]_text) past the middle only
p = PD("perfdata-a-g.data")
k = next(o for o, typ, _, _ in p.records() if typ == 1)
size = struct.unpack_from("<H", p.b, k + 6)[0]
body = bytearray(p.b[k + 8:k + size])
p.b[k + 40] = ord("X")  # this one names no kernel now
at, tm = p.after()
body[len(body) - len(p.sid(0, 0)):] = p.sid(0xffffffff, p.cut)
struct.pack_into("<Q", body, 24, struct.unpack_from("<Q", body, 24)[0] + 0x200000)
p.insert(at, rec(1, struct.unpack_from("<H", p.b, k + 4)[0], bytes(body)))
p.save("kernel-late.data")
# files that are not there: one met on both sides of the middle (said
# once, where first met), two more met past it only, the first of them
# again by another process
p = PD("perfdata-a-g.data")
for pid, name, where in ((26227, "a", "after"), (26230, "gzip", "after"),
                         (26229, "b", "after"), (26134, "gzip", "first")):
    at, tm = p.first(pid) if where == "first" else p.after(pid)
    mm = struct.pack("<IIQQQIIQQII", pid, pid, 0x1000, 0x7fff00000000, 0,
                     0, 0, 0, 0, 5, 2) + cstr("/nonexistent/kp-halves/" + name)
    p.insert(at, rec(10, 2, mm + p.sid(pid, tm - 1)))
p.save("files.data")
# two events: page-faults (ids 132, 133) sampled past the middle only,
# and samples of an id no event has on both sides
p = PD("perfdata-two-events.data")
for i, (at, _, tm) in enumerate(p.samples()):
    ident = struct.unpack_from("<Q", p.b, at + 32)[0]
    if tm <= p.cut and ident in (132, 133):
        struct.pack_into("<Q", p.b, at + 32, ident - 2)
    elif i % 97 == 0:
        struct.pack_into("<Q", p.b, at + 32, 999999)
p.save("events.data")
# --call-graph dwarf: perl's code mapped over past the middle
p = PD("perfdata-dwarf.data"); at, tm = p.after(26652)
mm = struct.pack("<IIQQQIIQQII", 26652, 26652, 0x55646e03c000, 0x195000,
                 0x49000, 0, 0, 0, 0, 5, 2) + cstr(S + "/perfdata-cache.elf")
p.insert(at, rec(10, 2, mm + p.sid(26652, tm - 1)))
p.save("remapped.data")
PY
for c in exec exit events files; do
	for opts in "" "--pid" "--kallsyms $t/kallsyms --tid"; do
		# shellcheck disable=SC2086
		compare "$t/$c.data" $opts
	done
done
HOME=$t/empty PERF2KP_SPLIT=1 perf2kp --kallsyms "$t/kallsyms" "$t/files.data" 2>&1 > /dev/null |
	sed -n 's|^perf2kp: /nonexistent/kp-halves/\([a-z]*\): .*|\1|p' > "$t/files.err"
want "files: said once each, in order" "gzip a b" "$(echo $(cat "$t/files.err"))"
want "exec: its samples after it are the new program's" "yes" \
	"$(PERF2KP_SPLIT=1 perf2kp --pid "$t/exec.data" 2> /dev/null | grep -q '^ : newprog-26134$' && echo yes)"
HOME=$t/empty PERF2KP_SPLIT=1 perf2kp --kallsyms "$t/kallsyms" "$t/events.data" 2>&1 > /dev/null | sed "s|$t/||" > "$t/events.err"
want "events: page-faults first seen past the middle, named" \
	"perf2kp: events.data: cpu-clock 1241 samples, page-faults 133: kept cpu-clock; --event to choose" \
	"$(sed -n 1p "$t/events.err")"
want "events: samples of no event, both sides" \
	"perf2kp: events.data: 13 samples of no event the header names (skipped, as perf skips them)" \
	"$(sed -n 2p "$t/events.err")"
compare "$t/events.data" --event page-faults
for side in before after; do
	compare "$t/bad-$side.data"
	compare "$t/bad-$side.data" --kallsyms "$t/kallsyms"
	want "a bad record $side the middle: exit 2" 2 \
		"$(PERF2KP_SPLIT=1 perf2kp "$t/bad-$side.data" > /dev/null 2>&1; echo $?)"
done
compare "$t/period.data" --weight period
want "period: the total overflows" 2 "$(PERF2KP_SPLIT=1 perf2kp --weight period "$t/period.data" > /dev/null 2>&1; echo $?)"
for opts in "" "--kallsyms $t/kallsyms"; do
	# shellcheck disable=SC2086
	compare "$t/kernel-late.data" $opts
done
for opts in "" "--user-only" "--inline"; do
	# shellcheck disable=SC2086
	compare "$t/remapped.data" $opts
done

echo "$n comparisons"
exit $fail
