#!/usr/bin/env bash
# perf.data read directly gives the stacks of perf's own text: on each
# capture of samples/ (perfdata-*.data), "perf2kp FILE | kp-fold" equals
# "perf script -i FILE | perf2kp | kp-fold", perf script's text being the
# .script.xz kept beside the capture (made by perf when it was recorded),
# with the default names, --raw-names, --kernel-only, --user-only and --comm
# (perf script's header gives the thread's id and name, not the
# process's: --pid cannot be compared, and --comm only where they agree),
# and of each event of the two-event capture (--event).
#
# Left out, and counted (the same samples on both sides): those with a
# frame in a file rebuilt or removed since the capture (perf2kp names the
# file: its build-id changed, or it is gone; perf named its symbols then),
# and those with a frame
# in a file whose name holds a blank ("/memfd:x (deleted)"), which perf
# script's text cannot delimit.  The --call-graph dwarf capture is
# compared in dwarf.sh (its user stacks unwound).  A callchain perf cannot
# parse is counted by its IP, as perf report counts it, where perf script
# prints no frame (see below).
. "$KP_TOP/tests/perf2kp-data/setup.bash"
status=0
compare() { # capture, options...
	local capture=$1 d="$S/perfdata-$1" left; shift
	perf2kp --kallsyms "$t/kallsyms" "$@" "$d.data" 2> "$t/err" | kp-fold > "$t/data.fold"
	sed -n -e 's/^perf2kp: \(.*\): build-id [0-9a-f]*, not the [0-9a-f]* it had when sampled.*/\1/p' \
		-e 's/^perf2kp: \(.*\): No such file or directory; its frames stay addresses$/\1/p' "$t/err" > "$t/changed"
	# perf script's samples without such frames (user frames: with
	# --kernel-only they are not in the output of either side)
	case " $* " in *" --kernel-only "*) : > "$t/changed"; kernel=1 ;; *) kernel=0 ;; esac
	xz -dc "$d.script.xz" | awk -v changed="$t/changed" -v kernel=$kernel '
	BEGIN { RS = ""; FS = "\n"; while ((getline l < changed) > 0) gone["(" l ")"] = 1 }
	{ for (i = 2; i <= NF && !kernel; i++) {
		if ($i ~ / \(\/[^ ]+ .*\)$/) next
		n = split($i, w, " "); if (w[n] in gone) next }
	  print; print "" }' > "$t/script"
	perf2kp "$@" "$t/script" 2> /dev/null | kp-fold | sort > "$t/text.kept"
	awk -v changed="$t/changed" '
	BEGIN { while ((getline l < changed) > 0) { sub(/.*\//, "", l); gone["[" l "]"] = 1 } }
	{ n = split($0, f, ";"); sub(/ [0-9]+$/, "", f[n])
	  for (i = 1; i <= n; i++) if ((f[i] in gone) || (f[i] ~ /^\[[^]]* [^]]*\]$/ && f[i] != "[no stack]")) next
	  print }' "$t/data.fold" | sort > "$t/data.kept"
	left=$(( $(awk '{ s += $NF } END { print s + 0 }' "$t/data.fold") -
		 $(awk '{ s += $NF } END { print s + 0 }' "$t/data.kept") ))
	# A sample whose callchain perf cannot parse (a context mark it does
	# not know): perf script prints no frame for it ("[no stack]" in
	# perf2kp), perf report counts it by its IP, and so does perf2kp:
	# the data side may have, for K such samples, K more samples of
	# one-frame stacks, and nothing else.
	if awk '
	function stack(l) { c = l; sub(/.* /, "", c); s = l; sub(/ [0-9]+$/, "", s); return s }
	FNR == NR { n[stack($0)] -= c; next }
	{ n[stack($0)] += c }
	END {
		for (s in n) {
			if (n[s] == 0) continue
			if (s == "[no stack]" && n[s] < 0) { k -= n[s]; continue }
			if (n[s] > 0 && index(s, ";") == 0) { extra += n[s]; continue }
			print "differs: " s " " n[s]; bad++
		}
		if (k != extra) { print k " unparsed chains, " extra " one-frame samples more"; bad++ }
		if (k) print k " samples of unparsed chains counted by their IP"
		exit bad > 0
	}' "$t/text.kept" "$t/data.kept" > "$t/cmp"; then
		echo "$capture $*: $(wc -l < "$t/data.kept") stacks equal; left out $left samples; $(cat "$t/cmp")"
	else
		echo "$capture $*: stacks differ:"
		cut -c1-300 "$t/cmp" | head -10
		status=1
	fi
	[ "$(wc -l < "$t/data.kept")" -ge 5 ] || { echo "too few stacks"; status=1; }
}
for capture in a-g user fixed-period pipe z p tracepoint; do
	compare $capture
	compare $capture --raw-names
	compare $capture --kernel-only
	compare $capture --user-only
done
compare a-g --comm
compare two-events --event cpu-clock
compare two-events --event page-faults
compare two-events --event page-faults --weight period
compare fixed-period --weight period
exit $status
