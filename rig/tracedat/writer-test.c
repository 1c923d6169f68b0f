// SPDX-License-Identifier: GPL-2.0
/*
 * Harness for tools/perf/util/trace-dat-writer.c without perf: builds the
 * tracing data of a made-up recording (byte order and kernel long size
 * chosen on the command line), feeds events that need large-event framing,
 * TIME_EXTENDs, several pages per CPU and a lost-events mark, writes the
 * trace.dat and the expected events as text.  writer-test.sh compares the
 * text with what trace-cmd report prints.
 *
 * The rss mode feeds <MB> of incompressible events and prints the peak RSS,
 * which must not depend on <MB>.
 *
 * usage: writer-test <le|be> <4|8> <6|7> <none|zstd|zlib> <out.dat> <expected.txt>
 *        writer-test rss <none|zstd|zlib> <MB> <out.dat>
 */
#include <byteswap.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util/trace-dat-writer.h"

static const char header_page_fmt[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:%d;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:%d;\tsize:%d;\tsigned:0;\n";

static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

static const char event_format[] =
	"name: wtest\nID: 100\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned int seq;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] msg;\toffset:12;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"seq=%u msg=%s\", REC->seq, __get_str(msg)\n";

static unsigned char blob[16384];
static size_t blen;
static int swap;

static void put(const void *p, size_t n)
{
	memcpy(blob + blen, p, n);
	blen += n;
}

static void put32(unsigned int v)
{
	if (swap)
		v = bswap_32(v);
	put(&v, 4);
}

static void put64(unsigned long long v)
{
	if (swap)
		v = bswap_64(v);
	put(&v, 8);
}

static void put_file64(const char *text)
{
	put64(strlen(text));
	put(text, strlen(text));
}

static enum tdw_compression compression(const char *name)
{
	return !strcmp(name, "zstd") ? TDW_COMP_ZSTD :
	       !strcmp(name, "zlib") ? TDW_COMP_ZLIB : TDW_COMP_NONE;
}

static void tracing_data(int be, int lsize)
{
	unsigned int host_be = (*(unsigned short *)"\0\1") == 1;
	char header_page[512];

	swap = be != (int)host_be;
	snprintf(header_page, sizeof(header_page), header_page_fmt, lsize,
		 8 + lsize, 4096 - 8 - lsize);
	put("\027\010\104tracing0.6", 14);
	blob[blen++] = be;
	blob[blen++] = lsize;
	put32(4096);
	put("header_page", 12);
	put_file64(header_page);
	put("header_event", 13);
	put_file64(header_event);
	put32(0);			/* ftrace formats */
	put32(1);			/* systems */
	put("wtest", 6);
	put32(1);
	put_file64(event_format);
	put32(0);			/* kallsyms */
	put32(0);			/* printk */
	put64(0);			/* saved_cmdlines */
}

/* <mb> MB of 1000-byte events with random bytes, version 7, two CPUs. */
static int peak_rss(const char *comp, int mb, const char *path)
{
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 2,
				 .version = 7, .compression = compression(comp) };
	unsigned long long ts = 1000000000ULL, x = 88172645463325252ULL;
	unsigned char payload[1000];
	long long n = (long long)mb * 1000;
	struct rusage ru;
	struct tdw *w;
	FILE *out;
	int ret;

	tracing_data(0, 8);
	w = tdw__new(blob, blen, &opts);
	if (!w)
		return 1;
	for (long long i = 0; i < n; i++) {
		for (size_t j = 16; j < sizeof(payload); j += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(payload + j, &x, 8);
		}
		tdw__put16(w, payload, 100);
		tdw__put32(w, payload + 4, 4242);
		tdw__put32(w, payload + 8, i);
		/* msg: an empty string at the end */
		payload[sizeof(payload) - 1] = 0;
		tdw__put32(w, payload + 12, 1 << 16 | (sizeof(payload) - 1));
		ts += 1000;
		if (tdw__add_event(w, i % 2, ts, payload, sizeof(payload)))
			return 1;
	}
	out = fopen(path, "w");
	if (!out)
		return 1;
	ret = tdw__finish(w, out);
	if (fclose(out))
		ret = 1;
	getrusage(RUSAGE_SELF, &ru);
	printf("writer-test rss %s %d MB: %llu events, maxrss_kb=%ld\n", comp, mb,
	       (unsigned long long)tdw__stats(w)->events, ru.ru_maxrss);
	tdw__delete(w);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 2 };
	unsigned long long ts = 1000000000ULL;
	unsigned char payload[512];
	int lsize, i, ret;
	struct tdw *w;
	FILE *out, *exp;
	char msg[400];

	if (argc == 5 && !strcmp(argv[1], "rss"))
		return peak_rss(argv[2], atoi(argv[3]), argv[4]);
	if (argc != 7) {
		fprintf(stderr,
			"usage: %s <le|be> <4|8> <6|7> <none|zstd|zlib> <out.dat> <expected.txt>\n"
			"       %s rss <none|zstd|zlib> <MB> <out.dat>\n",
			argv[0], argv[0]);
		return 2;
	}
	lsize = atoi(argv[2]);
	opts.version = atoi(argv[3]);
	opts.compression = compression(argv[4]);
	tracing_data(!strcmp(argv[1], "be"), lsize);

	w = tdw__new(blob, blen, &opts);
	if (!w)
		return 1;
	tdw__add_cmdline(w, 4242, "wtest-task");
	exp = fopen(argv[6], "w");
	if (!exp)
		return 1;
	for (i = 0; i < 600; i++) {
		int cpu = i % 2, len = (i * 37) % 300, size;

		/* Gaps: small, 2^27 + 1 ns (TIME_EXTEND), several seconds. */
		if (i % 50 == 49)
			ts += (1ULL << 27) + 1;
		else if (i == 300)
			ts += 5ULL << 32;
		else
			ts += 1000 + i;
		memset(msg, 'a' + i % 26, len);
		msg[len] = 0;
		size = 16 + len + 1;
		memset(payload, 0, sizeof(payload));
		tdw__put16(w, payload, 100);
		tdw__put32(w, payload + 4, 4242);
		tdw__put32(w, payload + 8, i);
		tdw__put32(w, payload + 12, (unsigned int)(len + 1) << 16 | 16);
		memcpy(payload + 16, msg, len + 1);
		if (i == 400)
			tdw__mark_lost(w, cpu);
		if (tdw__add_event(w, cpu, ts, payload, size))
			return 1;
		fprintf(exp, "%llu %d 4242 wtest seq=%d msg=%s\n", ts, cpu, i, msg);
	}
	fclose(exp);
	/* A corrupt CPU number is out of range, not out of memory. */
	if (tdw__add_event(w, 100000, ts, payload, 16) != -ERANGE) {
		fprintf(stderr, "writer-test: event on CPU 100000 not refused with ERANGE\n");
		return 1;
	}
	out = fopen(argv[5], "w");
	if (!out)
		return 1;
	ret = tdw__finish(w, out);
	fclose(out);
	printf("writer-test %s long=%d v%d %s: %llu events, %llu pages, %llu large, %llu time extends, %llu lost pages\n",
	       argv[1], lsize, opts.version, argv[4],
	       (unsigned long long)tdw__stats(w)->events,
	       (unsigned long long)tdw__stats(w)->pages,
	       (unsigned long long)tdw__stats(w)->large_events,
	       (unsigned long long)tdw__stats(w)->time_extends,
	       (unsigned long long)tdw__stats(w)->missed_pages);
	tdw__delete(w);
	return ret ? 1 : 0;
}
