#!/bin/bash
# perf record -z end of stream: decoded size equals written size
# SPDX-License-Identifier: GPL-2.0
#
# Every byte that perf record feeds to the zstd compressor must come back
# out of the decompressor when the file is read: nothing may stay in the
# compression stream when the file is closed, and nothing may stay in the
# decoder after the last compressed record.
#
# Both sizes are measured outside of perf's own accounting: a small
# LD_PRELOAD library counts the bytes ZSTD_compressStream() consumes in
# perf record and the bytes ZSTD_decompressStream() produces in perf report.
# It also reports what the last ZSTD_flushStream() left in the stream when
# perf record exited, to tell writer and reader losses apart.
#
# The zstd output of ordinary samples is small and usually fits in one
# record, which hides the problem. --call-graph dwarf,4096 stack dumps of
# a process whose stack buffer holds random data (head -c reading
# /dev/urandom) hardly compress, so that blocks span several records and
# the final flush of a big last read does not fit in its record.
# Run over a matrix of -m sizes, -z levels, sync and --aio writing.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_eos.XXXXX)

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
if ! command -v gcc >/dev/null; then
	echo "no gcc to build the zstd byte counter [Skipped]"
	exit 2
fi
if ! perf version --build-options | grep -Eq "dwarf-unwind: \[ on"; then
	echo "perf built without dwarf unwinding [Skipped]"
	exit 2
fi

cat >"${tmpdir}/zcount.c" <<'EOC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* ZSTD_inBuffer and ZSTD_outBuffer have the same layout. */
struct zbuf { void *ptr; size_t size; size_t pos; };
typedef size_t (*zfn_t)(void *, struct zbuf *, struct zbuf *);
typedef size_t (*ffn_t)(void *, struct zbuf *);
static unsigned long long consumed, produced;
static size_t pending;

/* What the last flush left in the compression stream. */
size_t ZSTD_flushStream(void *zcs, struct zbuf *out)
{
	static ffn_t real;

	if (!real)
		real = (ffn_t)dlsym(RTLD_NEXT, "ZSTD_flushStream");
	pending = real(zcs, out);
	return pending;
}

size_t ZSTD_compressStream(void *zcs, struct zbuf *out, struct zbuf *in)
{
	static zfn_t real;
	size_t pos = in->pos, ret;

	if (!real)
		real = (zfn_t)dlsym(RTLD_NEXT, "ZSTD_compressStream");
	ret = real(zcs, out, in);
	consumed += in->pos - pos;
	return ret;
}

size_t ZSTD_decompressStream(void *zds, struct zbuf *out, struct zbuf *in)
{
	static zfn_t real;
	size_t pos = out->pos, ret;

	if (!real)
		real = (zfn_t)dlsym(RTLD_NEXT, "ZSTD_decompressStream");
	ret = real(zds, out, in);
	produced += out->pos - pos;
	return ret;
}

__attribute__((destructor)) static void zcount_dump(void)
{
	const char *path = getenv("ZCOUNT_OUT");
	FILE *f;

	if (!path || !(consumed || produced))
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%llu %llu %zu\n", consumed, produced, pending);
	fclose(f);
}
EOC
if ! gcc -shared -fPIC -O2 -o "${tmpdir}/zcount.so" "${tmpdir}/zcount.c" -ldl; then
	echo "cannot build the zstd byte counter [Skipped]"
	exit 2
fi
if ! ldd "$(command -v perf)" | grep -q libzstd; then
	echo "perf is not dynamically linked with libzstd [Skipped]"
	exit 2
fi

# Sum of column $2 of file $1.
sum_col() {
	awk -v c="$2" '{ s += $c } END { printf "%d\n", s }' "$1" 2>/dev/null || echo 0
}

# $1: -m size, $2: -z level, $3: sync|aio
run_case() {
	local mmap=$1 level=$2 mode=$3
	local name="m${mmap}-z${level}-${mode}"
	local data="${tmpdir}/${name}.data"
	local aio="" written decoded pending

	[ "${mode}" = aio ] && aio=--aio
	rm -f "${data}".*
	if ! ZCOUNT_OUT="${data}.wr" LD_PRELOAD="${tmpdir}/zcount.so" \
		timeout -k 5 60 perf record -m "${mmap}" -z"${level}" ${aio} \
		-e cpu-clock -F 1000 --call-graph dwarf,4096 -o "${data}" -- \
		head -c 48M /dev/urandom >/dev/null 2>"${data}.rec"; then
		echo "${name}: perf record failed:"
		grep -v schedstat "${data}.rec" | tail -3
		err=1
		return
	fi
	ZCOUNT_OUT="${data}.rd" LD_PRELOAD="${tmpdir}/zcount.so" \
		timeout -k 5 120 perf report --stats -i "${data}" \
		>"${data}.stats" 2>"${data}.err"
	written=$(sum_col "${data}.wr" 1)
	decoded=$(sum_col "${data}.rd" 2)
	pending=$(sum_col "${data}.wr" 3)
	if [ "${written}" -eq 0 ]; then
		echo "${name}: nothing was compressed"
		err=1
		return
	fi
	if [ "${decoded}" -ne "${written}" ] ||
	   grep -Eq "decompress|failed to process|processing failed" "${data}.err"; then
		echo "${name}: FAIL: wrote ${written} bytes, decoded ${decoded}" \
		     "($((written - decoded)) missing," \
		     "${pending} bytes left in the compressor at exit)" \
		     "$(grep -Eim1 "decompress|failed" "${data}.err")"
		err=1
		return
	fi
	echo "${name}: ok: wrote and decoded ${written} bytes" \
	     "into $(stat -c %s "${data}") bytes of perf.data"
}

for mmap in 64K 1M 16M; do
	for level in 1 9; do
		for mode in sync aio; do
			run_case "${mmap}" "${level}" "${mode}"
		done
	done
done

if [ "${err}" = 0 ]; then
	echo "perf record -z end of stream test [Success]"
else
	echo "perf record -z end of stream test [Failed]"
fi
exit "${err}"
