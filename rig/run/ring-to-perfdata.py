#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ring-to-perfdata.py PERF_DATA RING OUT

make run ARCH=arm64, on the host: the records the controller's buffer A
held in its data ring (RING, the bytes cs-etm-flow's controller read:
the PERF_RECORD_AUX records P's children wrote while P was redirected to
A) as a pipe-mode perf.data (OUT), so that perf data convert
--to-trace-dat turns them into A's rows for KernelShark next to perf's
own buffer B. The records were written by perf's inherited cs_etm
events, so their sample_id follows perf's attributes: those of PERF_DATA
(the perf.data perf record wrote in the same run) go first, as
PERF_RECORD_HEADER_ATTR records with their ids, then PERF_DATA's
PERF_RECORD_COMM and _FORK records (the tasks' names), then RING's records.

Prints one line: the number of attributes and of records written.
"""
import struct
import sys

PERF_MAGIC = b"PERFILE2"
PERF_RECORD_COMM = 3
PERF_RECORD_FORK = 7
PERF_RECORD_AUXTRACE = 71
PERF_RECORD_HEADER_ATTR = 64


def die(msg):
    sys.exit("ring-to-perfdata: " + msg)


def comms_of(path, data):
    """The PERF_RECORD_COMM and _FORK records of the data section."""
    off, sz = struct.unpack_from("<QQ", data, 40)
    pos, end, out = off, off + sz, []
    if end > len(data):
        die(f"{path}: data section past the end of the file")
    while pos + 8 <= end:
        rtype, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > end:
            die(f"{path}: record at {pos} (type {rtype}, size {size}) does not fit")
        if rtype in (PERF_RECORD_COMM, PERF_RECORD_FORK):
            out.append(data[pos:pos + size])
        if rtype == PERF_RECORD_AUXTRACE:
            # the AUX data follows the record; its size is the first field
            pos += struct.unpack_from("<Q", data, pos + 8)[0]
        pos += size
    return out


def attrs_of(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 104 or data[:8] != PERF_MAGIC:
        die(f"{path}: not a perf.data file (file mode)")
    size, attr_size, off, sz = struct.unpack_from("<QQQQ", data, 8)
    if attr_size <= 16 or off + sz > len(data) or sz % attr_size:
        die(f"{path}: bad attrs section ({off}+{sz}, attr_size {attr_size})")
    out = []
    for i in range(sz // attr_size):
        rec = data[off + i * attr_size: off + (i + 1) * attr_size]
        attr = rec[:-16]
        ids_off, ids_sz = struct.unpack_from("<QQ", rec, attr_size - 16)
        if ids_off + ids_sz > len(data) or ids_sz % 8:
            die(f"{path}: bad ids section of attribute {i}")
        out.append((attr, data[ids_off: ids_off + ids_sz]))
    return out, comms_of(path, data)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[0])
    perf_data, ring, out = sys.argv[1:]
    attrs, comms = attrs_of(perf_data)
    with open(ring, "rb") as f:
        recs = f.read()
    n = pos = 0
    while pos + 8 <= len(recs):
        rtype, misc, size = struct.unpack_from("<IHH", recs, pos)
        if size < 8 or pos + size > len(recs):
            die(f"{ring}: record at {pos} (type {rtype}, size {size}) does not fit")
        pos += size
        n += 1
    if pos != len(recs):
        die(f"{ring}: {len(recs) - pos} bytes after the last record")
    with open(out, "wb") as f:
        f.write(PERF_MAGIC + struct.pack("<Q", 16))
        for attr, ids in attrs:
            f.write(struct.pack("<IHH", PERF_RECORD_HEADER_ATTR, 0,
                                8 + len(attr) + len(ids)))
            f.write(attr + ids)
        f.write(b"".join(comms))
        f.write(recs)
    print(f"ring-to-perfdata: {len(attrs)} attributes, {len(comms)} comm and fork records, "
          f"{n} records of the ring")


main()
