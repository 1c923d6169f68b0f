#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ete-seqs.py CPU A.bin REPORT-D.txt: make run ARCH=arm64's cross-check
of the controller's buffer A and perf's buffers, by the sequence numbers
QEMU's ETE model puts in each record's Timestamp (cpu << 48 | seq).

A.bin is A's AUX area as the controller saved it (64-byte model records,
Ignore padding, zeroes never written); REPORT-D.txt is `perf report -D` of
perf.data, whose OpenCSD packet dump prints every Timestamp. Prints one line
  ete-seqs: cpu=N a_records=N a_last=N b_records=N b_after_a=N duplicates=N
b_after_a counts CPU's records in perf's buffers with a higher sequence
number than A's last (the children's trace after P -> B); duplicates counts
records in both (trace written twice, through a TRBE programmed with the
wrong buffer). Exit 1 if a file cannot be read."""
import re
import sys


def a_seqs(path, cpu):
    data = open(path, 'rb').read()
    seqs = []
    for off in range(0, len(data) - 63, 64):
        r = data[off:off + 64]
        if all(b in (0, 0x70) for b in r):
            continue
        p = r[2:] if r[0] == 0 and r[1] == 5 else r
        if p[11] != 0x80 or p[15] != 0x02:
            continue
        ts = 0
        for i in range(9):
            b = p[16 + i]
            ts |= (b & 0x7f if i < 8 else b) << (7 * i)
            if i == 8 or not b & 0x80:
                break
        if ts >> 48 == cpu:
            seqs.append(ts & ((1 << 48) - 1))
    return seqs


def b_seqs(path, cpu):
    pat = re.compile(r'I_TIMESTAMP : Timestamp\.; Updated val = 0x([0-9a-f]+)')
    seqs = []
    with open(path, errors='replace') as f:
        for line in f:
            m = pat.search(line)
            if m:
                ts = int(m.group(1), 16)
                if ts >> 48 == cpu:
                    seqs.append(ts & ((1 << 48) - 1))
    return seqs


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cpu = int(sys.argv[1])
    try:
        a = a_seqs(sys.argv[2], cpu)
        b = b_seqs(sys.argv[3], cpu)
    except OSError as e:
        print('ete-seqs: %s' % e, file=sys.stderr)
        sys.exit(1)
    a_last = max(a) if a else 0
    dup = len(set(a) & set(b))
    after = sum(1 for s in b if s > a_last)
    print('ete-seqs: cpu=%d a_records=%d a_last=%d b_records=%d b_after_a=%d duplicates=%d'
          % (cpu, len(a), a_last, len(b), after, dup))


main()
