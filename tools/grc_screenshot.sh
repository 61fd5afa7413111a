#!/usr/bin/env bash
# Takes a picture of GNU Radio Companion as a GNU Radio user sees it after
# scripts/setup.sh: the system's gnuradio-companion, started with no
# environment variables, examples/rx_recording.grc open and the block tree
# searched for "gpuldpc" (the [GPU LDPC] category with every block of grc/).
# It runs under Xvfb, so no display is needed.  If GRC does not come up, its
# output is printed (Debian 12's gnuradio package does not pull GTK's
# introspection data, gir1.2-gtk-3.0: scripts/setup.sh installs it).
#
#   bash tools/grc_screenshot.sh [out.png]     (default docs/grc.png)
#
# As root it installs what it needs from Debian (xvfb, xdotool, imagemagick).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/docs/grc.png}")
size=1280x720

missing=()
for tool in Xvfb:xvfb xdotool:xdotool import:imagemagick; do
    command -v "${tool%%:*}" > /dev/null || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

home=$(mktemp -d)                      # a new user: no GRC preferences, no block cache
display=:$((100 + RANDOM % 800))
Xvfb "$display" -screen 0 "${size}x24" -nolisten tcp &
xvfb=$!
grc=""
trap 'kill $grc $xvfb 2> /dev/null; rm -rf "$home"' EXIT
export DISPLAY=$display
sleep 2

env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 DISPLAY="$display" \
    gnuradio-companion "$root/examples/rx_recording.grc" > "$home/grc.log" 2>&1 &
grc=$!
window=$(timeout 120 xdotool search --sync --onlyvisible --name "rx_recording") ||
    { cat "$home/grc.log" >&2; echo "grc_screenshot: GNU Radio Companion did not open a window" >&2; exit 1; }
window=${window%%$'\n'*}
xdotool windowmove "$window" 0 0 windowsize "$window" "${size%x*}" "${size#*x}"
sleep 5                                # the block library and the flowgraph drawn
xdotool windowfocus --sync "$window"   # (no window manager: focus, not activate)
xdotool key ctrl+f                     # GRC's block search
xdotool type --delay 100 gpuldpc
sleep 2
import -window root "$out"
echo "grc_screenshot: $out ($(identify -format '%wx%h' "$out"))"
