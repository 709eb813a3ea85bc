#!/usr/bin/env bash
# perf's build-id cache: perf record keeps a copy of each file it sampled
# as $HOME/.debug/PATH/BUILD_ID/elf, with a link .build-id/XX/REST ->
# ../../PATH/BUILD_ID, and perf report names the frames of a file since
# removed or rebuilt from that copy; so does perf2kp.
# samples/perfdata-cache.data (-g) and perfdata-cache-dwarf.data
# (--call-graph dwarf) are of a program run from a directory removed
# after the capture (see their .how); samples/perfdata-cache.elf is the
# copy perf kept.  With HOME a directory holding it as perf does:
#  - "perf2kp FILE | kp-fold" equals "perf script | perf2kp | kp-fold" of
#    what perf printed with the copy (the .script.xz: every frame named),
#    and nothing is said on stderr;
#  - "perf2kp --weight period FILE | kp-inclusive" gives every symbol of
#    perf report --children (the .children.xz) within 0.01 points, and
#    perf's total;
#  - the same names from a stripped copy with the debug file perf keeps
#    beside it (.../BUILD_ID/debug: perf 6.1 names these frames so too),
#    from a copy kept under another name that perf's link leads to, and
#    through a ~/.debug that is itself a link.
# Without the copy, the frames are the addresses perf script gives
# without it (the .nocache.script.xz), and the file is named once as
# gone; for the dwarf capture perf gives no frames at all there, perf2kp
# the addresses (libdw unwinds by frame pointer where it has no CFI).  A
# copy is not used, and is named, when it is a symbolic link, lies below
# one, is not a regular file (a FIFO: refused at once) or is another
# build; a link of .build-id/ that leads out of ~/.debug is not followed.
# A file at PATH of another build (the program rebuilt) gives the copy's
# names too, or without a copy perf2kp's warning that it changed: checked
# where PATH's directory can be made for the test.
. "$KP_TOP/tests/perf2kp-data/setup.bash"
for p in kp-fold kp-inclusive; do
	[ -x "$KP_BIN/$p" ] || { echo "skipped: no $p"; exit 77; }
done
elf="$S/perfdata-cache.elf"
path=/tmp/tmp.iap7sQUAXo/prog
id=7a3bf4b0d0fc564b2fd7551b6bea65e690b75962
want "the program's path in perf's script" "$path" \
	"$(xz -dc "$S/perfdata-cache.script.xz" | sed -n 's/.* cache_leaf+0x[0-9a-f]* (\(.*\))$/\1/p' | head -1)"
if [ -e "$path" ]; then echo "skipped: $path exists here"; exit 77; fi

# perf's cache in home $1 of the file $2 kept as PATH $3 (default the
# program's): the copy and the link to it
cache() { # home, file, [path]
	local h=$1 f=$2 p=${3:-$path}
	mkdir -p "$h/.debug$p/$id" "$h/.debug/.build-id/${id:0:2}"
	cp "$f" "$h/.debug$p/$id/elf"
	ln -sfn "../..$p/$id" "$h/.debug/.build-id/${id:0:2}/${id:2}"
}
home="$t/home"
cache "$home" "$elf"
mkdir -p "$t/empty"

# perf2kp CAPTURE with HOME=$1 and options, kp-fold sorted into $t/data.fold
run() { # home, capture, options...
	local h=$1 c=$2; shift 2
	HOME=$h perf2kp "$@" "$S/perfdata-$c.data" 2> "$t/err" > "$t/data.kp"
	kp-fold < "$t/data.kp" | sort > "$t/data.fold"
}
# the stacks of perf's text $1 (an .xz of samples/), kp-fold sorted
text() { xz -dc "$S/$1" | perf2kp | kp-fold | sort; }
same() { # what, expected file, got file
	if cmp -s "$2" "$3"; then echo "ok: $1 ($(wc -l < "$3") stacks)"
	else echo "FAIL: $1:"; diff "$2" "$3" | head -10; fail=1; fi
}
gone="perf2kp: $path: No such file or directory; its frames stay addresses"

for c in cache cache-dwarf; do
	echo "== $c"
	text "perfdata-$c.script.xz" > "$t/named-$c.fold"
	grep -q 'cache_outer' "$t/named-$c.fold" || { echo "FAIL: perf's script of $c names nothing"; fail=1; }
	run "$home" $c
	same "$c: the copy's names, as perf's" "$t/named-$c.fold" "$t/data.fold"
	want "$c: nothing on stderr" "" "$(cat "$t/err")"
	# perf report's table, every row, and its total
	HOME=$home perf2kp --weight period "$S/perfdata-$c.data" | kp-inclusive --format tsv > "$t/kp.tsv"
	xz -dc "$S/perfdata-$c.children.xz" | awk -v kp="$t/kp.tsv" -v c=$c '
	BEGIN { while ((getline l < kp) > 0) { split(l, f, "\t"); incl[f[5]] = f[1]; excl[f[5]] = f[3] } }
	/^ +[0-9.]+% +[0-9.]+% +\[.\] / { name = $4; sub(/%/, "", $1); sub(/%/, "", $2)
		n++; d1 = incl[name] - $1; d2 = excl[name] - $2
		if (!(name in incl) || d1 > 0.01 || d1 < -0.01 || d2 > 0.01 || d2 < -0.01) {
			print "  " name ": perf " $1 "% " $2 "%, kp " incl[name] "% " excl[name] "%"; bad++ } }
	END { if (n < 4 || bad) { print "FAIL: " c ": " n " rows of perf report, " bad " differ"; exit 1 }
	      print "ok: " c ": perf report --children, " n " rows within 0.01 points" }' || fail=1
	want "$c: perf report's total" "$(xz -dc "$S/perfdata-$c.children.xz" | sed -n 's/^# Event count (approx.): //p')" \
		"$(sed -n 's/^# total: //p' "$t/kp.tsv")"
	# no copy: addresses, the file named as gone
	run "$t/empty" $c
	want "$c: without the copy, the file named as gone" "$gone" "$(cat "$t/err")"
	if grep -q 'cache_' "$t/data.fold"; then echo "FAIL: $c: a name without the copy"; fail=1; fi
done
named="$t/named-cache.fold"
text perfdata-cache.nocache.script.xz > "$t/addr.fold"
run "$t/empty" cache
same "cache: without the copy, perf's addresses" "$t/addr.fold" "$t/data.fold"
run "$t/empty" cache-dwarf
want "cache-dwarf: without the copy, perf unwinds nothing" "[no stack] 130" "$(text perfdata-cache-dwarf.nocache.script.xz)"
want "cache-dwarf: without the copy, perf2kp's addresses" "[prog];[prog];[prog] 37 [prog];[prog];[prog];[prog] 93" \
	"$(tr '\n' ' ' < "$t/data.fold" | sed 's/ $//')"

# $HOME/.debug itself may be a link (the user's own choice)
ln -s "$home/.debug" "$t/linked-debug"
mkdir -p "$t/home2" && ln -s "$t/linked-debug" "$t/home2/.debug"
run "$t/home2" cache
same "a linked ~/.debug" "$named" "$t/data.fold"

# the copy kept under another name: perf's link leads there
cache "$t/moved" "$elf" /opt/elsewhere/prog
run "$t/moved" cache
same "a copy under another name, through perf's link" "$named" "$t/data.fold"
want "a copy under another name: nothing on stderr" "" "$(cat "$t/err")"
# a link that leads out of ~/.debug is not followed
mkdir -p "$t/out/.debug/.build-id/${id:0:2}" "$t/out/tmp/tmp.iap7sQUAXo/prog/$id"
cp "$elf" "$t/out/tmp/tmp.iap7sQUAXo/prog/$id/elf"
ln -s "../../../tmp/tmp.iap7sQUAXo/prog/$id" "$t/out/.debug/.build-id/${id:0:2}/${id:2}"
run "$t/out" cache
same "a link out of ~/.debug: not followed" "$t/addr.fold" "$t/data.fold"
want "a link out of ~/.debug: the file named as gone" "$gone" "$(cat "$t/err")"

# a stripped copy and the debug file perf keeps beside it
if command -v strip > /dev/null && command -v objcopy > /dev/null; then
	strip -o "$t/stripped" "$elf" && objcopy --only-keep-debug "$elf" "$t/debug"
	cache "$t/dbg" "$t/stripped"
	cp "$t/debug" "$t/dbg/.debug$path/$id/debug"
	run "$t/dbg" cache
	same "a stripped copy, its debug file beside it" "$named" "$t/data.fold"
	want "a stripped copy: nothing on stderr" "" "$(cat "$t/err")"
	run "$t/dbg" cache-dwarf
	same "dwarf: a stripped copy, its debug file beside it" "$t/named-cache-dwarf.fold" "$t/data.fold"
	rm "$t/dbg/.debug$path/$id/debug"
	run "$t/dbg" cache
	if grep -q 'cache_leaf\|cache_outer' "$t/data.fold"; then
		echo "FAIL: a stripped copy alone names its local functions"; fail=1
	else
		echo "ok: a stripped copy alone: its .dynsym's names only"
	fi
else
	echo "not checked: a stripped copy with its debug file (no strip, objcopy)"
fi

# copies that are not used: each named, the frames addresses
h="$t/bad" copy2="$t/bad/.debug$path/$id/elf"
cache "$h" "$elf"
refused() { # what, the message after "perf2kp: $copy2: "
	run "$h" cache
	same "$1: addresses" "$t/addr.fold" "$t/data.fold"
	want "$1: said" "perf2kp: $copy2: $2; not used
$gone" "$(cat "$t/err")"
}
rm "$copy2"
ln -s "$home/.debug$path/$id/elf" "$copy2"
refused "a copy that is a symbolic link" "a symbolic link"
rm "$copy2"
mkfifo "$copy2"
if command -v timeout > /dev/null; then
	st=0; HOME=$h timeout 20 perf2kp "$S/perfdata-cache.data" > /dev/null 2>&1 || st=$?
	want "a FIFO copy: not waited for" 0 $st
fi
refused "a copy that is a FIFO" "not a regular file"
rm "$copy2"
cp "$KP_BIN/kp-fold" "$copy2"
if grep -q '\.note\.gnu\.build-id' "$copy2"; then
	refused "a copy of another build" "another build-id, not $path's $id"
else
	refused "a copy of another build" "no build-id, not $path's $id"
fi
# a directory of the path a link to where the right copy is
rm -r "$h/.debug/tmp"
ln -s "$home/.debug/tmp" "$h/.debug/tmp"
refused "a linked directory below ~/.debug" "a symbolic link"

# the program rebuilt: another file at its path
dir=$(dirname "$path")
if mkdir "$dir" 2> /dev/null; then
	trap 'rm -rf "$t" "$dir"' EXIT
	cp "$KP_BIN/kp-fold" "$path"
	run "$home" cache
	same "rebuilt: the copy's names" "$named" "$t/data.fold"
	want "rebuilt: nothing on stderr" "" "$(cat "$t/err")"
	run "$t/empty" cache
	same "rebuilt, no copy: addresses" "$t/addr.fold" "$t/data.fold"
	want "rebuilt, no copy: said" "perf2kp: $path: build-id ID, not the $id it had when sampled; its frames stay addresses" \
		"$(sed 's/build-id [0-9a-f]*, not/build-id ID, not/' "$t/err")"
	rm -r "$dir"
else
	echo "not checked: a rebuilt program ($dir cannot be made here)"
fi
exit $fail
