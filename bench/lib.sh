# bench/lib.sh - helpers for the bench scripts (sourced, not run)
# measure NAME BYTES CMD...: run CMD (stdout to /dev/null) $REPEAT times
# (default 5); print the median time, MB/s at it, and the largest peak RSS
measure() {
	local name=$1 bytes=$2 f="$KP_TOP/bench/out/.times" t rss
	shift 2
	: > "$f"
	for _ in $(seq "${REPEAT:-5}"); do
		/usr/bin/time -o "$KP_TOP/bench/out/.time" -f "%e %M" "$@" > /dev/null 2>/dev/null
		tail -n 1 "$KP_TOP/bench/out/.time" >> "$f"
	done
	t=$(awk '{ print $1 }' "$f" | sort -g | sed -n "$(( ($(wc -l < "$f") + 1) / 2 ))p")
	rss=$(awk '{ print $2 }' "$f" | sort -g | tail -n 1)
	awk -v n="$name" -v b="$bytes" -v t="$t" -v r="$rss" 'BEGIN {
		if (t < 0.005) t = 0.005
		printf "%-40s %8.1f MB  %6.2f s  %8.0f MB/s  peak RSS %6.1f MB\n", n, b / 1e6, t, b / 1e6 / t, r / 1024 }'
}
# gen_kp MB STACKS: a deterministic kp file, made once, path on stdout
gen_kp() {
	local f="$KP_TOP/bench/out/gen-$1MB-$2.kp"
	mkdir -p "$KP_BUILD/bench"
	if [ ! -x "$KP_BUILD/bench/gen-kp" ] || [ "$KP_TOP/bench/gen-kp.c" -nt "$KP_BUILD/bench/gen-kp" ]; then
		cc -O2 -o "$KP_BUILD/bench/gen-kp" "$KP_TOP/bench/gen-kp.c" || return 1
	fi
	[ -s "$f" ] || "$KP_BUILD/bench/gen-kp" "$1" "$2" > "$f"
	echo "$f"
}
# rows OUT NAME CMD...: measure NAME (bytes in $bytes), its line kept in OUT
rows() {
	local out=$1 name=$2
	shift 2
	measure "$name" "$bytes" "$@" | tee -a "$out"
}
# ratios OUT SAMPLES: each line of OUT as samples/s, and its time over the
# first line's ("the time of" that first command)
ratios() {
	awk -v n="$2" '{ for (i = 1; i <= NF; i++) if ($i == "s") t[NR] = $(i - 1)
			 name[NR] = $0; sub(/ +[0-9.]+ MB .*/, "", name[NR]) }
		END { for (i = 1; i <= NR; i++)
			printf "%-40s %10.0f samples/s  %5.1fx the time of %s\n", name[i], n / t[i], t[i] / t[1], name[1] }' "$1"
}
