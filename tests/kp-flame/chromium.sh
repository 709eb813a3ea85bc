#!/usr/bin/env bash
# kp-flame end to end in a real browser: Debian's headless Chromium loads
# the SVG from a file:// URL (no network), a screenshot is taken, a
# frame is hovered (details line) and clicked (zoom), Search is pressed
# and a regular expression typed into its prompt; the matched share the
# page prints must equal the share of samples whose stack holds a
# matching name, computed here from kp-fold output.  Names such as
# <script>alert(1)</script> must show as text and never run (no alert).
# Skips only when Chromium cannot start.  KP_SHOTS=DIR keeps the PNGs.
set -u
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
command -v chromium > /dev/null || { echo "skipped: no chromium"; exit 77; }
T=$KP_TOP/tests/kp-flame
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat "$T/basic.in" "$T/escape.in" > "$tmp/in.kp"
kp-flame --title 'Chromium <test> & co' "$tmp/in.kp" > "$tmp/g.svg" || fail kp-flame
kp-fold "$tmp/in.kp" > "$tmp/fold"
shots=${KP_SHOTS:-$tmp}
mkdir -p "$shots"
timeout 120 python3 "$T/browser.py" "$tmp/g.svg" "$shots" vfs_read '^vfs_|ext4' > "$tmp/out.json"
st=$?
[ $st -eq 77 ] && { tail -n 1 "$tmp/out.json"; exit 77; }
[ $st -eq 0 ] || { cat "$tmp/out.json"; fail "browser.py exit $st"; }
cat "$tmp/out.json"

python3 - "$tmp/out.json" "$tmp/fold" "$shots" <<'PY' || fail "observations"
import json, os, re, sys
o = json.load(open(sys.argv[1]))
shots = sys.argv[3]
def check(ok, what):
    if not ok:
        print("wrong:", what)
        sys.exit(1)
# the share of samples whose stack holds a name matching the search
total = hit = 0
for line in open(sys.argv[2], encoding="utf-8", errors="replace"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    total += int(n)
    if any(re.search(r"^vfs_|ext4", f) for f in stack.split(";")):
        hit += int(n)
want = "Matched: %.2f%%" % (100.0 * hit / total)
check(o["title"] == "Chromium <test> & co", "title %r" % o["title"])
L, Z, S, R = o["loaded"], o["zoomed"], o["searched"], o["reset"]
check(L["shown"] == L["total"] and L["total"] > 10, "all frames shown")
check("<script>alert(1)</script>" in L["names"], "escaped name as text")
check("]]></script><script>alert(2)</script>" in L["names"], "CDATA name")
check('a&b<c> "q" \'x\'' in L["names"], "& and quotes")
check(o["other_dialogs"] == [], "a dialog other than the search prompt")
check(o["exceptions"] == [], "script exceptions %r" % o["exceptions"])
check(o["hover_details"].startswith("vfs_read; module: kernel; inclusive: 84 samples"),
      "details %r" % o["hover_details"])
# zoom: vfs_read fills the width, its ancestors stay, the rest hides
check(o["clicked_width_before"] < 1100, "vfs_read narrower than the graph")
check(abs(o["clicked_width_after"] - 1180) < 0.5, "zoomed width %r" % o["clicked_width_after"])
check(Z["zoom_visible"], "Reset Zoom shown")
check(set(Z["names"]) == {"all", "main", "read", "do_syscall_64", "ksys_read",
                          "vfs_read", "ext4_file_read_iter"}, "zoomed frames %r" % Z["names"])
check(o["dialog_type"] == "prompt", "search prompt")
check(S["matched"] == want, "matched %r, expected %r" % (S["matched"], want))
check(S["highlighted"] == 2, "highlighted %d" % S["highlighted"])
check(S["search_label"] == "Reset Search", "Reset Search label")
check(R["shown"] == R["total"] and not R["zoom_visible"], "reset zoom")
check(R["highlighted"] == 0 and R["matched"].strip() == "", "reset search")
for p in ("loaded", "zoomed", "searched"):
    check(os.path.getsize(os.path.join(shots, p + ".png")) > 5000, p + ".png")
print("chromium: ok,", want)
PY
cmp -s "$shots/loaded.png" "$shots/zoomed.png" && fail "zoom changed nothing on screen"

# the icicle graph (--inverted) zooms the other way up
kp-flame --inverted "$T/basic.in" > "$tmp/inv.svg"
mkdir -p "$tmp/inv"
timeout 120 python3 "$T/browser.py" "$tmp/inv.svg" "$tmp/inv" vfs_read ext4 > "$tmp/inv.json" ||
	fail "browser.py --inverted"
python3 - "$tmp/inv.json" <<'PY' || fail "inverted zoom"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["title"] == "Icicle Graph", o["title"]
assert abs(o["clicked_width_after"] - 1180) < 0.5, o["clicked_width_after"]
assert set(o["zoomed"]["names"]) == {"all", "main", "read", "do_syscall_64",
    "ksys_read", "vfs_read", "ext4_file_read_iter"}, o["zoomed"]["names"]
assert o["searched"]["matched"] == "Matched: 49.50%", o["searched"]["matched"]
assert not o["exceptions"] and not o["other_dialogs"]
print("inverted: ok")
PY
echo ok
