#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz (seed step): small real recordings made on this host, now.
#
#   seeds.sh <perf> <seed dir>
#
# Four recordings of the same short workload (sh, sleep, ls) with three
# scheduler tracepoints (so the tracing data feature is there and the
# trace.dat converter has events to write) and cpu-clock samples (so there
# are non-tracepoint samples too): file and pipe output, each plain and -z.
# A fifth is crafted by craft-seed.py from the two pipe recordings: the plain
# one's events packed into COMPRESSED2 records of raw zstd blocks, which the
# fuzzer can mutate into event-level variants (a real -z payload is
# entropy-coded: its mutations mostly stop in zstd's error path), and one
# more record of raw and RLE blocks.
# Each is 10-20 KB; run as root (tracepoints); tracefs is mounted if needed
# and unmounted again.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
perf=${1:?usage: seeds.sh <perf> <seed dir>}
dir=${2:?usage: seeds.sh <perf> <seed dir>}

[ "$(id -u)" = 0 ] || die "seeds: must run as root (tracepoints)"
mounted=
if [ ! -e /sys/kernel/tracing/events/sched/sched_switch ]; then
	mount -t tracefs nodev /sys/kernel/tracing || die "seeds: cannot mount tracefs"
	mounted=1
fi
cleanup() {
	[ -z "$mounted" ] || umount /sys/kernel/tracing || true
}
trap cleanup EXIT

rm -rf "$dir" && mkdir -p "$dir"
tmp=$(mktemp -d /tmp/rig-fuzz-seeds.XXXXXX)
EV=(-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_process_exec
    -e cpu-clock -c 1000000)
WORK=(sh -c 'sleep 0.05; ls / >/dev/null')

# rec NAME file|pipe OPTS...: record the workload into $dir/NAME.
rec() {
	local name=$1 mode=$2 out
	shift 2
	out=$dir/$name
	[ "$mode" = file ] || out=-
	"$perf" record -q "$@" -o "$out" "${EV[@]}" -- "${WORK[@]}" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" ||
		{ cat "$tmp/$name.err" >&2; die "seeds: perf record for $name failed"; }
	[ "$mode" = file ] || mv "$tmp/$name.out" "$dir/$name"
}
rec file.data file
rec file-z.data file -z
rec pipe.data pipe
rec pipe-z.data pipe -z
python3 "$RIG_TOP/rig/fuzz/craft-seed.py" "$dir/pipe.data" "$dir/pipe-z.data" \
	"$dir/pipe-rawz.data" >"$tmp/craft.out" ||
	die "seeds: craft-seed.py failed"
info "seeds: pipe-rawz.data: $(cat "$tmp/craft.out")"
rm -rf "$tmp"

# Every seed must read back, and the -z ones must hold COMPRESSED2 records.
for f in "$dir"/*.data; do
	n=$("$perf" report -D -i "$f" 2>/dev/null |
		awk '$1 == "COMPRESSED2" && $2 == "events:" && !n++ { print $3 }')
	s=$("$perf" report -D -i "$f" 2>/dev/null |
		awk '$1 == "SAMPLE" && $2 == "events:" && !n++ { print $3 }')
	case $f in
	*-z.data|*-rawz.data) [ "${n:-0}" -gt 0 ] || die "seeds: $f has no COMPRESSED2 record" ;;
	esac
	[ "${s:-0}" -gt 0 ] || die "seeds: $f has no samples"
	info "seeds: $(basename "$f"): $(stat -c %s "$f") bytes, ${s} samples, ${n:-0} COMPRESSED2 records"
done
