// SPDX-License-Identifier: GPL-2.0
/*
 * Harness for tools/perf/util/trace-dat-writer.c without perf: builds the
 * tracing data of a made-up recording (byte order and kernel long size
 * chosen on the command line), feeds events that need large-event framing,
 * TIME_EXTENDs, several pages per CPU and a lost-events mark, writes the
 * trace.dat and the expected events as text.  writer-test.sh compares the
 * text with what trace-cmd report prints.  The output is open from the
 * start: in a v7 file without compression, one CPU's pages must be there
 * before tdw__finish().  With WRITER_TEST_STALE, a writer deleted before
 * this one leaves pages in the output, which must not change the file.
 *
 * The rss mode feeds <MB> of incompressible events (on <cpus> CPUs with
 * <page size> pages) and prints the peak RSS, which must not depend on
 * <MB>, nor grow by more than two pages per CPU with the CPUs.
 *
 * The reorder mode feeds events of two CPUs once in time order and once
 * with some of them late (by up to 6 events, at page starts too, with
 * equal times, around a lost-events mark): both files must be the same,
 * byte for byte.  Then an event too late to place, or placed before the
 * lost-events mark, must be refused with -EAGAIN (strict_order) or get
 * the time of the one before.
 *
 * The full mode writes the spill files to <dir> and the output to
 * <out.dat>, one of them on a file system too small for them: the writer
 * must report -ENOSPC.
 *
 * usage: writer-test <le|be> <4|8> <6|7> <none|zstd|zlib> <out.dat> <expected.txt>
 *        writer-test rss <none|zstd|zlib> <MB> <out.dat> [<cpus> <page size>]
 *        writer-test reorder <le|be> <4|8> <in-order.dat> <late.dat>
 *        writer-test full <dir> <out.dat>
 *        writer-test crafted
 */
#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Bytes between the commit field and the data in header_page. */
static int data_pad;
/* The recording's page size. */
static unsigned int psize = 4096;

static void tracing_data(int be, int lsize)
{
	unsigned int host_be = (*(unsigned short *)"\0\1") == 1;
	char header_page[512];

	swap = be != (int)host_be;
	snprintf(header_page, sizeof(header_page), header_page_fmt, lsize,
		 8 + lsize + data_pad, psize - 8 - lsize - data_pad);
	put("\027\010\104tracing0.6", 14);
	blob[blen++] = be;
	blob[blen++] = lsize;
	put32(psize);
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

/* A writer of the test's tracing data in byte order @be, @lsize-byte longs. */
static struct tdw *writer_for(int be, int lsize, const struct tdw_opts *opts)
{
	blen = 0;
	tracing_data(be, lsize);
	return tdw__new(blob, blen, opts);
}

/* @n 1000-byte events with random bytes on @cpus CPUs: the first error. */
static int random_events(struct tdw *w, long long n, int cpus)
{
	unsigned long long ts = 1000000000ULL, x = 88172645463325252ULL;
	unsigned char payload[1000];
	int ret;

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
		ret = tdw__add_event(w, i % cpus, ts, payload, sizeof(payload));
		if (ret)
			return ret;
	}
	return 0;
}

/* tdw__finish() into @out: its return, -EIO if the file fails. */
static int finish_file(struct tdw *w, FILE *out)
{
	int ret = tdw__finish(w);

	if (fclose(out) && !ret)
		ret = -EIO;
	return ret;
}

/*
 * <mb> MB of 1000-byte events with random bytes, version 7, on <cpus>
 * CPUs with pages of <psize> bytes.
 */
static int peak_rss(const char *comp, int mb, const char *path, int cpus)
{
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = cpus,
				 .version = 7, .compression = compression(comp),
				 .out = fopen(path, "w") };
	struct rusage ru;
	struct tdw *w;
	int ret;

	w = opts.out ? writer_for(0, 8, &opts) : NULL;
	if (!w)
		return 1;
	if (random_events(w, (long long)mb * 1000, cpus))
		return 1;
	ret = finish_file(w, opts.out);
	getrusage(RUSAGE_SELF, &ru);
	printf("writer-test rss %s %d MB, %d CPUs, %u-byte pages: %llu events, maxrss_kb=%ld\n",
	       comp, mb, cpus, psize, (unsigned long long)tdw__stats(w)->events,
	       ru.ru_maxrss);
	tdw__delete(w);
	return ret ? 1 : 0;
}

/*
 * 8 MB of events with the spill files in <dir> or the output at <path>
 * on a file system with less room (the pages of one CPU go to the output
 * as they fill): tdw__add_event() or tdw__finish() must return -ENOSPC
 * (the pages are written on a thread of their own: the error comes some
 * batches after the write that failed), and tdw__delete() end cleanly.
 */
static int spill_full(const char *dir, const char *path)
{
	struct tdw_opts opts = { .clock = "perf", .tmpdir = dir, .nr_cpus = 2,
				 .version = 7, .out = fopen(path, "w") };
	const char *where = "tdw__add_event()";
	struct tdw *w;
	int ret;

	w = opts.out ? writer_for(0, 8, &opts) : NULL;
	if (!w)
		return 1;
	ret = random_events(w, 8000, 2);
	if (!ret) {
		where = "tdw__finish()";
		ret = finish_file(w, opts.out);
	} else {
		fclose(opts.out);
	}
	printf("writer-test full: %s returned %d (%s) after %llu events\n", where,
	       ret, ret < 0 ? strerror(-ret) : "no error",
	       (unsigned long long)tdw__stats(w)->events);
	tdw__delete(w);
	return ret == -ENOSPC ? 0 : 1;
}

#define NR_REORDER	3000
#define LOST_AT		1500	/* no event crosses it */

struct rev {
	unsigned long long ts;
	int cpu, len, seq;
};

/* Write @ev in the order of @idx; -EAGAIN if the writer refused one. */
static int reorder_write(const struct rev *ev, const int *idx, int be,
			 int lsize, const char *path,
			 unsigned long long *reordered)
{
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 2,
				 .version = 7, .strict_order = true };
	unsigned char payload[512];
	struct tdw *w;
	int i, ret;

	opts.out = fopen(path, "w");
	w = opts.out ? writer_for(be, lsize, &opts) : NULL;
	if (!w)
		return -ENOMEM;
	tdw__add_cmdline(w, 4242, "wtest-task");
	for (i = 0; i < NR_REORDER; i++) {
		const struct rev *e = &ev[idx[i]];

		if (i == LOST_AT)
			tdw__mark_lost(w, 0, e->ts);
		memset(payload, 0, sizeof(payload));
		tdw__put16(w, payload, 100);
		tdw__put32(w, payload + 4, 4242);
		tdw__put32(w, payload + 8, e->seq);
		tdw__put32(w, payload + 12, (unsigned int)(e->len + 1) << 16 | 16);
		memset(payload + 16, 'a' + e->seq % 26, e->len);
		ret = tdw__add_event(w, e->cpu, e->ts, payload, 16 + e->len + 1);
		if (ret) {
			tdw__delete(w);
			fclose(opts.out);
			return ret;
		}
	}
	ret = finish_file(w, opts.out);
	*reordered = tdw__stats(w)->reordered;
	tdw__delete(w);
	return ret;
}

static int reorder(const char *endian, int lsize, const char *in_order,
		   const char *late)
{
	static struct rev ev[NR_REORDER];
	static int arrival[NR_REORDER], sorted[NR_REORDER];
	unsigned long long ts = 1000000000ULL, reordered, r2;
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 2,
				 .version = 7 };
	unsigned char payload[64] = { 0 };
	int be = !strcmp(endian, "be"), i, j, ret, moved = 0;
	struct tdw *w;

	/* Events in time order, then some made late by 1 to 6 events. */
	for (i = 0; i < NR_REORDER; i++) {
		ev[i].cpu = (i / 7) % 2;
		ev[i].len = (i * 53) % 200;
		ev[i].seq = i;
		arrival[i] = i;
		if (i % 97 == 0)
			ts += (1ULL << 27) + 5;	/* TIME_EXTEND */
		else if (i % 5)
			ts += 700 + i % 300;	/* every fifth: the same time */
		ev[i].ts = ts;
	}
	for (i = 10; i < NR_REORDER; i += 23 + i % 17) {
		int by = 1 + i % 6, late_one = arrival[i - by];

		if (i - by <= LOST_AT && i >= LOST_AT)
			continue;
		/* The event at i - by arrives after the by events after it. */
		memmove(&arrival[i - by], &arrival[i - by + 1], by * sizeof(int));
		arrival[i] = late_one;
		moved++;
	}
	/* Time order of the arrival order, events of the same time as they came. */
	for (i = 0; i < NR_REORDER; i++) {
		for (j = i; j > 0 && ev[sorted[j - 1]].ts > ev[arrival[i]].ts; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = arrival[i];
	}
	ret = reorder_write(ev, sorted, be, lsize, in_order, &r2);
	if (ret || r2) {
		fprintf(stderr, "writer-test reorder: in time order: %d, %llu reordered\n",
			ret, r2);
		return 1;
	}
	ret = reorder_write(ev, arrival, be, lsize, late, &reordered);
	if (ret) {
		fprintf(stderr, "writer-test reorder: %d late events: %s\n",
			moved, strerror(-ret));
		return 1;
	}
	printf("writer-test reorder %s long=%d: %d events, %d late, %llu reordered\n",
	       endian, lsize, NR_REORDER, moved, reordered);

	/* Too late to place: refused, or the time of the one before. */
	opts.out = tmpfile();
	for (int strict = 1; strict >= 0; strict--) {
		opts.strict_order = strict;
		w = opts.out ? writer_for(be, lsize, &opts) : NULL;
		if (!w)
			return 1;
		tdw__put16(w, payload, 100);
		tdw__put32(w, payload + 12, 1 << 16 | 16);
		for (i = 0; i < 400; i++)
			tdw__add_event(w, 0, 2000000 + i * 10, payload, 17);
		ret = tdw__add_event(w, 0, 2000000, payload, 17);
		if (ret != (strict ? -EAGAIN : 0) ||
		    tdw__stats(w)->out_of_order != (strict ? 0 : 1)) {
			fprintf(stderr, "writer-test reorder: 400 events late (strict %d): %d, %llu out of order\n",
				strict, ret,
				(unsigned long long)tdw__stats(w)->out_of_order);
			return 1;
		}
		/* Before a lost-events mark: refused, even though on the page before. */
		tdw__mark_lost(w, 0, 2000000 + 400 * 10);
		tdw__add_event(w, 0, 2000000 + 400 * 10, payload, 17);
		ret = tdw__add_event(w, 0, 2000000 + 399 * 10 - 1, payload, 17);
		if (ret != (strict ? -EAGAIN : 0)) {
			fprintf(stderr, "writer-test reorder: event before the lost mark (strict %d): %d\n",
				strict, ret);
			return 1;
		}
		tdw__delete(w);
	}
	fclose(opts.out);
	return 0;
}

/*
 * Crafted tracing data, each in a heap block of its exact size (ASan sees
 * a read past it): a page size of 2 GiB and one that is not a power of two
 * are refused, and page data not right after the commit field; a format file that ends right after "ID: <digits>", with no
 * NUL or newline after them, is parsed without reading past the data; the
 * empty tracing data of a recording without tracepoints is accepted, in
 * both byte orders and long sizes.
 */
/*
 * The command lines: perf's name of a pid instead of the recording's
 * saved_cmdlines line for it, the other saved lines kept, a name of
 * spaces only written as '?'s; in saved_cmdlines, an empty name (kept as
 * <empty>) and one with a newline (the name up to it; the rest, a line
 * without a pid, left out), which libtraceevent would stop at.
 */
static int cmdlines(void)
{
	static const char saved[] = "100 kernelname\n200 other\n400 \n500 a\nb\n600 last\n";
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 1,
				 .version = 7 };
	static const char * const want[] = {
		"100 perfname\n", "200 other\n", "300 ??\n", "400 <empty>\n",
		"500 a\n600 last\n",
	};
	char *text = NULL;
	size_t len = 0;
	int fail = 0;
	struct tdw *w;
	long flen;
	FILE *f;

	blen = 0;
	tracing_data(0, 8);
	blen -= 8;			/* saved_cmdlines */
	put64(strlen(saved));
	put(saved, strlen(saved));
	f = tmpfile();	/* the writer seeks back: a real file */
	opts.out = f;
	w = f ? tdw__new(blob, blen, &opts) : NULL;
	if (!w || tdw__add_cmdline(w, 100, "perfname") ||
	    tdw__add_cmdline(w, 300, "  ") || tdw__finish(w) ||
	    fseek(f, 0, SEEK_END) || (flen = ftell(f)) <= 0 ||
	    !(text = malloc(len = flen)) || fseek(f, 0, SEEK_SET) ||
	    fread(text, 1, len, f) != len) {
		printf("cmdlines: cannot write the file\n");
		tdw__delete(w);
		free(text);
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!memmem(text, len, want[i], strlen(want[i]))) {
			printf("cmdlines: no line '%.*s'\n", (int)strlen(want[i]) - 1, want[i]);
			fail++;
		}
	}
	if (fail) {
		char *c = memmem(text, len, "100 perfname", 12);

		if (c)
			printf("cmdlines: the file has '%.*s'\n",
			       (int)(len - (c - text) < 60 ? len - (c - text) : 60), c);
	}
	if (memmem(text, len, "100 kernelname", 14)) {
		printf("cmdlines: the recording's name of pid 100 kept beside perf's\n");
		fail++;
	}
	if (memmem(text, len, "\nb\n", 3) || memmem(text, len, "400 \n", 5)) {
		printf("cmdlines: a saved_cmdlines line libtraceevent stops at kept\n");
		fail++;
	}
	tdw__delete(w);
	free(text);
	return fail;
}

static int crafted(void)
{
	static const char tail_fmt[] = "name: t\nID: 4242";
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 1,
				 .version = 7 };
	unsigned int bad_page[] = { 0x80000000u, 4096 + 64 };
	int fail = 0, be, ls;
	unsigned char *b;
	struct tdw *w;
	size_t n;

	/* The output is required, and must be a regular file. */
	blen = 0;
	tracing_data(0, 8);
	for (int i = 0; i < 2; i++) {
		opts.out = i ? fopen("/dev/null", "w") : NULL;
		w = tdw__new(blob, blen, &opts);
		if (w) {
			printf("crafted: a writer %s accepted\n",
			       i ? "to /dev/null" : "without an output");
			fail++;
			tdw__delete(w);
		}
		if (opts.out)
			fclose(opts.out);
	}
	opts.out = tmpfile();
	if (!opts.out) {
		printf("crafted: tmpfile: %s\n", strerror(errno));
		return 1;
	}

	for (unsigned int i = 0; i < 2; i++) {
		unsigned int v = bad_page[i];

		blen = 0;
		tracing_data(0, 8);
		memcpy(blob + 16, &v, 4);	/* magic (10), "0.6" (4), endian, long */
		b = malloc(blen);
		memcpy(b, blob, blen);
		w = tdw__new(b, blen, &opts);
		if (w) {
			printf("crafted: page size %#x accepted\n", v);
			fail++;
			tdw__delete(w);
		}
		free(b);
	}

	/*
	 * Cut anywhere in the header: the page size too (a writer that took
	 * a missing one as 0 divided by it).  Each cut in a buffer of its
	 * own size (ASan), in a child: a crash names the cut.
	 */
	blen = 0;
	tracing_data(0, 8);
	for (size_t cut = 0; cut < 64 && cut < blen; cut++) {
		pid_t pid;
		int status;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			int null_fd = open("/dev/null", O_WRONLY);

			if (null_fd >= 0)
				dup2(null_fd, STDERR_FILENO);	/* its message */
			b = malloc(cut ?: 1);
			memcpy(b, blob, cut);
			w = tdw__new(b, cut, &opts);
			_exit(w ? 3 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			printf("crafted: fork: %s\n", strerror(errno));
			return 1;
		}
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
			printf("crafted: tracing data cut at %zu accepted\n", cut);
		else
			printf("crafted: tracing data cut at %zu: the writer died (wait status %#x)\n",
			       cut, status);
		fail++;
	}

	/* Page data not right after the commit field: trace-cmd misreads it. */
	for (ls = 4; ls <= 8; ls += 4) {
		blen = 0;
		data_pad = 8;
		tracing_data(0, ls);
		data_pad = 0;
		w = tdw__new(blob, blen, &opts);
		if (w) {
			printf("crafted: page data at %d with a %d-byte commit accepted\n",
			       16 + ls, ls);
			fail++;
			tdw__delete(w);
		}
	}

	/* Header, then one system whose only format ends the data. */
	blen = 0;
	swap = 0;
	put("\027\010\104tracing0.6", 14);
	blob[blen++] = 0;
	blob[blen++] = 8;
	put32(4096);
	{
		char header_page[512];

		snprintf(header_page, sizeof(header_page), header_page_fmt, 8, 16, 4096 - 16);
		put("header_page", 12);
		put_file64(header_page);
	}
	put("header_event", 13);
	put_file64(header_event);
	put32(0);
	put32(1);
	put("t", 2);
	put32(1);
	put64(strlen(tail_fmt));
	put(tail_fmt, strlen(tail_fmt));
	/*
	 * The data ends at a page that cannot be read: a parser that reads
	 * past it (strtoul() over the ID, which ASan does not check) faults.
	 */
	{
		long pg = sysconf(_SC_PAGESIZE);
		unsigned char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED || mprotect(m + pg, pg, PROT_NONE)) {
			printf("crafted: mmap: %s\n", strerror(errno));
			return 1;
		}
		b = m + pg - blen;
		memcpy(b, blob, blen);
		w = tdw__new(b, blen, &opts);	/* truncated: no kallsyms size */
		if (w) {
			printf("crafted: data that ends inside the formats accepted\n");
			fail++;
			tdw__delete(w);
		}
		munmap(m, 2 * pg);
	}

	for (be = 0; be < 2; be++) {
		for (ls = 4; ls <= 8; ls += 4) {
			b = tdw__empty_tracing_data(be, ls, &n);
			w = b ? tdw__new(b, n, &opts) : NULL;
			if (!w || tdw__file_bigendian(w) != be || tdw__long_size(w) != ls) {
				printf("crafted: empty tracing data %s long %d refused\n",
				       be ? "be" : "le", ls);
				fail++;
			}
			tdw__delete(w);
			free(b);
		}
	}
	fclose(opts.out);
	fail += cmdlines();
	printf("crafted: %s\n", fail ? "FAIL" : "ok");
	return !!fail;
}

int main(int argc, char **argv)
{
	struct tdw_opts opts = { .clock = "perf", .tmpdir = "/tmp", .nr_cpus = 2 };
	unsigned long long ts = 1000000000ULL;
	unsigned char payload[512];
	int lsize, i, ret;
	const struct tdw_stats *st;
	bool direct;
	struct tdw *w;
	FILE *out, *exp;
	char msg[400];

	if (argc == 5 && !strcmp(argv[1], "rss"))
		return peak_rss(argv[2], atoi(argv[3]), argv[4], 2);
	if (argc == 7 && !strcmp(argv[1], "rss")) {
		psize = atoi(argv[6]);
		return peak_rss(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]));
	}
	if (argc == 6 && !strcmp(argv[1], "reorder"))
		return reorder(argv[2], atoi(argv[3]), argv[4], argv[5]);
	if (argc == 4 && !strcmp(argv[1], "full"))
		return spill_full(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "crafted"))
		return crafted();
	if (argc != 7) {
		fprintf(stderr,
			"usage: %s <le|be> <4|8> <6|7> <none|zstd|zlib> <out.dat> <expected.txt>\n"
			"       %s rss <none|zstd|zlib> <MB> <out.dat> [<cpus> <page size>]\n"
			"       %s reorder <le|be> <4|8> <in-order.dat> <late.dat>\n"
			"       %s full <dir> <out.dat>\n"
			"       %s crafted\n",
			argv[0], argv[0], argv[0], argv[0], argv[0]);
		return 2;
	}
	/*
	 * WRITER_TEST_TMPDIR: spill files on another file system than the
	 * output, where copy_file_range() fails with EXDEV (Linux 5.19 and
	 * later) and the writer copies with read() and stdio.
	 */
	if (getenv("WRITER_TEST_TMPDIR"))
		opts.tmpdir = getenv("WRITER_TEST_TMPDIR");
	lsize = atoi(argv[2]);
	opts.version = atoi(argv[3]);
	opts.compression = compression(argv[4]);
	out = fopen(argv[5], "w");
	if (!out)
		return 1;
	opts.out = out;
	/*
	 * WRITER_TEST_STALE: a writer before this one puts 2 MB of pages in
	 * the output and is deleted, as when a conversion starts again: the
	 * file must come out the same.
	 */
	if (getenv("WRITER_TEST_STALE")) {
		w = writer_for(0, 8, &opts);
		if (!w || random_events(w, 2000, 2))
			return 1;
		tdw__delete(w);
	}
	tracing_data(!strcmp(argv[1], "be"), lsize);

	w = tdw__new(blob, blen, &opts);
	if (!w)
		return 1;
	tdw__add_cmdline(w, 4242, "wtest-task");
	exp = fopen(argv[6], "w");
	if (!exp)
		return 1;
	for (i = 0; i < 1000; i++) {
		int cpu = i % 2, len = (i * 37) % 300, size;

		/*
		 * Gaps: small, 2^27 + 1 ns (TIME_EXTEND), several seconds,
		 * and one beyond a TIME_EXTEND's 59 bits (a page of its own).
		 */
		if (i % 50 == 49)
			ts += (1ULL << 27) + 1;
		else if (i == 300)
			ts += 5ULL << 32;
		else if (i == 500)
			ts += (1ULL << 59) + 3;
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
			tdw__mark_lost(w, cpu, ts);
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
	/* A loss after the last event of CPU 1: no page to flag, counted. */
	if (tdw__mark_lost(w, 1, ts))
		return 1;
	ret = tdw__finish(w);
	if (fclose(out))
		ret = 1;
	st = tdw__stats(w);
	/*
	 * One CPU's pages went to the output as they filled in a v7 file
	 * without compression, none in the others (writer-test.sh checks
	 * that they are CPU 0's, the first to fill a batch, all of them).
	 */
	direct = opts.version == 7 && opts.compression == TDW_COMP_NONE;
	if (direct ? !st->pages_in_place || st->pages_in_place >= st->pages :
		     st->pages_in_place) {
		fprintf(stderr, "writer-test: %llu of %llu pages written in place\n",
			(unsigned long long)st->pages_in_place,
			(unsigned long long)st->pages);
		ret = 1;
	}
	if (st->missed_unmarked != 1 || st->missed_pages != 1) {
		fprintf(stderr, "writer-test: %u unmarked losses, %llu lost pages, want 1, 1\n",
			st->missed_unmarked, (unsigned long long)st->missed_pages);
		ret = 1;
	}
	printf("writer-test %s long=%d v%d %s: %llu events, %llu pages, %llu large, %llu time extends, %llu lost pages, %llu pages in place\n",
	       argv[1], lsize, opts.version, argv[4],
	       (unsigned long long)st->events,
	       (unsigned long long)st->pages,
	       (unsigned long long)st->large_events,
	       (unsigned long long)st->time_extends,
	       (unsigned long long)st->missed_pages,
	       (unsigned long long)st->pages_in_place);
	tdw__delete(w);
	return ret ? 1 : 0;
}
