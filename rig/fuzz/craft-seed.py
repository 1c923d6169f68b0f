#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Craft a fuzzing seed with PERF_RECORD_COMPRESSED2 records whose zstd frames
are made of raw blocks, so that the events inside them stay visible to the
fuzzer's mutations (a real -z recording's payload is entropy-coded: almost
every mutation of it only reaches the zstd error path).

  craft-seed.py <plain pipe recording> <-z pipe recording> <out>
  craft-seed.py --list <pipe recording>

<out> is the plain recording with the HEADER_COMPRESSED feature event of
the -z recording inserted after its last HEADER_FEATURE event, and each run
of kernel events (type < 64) packed into COMPRESSED2 records, one zstd frame
(no content size, no checksum, 128 KiB window) of raw blocks per record;
a last record holds two 4 KiB FINISHED_ROUND events of raw and RLE blocks.
Both recordings must come from the same perf (same feature layout).
"""
import struct
import sys

USER_TYPE_START = 64
TRACING_DATA, FINISHED_ROUND, AUXTRACE = 66, 68, 71
HEADER_FEATURE, COMPRESSED2 = 80, 83
HEADER_COMPRESSED = 27
BLOCK = 4096           # raw block payload, bytes
RECORD_MAX = 16384     # COMPRESSED2 record size, bytes (perf's limit: 64 KiB)


def events(data):
    """(type, bytes) of each event of a pipe-mode recording, trailing data
    (tracing data, AUX area data) included in the event's bytes."""
    magic, hsize = struct.unpack_from("<8sQ", data, 0)
    if magic != b"PERFILE2" or hsize != 16:
        sys.exit("not a little-endian pipe-mode perf.data")
    pos, out = 16, []
    while pos + 8 <= len(data):
        etype, _misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8:
            sys.exit("bad event size %d at %#x" % (size, pos))
        end = pos + size
        if etype == TRACING_DATA:
            end += (struct.unpack_from("<I", data, pos + 8)[0] + 7) // 8 * 8
        elif etype == AUXTRACE:
            end += struct.unpack_from("<Q", data, pos + 8)[0]
        out.append((etype, data[pos:end]))
        pos = end
    if pos != len(data):
        sys.exit("%d trailing bytes" % (len(data) - pos))
    return out


def feat_id(ev):
    return struct.unpack_from("<Q", ev, 8)[0]


def zframe(blocks):
    """A zstd frame of ("raw", bytes) and ("rle", (byte, count)) blocks."""
    frame = struct.pack("<IBB", 0xFD2FB528, 0x00, (17 - 10) << 3)
    for i, (kind, arg) in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        if kind == "raw":
            frame += struct.pack("<I", last | (len(arg) << 3))[:3] + arg
        else:
            byte, count = arg
            frame += struct.pack("<I", last | (1 << 1) | (count << 3))[:3] + bytes([byte])
    return frame


def raw_blocks(payload):
    return [("raw", payload[i:i + BLOCK]) for i in range(0, len(payload), BLOCK)]


def compressed2(blocks):
    frame = zframe(blocks)
    size = (16 + len(frame) + 7) // 8 * 8
    rec = struct.pack("<IHHQ", COMPRESSED2, 0, size, len(frame)) + frame
    return rec + bytes(size - len(rec))


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        for etype, ev in events(open(argv[2], "rb").read()):
            extra = " feat %d" % feat_id(ev) if etype == HEADER_FEATURE else ""
            print("type %d size %d%s" % (etype, len(ev), extra))
        return 0
    if len(argv) != 4:
        sys.exit(__doc__)
    plain = open(argv[1], "rb").read()
    evs = events(plain)
    comp = [ev for t, ev in events(open(argv[2], "rb").read())
            if t == HEADER_FEATURE and feat_id(ev) == HEADER_COMPRESSED]
    if not comp:
        sys.exit("%s has no HEADER_COMPRESSED feature event" % argv[2])
    if any(t == HEADER_FEATURE and feat_id(ev) == HEADER_COMPRESSED for t, ev in evs):
        sys.exit("%s is already a -z recording" % argv[1])
    last_feat = max(i for i, (t, _) in enumerate(evs) if t == HEADER_FEATURE)

    out, run, nrec, npacked = [plain[:16]], [], 0, 0

    def flush():
        nonlocal run, nrec
        payload = b""
        for ev in run + [None]:
            # Frame payload at most RECORD_MAX - record/frame/block headers.
            if ev is None or len(payload) + len(ev) > RECORD_MAX - 64:
                if payload:
                    out.append(compressed2(raw_blocks(payload)))
                    nrec += 1
                payload = b""
            if ev is not None:
                payload += ev
        run = []

    for i, (etype, ev) in enumerate(evs):
        if i > last_feat and etype < USER_TYPE_START:
            run.append(ev)
            npacked += 1
            continue
        flush()
        out.append(ev)
        if i == last_feat:
            out.append(comp[0])
    flush()
    # One more record: two FINISHED_ROUND events of 4 KiB, each a raw block
    # (the event header) and an RLE block (its zero padding).
    fr = struct.pack("<IHH", FINISHED_ROUND, 0, 4096)
    out.append(compressed2([("raw", fr), ("rle", (0, 4088)),
                            ("raw", fr), ("rle", (0, 4088))]))
    nrec += 1
    open(argv[3], "wb").write(b"".join(out))
    print("%d events in %d COMPRESSED2 records of raw blocks, 2 FINISHED_ROUND"
          " in one of raw and RLE blocks" % (npacked, nrec - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
