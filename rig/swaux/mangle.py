#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Copy a perf.data file recorded on the swaux PMU and damage its AUX data.

usage: mangle.py IN OUT MODE

The negative tests of the perf swaux decoder (tools/perf/util/swaux.c) use it
on a recording from the VM (make swaux-perf). The target is the middle record
of the perf AUX buffer with the lowest AUXTRACE idx. MODE:
  none           an unchanged copy (the decoder must say ok)
  gap            the target and every later record of that buffer get seq + 3:
                 one unflagged gap
  gap-flagged    gap, and PERF_AUX_FLAG_TRUNCATED on the PERF_RECORD_AUX of
                 the buffer's CPU whose transaction holds the target: flagged
  gap-otherflag  gap, and TRUNCATED on every PERF_RECORD_AUX of the other
                 CPUs: still unflagged
  mismatch       SWAUX_F_MISMATCH on the target: misplaced
  bufid          the target's buf_id + 1000: misplaced (and a seq gap)
  magic          the target's magic broken: invalid (and a seq gap)
Prints one line "mangle: MODE idx=.. cpu=.. pos=.. seq=.. ..." on success.
Little-endian files only (what x86_64 and arm64 write).
"""
import shutil
import struct
import sys

PERF_RECORD_AUX = 11
PERF_RECORD_AUXTRACE = 71
PERF_SAMPLE_CPU = 1 << 7
PERF_SAMPLE_IDENTIFIER = 1 << 16
PERF_AUX_FLAG_TRUNCATED = 1
SWAUX_MAGIC = 0x58554153
SWAUX_F_MISMATCH = 1
REC = 64
MODES = ("none", "gap", "gap-flagged", "gap-otherflag", "mismatch", "bufid", "magic")


def die(msg):
    sys.stderr.write("mangle: error: %s\n" % msg)
    sys.exit(1)


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in MODES:
        die("usage: mangle.py IN OUT %s" % "|".join(MODES))
    src, dst, mode = sys.argv[1:]
    shutil.copyfile(src, dst)
    with open(dst, "r+b") as f:
        buf = bytearray(f.read())
        mangle(buf, mode)
        f.seek(0)
        f.write(buf)


def mangle(buf, mode):
    if buf[:8] != b"PERFILE2":
        die("not a little-endian perf.data file (no PERFILE2 magic)")
    _, attr_size, attrs_off, _, data_off, data_size = struct.unpack_from("<QQQQQQ", buf, 8)
    sample_type = struct.unpack_from("<Q", buf, attrs_off + 24)[0]

    # Walk the data section: AUXTRACE chunks and AUX records.
    chunks, auxes = [], []
    off, end = data_off, data_off + data_size
    while off + 8 <= end:
        etype, _, esize = struct.unpack_from("<IHH", buf, off)
        if esize < 8:
            die("bad event size %d at %#x" % (esize, off))
        if etype == PERF_RECORD_AUXTRACE:
            size, aoff, _, idx, _, cpu = struct.unpack_from("<QQQIIi", buf, off + 8)
            chunks.append((idx, cpu, aoff, off + esize, size))
            off += esize + size
            continue
        if etype == PERF_RECORD_AUX:
            aoff, asize, _ = struct.unpack_from("<QQQ", buf, off + 8)
            cpu = -1
            if sample_type & PERF_SAMPLE_CPU:
                at = off + esize - 8 - (8 if sample_type & PERF_SAMPLE_IDENTIFIER else 0)
                cpu = struct.unpack_from("<i", buf, at)[0]
            auxes.append((off, cpu, aoff, asize))
        off += esize
    if not chunks:
        die("no AUXTRACE events")

    # The records of the buffer with the lowest idx, in file order
    idx = min(c[0] for c in chunks)
    recs = []
    for cidx, cpu, aoff, foff, size in chunks:
        if cidx != idx:
            continue
        for i in range(size // REC):
            at = foff + i * REC
            magic, rsize = struct.unpack_from("<IH", buf, at)
            if magic == SWAUX_MAGIC and rsize == REC:
                recs.append((at, aoff + i * REC, cpu))
    if len(recs) < 16:
        die("only %d records in buffer idx %d" % (len(recs), idx))
    t_at, t_pos, t_cpu = recs[len(recs) // 2]
    seq = struct.unpack_from("<Q", buf, t_at + 8)[0]
    buf_id = struct.unpack_from("<I", buf, t_at + 44)[0]
    note = ""

    if mode.startswith("gap"):
        for at, pos, _ in recs[len(recs) // 2:]:
            struct.pack_into("<Q", buf, at + 8, struct.unpack_from("<Q", buf, at + 8)[0] + 3)
    if mode == "gap-flagged":
        hit = [a for a in auxes if a[1] == t_cpu and a[2] <= t_pos < a[2] + a[3]]
        if not hit:
            die("no PERF_RECORD_AUX of cpu %d holds aux offset %#x" % (t_cpu, t_pos))
        for a in hit:
            struct.pack_into("<Q", buf, a[0] + 24,
                             struct.unpack_from("<Q", buf, a[0] + 24)[0] | PERF_AUX_FLAG_TRUNCATED)
        note = " truncated=%d" % len(hit)
    elif mode == "gap-otherflag":
        hit = [a for a in auxes if a[1] != t_cpu]
        if not hit:
            die("no PERF_RECORD_AUX of another cpu than %d" % t_cpu)
        for a in hit:
            struct.pack_into("<Q", buf, a[0] + 24,
                             struct.unpack_from("<Q", buf, a[0] + 24)[0] | PERF_AUX_FLAG_TRUNCATED)
        note = " truncated=%d" % len(hit)
    elif mode == "mismatch":
        flags = struct.unpack_from("<H", buf, t_at + 6)[0]
        struct.pack_into("<H", buf, t_at + 6, flags | SWAUX_F_MISMATCH)
    elif mode == "bufid":
        struct.pack_into("<I", buf, t_at + 44, buf_id + 1000)
    elif mode == "magic":
        struct.pack_into("<I", buf, t_at, SWAUX_MAGIC ^ 0xff)

    print("mangle: %s idx=%d cpu=%d pos=%#x seq=%d buf_id=%d records=%d aux_records=%d%s" %
          (mode, idx, t_cpu, t_pos, seq, buf_id, len(recs), len(auxes), note))


if __name__ == "__main__":
    main()
