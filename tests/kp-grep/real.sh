#!/usr/bin/env bash
# kp-grep on real captures (samples/): the properties issue 13 asks for,
# each checked with kp-inclusive or awk over kp-grep's output.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
caps=()
perf2kp "$KP_TOP/samples/perf-report-kernel.script" > "$t/kernel.kp"; caps+=("$t/kernel.kp")
cp "$KP_TOP/samples/kp-sample-dd-a.kp" "$t/dd.kp"; caps+=("$t/dd.kp")
if command -v xz > /dev/null; then
	xz -dc "$KP_TOP/samples/perf-build-a-g.txt.xz" | perf2kp > "$t/build.kp"
	caps+=("$t/build.kp")
fi
total() { kp-inclusive --format tsv "$1" | sed -n 's/^# total: //p'; }
incl() { # the inclusive samples of function $2 in $1
	kp-inclusive --format tsv "$1" | awk -F '\t' -v f="$2" 'NR > 2 && $5 == f { print $2; found = 1 } END { if (!found) print 0 }'
}
# the frames' function names of each record, leaf first, one record a
# line separated by \x1f, then the count: "f1\x1ff2...\tcount"
records() {
	kp-fold "$1" | awk '{ n = split($0, w, " "); c = w[n]; s = substr($0, 1, length($0) - length(c) - 1);
		k = split(s, f, ";"); out = ""; for (i = k; i >= 1; i--) out = out (i < k ? "\x1f" : "") f[i]; print out "\t" c }'
}
for cap in "${caps[@]}"; do
	name=$(basename "$cap")
	whole=$(total "$cap")
	kp-inclusive --format tsv "$cap" > "$t/whole.tsv"
	wincl() { awk -F '\t' -v f="$1" 'NR > 2 && $5 == f { print $2 }' "$t/whole.tsv"; }
	# the five heaviest functions with some samples, and a rare one
	awk -F '\t' 'NR > 2 && $5 !~ /[][().*+?^$|\\{}]/ { print $5 }' "$t/whole.tsv" | sed -n '2p;9p;40p' > "$t/funcs"
	while read -r f; do
		# RE's total is the function's inclusive count, RE and -v add up
		got=$(kp-grep "^$f\$" "$cap" | total -)
		[ "$got" = "$(wincl "$f")" ] || { echo "$name: kp-grep ^$f\$ total $got"; exit 1; }
		inv=$(kp-grep -v "^$f\$" "$cap" | total -)
		[ $((got + inv)) = "$whole" ] || { echo "$name: $f: $got + $inv != $whole"; exit 1; }
		# --hide keeps the total, and no frame of f is left
		kp-grep --hide "^$f\$" "$cap" > "$t/hid"
		[ "$(total "$t/hid")" = "$whole" ] || { echo "$name: --hide $f changed the total"; exit 1; }
		[ "$(incl "$t/hid" "$f")" = 0 ] || { echo "$name: --hide $f left frames"; exit 1; }
		# --focus roots every record at f, and keeps f's samples
		kp-grep --focus "^$f\$" "$cap" > "$t/foc"
		[ "$(total "$t/foc")" = "$(wincl "$f")" ]
		records "$t/foc" | awk -F '\t' -v f="$f" '{ n = split($1, fr, "\x1f"); if (fr[n] != f) { print "root " fr[n]; exit 1 } }'
		# --prune: f is the leaf of every record through it, total kept
		kp-grep --prune "^$f\$" "$cap" > "$t/pru"
		[ "$(total "$t/pru")" = "$whole" ]
		[ "$(kp-inclusive --format tsv "$t/pru" | awk -F '\t' -v f="$f" 'NR > 2 && $5 == f { print ($2 == $4) }')" = 1 ] ||
			{ echo "$name: --prune $f: not always the leaf"; exit 1; }
	done < "$t/funcs"
	# --collapse-recursion: no frame is its caller's function, total kept
	kp-grep --collapse-recursion "$cap" > "$t/col"
	[ "$(total "$t/col")" = "$whole" ]
	records "$t/col" | awk -F '\t' '{ n = split($1, fr, "\x1f"); for (i = 1; i < n; i++) if (fr[i] == fr[i + 1]) { print "recursion left: " fr[i]; exit 1 } }'
	# ... and folds as the peer collapses it
	if command -v inferno-collapse-recursive > /dev/null; then
		kp-fold "$t/col" | sort > "$t/ours"
		kp-fold "$cap" | inferno-collapse-recursive | sort > "$t/peer"
		diff -q "$t/ours" "$t/peer" > /dev/null || { echo "$name: differs from inferno-collapse-recursive"; diff "$t/ours" "$t/peer" | head; exit 1; }
	fi
	# --merge-clones: no clone suffix left, total kept, the clone's
	# samples go to its base name
	kp-grep --merge-clones "$cap" > "$t/mc"
	[ "$(total "$t/mc")" = "$whole" ]
	if kp-inclusive --format tsv "$t/mc" | awk -F '\t' 'NR > 2' | cut -f 5 | grep -E '\.(isra|constprop|part|cold|lto_priv|llvm)(\.[0-9]+)*$'; then
		echo "$name: clone suffix left"; exit 1
	fi
	# --no-idle drops exactly the idle loop: the records through do_idle
	# with no interrupt, softirq or NMI entry between the leaf and it
	records "$cap" | awk -F '\t' '{ n = split($1, fr, "\x1f"); idle = 0
		for (i = 1; i <= n; i++) {
			if (fr[i] ~ /^(handle_softirqs|__do_softirq|do_softirq|asm_sysvec_.*|sysvec_.*|__sysvec_.*|asm_common_interrupt|common_interrupt|asm_exc_nmi|exc_nmi)$/) break
			if (fr[i] == "do_idle") { idle = 1; break } }
		if (idle) s += $2 } END { print s + 0 }' > "$t/idle"
	noidle=$(kp-grep --no-idle "$cap" | total -)
	[ $((whole - noidle)) = "$(cat "$t/idle")" ] || { echo "$name: --no-idle dropped $((whole - noidle)), idle loop $(cat "$t/idle")"; exit 1; }
	[ "$(kp-grep --context idle "$cap" | total -)" = "$(cat "$t/idle")" ]
	# the contexts partition the samples
	sum=0
	for c in user task softirq hardirq nmi idle; do
		sum=$((sum + $(kp-grep --context $c "$cap" | total -)))
	done
	[ "$sum" = "$whole" ] || { echo "$name: contexts add up to $sum of $whole"; exit 1; }
	# every softirq record has a softirq entry frame
	kp-grep --context softirq "$cap" > "$t/si"
	records "$t/si" | awk -F '\t' '$1 !~ /(^|\x1f)(handle_softirqs|__do_softirq|do_softirq|run_ksoftirqd)(\x1f|$)/ { print "not softirq: " $1; exit 1 }'
	# -m: the kernel module, and --merge-module kernel
	k=$(kp-grep -m '^kernel$' "$cap" | total -)
	u=$(kp-grep -m -v '^kernel$' "$cap" | total -)
	[ $((k + u)) = "$whole" ]
	kp-grep --merge-module kernel "$cap" > "$t/mm"
	[ "$(total "$t/mm")" = "$whole" ]
	[ "$(incl "$t/mm" '[kernel]')" = "$k" ] || { echo "$name: --merge-module kernel: $(incl "$t/mm" '[kernel]') != $k"; exit 1; }
	echo "$name: ok"
done
