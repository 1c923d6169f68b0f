#!/bin/bash
# perf record -z: readers keep no decompressed data they are done with
# SPDX-License-Identifier: GPL-2.0
#
# perf report and perf script decompress each PERF_RECORD_COMPRESSED2
# record of a perf record -z recording into a buffer of its own.  Once
# the events of a buffer are processed (delivered, for perf script, which
# orders them), it must be unmapped: memory must not grow with the
# recording.  Two -z recordings of a busy loop with 16 KiB dwarf stacks,
# a short one and one with 16 MiB or more of decompressed data more, are
# read by perf script -F time and perf report --stats: the peak RSS of
# the longer one may exceed that of the shorter one by its larger file
# (perf maps the whole file) and 8 MiB, not by its decompressed data.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_decomp_memory.XXXXX)

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
if [ ! -x /usr/bin/time ]; then
	echo "no /usr/bin/time to read the peak RSS [Skipped]"
	exit 2
fi

# record NAME SECONDS: a -z recording of SECONDS of a busy loop; prints
# the MiB of data it holds before compression (perf record's "original").
record() {
	perf record -z -o "${tmpdir}/$1.data" -e cpu-clock -F 4000 \
		--call-graph dwarf,16384 -- perf test -w noploop "$2" \
		2>"${tmpdir}/$1.err" >/dev/null
	sed -n 's/.*compressed (original \([0-9]*\)\..*/\1/p' "${tmpdir}/$1.err"
}

# peak_rss NAME TOOL...: the peak RSS in KiB of perf TOOL... on NAME.data.
peak_rss() {
	local name=$1

	shift
	/usr/bin/time -f "%M" -o "${tmpdir}/time" \
		perf "$@" -i "${tmpdir}/${name}.data" >/dev/null 2>&1
	tail -1 "${tmpdir}/time"
}

small=$(record small 0.1)
# A busy machine gives the loop less CPU time, and fewer samples.
for s in 1 2 4 8; do
	big=$(record big "${s}")
	[ -n "${small}" ] && [ -n "${big}" ] && [ $((big - small)) -ge 16 ] && break
done
if [ -z "${small}" ] || [ -z "${big}" ] || [ $((big - small)) -lt 16 ]; then
	echo "recordings of ${small:-?} and ${big:-?} MiB of data: 16 MiB apart needed"
	grep -v schedstat "${tmpdir}"/*.err | head -4
	exit 1
fi
files=$(( ($(stat -c %s "${tmpdir}/big.data") - $(stat -c %s "${tmpdir}/small.data")) / 1024 ))
[ "${files}" -gt 0 ] || files=0
echo "recordings: ${small} and ${big} MiB of data, files ${files} KiB apart"

for tool in "script -F time" "report --stats"; do
	# shellcheck disable=SC2086 # the tool and its options
	rs=$(peak_rss small ${tool})
	# shellcheck disable=SC2086
	rb=$(peak_rss big ${tool})
	if [ -z "${rs}" ] || [ -z "${rb}" ]; then
		echo "perf ${tool}: no peak RSS"
		err=1
		continue
	fi
	echo "perf ${tool}: peak RSS ${rs} KiB and ${rb} KiB"
	if [ $((rb - rs - files)) -gt 8192 ]; then
		echo "perf ${tool}: the longer recording needs" \
			"$(( (rb - rs - files) / 1024 )) MiB more than its larger file:" \
			"decompressed data kept"
		err=1
	fi
done

if [ "${err}" = 0 ]; then
	echo "perf -z readers memory test [Success]"
else
	echo "perf -z readers memory test [Failed]"
fi
exit "${err}"
