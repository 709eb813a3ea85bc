#!/usr/bin/env bash
# kp-top on the same profile written by SystemTap, perf script and DTrace,
# converted by stap2kp, perf2kp and dtrace2kp (and SystemTap's text read
# directly), gives the same table and the same total.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# 9 samples: leaf_a<-mid<-top 4, leaf_a<-top 3, ext4_read<-mid<-top 2
cat > "$t/want" <<'OUT'
samples        %     cum%  function
      7   77.78%   77.78%  leaf_a
      2   22.22%  100.00%  ext4_read
      9  100.00%           Total
OUT
# SystemTap print_stack() with a count line
cat > "$t/stap.txt" <<'IN'
 0xffffffff81000010 : leaf_a+0x10/0x40 [kernel]
 0xffffffff81000110 : mid+0x10/0x40 [kernel]
 0xffffffff81000310 : top+0x10/0x40 [kernel]
	4
 0xffffffff81000020 : leaf_a+0x20/0x40 [kernel]
 0xffffffff81000310 : top+0x10/0x40 [kernel]
	3
 0xffffffffc0001010 : ext4_read+0x10/0x100 [ext4]
 0xffffffff81000110 : mid+0x10/0x40 [kernel]
 0xffffffff81000310 : top+0x10/0x40 [kernel]
	2
IN
# perf script: one record a sample
stack1='	ffffffff81000010 leaf_a+0x10 ([kernel.kallsyms])
	ffffffff81000110 mid+0x10 ([kernel.kallsyms])
	ffffffff81000310 top+0x10 ([kernel.kallsyms])'
stack2='	ffffffff81000020 leaf_a+0x20 ([kernel.kallsyms])
	ffffffff81000310 top+0x10 ([kernel.kallsyms])'
stack3='	ffffffffc0001010 ext4_read+0x10 ([ext4])
	ffffffff81000110 mid+0x10 ([kernel.kallsyms])
	ffffffff81000310 top+0x10 ([kernel.kallsyms])'
{
	i=0
	for s in 1 1 1 1 2 2 2 3 3; do
		i=$((i + 1))
		printf 'dd  1234 [000]   100.%06d:     250000 cpu-clock:pppH: \n' "$i"
		eval "printf '%s\n\n' \"\$stack$s\""
	done
} > "$t/perf.txt"
# DTrace: profile-997 { @[stack()] = count(); }
cat > "$t/dtrace.txt" <<'IN'
CPU     ID                    FUNCTION:NAME
  0  64091                        :tick-60s


              unix`leaf_a+0x10
              unix`mid+0x10
              unix`top+0x10
                4

              unix`leaf_a+0x20
              unix`top+0x10
                3

              ext4`ext4_read+0x10
              unix`mid+0x10
              unix`top+0x10
                2
IN
kp-top "$t/stap.txt" > "$t/got"
diff -u "$t/want" "$t/got"
stap2kp "$t/stap.txt" | kp-top > "$t/got"
diff -u "$t/want" "$t/got"
perf2kp "$t/perf.txt" | kp-top > "$t/got"
diff -u "$t/want" "$t/got"
# perf2kp --weight period: the same percentages, 250000 times the samples
perf2kp --weight period "$t/perf.txt" | kp-top | tail -n 1 > "$t/got"
[ "$(cat "$t/got")" = "2250000  100.00%           Total" ] || { cat "$t/got"; exit 1; }
if [ -x "$KP_BIN/dtrace2kp" ]; then
	dtrace2kp "$t/dtrace.txt" | kp-top > "$t/got"
	diff -u "$t/want" "$t/got"
	echo "stap, perf and dtrace agree"
else
	echo "stap and perf agree; dtrace2kp is not built, DTrace not checked"
fi
