# shellcheck shell=bash
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
# rounds OUT RUNS NAME CMD [NAME CMD ...]: the commands (strings for sh -c,
# their output thrown away) run in turn, RUNS rounds of one run each, so
# that a drift of this machine's speed falls on all of them alike and a
# ratio can be taken round by round (see speedup).  Each run's wall time
# (bash's clock around it), CPU time and peak RSS (/usr/bin/time) go to
# OUT, one line "ROUND NAME-INDEX WALL CPU RSS_KB" each.  With WARM set
# to a file, that file is read before each run, untimed.  A command that
# fails is named with its stderr, and rounds returns 1.
rounds() {
	local out=$1 runs=$2 r i s e tf="$KP_TOP/bench/out/.round-time"
	local -a names cmds
	shift 2
	while [ $# -ge 2 ]; do
		names+=("$1")
		cmds+=("$2")
		shift 2
	done
	: > "$out"
	for r in $(seq "$runs"); do
		for i in "${!cmds[@]}"; do
			# the input back in the page cache, untimed: this
			# machine's cache sheds a file read a while ago
			[ -z "${WARM:-}" ] || cat "$WARM" > /dev/null
			s=$EPOCHREALTIME
			if ! /usr/bin/time -o "$tf" -f "%U %S %M" sh -c "${cmds[$i]}" \
				> /dev/null 2> "$tf.err"; then
				echo "${names[$i]}: failed:"
				cat "$tf.err" "$tf"
				return 1
			fi
			e=$EPOCHREALTIME
			tail -n 1 "$tf" | awk -v r="$r" -v i="$i" -v s="$s" -v e="$e" \
				'{ printf "%d %d %.4f %.2f %d\n", r, i, e - s, $1 + $2, $3 }' >> "$out"
		done
	done
	printf '%s\n' "${names[@]}" > "$out.names"
}
# an awk function: median(A, N) of A[1..N], which it sorts
AWK_MEDIAN='
	function median(a, k,   j, t, x) {
		for (j = 1; j <= k; j++) for (x = j; x > 1 && a[x - 1] > a[x]; x--) {
			t = a[x]; a[x] = a[x - 1]; a[x - 1] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }'
# round_table OUT BYTES SAMPLES: each command of a rounds OUT: the median
# wall time, MB/s and samples/s at it, the median CPU time, the largest
# peak RSS
round_table() {
	local out=$1 bytes=$2 samples=$3 i n
	n=$(wc -l < "$out.names")
	for ((i = 0; i < n; i++)); do
		awk -v i="$i" -v b="$bytes" -v sm="$samples" -v name="$(sed -n "$((i + 1))p" "$out.names")" "$AWK_MEDIAN"'
			$2 == i { n++; w[n] = $3; c[n] = $4; if ($5 > r) r = $5 }
			END { m = median(w, n); if (m < 0.001) m = 0.001
				printf "%-40s wall %7.3f s %6.0f MB/s %9.0f samples/s  cpu %6.2f s  peak RSS %7.1f MB\n",
					name, m, b / 1e6 / m, sm / m, median(c, n), r / 1024 }' "$out"
	done
}
# speedup OUT KP PEER: how many times faster the command named KP is than
# the one named PEER, round by round (PEER's wall time over KP's in the
# same round): the median of the rounds, and the lowest and highest
speedup() {
	local out=$1 a b
	a=$(grep -n -x -F -- "$2" "$out.names" | cut -d: -f1) || true
	b=$(grep -n -x -F -- "$3" "$out.names" | cut -d: -f1) || true
	[ -n "$a" ] && [ -n "$b" ] || return 0
	awk -v a="$((a - 1))" -v b="$((b - 1))" -v ka="$2" -v kb="$3" "$AWK_MEDIAN"'
		$2 == a { ta[$1] = $3 } $2 == b { tb[$1] = $3 }
		END { for (r in ta) if (r in tb && ta[r] > 0) q[++n] = tb[r] / ta[r]
			m = median(q, n)
			printf "%-40s %6.2fx the speed of %s (median of %d paired rounds; %.2f-%.2fx)\n",
				ka, m, kb, n, q[1], q[n] }' "$out"
}
# peak_vs OUT KP PEER: the largest peak RSS of the command named KP and
# of the one named PEER over the rounds of OUT, and their ratio
peak_vs() {
	local out=$1 a b
	a=$(grep -n -x -F -- "$2" "$out.names" | cut -d: -f1) || true
	b=$(grep -n -x -F -- "$3" "$out.names" | cut -d: -f1) || true
	[ -n "$a" ] && [ -n "$b" ] || return 0
	awk -v a="$((a - 1))" -v b="$((b - 1))" -v ka="$2" -v kb="$3" '
		$2 == a && $5 > ra { ra = $5 } $2 == b && $5 > rb { rb = $5 }
		END { printf "%-40s peak RSS %.1f MB, %.2fx that of %s (%.1f MB)\n",
			ka, ra / 1024, rb ? ra / rb : 0, kb, rb / 1024 }' "$out"
}
