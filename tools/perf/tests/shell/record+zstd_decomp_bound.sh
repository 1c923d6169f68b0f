#!/bin/bash
# perf report -z decoder: long records decode, a zstd bomb and nesting are refused
# SPDX-License-Identifier: GPL-2.0
#
# One PERF_RECORD_COMPRESSED2 record can legitimately decompress to more
# than comp_mmap_len bytes (the record buffer), by at most one zstd block:
# a writer that did not drain its stream leaves the rest of a block to the
# next record. A record that inflates far beyond that (a zstd bomb: a
# 64 KiB record of RLE blocks inflates to 2 GiB) was not written by perf
# record: perf report must refuse it with one line of error, without
# growing its buffers until memory runs out and without crashing.
#
# The records are crafted into a real pipe-mode recording (which carries
# comp_mmap_len in its HEADER_COMPRESSED feature event) by a python3
# script: a zstd frame of raw and RLE blocks needs no zstd library.
# - long:  decompresses to comp_mmap_len + 64..128 KiB of FINISHED_ROUND
#          events: must decode, every event counted.
# - exact: decompresses to exactly comp_mmap_len + 128 KiB, the bound:
#          must decode, every event counted.
# - bomb:  decompresses to 2 GiB of zeros: perf report and perf script
#          must stop with the bound error (perf script exits non-zero;
#          perf report exits 0 after any processing error), no signal,
#          and stay far below 2 GiB of memory (ulimit -v, peak RSS).
# - nested, auxtrace, tracing: a compressed record, an AUXTRACE record
#          and a HEADER_TRACING_DATA record inside decompressed data,
#          which perf record never writes: refused with one line of error.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_decomp_bound.XXXXX)

cleanup() {
	rm -rf "${tmpdir}"
	trap - EXIT TERM INT
}
trap_cleanup() {
	cleanup
	exit 1
}
trap cleanup EXIT
trap trap_cleanup TERM INT

if ! perf record -h 2>&1 | grep -q -- '-z, --compression-level'; then
	echo "perf built without zstd support [Skipped]"
	exit 2
fi
if ! command -v python3 >/dev/null; then
	echo "no python3 to craft the records [Skipped]"
	exit 2
fi
if [ ! -x /usr/bin/time ]; then
	echo "no /usr/bin/time to tell a signal from an exit status [Skipped]"
	exit 2
fi

# craft.py long|exact|bomb|nested|auxtrace|tracing <in> <out>: <out> is the pipe-mode recording <in>
# without its COMPRESSED2 records and with one crafted record after the
# last HEADER_FEATURE event. Prints the number of FINISHED_ROUND events
# <out> holds, crafted ones included, and comp_mmap_len.
cat >"${tmpdir}/craft.py" <<'EOF'
import struct
import sys

mode, src, dst = sys.argv[1:4]
data = open(src, "rb").read()
HEADER_FEATURE, COMPRESSED2, FINISHED_ROUND = 80, 83, 68
HEADER_TRACING_DATA, AUXTRACE = 66, 71
HEADER_COMPRESSED = 27

def zframe(blocks):
    """A zstd frame: no content size, no checksum, 128 KiB window."""
    out = struct.pack("<IBB", 0xFD2FB528, 0x00, (17 - 10) << 3)
    for i, (kind, payload) in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        if kind == "raw":
            out += struct.pack("<I", last | (0 << 1) | (len(payload) << 3))[:3] + payload
        else:  # ("rle", (byte, size))
            byte, size = payload
            out += struct.pack("<I", last | (1 << 1) | (size << 3))[:3] + bytes([byte])
    return out

events, pos, mmap_len, rounds = [], 16, None, 0
while pos + 8 <= len(data):
    etype, misc, size = struct.unpack_from("<IHH", data, pos)
    if size < 8:
        sys.exit("bad event at %#x" % pos)
    ev = data[pos:pos + size]
    if etype == HEADER_FEATURE and struct.unpack_from("<Q", ev, 8)[0] == HEADER_COMPRESSED:
        body = ev[16:]
        mmap_len = struct.unpack_from("<I" if len(body) == 20 else "<Q", body, 16)[0]
    if etype == FINISHED_ROUND:
        rounds += 1
    events.append((etype, ev))
    pos += size
if mmap_len is None:
    sys.exit("no HEADER_COMPRESSED feature in the recording")

if mode == "long":
    # FINISHED_ROUND events of 64 KiB - 8: the header raw, the rest RLE.
    esize = 65528
    n = (mmap_len + 131072) // esize
    blocks = []
    for _ in range(n):
        blocks.append(("raw", struct.pack("<IHH", FINISHED_ROUND, 0, esize)))
        blocks.append(("rle", (0, esize - 8)))
    rounds += n
elif mode == "exact":
    # FINISHED_ROUND events of exactly comp_mmap_len + 128 KiB in all.
    total, esize, blocks = mmap_len + 131072, 65528, []
    while total:
        size = min(esize, total)
        blocks.append(("raw", struct.pack("<IHH", FINISHED_ROUND, 0, size)))
        if size > 8:
            blocks.append(("rle", (0, size - 8)))
        total -= size
        rounds += 1
elif mode == "auxtrace":
    # An AUXTRACE record that claims 4 KiB of AUX data after it.
    blocks = [("raw", struct.pack("<IHHQQQIIII", AUXTRACE, 0, 48, 4096, 0, 0, 0, 0, 0, 0))]
elif mode == "tracing":
    # A HEADER_TRACING_DATA record that claims 4 KiB of tracing data after it.
    blocks = [("raw", struct.pack("<IHHII", HEADER_TRACING_DATA, 0, 16, 4096, 0))]
elif mode == "nested":
    # A compressed record (of one FINISHED_ROUND) inside compressed data.
    inner_frame = zframe([("raw", struct.pack("<IHH", FINISHED_ROUND, 0, 8))])
    inner_size = (16 + len(inner_frame) + 7) // 8 * 8
    inner = struct.pack("<IHHQ", COMPRESSED2, 0, inner_size, len(inner_frame))
    inner += inner_frame + bytes(inner_size - 16 - len(inner_frame))
    blocks = [("raw", inner)]
else:
    # 16000 RLE blocks of 128 KiB: 2 GiB from a 64 KiB record.
    blocks = [("rle", (0, 131072))] * 16000
frame = zframe(blocks)
rec_size = (16 + len(frame) + 7) // 8 * 8
if rec_size > 65535:
    sys.exit("crafted record too big: %d" % rec_size)
record = struct.pack("<IHHQ", COMPRESSED2, 0, rec_size, len(frame)) + frame
record += bytes(rec_size - len(record))

last_feat = max(i for i, (t, _) in enumerate(events) if t == HEADER_FEATURE)
out = [data[:16]]
for i, (etype, ev) in enumerate(events):
    if etype != COMPRESSED2:
        out.append(ev)
    if i == last_feat:
        out.append(record)
open(dst, "wb").write(b"".join(out))
print(rounds, mmap_len)
EOF

if ! perf record -z -e cpu-clock -c 1000000 -o - -- perf test -w noploop 1 \
	>"${tmpdir}/orig.pipe" 2>"${tmpdir}/orig.err"; then
	echo "perf record failed:"
	tail -3 "${tmpdir}/orig.err"
	exit 1
fi

# decode_case MODE WHAT: the record MODE crafts, decompressing to
# comp_mmap_len + WHAT, decodes with every FINISHED_ROUND event counted.
decode_case() {
	local mode=$1 what=$2 rounds mmap_len n

	if ! read -r rounds mmap_len < <(python3 "${tmpdir}/craft.py" "${mode}" \
		"${tmpdir}/orig.pipe" "${tmpdir}/${mode}.pipe"); then
		echo "cannot craft the ${mode} record"
		exit 1
	fi
	echo "--- ${mode}: one record decompressing to comp_mmap_len (${mmap_len}) + ${what}"
	# perf report -D ends with the event counts; --stats ignores the
	# feature events of a pipe, and so comp_mmap_len.
	if ! perf report -D -i "${tmpdir}/${mode}.pipe" >"${tmpdir}/${mode}.stats" \
		2>"${tmpdir}/${mode}.err"; then
		echo "${mode}: perf report failed:"
		grep -v schedstat "${tmpdir}/${mode}.err" | head -3
		err=1
		return
	fi
	n=$(awk '$1 == "FINISHED_ROUND" && $2 == "events:" { print $3 }' \
		"${tmpdir}/${mode}.stats")
	if [ "${n:-0}" != "${rounds}" ]; then
		echo "${mode}: ${n:-0} FINISHED_ROUND events decoded, ${rounds} expected:"
		grep -v schedstat "${tmpdir}/${mode}.err" | head -3
		err=1
	else
		echo "${mode}: ok, ${n} FINISHED_ROUND events decoded"
	fi
}

# long: a record one zstd block longer than the record buffer decodes;
# exact: so does one of exactly the bound.
decode_case long "up to 128 KiB"
decode_case exact "128 KiB"

# bomb: 2 GiB from one record is refused, with bounded memory.
if ! python3 "${tmpdir}/craft.py" bomb "${tmpdir}/orig.pipe" \
	"${tmpdir}/bomb.pipe" >/dev/null; then
	echo "cannot craft the bomb record"
	exit 1
fi
# $1: perf report or perf script. Both must stop at the record with the
# bound error, no signal, far below 2 GiB; perf script must exit non-zero
# (perf report exits 0 after an error in event processing: cmd_report()).
bomb_case() {
	local tool=$1 out="${tmpdir}/bomb.$1"
	local rc rss msg

	(
		ulimit -v 2097152
		/usr/bin/time -f "maxrss_kb %M" -o "${out}.time" \
			perf "${tool}" -i "${tmpdir}/bomb.pipe" >"${out}.out" 2>"${out}.err"
	)
	rc=$?
	rss=$(awk '$1 == "maxrss_kb" { print $2 }' "${out}.time" 2>/dev/null)
	msg=$(grep -m1 "decompresses to more than" "${out}.err")
	echo "bomb: perf ${tool} exited ${rc}, peak RSS ${rss:-?} KiB: ${msg:-no bound error}"
	# perf exits with -EINVAL & 0xff = 234: time tells a signal apart.
	if grep -q "terminated by signal" "${out}.time" ||
	   { [ "${tool}" = script ] && [ "${rc}" = 0 ]; } ||
	   grep -Eq "Segmentation|Aborted|AddressSanitizer|signal" "${out}.err"; then
		echo "bomb: perf ${tool}: expected a plain error exit"
		grep -v schedstat "${out}.err" | head -3
		err=1
	fi
	if [ -z "${msg}" ]; then
		echo "bomb: perf ${tool}: no error about the record's decompressed size:"
		grep -v schedstat "${out}.err" | head -3
		err=1
	fi
	if [ -z "${rss}" ] || [ "${rss}" -gt 262144 ]; then
		echo "bomb: perf ${tool}: peak RSS ${rss:-unknown} KiB, more than 256 MiB"
		err=1
	fi
}

echo "--- bomb: one 64 KiB record decompressing to 2 GiB"
bomb_case report
bomb_case script

# nested, auxtrace, tracing: perf record never compresses a compressed
# record, nor a record whose data follows it in the file or pipe. One
# inside decompressed data is refused with one line, not processed (a
# nested compressed record got a copy of the rest of its buffer, itself
# included, processed again for each later event; AUXTRACE and tracing
# data took their data from the file or pipe after the compressed record).
for mode in nested auxtrace tracing; do
	echo "--- ${mode}: a record perf record never compresses inside decompressed data"
	if ! python3 "${tmpdir}/craft.py" "${mode}" "${tmpdir}/orig.pipe" \
		"${tmpdir}/${mode}.pipe" >/dev/null; then
		echo "cannot craft the ${mode} record"
		exit 1
	fi
	timeout -k 5 60 perf report -D -i "${tmpdir}/${mode}.pipe" \
		>"${tmpdir}/${mode}.out" 2>"${tmpdir}/${mode}.err"
	rc=$?
	msg=$(grep -m1 "record inside decompressed data" "${tmpdir}/${mode}.err")
	echo "${mode}: perf report -D exited ${rc}: ${msg:-no error about the record}"
	if [ -z "${msg}" ] || [ "${rc}" -ge 124 ]; then
		echo "${mode}: expected the record refused with one line, then a plain exit"
		grep -v schedstat "${tmpdir}/${mode}.err" | head -3
		err=1
	fi
done

if [ "${err}" = 0 ]; then
	echo "perf report -z decoder bound test [Success]"
else
	echo "perf report -z decoder bound test [Failed]"
fi
exit "${err}"
