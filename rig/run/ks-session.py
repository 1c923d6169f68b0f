#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ks-session.py CPU B.dat B.txt A.dat A.txt SESSION

make run ARCH=arm64, on the host: a KernelShark session (kernelshark -s)
that opens perf's trace.dat (buffer B, stream 0) and the one of the
controller's buffer A (stream 1) and frames the redirect: the last AUX
record in A on CPU (the child's last transaction there, ended by the
redirect) with the records before it in A and those after it in B. B.txt
and A.txt are `trace-cmd report` of the two files. The window fills the
xvfb screen (1280x800), the graph gets most of it.

Prints one line: the redirect's time and the window, for the caption.
"""
import json
import os
import re
import sys

LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+):\s+(\S+):")
WINDOW = 0.25  # seconds on each side of the redirect


def aux_times(path, cpu):
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m and int(m.group(3)) == cpu and m.group(5) == "aux":
                out.append(float(m.group(4)))
    return out


def stream(sid, dat):
    return {
        "type": "kshark.config.stream",
        "stream id": sid,
        "data": {
            "type": "kshark.config.data",
            "file": os.path.abspath(dat),
            "name": "top buffer",
            # KernelShark refuses a session whose file changed since.
            "time": int(os.stat(dat).st_mtime),
        },
        "filters": {"type": "kshark.config.filter", "filter mask": 7},
        "plugins": {"type": "kshark.config.plugins", "registered": []},
        "CPUPlots": [0, 1],
        "TaskPlots": [],
    }


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__.split("\n\n")[0])
    cpu = int(sys.argv[1])
    b_dat, b_txt, a_dat, a_txt, out = sys.argv[2:]
    a = aux_times(a_txt, cpu)
    if not a:
        sys.exit(f"ks-session: no AUX record on CPU {cpu} in {a_txt}")
    t_a = a[-1]
    later = [t for t in aux_times(b_txt, cpu) if t > t_a]
    t_b = later[0] if later else None
    lo = t_a - WINDOW
    hi = max(t_a + WINDOW, (t_b or t_a) + WINDOW / 5)
    session = {
        "type": "kshark.config.session",
        "MainWindow": [1280, 800],
        "Splitter": [560, 170],
        "Model": {
            "type": "kshark.config.model",
            "range": [int(lo * 1e9), int(hi * 1e9)],
            "bins": 1100,
        },
        "data streams": [stream(0, b_dat), stream(1, a_dat)],
        "ComboPlots": [],
        "Markers": {
            "type": "kshark.config.markers",
            "markA": {"isSet": False},
            "markB": {"isSet": False},
            "Active": "A",
        },
        "ViewTop": 0,
        "ColorScheme": 0.75,
        "User Plugins": {"type": "kshark.config.plugins", "obj. files": []},
    }
    with open(out, "w") as f:
        json.dump(session, f, indent=1)
    nxt = f"{t_b:.6f} s" if t_b is not None else "none"
    print(f"ks-session: CPU {cpu}: A's last AUX record {t_a:.6f} s, B's next {nxt};"
          f" window {lo:.3f}-{hi:.3f} s")


main()
