#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make tracedat-ks: record sched/irq/printk tracepoints with the built perf,
# convert with --to-trace-dat, open the file in Debian's KernelShark under
# xvfb-run, save a screenshot to <out>/kernelshark.png, quit KernelShark with
# Ctrl+Q and require a clean exit (status 0) and a loaded stream.
# With a third argument, open that trace.dat instead of recording one; with
# a fourth, a KernelShark session (kernelshark -s: the files to open, the
# window, the time range) that names it, and CAPTION (environment), text
# put under the screenshot (two lines fit: separate them with a newline).
set -euo pipefail

usage="usage: kernelshark.sh <perf binary> <out dir> [trace.dat [session.json]]"
perf=${1:?$usage}
out=${2:?$usage}
dat=${3:-}
session=${4:-}
tracefs=/sys/kernel/tracing
mounted=""
t0=$(date +%s)

for tool in kernelshark xvfb-run xdotool import convert; do
	if ! command -v "$tool" >/dev/null; then
		echo "tracedat-ks: $tool missing; run 'make deps' (kernelshark xvfb xdotool imagemagick)" >&2
		exit 1
	fi
done
if [ ! -x "$perf" ]; then
	echo "tracedat-ks: $perf not built; run 'make perf'" >&2
	exit 1
fi
mkdir -p "$out"
work=$(mktemp -d /tmp/tracedat-ks.XXXXXX)
cleanup() {
	rm -rf "$work"
	if [ -n "$mounted" ]; then umount "$tracefs" || true; fi
}
trap cleanup EXIT
if [ -n "$session" ] && [ ! -s "$session" ]; then
	echo "tracedat-ks: $session: no such session file" >&2
	exit 1
fi
if [ -n "$dat" ]; then
	[ -s "$dat" ] || { echo "tracedat-ks: $dat: no such file" >&2; exit 1; }
else
dat=$out/kernelshark.dat
if [ ! -e "$tracefs/events/header_page" ]; then
	mount -t tracefs nodev "$tracefs"
	mounted=1
fi

# shellcheck disable=SC2016 # expanded by the inner bash
"$perf" record -q -a -o "$work/perf.data" -e sched:sched_switch \
	-e sched:sched_wakeup -e irq:softirq_entry -e printk:console \
	-e cpu-clock -c 10000000 -- \
	bash -c 'echo "tracedat-ks $(seq -s " " 1 60)" > /dev/kmsg; sleep 0.5' \
	2>"$work/record.err"
# --all: the cpu-clock samples as perf:sample events on the timeline too.
"$perf" data convert -i "$work/perf.data" --to-trace-dat "$dat" --force --all
fi

cat > "$work/run.sh" <<'EOF'
#!/bin/bash
# In the xvfb display: start, dismiss the root warning, screenshot, Ctrl+Q.
set -u
dat=$1 png=$2 log=$3 session=$4
if [ -n "$session" ]; then
	kernelshark -s "$session" >"$log" 2>&1 &
else
	kernelshark "$dat" >"$log" 2>&1 &
fi
pid=$!
win=""
for _ in $(seq 1 60); do
	win=$(xdotool search --name "Kernel Shark" 2>/dev/null | head -1)
	[ -n "$win" ] && break
	# As root KernelShark first shows a warning dialog.
	xdotool key Return 2>/dev/null
	sleep 1
done
if [ -z "$win" ]; then
	echo "tracedat-ks: no KernelShark window after 60 s" >&2
	kill "$pid"
	exit 1
fi
sleep 3
import -window root "$png"
xdotool windowfocus --sync "$win" key ctrl+q 2>/dev/null ||
	xdotool key ctrl+q
for _ in $(seq 1 30); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 1
done
if kill -0 "$pid" 2>/dev/null; then
	echo "tracedat-ks: KernelShark did not quit on Ctrl+Q" >&2
	kill "$pid"
	exit 1
fi
wait "$pid"
EOF
rc=0
timeout 180 xvfb-run -a -s "-screen 0 1280x800x24" \
	bash "$work/run.sh" "$dat" "$out/kernelshark.png" \
	"$out/kernelshark.log" "$session" || rc=$?
if [ $rc != 0 ]; then
	echo "tracedat-ks: FAIL: KernelShark exited with $rc; log in $out/kernelshark.log" >&2
	exit 1
fi
# A session's files load without a "Loading" line; a file it cannot open
# is "Failed to ..." in the log.
if { [ -z "$session" ] && ! grep -q "Loading.*$(basename "$dat")" "$out/kernelshark.log"; } ||
	grep -Eiq "error|failed to (open|retrieve|import)|cannot" "$out/kernelshark.log"; then
	echo "tracedat-ks: FAIL: KernelShark did not load the file cleanly:" >&2
	cat "$out/kernelshark.log" >&2
	exit 1
fi
if [ -n "${CAPTION:-}" ]; then
	convert "$out/kernelshark.png" -background white -gravity south -splice 0x60 \
		-font DejaVu-Sans -fill black -pointsize 14 -annotate +0+8 "$CAPTION" "$out/kernelshark.png.tmp" &&
		mv "$out/kernelshark.png.tmp" "$out/kernelshark.png"
fi
echo "tracedat-ks: PASS: KernelShark opened $dat and exited 0;" \
	"screenshot $out/kernelshark.png ($(( $(date +%s) - t0 )) s)"
