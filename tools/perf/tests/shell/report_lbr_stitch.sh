#!/bin/bash
# perf script/report --stitch-lbr of a sample whose event was a freed copy
# SPDX-License-Identifier: GPL-2.0
#
# With --stitch-lbr, each thread keeps its previous sample, a struct copy
# whose branch_stack points into the event the sample was parsed from, and
# stitches its next sample to that branch stack. A sample with a deferred
# user callchain (perf record --call-graph fp,defer) is delivered from a
# copy of its event, made when the sample arrives and freed once the
# PERF_RECORD_CALLCHAIN_DEFERRED record that completes it has delivered it;
# with LBR call stacks in the same samples (-j call_stack,u,hw_index) the
# thread's next sample was stitched from that freed copy. perf must keep a
# copy of the branch stack it stitches from.
#
# No LBR hardware is needed: a python3 script crafts a perf.data file with
# one event (IP|TID|TIME|PERIOD|CALLCHAIN|BRANCH_STACK, branch_sample_type
# USER|CALL_STACK|HW_INDEX, defer_callchain, sample_id_all) and
# HEADER_CPU_PMU_CAPS "branches=8" (max_lbr: no stitching without it).
# Its samples, in time order:
#   A: thread 1000, deferred callchain, LBR (newest first, slots 4..0)
#      d->e, c->d, b->c, a->b, main->a; A's deferred record delivers A.
#   C: thread 2000, deferred, as big as A; its deferred record delivers
#      it. Without the fix C's copy takes the block A's copy was freed to
#      (glibc's malloc hands it straight back), A's kept branch stack then
#      reads as C's and B below is not stitched.
#   B: thread 1000, LBR (slots 3..2) c->f, b->c: b->c is A's entry in the
#      same slot, so B is stitched with A's two older entries, and its
#      chain ends with the call sites of a->b (0x401120) and main->a
#      (0x401010).
# perf script and perf report must print those chains, and perf script
# under valgrind must make no invalid read (valgrind does not reuse a freed
# block: the output is right there, the read of the freed copy is seen).
#
# Pipe mode cannot show this: perf script and perf report set up
# --stitch-lbr before the stream's attributes arrive, find no branch stack
# ("Can't find LBR callchain. Switch off --stitch-lbr.") and never stitch.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.lbr_stitch.XXXXX)

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

if ! command -v python3 >/dev/null; then
	echo "no python3 to craft the recording [Skipped]"
	exit 2
fi
if ! command -v valgrind >/dev/null; then
	echo "no valgrind [Skipped]"
	exit 2
fi

# The chain order and the report's layout must not come from a perfconfig.
export PERF_CONFIG=/dev/null

cat >"${tmpdir}/craft.py" <<'EOF'
import struct
import sys

MAX_LBR = 8
S_IP, S_TID, S_TIME, S_CALLCHAIN, S_PERIOD, S_BRANCH_STACK = 1, 2, 4, 32, 256, 2048
B_USER, B_CALL_STACK, B_NO_FLAGS, B_NO_CYCLES, B_HW_INDEX = 1, 1 << 11, 1 << 14, 1 << 15, 1 << 17
MMAP, COMM, SAMPLE, CALLCHAIN_DEFERRED = 1, 3, 9, 22
MISC_USER = 2
CONTEXT_USER, CONTEXT_USER_DEFERRED = 2**64 - 512, 2**64 - 640
HEADER_NRCPUS, HEADER_CPU_PMU_CAPS = 7, 28

# exclude_kernel, mmap, comm, sample_id_all, defer_callchain
flags = 1 << 5 | 1 << 8 | 1 << 9 | 1 << 18 | 1 << 38
attr = struct.pack("<IIQQQQQIIQQQQIiQIHHIIQ", 0, 128, 0, 100000,
                   S_IP | S_TID | S_TIME | S_PERIOD | S_CALLCHAIN | S_BRANCH_STACK,
                   0, flags, 0, 0, 0, 0,
                   B_USER | B_CALL_STACK | B_NO_FLAGS | B_NO_CYCLES | B_HW_INDEX,
                   0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

def record(rtype, body, misc=0):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body

def sample_id(tid, time):
    return struct.pack("<IIQ", tid, tid, time)

def cstr(s):
    b = s.encode() + b"\0"
    return b + bytes(-len(b) % 8)

def u64s(vals):
    return b"".join(struct.pack("<Q", v) for v in vals)

def comm(tid, name, time):
    return record(COMM, struct.pack("<II", tid, tid) + cstr(name) + sample_id(tid, time))

def mmap(tid, start, length, path, time):
    return record(MMAP, struct.pack("<IIQQQ", tid, tid, start, length, 0) +
                  cstr(path) + sample_id(tid, time), MISC_USER)

def sample(tid, time, ip, chain, hw_idx, branches):
    body = struct.pack("<QIIQQ", ip, tid, tid, time, 1)
    body += u64s([len(chain)] + chain) + u64s([len(branches), hw_idx])
    body += b"".join(u64s([frm, to, 0]) for frm, to in branches)
    return record(SAMPLE, body, MISC_USER)

def deferred(tid, time, cookie, ips):
    body = u64s([cookie, len(ips)] + ips) + sample_id(tid, time)
    return record(CALLCHAIN_DEFERRED, body, MISC_USER)

main, fa, fb, fc, fd, fe, ff = (0x401000 + 0x100 * i for i in range(7))
a_br = [(fd + 0x50, fe), (fc + 0x40, fd), (fb + 0x30, fc), (fa + 0x20, fb), (main + 0x10, fa)]
b_br = [(fc + 0x60, ff), (fb + 0x30, fc)]
c_br = [(0x402010 + 0x100 * i, 0x402100 + 0x100 * i) for i in range(5)]
fp_chain = [fd + 0x55, fc + 0x45, fb + 0x35, fa + 0x25, main + 0x15]

data = b"".join([
    comm(1000, "lbrstitch", 1000),
    mmap(1000, 0x400000, 0x10000, "/lbr-stitch-test/prog", 1100),
    comm(2000, "other", 1200),
    sample(1000, 2000, fe + 8, [CONTEXT_USER_DEFERRED, 1], 4, a_br),
    deferred(1000, 2100, 1, [CONTEXT_USER, fe + 8] + fp_chain),
    sample(2000, 3000, 0x402508, [CONTEXT_USER_DEFERRED, 2], 4, c_br),
    deferred(2000, 3100, 2, [CONTEXT_USER, 0x402508]),
    sample(1000, 4000, ff + 8, [CONTEXT_USER, ff + 8, fc + 0x65] + fp_chain[2:], 3, b_br),
])

def string(s):
    b = cstr(s)
    return struct.pack("<I", len(b)) + b

feats = [(HEADER_NRCPUS, struct.pack("<II", 1, 1)),
         (HEADER_CPU_PMU_CAPS, struct.pack("<I", 1) + string("branches") + string(str(MAX_LBR)))]
bitmap = bytearray(32)
for feat, _ in feats:
    bitmap[feat // 8] |= 1 << (feat % 8)

# perf_file_header, one perf_file_attr (no ids), data, feature sections
attr_size = len(attr) + 16
data_off = 104 + attr_size
off = data_off + len(data) + 16 * len(feats)
sections = b""
for _, body in feats:
    sections += struct.pack("<QQ", off, len(body))
    off += len(body)
out = struct.pack("<8sQQQQQQQQ", b"PERFILE2", 104, attr_size, 104, attr_size,
                  data_off, len(data), 0, 0) + bytes(bitmap)
out += attr + struct.pack("<QQ", 0, 0) + data + sections
out += b"".join(body for _, body in feats)
open(sys.argv[1], "wb").write(out)
EOF

data="${tmpdir}/perf.data"
if ! python3 "${tmpdir}/craft.py" "${data}"; then
	echo "cannot craft the recording"
	exit 1
fi

# Each sample's tid and chain, one line: B's ends with A's stitched entries.
cat >"${tmpdir}/expected" <<'EOF'
1000 401508 401450 401340 401230 401120 401010
2000 402508 402010 402110 402210 402310 402410
1000 401608 401360 401230 401120 401010
EOF

# check_script OUT ERR WHAT: perf script's output OUT holds the expected chains.
check_script() {
	local out=$1 errf=$2 what=$3

	awk '/^\t/ { l = l " " $1; next }
	     NF == 1 { if (l != "") print l; l = $1 }
	     END { if (l != "") print l }' "${out}" >"${out}.chains"
	if ! cmp -s "${tmpdir}/expected" "${out}.chains"; then
		echo "${what}: not the expected chains (expected, got):"
		diff "${tmpdir}/expected" "${out}.chains"
		grep -v '^==' "${errf}" | head -3
		err=1
	else
		echo "${what}: B's chain stitched to A's: ok"
	fi
}

script=(perf script --stitch-lbr -F "tid,ip" -i "${data}")
"${script[@]}" >"${tmpdir}/script.out" 2>"${tmpdir}/script.err"
check_script "${tmpdir}/script.out" "${tmpdir}/script.err" "perf script"

if ! perf report --stitch-lbr --stdio --no-children --sort pid \
	-g folded,0,callee,address -i "${data}" >"${tmpdir}/report.out" \
	2>"${tmpdir}/report.err"; then
	echo "perf report failed:"
	head -3 "${tmpdir}/report.err"
	err=1
elif ! grep -qx '33.33% 0x401608;0x401360;0x401230;0x401120;0x401010' \
	"${tmpdir}/report.out"; then
	echo "perf report: B's chain not stitched to A's:"
	grep '0x401608' "${tmpdir}/report.out"
	err=1
else
	echo "perf report: B's chain stitched to A's: ok"
fi

timeout -k 10 300 valgrind --error-exitcode=99 --num-callers=20 "${script[@]}" \
	>"${tmpdir}/vg.out" 2>"${tmpdir}/vg.err"
rc=$?
if [ "${rc}" = 99 ]; then
	echo "perf script under valgrind: memory errors:"
	grep -m1 -A13 '== Invalid' "${tmpdir}/vg.err" || head -12 "${tmpdir}/vg.err"
	err=1
elif [ "${rc}" != 0 ]; then
	echo "perf script under valgrind exited ${rc}:"
	tail -3 "${tmpdir}/vg.err"
	err=1
fi
check_script "${tmpdir}/vg.out" "${tmpdir}/vg.err" "perf script under valgrind"

if [ "${err}" = 0 ]; then
	echo "perf --stitch-lbr of a freed sample copy test [Success]"
else
	echo "perf --stitch-lbr of a freed sample copy test [Failed]"
fi
exit "${err}"
