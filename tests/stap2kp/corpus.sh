#!/usr/bin/env bash
# stap2kp | kp-fold, and kp-fold straight on the SystemTap file, must equal
# FlameGraph stackcollapse-stap.pl's output (the .folded beside each input
# in the corpus) for every input under stap/local/.
set -u
d="$KP_CORPUS/stap/local"
if [ ! -d "$d" ]; then echo "skipped: no corpus ($d)"; exit 77; fi
fail=0 n=0
for in in "$d"/*.txt; do
	want="${in%.txt}.folded"
	[ -f "$want" ] || continue
	n=$((n + 1))
	if stap2kp "$in" | kp-fold | cmp -s - "$want"; then
		echo "ok: stap2kp | kp-fold: $(basename "$in")"
	else
		echo "FAILED: stap2kp | kp-fold: $(basename "$in")"
		stap2kp "$in" | kp-fold | diff -u "$want" - | head -20
		fail=1
	fi
	if kp-fold "$in" | cmp -s - "$want"; then
		echo "ok: kp-fold: $(basename "$in")"
	else
		echo "FAILED: kp-fold: $(basename "$in")"
		fail=1
	fi
done
[ $n -gt 0 ] || { echo "FAILED: no input with a .folded in $d"; exit 1; }
# stap/extra shows stackcollapse-stap.pl taking the '!' separator as a
# frame (a peer fault, not copied): kp treats '!' as the separator.
x="$KP_CORPUS/stap/extra/xuhz-profiling-bang-separated.txt"
if [ -f "$x" ]; then
	got=$(stap2kp "$x" | kp-fold)
	if [ "$got" = "ret_from_intr;do_IRQ;irq_exit;do_softirq;call_softirq;__do_softirq;net_rx_action 1" ]; then
		echo "ok: xuhz bang-separated: '!' is a separator, not a frame"
	else
		echo "FAILED: xuhz bang-separated: got '$got'"; fail=1
	fi
fi
exit $fail
