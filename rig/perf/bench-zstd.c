// SPDX-License-Identifier: GPL-2.0
/*
 * bench-zstd: perf record -z's compression of ring buffer data, replayed.
 *
 * Built twice by rig/perf/bench-record.sh, against the base tree's
 * tools/perf/util/zstd.c and against the series' (the code the record -z
 * fixes change), and run on the same input: the data section of a
 * perf.data file recorded without -z, cut at record boundaries into pushes
 * of at least <push KiB>, as perf_mmap__push() hands a ring buffer's new
 * records to record__pushfn(). Each push goes through
 * zstd_compress_stream_to_records() as perf record's zstd_compress() calls
 * it: level 1, PERF_RECORD_COMPRESSED2 records of at most
 * PERF_SAMPLE_MAX_SIZE - 24 bytes of zstd output, the record header and
 * padding written by a copy of builtin-record.c's process_comp_header().
 *
 *   bench-zstd <perf.data> <push KiB> <passes>
 *
 * Each pass starts a new stream (zstd_init(), zstd_fini()). Prints
 *   <MB in> <CPU s> <MB/s> <bytes out> <pushes>
 * where CPU s is this thread's CPU time in the compression loop alone
 * (reading the file is not counted), and MB in counts every pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/compress.h"

#define REC_COMPRESSED2	83
#define MAX_SAMPLE	(1 << 16)

struct rec_header {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
};

struct rec_compressed2 {
	struct rec_header header;
	uint64_t data_size;
};

/* What builtin-record.c's process_comp_header() does (same in base and series) */
static ssize_t comp_header(void *record, size_t dst_size, size_t data_size)
{
	struct rec_compressed2 *event = record;
	size_t size = sizeof(*event);

	if (data_size) {
		size_t padding;

		event->data_size = data_size;
		event->header.size = (size + data_size + 7) & ~(size_t)7;
		padding = event->header.size - size - data_size;
		if (padding > dst_size)
			return -1;
		memset((char *)record + size + data_size, 0, padding);
		return padding;
	}
	if (size > dst_size)
		return -1;
	event->header.type = REC_COMPRESSED2;
	event->header.size = size;
	return size;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One pass over all pushes; what callgrind --toggle-collect=replay counts. */
noinline ssize_t replay(char *data, size_t *cuts, size_t npush,
			char *dst, size_t dst_len)
{
	struct zstd_data z;
	ssize_t out = 0, n;
	size_t i;

	zstd_init(&z, 1);
	for (i = 0; i < npush; i++) {
		n = zstd_compress_stream_to_records(&z, dst, dst_len, data + cuts[i],
						    cuts[i + 1] - cuts[i],
						    MAX_SAMPLE - sizeof(struct rec_compressed2) - 8,
						    comp_header);
		if (n < 0) {
			fprintf(stderr, "bench-zstd: push %zu of %zu bytes failed\n",
				i, cuts[i + 1] - cuts[i]);
			exit(1);
		}
		out += n;
	}
	zstd_fini(&z);
	return out;
}

int main(int argc, char **argv)
{
	uint64_t hdr[7];
	size_t push, npush = 0, maxpush = 0, off, *cuts;
	int fd, passes, p;
	char *data, *dst;
	ssize_t out = 0;
	double t0, cpu;

	if (argc != 4) {
		fprintf(stderr, "usage: bench-zstd <perf.data> <push KiB> <passes>\n");
		return 2;
	}
	push = strtoul(argv[2], NULL, 0) * 1024;
	passes = atoi(argv[3]);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    memcmp(hdr, "PERFILE2", 8)) {
		fprintf(stderr, "bench-zstd: %s: not a perf.data file\n", argv[1]);
		return 1;
	}
	/* perf_file_header: magic, size, attr_size, attrs{offset,size}, data{offset,size} */
	data = malloc(hdr[6]);
	if (!data || push == 0 || passes < 1 ||
	    pread(fd, data, hdr[6], hdr[5]) != (ssize_t)hdr[6]) {
		fprintf(stderr, "bench-zstd: cannot read the data section of %s\n", argv[1]);
		return 1;
	}
	cuts = malloc((hdr[6] / sizeof(struct rec_header) + 2) * sizeof(*cuts));
	if (!cuts)
		return 1;
	cuts[0] = 0;
	for (off = 0; off < hdr[6];) {
		struct rec_header *h = (struct rec_header *)(data + off);

		if (h->size < sizeof(*h) || off + h->size > hdr[6]) {
			fprintf(stderr, "bench-zstd: bad record at %zu\n", off);
			return 1;
		}
		off += h->size;
		if (off - cuts[npush] >= push || off == hdr[6]) {
			if (off - cuts[npush] > maxpush)
				maxpush = off - cuts[npush];
			cuts[++npush] = off;
		}
	}
	if (hdr[6] < (1 << 20) || npush < 2) {
		fprintf(stderr, "bench-zstd: %s: too little data (%lu bytes)\n",
			argv[1], (unsigned long)hdr[6]);
		return 1;
	}
	/* Room for any push, compressed or not, in both trees. */
	dst = malloc(2 * maxpush + (1 << 20));
	if (!dst)
		return 1;

	t0 = cpu_now();
	for (p = 0; p < passes; p++)
		out += replay(data, cuts, npush, dst, 2 * maxpush + (1 << 20));
	cpu = cpu_now() - t0;
	printf("%.1f %.3f %.1f %zd %zu\n", hdr[6] * (double)passes / 1e6, cpu,
	       hdr[6] * (double)passes / 1e6 / cpu, out, npush * passes);
	return 0;
}
