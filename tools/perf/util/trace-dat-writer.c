// SPDX-License-Identifier: GPL-2.0
/*
 * trace.dat (trace-cmd file format v6/v7) writer.
 *
 * The file layout follows trace-cmd's trace-cmd.dat.v6(5) and
 * trace-cmd.dat.v7(5); the page and event encoding follows the kernel's
 * ring buffer (include/linux/ring_buffer.h, kernel/trace/ring_buffer.c)
 * as read back by libtraceevent's kbuffer-parse.c.
 *
 * Every number is written in the byte order of the recording, which is
 * the byte order of the tracing data perf saved in perf.data, so the
 * metadata can be copied verbatim.
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <byteswap.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/compiler.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/sizes.h>
#include <linux/zalloc.h>

#ifdef HAVE_ZSTD_SUPPORT
#include <zstd.h>
#endif
#ifdef HAVE_ZLIB_SUPPORT
#include <zlib.h>
#endif

#include <internal/lib.h>
#include "debug.h"
#include "rlimit.h"
#include "strbuf.h"
#include "util.h"
#include "trace-dat-writer.h"

#define TDW_MAGIC		"\027\010\104tracing"
#define TDW_MAGIC_LEN		10

/* Section and option ids, trace-cmd.dat.v7(5). */
#define TDW_OPT_DONE		0
#define TDW_OPT_BUFFER		3
#define TDW_OPT_TRACECLOCK	4
#define TDW_OPT_UNAME		5
#define TDW_OPT_OFFSET		7
#define TDW_OPT_CPUCOUNT	8
#define TDW_OPT_VERSION		9
#define TDW_OPT_STRINGS		15
#define TDW_OPT_HEADER_INFO	16
#define TDW_OPT_FTRACE_EVENTS	17
#define TDW_OPT_EVENT_FORMATS	18
#define TDW_OPT_KALLSYMS	19
#define TDW_OPT_PRINTK		20
#define TDW_OPT_CMDLINES	21

#define TDW_SEC_COMPRESSED	1

/* Ring buffer event header, include/linux/ring_buffer.h. */
#define RB_TYPE_PADDING		29
#define RB_TYPE_TIME_EXTEND	30
#define RB_TS_SHIFT		27
#define RB_TS_MASK		((1ULL << RB_TS_SHIFT) - 1)
#define RB_MAX_SMALL_DATA	(28 * 4)
#define RB_MISSED_EVENTS	BIT(31)

/* trace-cmd compresses flyrecord data in chunks of this many pages. */
#define TDW_CHUNK_PAGES		10

/*
 * Bytes of pages per CPU collected before a write to the CPU's spill
 * file (16 pages of 4 KB), and at least two pages: the last one stays in
 * memory for an event that comes late (cpu_reorder()).  In bytes, not
 * pages: a recording of 256 CPUs with 64 KB pages would hold 256 MB of
 * them in pages.
 */
#define TDW_BATCH_BYTES		SZ_64K

/*
 * Batches queued for the spill thread: at most 4 MB of them, 2 to
 * TDW_SPILL_JOBS, and the thread is woken when half of them are queued:
 * a wakeup per batch costs more than writing it.  With 1 MB the reading
 * thread waited for buffers while the page cache held writes back (the
 * heavy bench input: 0.05 of the time of perf report --stats more).
 */
#define TDW_SPILL_BYTES		SZ_4M
#define TDW_SPILL_JOBS		64

/* perf's strbuf; an allocation failure is sticky, checked once at the end. */
struct tdw_buf {
	struct strbuf	sb;
	bool		failed;
};

struct tdw_cpu {
	u8	*batch;		/* batch_pages pages to the spill file */
	u32	batched;	/* finished pages in the batch */
	u8	*page;		/* current page, in the batch */
	u32	used;		/* bytes of event data on the page */
	u64	page_ts;
	u64	last_ts;
	bool	active;		/* page holds at least one event */
	bool	missed;		/* flag the next page MISSED_EVENTS */
	int	barrier;	/* page of the batch after lost events, or -1 */
	int	fd;		/* unlinked spill file, -1 = none yet */
	u64	size;		/* bytes in the spill file */
	bool	direct;		/* fd is the output's (tdw_opts.out) */
};

/*
 * The spill thread: the writes of finished batches to the spill files,
 * beside the reading of the input (see cpu_write_batch()).  Jobs are
 * done in the order queued, so each spill file gets its pages in order.
 */
struct tdw_spill_job {
	int	fd;
	u8	*buf;		/* a batch buffer, back to spare[] when written */
	size_t	len;
};

struct tdw_spiller {
	pthread_t		thread;
	pthread_mutex_t		lock;
	pthread_cond_t		work;	/* for the thread: jobs, or stop */
	pthread_cond_t		done;	/* for the converter: a spare buffer */
	struct tdw_spill_job	jobs[TDW_SPILL_JOBS];
	unsigned int		head, nr;	/* the queued jobs */
	unsigned int		depth;	/* jobs queued at most */
	u8			*spare[TDW_SPILL_JOBS];
	unsigned int		nr_spare;
	unsigned int		nr_bufs;	/* spare or queued */
	int			err;	/* first write error, sticky */
	bool			idle;	/* the thread waits for work */
	bool			waiting; /* the converter waits for a buffer */
	bool			stop;
	bool			discard;	/* tdw__delete(): write no more */
	bool			started;	/* spill_start() was called */
	bool			running;
};

struct tdw {
	struct tdw_opts		opts;
	struct tdw_stats	stats;
	bool			file_be;
	bool			swap;
	int			long_size;
	u32			page_size;
	u32			batch_pages;	/* see TDW_BATCH_BYTES */
	u32			data_offset;	/* of events in a page */
	u32			commit_size;	/* size of the commit field */

	/* Slices of the tracing data, in the recording's byte order. */
	const u8		*header_page;
	u64			header_page_size;
	const u8		*header_event;
	u64			header_event_size;
	const u8		*ftrace;	/* u32 count + files */
	size_t			ftrace_len;
	const u8		*events;	/* systems after the u32 count */
	size_t			events_len;
	u32			nr_systems;
	const u8		*kallsyms;
	u32			kallsyms_size;
	char			*own_kallsyms;	/* tdw__set_kallsyms() */
	const u8		*printk;
	u32			printk_size;
	const u8		*saved_cmdlines;
	u64			saved_cmdlines_size;
	unsigned int		max_id;

	struct tdw_buf		synth;		/* "perf" system formats */
	u32			nr_synth;
	struct tdw_buf		cmdlines;
	int			*cmd_pids;	/* of cmdlines, sorted at the end */
	size_t			nr_cmd_pids;

	struct tdw_cpu		*cpus;
	unsigned int		nr_cpus;
	/*
	 * Where the pages of the CPU that goes straight to the output
	 * start in a v7 file without compression, else 0 (direct_init());
	 * and whether one does.
	 */
	u64			data_off;
	bool			have_direct;
	u8			*scratch;	/* events taken out to reorder */
	struct tdw_spiller	spill;
	enum rlimit_action	nofile;		/* raised for spill files */
};

void tdw__put16(const struct tdw *w, void *dst, u16 val)
{
	if (w->swap)
		val = bswap_16(val);
	memcpy(dst, &val, sizeof(val));
}

void tdw__put32(const struct tdw *w, void *dst, u32 val)
{
	if (w->swap)
		val = bswap_32(val);
	memcpy(dst, &val, sizeof(val));
}

void tdw__put64(const struct tdw *w, void *dst, u64 val)
{
	if (w->swap)
		val = bswap_64(val);
	memcpy(dst, &val, sizeof(val));
}

static u32 get32(const struct tdw *w, const u8 *src)
{
	u32 val;

	memcpy(&val, src, sizeof(val));
	return w->swap ? bswap_32(val) : val;
}

static u64 get64(const struct tdw *w, const u8 *src)
{
	u64 val;

	memcpy(&val, src, sizeof(val));
	return w->swap ? bswap_64(val) : val;
}

bool tdw__file_bigendian(const struct tdw *w)
{
	return w->file_be;
}

int tdw__long_size(const struct tdw *w)
{
	return w->long_size;
}

unsigned int tdw__next_free_id(const struct tdw *w)
{
	return w->max_id + 1 + w->nr_synth;
}

const struct tdw_stats *tdw__stats(const struct tdw *w)
{
	return &w->stats;
}

static void buf_add(struct tdw_buf *b, const void *data, size_t len)
{
	if (!b->failed && len && strbuf_add(&b->sb, data, len))
		b->failed = true;
}

static void buf_add16(const struct tdw *w, struct tdw_buf *b, u16 val)
{
	u8 tmp[2];

	tdw__put16(w, tmp, val);
	buf_add(b, tmp, sizeof(tmp));
}

static void buf_add32(const struct tdw *w, struct tdw_buf *b, u32 val)
{
	u8 tmp[4];

	tdw__put32(w, tmp, val);
	buf_add(b, tmp, sizeof(tmp));
}

static void buf_add64(const struct tdw *w, struct tdw_buf *b, u64 val)
{
	u8 tmp[8];

	tdw__put64(w, tmp, val);
	buf_add(b, tmp, sizeof(tmp));
}

static void buf_addstr(struct tdw_buf *b, const char *s)
{
	buf_add(b, s, strlen(s) + 1);
}

static void buf_free(struct tdw_buf *b)
{
	strbuf_release(&b->sb);
}

/* Bounds-checked cursor over the tracing data. */
struct cursor {
	const struct tdw	*w;
	const u8		*p;
	const u8		*end;
};

static const u8 *cur_take(struct cursor *c, u64 len)
{
	const u8 *p = c->p;

	if (!p || len > (u64)(c->end - c->p)) {
		c->p = NULL;
		return NULL;
	}
	c->p += len;
	return p;
}

static u32 cur32(struct cursor *c)
{
	const u8 *p = cur_take(c, 4);

	return p ? get32(c->w, p) : 0;
}

static u64 cur64(struct cursor *c)
{
	const u8 *p = cur_take(c, 8);

	return p ? get64(c->w, p) : 0;
}

static const char *cur_str(struct cursor *c)
{
	const u8 *p = c->p, *nul;

	if (!p)
		return NULL;
	nul = memchr(p, 0, c->end - p);
	if (!nul) {
		c->p = NULL;
		return NULL;
	}
	c->p = nul + 1;
	return (const char *)p;
}

/* Look up "field: ... <name>;\toffset:N;\tsize:N;" in header_page. */
static int header_page_field(const u8 *text, u64 len, const char *name,
			     unsigned int *offset, unsigned int *size)
{
	char *s = strndup((const char *)text, len), *line, *save = NULL;
	int ret = -1;

	if (!s)
		return -1;
	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *semi = strchr(line, ';'), *o, *z;
		size_t nlen = strlen(name);

		if (!strstr(line, "field:") || !semi ||
		    (size_t)(semi - line) <= nlen ||
		    strncmp(semi - nlen, name, nlen) ||
		    isalnum((unsigned char)semi[-(int)nlen - 1]))
			continue;
		o = strstr(semi, "offset:");
		z = strstr(semi, "size:");
		if (!o || !z)
			break;
		*offset = strtoul(o + 7, NULL, 0);
		*size = strtoul(z + 5, NULL, 0);
		ret = 0;
		break;
	}
	free(s);
	return ret;
}

/* The "ID: N" line of a format file, which need not end in a NUL. */
static unsigned int format_id(const u8 *text, u64 len)
{
	const u8 *id = memmem(text, len, "\nID: ", 5), *end = text + len;
	unsigned int val = 0;

	if (!id)
		return 0;
	for (id += 5; id < end && isdigit(*id) && val < UINT_MAX / 10; id++)
		val = val * 10 + (*id - '0');
	return val;
}

static int parse_tracing_data(struct tdw *w, const u8 *data, size_t size)
{
	struct cursor c = { .w = w, .p = data, .end = data + size };
	const char *version;
	const u8 *p, *start;
	unsigned int off, sz;
	u32 n, i, j;

	p = cur_take(&c, TDW_MAGIC_LEN);
	if (!p || memcmp(p, TDW_MAGIC, TDW_MAGIC_LEN)) {
		pr_err("trace.dat: tracing data has a bad magic\n");
		return -1;
	}
	version = cur_str(&c);
	p = cur_take(&c, 2);
	if (!version || !p)
		goto truncated;
	w->file_be = p[0];
	w->long_size = p[1];
	w->swap = w->file_be != host_is_bigendian();
	w->page_size = cur32(&c);
	if (!c.p)
		goto truncated;
	/* Kernel pages are 4 KiB to 256 KiB; the writer keeps 2 or more per CPU. */
	if (w->page_size < 4096 || w->page_size > 262144 ||
	    (w->page_size & (w->page_size - 1))) {
		pr_err("trace.dat: bad page size %u in tracing data\n",
		       w->page_size);
		return -1;
	}
	w->batch_pages = max(TDW_BATCH_BYTES / w->page_size, 2U);

	p = cur_take(&c, 12);
	if (!p || memcmp(p, "header_page", 12))
		goto truncated;
	w->header_page_size = cur64(&c);
	w->header_page = cur_take(&c, w->header_page_size);
	p = cur_take(&c, 13);
	if (!p || memcmp(p, "header_event", 13))
		goto truncated;
	w->header_event_size = cur64(&c);
	w->header_event = cur_take(&c, w->header_event_size);

	w->ftrace = c.p;
	n = cur32(&c);
	for (i = 0; i < n && c.p; i++) {
		u64 len = cur64(&c);

		p = cur_take(&c, len);
		if (p)
			w->max_id = max(w->max_id, format_id(p, len));
	}
	if (!c.p)
		goto truncated;
	w->ftrace_len = c.p - w->ftrace;

	w->nr_systems = cur32(&c);
	start = c.p;
	w->events = start;
	for (i = 0; i < w->nr_systems && c.p; i++) {
		cur_str(&c);
		n = cur32(&c);
		for (j = 0; j < n && c.p; j++) {
			u64 len = cur64(&c);

			p = cur_take(&c, len);
			if (p)
				w->max_id = max(w->max_id, format_id(p, len));
		}
	}
	if (!c.p)
		goto truncated;
	w->events_len = c.p - start;

	w->kallsyms_size = cur32(&c);
	w->kallsyms = cur_take(&c, w->kallsyms_size);
	w->printk_size = cur32(&c);
	w->printk = cur_take(&c, w->printk_size);
	if (!c.p)
		goto truncated;
	if (strtod(version, NULL) >= 0.6) {
		w->saved_cmdlines_size = cur64(&c);
		w->saved_cmdlines = cur_take(&c, w->saved_cmdlines_size);
		if (!c.p)
			goto truncated;
	}

	if (w->long_size != 4 && w->long_size != 8) {
		pr_err("trace.dat: bad long size %d in tracing data\n",
		       w->long_size);
		return -1;
	}
	/* The commit field has the recording kernel's long size. */
	if (header_page_field(w->header_page, w->header_page_size, "commit",
			      &off, &sz) || (sz != 4 && sz != 8)) {
		pr_err("trace.dat: no commit field in header_page\n");
		return -1;
	}
	w->commit_size = sz;
	if (header_page_field(w->header_page, w->header_page_size, "data",
			      &off, &sz) || off >= w->page_size) {
		pr_err("trace.dat: no data field in header_page\n");
		return -1;
	}
	/*
	 * libtraceevent's kbuffer reads a page's events from right after
	 * the commit field, whatever header_page says.
	 */
	if (off != 8 + w->commit_size) {
		pr_err("trace.dat: page data at offset %u in header_page, not %u: not a page trace-cmd reads\n",
		       off, 8 + w->commit_size);
		return -1;
	}
	w->data_offset = off;
	return 0;

truncated:
	pr_err("trace.dat: truncated or corrupt tracing data\n");
	return -1;
}

static const char tdw_header_page_fmt[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:%d;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:%d;\tsize:%d;\tsigned:1;\n";

static const char tdw_header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

void *tdw__empty_tracing_data(bool big_endian, int long_size, size_t *size)
{
	struct tdw w = { .swap = big_endian != host_is_bigendian() };
	struct tdw_buf b = { .sb = STRBUF_INIT };
	char header_page[sizeof(tdw_header_page_fmt) + 32];
	const u32 psize = 4096;
	u8 id[2] = { big_endian, long_size };

	snprintf(header_page, sizeof(header_page), tdw_header_page_fmt,
		 long_size, 8 + long_size, psize - 8 - long_size);
	buf_add(&b, TDW_MAGIC, TDW_MAGIC_LEN);
	buf_addstr(&b, "0.6");
	buf_add(&b, id, sizeof(id));
	buf_add32(&w, &b, psize);
	buf_add(&b, "header_page", 12);
	buf_add64(&w, &b, strlen(header_page));
	buf_add(&b, header_page, strlen(header_page));
	buf_add(&b, "header_event", 13);
	buf_add64(&w, &b, strlen(tdw_header_event));
	buf_add(&b, tdw_header_event, strlen(tdw_header_event));
	buf_add32(&w, &b, 0);	/* ftrace formats */
	buf_add32(&w, &b, 0);	/* event systems */
	buf_add32(&w, &b, 0);	/* kallsyms */
	buf_add32(&w, &b, 0);	/* printk formats */
	buf_add64(&w, &b, 0);	/* saved_cmdlines */
	if (b.failed) {
		buf_free(&b);
		return NULL;
	}
	return strbuf_detach(&b.sb, size);
}

static int direct_init(struct tdw *w);

struct tdw *tdw__new(const void *tracing_data, size_t size,
		     const struct tdw_opts *opts)
{
	struct tdw *w = zalloc(sizeof(*w));

	if (!w)
		goto out_nomem;
	w->opts = *opts;
	if (parse_tracing_data(w, tracing_data, size) || direct_init(w))
		goto out_free;
	w->nr_cpus = opts->nr_cpus > 0 ?
		     min_t(unsigned int, opts->nr_cpus, TDW_MAX_CPUS) : 1;
	w->cpus = calloc(w->nr_cpus, sizeof(*w->cpus));
	if (!w->cpus)
		goto out_nomem;
	for (unsigned int i = 0; i < w->nr_cpus; i++) {
		w->cpus[i].fd = -1;
		w->cpus[i].barrier = -1;
	}
	return w;

out_nomem:
	pr_err("trace.dat: out of memory\n");
out_free:
	tdw__delete(w);
	return NULL;
}

static int spill_stop(struct tdw *w, bool discard);

void tdw__delete(struct tdw *w)
{
	if (!w)
		return;
	spill_stop(w, true);
	while (w->spill.nr_spare)
		free(w->spill.spare[--w->spill.nr_spare]);
	for (unsigned int i = 0; w->cpus && i < w->nr_cpus; i++) {
		free(w->cpus[i].batch);
		if (w->cpus[i].fd >= 0 && !w->cpus[i].direct)
			close(w->cpus[i].fd);
	}
	free(w->cpus);
	free(w->scratch);
	buf_free(&w->synth);
	buf_free(&w->cmdlines);
	free(w->cmd_pids);
	free(w->own_kallsyms);
	free(w);
}

int tdw__add_synthetic_format(struct tdw *w, const char *format)
{
	buf_add64(w, &w->synth, strlen(format));
	buf_add(&w->synth, format, strlen(format));
	w->nr_synth++;
	return w->synth.failed ? -ENOMEM : 0;
}

/*
 * libtraceevent reads saved_cmdlines with "%d %m[^\n]s" and stops at the
 * first line that does not match: an empty name, one with a newline, or
 * one of spaces only (the space of the format skips them) would hide
 * every task after it.  Such names are written in a form it takes
 * (leading spaces as '?'), and a line never exceeds the 64 bytes
 * trace-cmd allows.
 */
#define TDW_CMDLINE_MAX	64

/* The line of @pid for @len bytes of @comm (or up to a NUL), as above. */
static int cmdline_line(char *line, int pid, const char *comm, size_t len)
{
	int n = snprintf(line, TDW_CMDLINE_MAX - 1, "%d ", pid);
	bool lead = true;
	size_t i;

	for (i = 0; i < len && comm[i] && n < TDW_CMDLINE_MAX - 2; i++) {
		unsigned char ch = comm[i];

		lead = lead && isspace(ch);
		line[n++] = isprint(ch) && !lead ? ch : '?';
	}
	if (!i)
		n += snprintf(line + n, TDW_CMDLINE_MAX - n, "<empty>");
	line[n++] = '\n';
	return n;
}

int tdw__add_cmdline(struct tdw *w, int pid, const char *comm)
{
	char line[TDW_CMDLINE_MAX];
	int n = cmdline_line(line, pid, comm, SIZE_MAX);

	buf_add(&w->cmdlines, line, n);
	if (w->cmdlines.failed)
		return -ENOMEM;
	if (is_power_of_2(w->nr_cmd_pids + 1)) {
		int *pids = realloc(w->cmd_pids, 2 * (w->nr_cmd_pids + 1) *
					       sizeof(*pids));

		if (!pids)
			return -ENOMEM;
		w->cmd_pids = pids;
	}
	w->cmd_pids[w->nr_cmd_pids++] = pid;
	return 0;
}

bool tdw__has_kallsyms(const struct tdw *w)
{
	return w->kallsyms_size != 0;
}

/* A print format with a %ps, %pS, %pf, %pF or %pB prints a symbol. */
static bool prints_symbols(const u8 *p, size_t len)
{
	const u8 *end = p + len;

	while (p && p < end && (p = memmem(p, end - p, "%p", 2))) {
		p += 2;
		if (p < end && *p && strchr("sSfFB", *p))
			return true;
	}
	return false;
}

bool tdw__prints_symbols(const struct tdw *w)
{
	return prints_symbols(w->events, w->events_len) ||
	       prints_symbols((const u8 *)w->synth.sb.buf, w->synth.sb.len);
}

void tdw__set_kallsyms(struct tdw *w, char *text, size_t len)
{
	free(w->own_kallsyms);
	w->own_kallsyms = text;
	w->kallsyms = (const u8 *)text;
	w->kallsyms_size = len;
}

/*
 * A spill file for each CPU with events: a recording of a thousand CPUs
 * and more needs more files than the usual soft limit of 1024, which is
 * raised then, as perf does for the files of its events.
 */
static bool spill_retry(struct tdw *w)
{
	return errno == EMFILE && rlimit__increase_nofile(&w->nofile);
}

/*
 * The file of @cpu's pages: the output for the first CPU that writes
 * any when that may be (see direct_init()), else a spill file.  A spill
 * file has no name, so that nothing is left of it whatever ends perf:
 * O_TMPFILE, or where the file system or the kernel has none, a file
 * removed as soon as it is made, with no signal in between.
 */
static int cpu_spill_open(struct tdw *w, struct tdw_cpu *cpu)
{
	const char *dir = w->opts.tmpdir ?: "/tmp";
	char path[PATH_MAX];
	sigset_t all, saved;
	int err = 0;

	if (w->data_off && !w->have_direct) {
		int fd = fileno(w->opts.out);

		/* Only the spill thread writes to it until tdw__finish(). */
		if (lseek(fd, w->data_off, SEEK_SET) < 0)
			return -errno;
		cpu->fd = fd;
		cpu->direct = true;
		w->have_direct = true;
		return 0;
	}
#ifdef O_TMPFILE
	do
		cpu->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	while (cpu->fd < 0 && spill_retry(w));
	if (cpu->fd >= 0)
		return 0;
#endif
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	do {
		snprintf(path, sizeof(path), "%s/.perf-trace-dat-XXXXXX", dir);
		cpu->fd = mkstemp(path);
	} while (cpu->fd < 0 && spill_retry(w));
	if (cpu->fd < 0)
		err = -errno;	/* the caller names the output */
	else
		unlink(path);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return err;
}

/* writen() with an errno: a write of 0 bytes is a full disk. */
static int write_all(int fd, const void *buf, size_t len)
{
	ssize_t n = writen(fd, buf, len);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -ENOSPC;
}

static void *spill_thread(void *arg)
{
	struct tdw_spiller *sp = arg;

	pthread_mutex_lock(&sp->lock);
	for (;;) {
		struct tdw_spill_job job;
		bool discard;
		int ret = 0;

		while (!sp->nr && !sp->stop) {
			sp->idle = true;
			pthread_cond_wait(&sp->work, &sp->lock);
			sp->idle = false;
		}
		if (!sp->nr)
			break;
		job = sp->jobs[sp->head];
		discard = sp->err || sp->discard;
		pthread_mutex_unlock(&sp->lock);
		/* After a failed write, only give the buffers back. */
		if (!discard)
			ret = write_all(job.fd, job.buf, job.len);
		pthread_mutex_lock(&sp->lock);
		if (ret && !sp->err)
			sp->err = ret;
		sp->head = (sp->head + 1) % TDW_SPILL_JOBS;
		sp->nr--;
		sp->spare[sp->nr_spare++] = job.buf;
		if (sp->waiting)
			pthread_cond_signal(&sp->done);
	}
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

/*
 * Start the spill thread, with every signal blocked: a signal is for the
 * converter's thread (its handler removes the output).  Without a thread
 * the spill files are written where the batches fill up.
 */
static void spill_start(struct tdw *w)
{
	struct tdw_spiller *sp = &w->spill;
	size_t batch = (size_t)w->batch_pages * w->page_size;
	sigset_t all, saved;

	sp->started = true;
	sp->depth = min_t(size_t, max_t(size_t, TDW_SPILL_BYTES / batch, 2),
			  TDW_SPILL_JOBS);
	if (pthread_mutex_init(&sp->lock, NULL))
		return;
	if (pthread_cond_init(&sp->work, NULL))
		goto out_lock;
	if (pthread_cond_init(&sp->done, NULL))
		goto out_work;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	sp->running = !pthread_create(&sp->thread, NULL, spill_thread, sp);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (sp->running)
		return;
	pthread_cond_destroy(&sp->done);
out_work:
	pthread_cond_destroy(&sp->work);
out_lock:
	pthread_mutex_destroy(&sp->lock);
}

/*
 * End the thread once every queued batch is written (or, with @discard,
 * dropped): the first write error.
 */
static int spill_stop(struct tdw *w, bool discard)
{
	struct tdw_spiller *sp = &w->spill;

	if (!sp->running)
		return sp->err;
	pthread_mutex_lock(&sp->lock);
	sp->stop = true;
	sp->discard = discard;
	pthread_cond_signal(&sp->work);
	pthread_mutex_unlock(&sp->lock);
	pthread_join(sp->thread, NULL);
	pthread_cond_destroy(&sp->done);
	pthread_cond_destroy(&sp->work);
	pthread_mutex_destroy(&sp->lock);
	sp->running = false;
	return sp->err;
}

/*
 * Queue @len bytes of @cpu's batch for its spill file and give the CPU a
 * spare buffer for its next batch: the one of a batch written, a new one
 * while fewer than depth are in use, else wait for one.
 */
static int spill_queue(struct tdw *w, struct tdw_cpu *cpu, size_t len)
{
	struct tdw_spiller *sp = &w->spill;
	u8 *buf = NULL;
	int ret;

	pthread_mutex_lock(&sp->lock);
	while (!sp->err && !sp->nr_spare && sp->nr_bufs == sp->depth) {
		/* All queued: more than enough to have woken the thread. */
		sp->waiting = true;
		pthread_cond_wait(&sp->done, &sp->lock);
		sp->waiting = false;
	}
	ret = sp->err;
	if (!ret && sp->nr_spare)
		buf = sp->spare[--sp->nr_spare];
	pthread_mutex_unlock(&sp->lock);
	if (ret)
		return ret;
	if (!buf) {
		buf = malloc((size_t)w->batch_pages * w->page_size);
		if (!buf)
			return -ENOMEM;
		sp->nr_bufs++;	/* only this thread changes it */
	}
	/* The page kept for a late event goes on in the new buffer. */
	if (cpu->batched > len / w->page_size)
		memcpy(buf, cpu->batch + len, w->page_size);

	pthread_mutex_lock(&sp->lock);
	sp->jobs[(sp->head + sp->nr) % TDW_SPILL_JOBS] = (struct tdw_spill_job){
		.fd = cpu->fd, .buf = cpu->batch, .len = len,
	};
	if (++sp->nr >= sp->depth / 2 && sp->idle)
		pthread_cond_signal(&sp->work);
	pthread_mutex_unlock(&sp->lock);
	cpu->batch = buf;
	return 0;
}

/*
 * Write the finished pages of the batch to the spill file; all of them
 * with @all, else all but the last, which stays in memory (as the first
 * of the batch) for an event that comes late: see cpu_reorder().  The
 * spill thread writes them while the converter reads on (or, without a
 * thread, they are written here).
 */
static int cpu_write_batch(struct tdw *w, struct tdw_cpu *cpu, bool all)
{
	u32 n = all || !cpu->batched ? cpu->batched : cpu->batched - 1;
	size_t len = (size_t)n * w->page_size;
	int ret;

	if (!len)
		return 0;
	ret = cpu->fd < 0 ? cpu_spill_open(w, cpu) : 0;
	if (!ret && !w->spill.started)
		spill_start(w);
	if (ret)
		return ret;	/* the caller names the output */
	if (w->spill.running) {
		ret = spill_queue(w, cpu, len);
	} else {
		ret = write_all(cpu->fd, cpu->batch, len);
		if (!ret && cpu->batched > n)
			memcpy(cpu->batch, cpu->batch + len, w->page_size);
	}
	if (ret)
		return ret;
	if (cpu->direct)
		w->stats.pages_in_place += n;
	cpu->size += len;
	cpu->batched -= n;
	cpu->page = cpu->batch + cpu->batched * w->page_size;
	if (cpu->barrier >= 0)
		cpu->barrier = max((int)cpu->barrier - (int)n, -1);
	return 0;
}

/* Finish the current page of @cpu and queue it for its spill file. */
static int cpu_flush_page(struct tdw *w, struct tdw_cpu *cpu)
{
	u64 commit = cpu->used;
	u8 *page = cpu->page;

	if (!cpu->active)
		return 0;
	if (cpu->missed) {
		commit |= RB_MISSED_EVENTS;
		cpu->missed = false;
		w->stats.missed_pages++;
	}
	tdw__put64(w, page, cpu->page_ts);
	if (w->commit_size == 8)
		tdw__put64(w, page + 8, commit);
	else
		tdw__put32(w, page + 8, commit);
	memset(page + w->data_offset + cpu->used, 0,
	       w->page_size - w->data_offset - cpu->used);

	cpu->active = false;
	cpu->used = 0;
	w->stats.pages++;
	if (++cpu->batched == w->batch_pages)
		return cpu_write_batch(w, cpu, false);
	cpu->page = cpu->batch + cpu->batched * w->page_size;
	return 0;
}

static u32 event_header(const struct tdw *w, u32 type_len, u32 delta)
{
	if (w->file_be)
		return type_len << 27 | (delta & RB_TS_MASK);
	return (delta & RB_TS_MASK) << 5 | type_len;
}

/*
 * A CPU number far beyond the recording's CPU count: corrupt input, which
 * must not make the writer allocate pages for tens of thousands of CPUs.
 * The count is a hint only (the highest present CPU when the header was
 * written: a CPU hot-added or removed during the recording is beyond it).
 */
static bool cpu_out_of_range(const struct tdw *w, unsigned int nr)
{
	unsigned int count = w->opts.nr_cpus > 0 ? w->opts.nr_cpus : 0;

	return nr >= clamp(count, 4096U, TDW_MAX_CPUS);
}

static struct tdw_cpu *get_cpu(struct tdw *w, unsigned int nr)
{
	struct tdw_cpu *cpus;

	if (nr < w->nr_cpus)
		return &w->cpus[nr];
	if (cpu_out_of_range(w, nr))
		return NULL;
	cpus = realloc(w->cpus, (nr + 1) * sizeof(*cpus));
	if (!cpus)
		return NULL;
	memset(cpus + w->nr_cpus, 0, (nr + 1 - w->nr_cpus) * sizeof(*cpus));
	for (unsigned int i = w->nr_cpus; i <= nr; i++) {
		cpus[i].fd = -1;
		cpus[i].barrier = -1;
	}
	w->cpus = cpus;
	w->nr_cpus = nr + 1;
	return &cpus[nr];
}

/*
 * Append an event to the CPU's stream; @ts is not older than the last.
 * Once per event: inline.
 */
static __always_inline int cpu_add(struct tdw *w, struct tdw_cpu *cpu,
				   u64 ts, const void *payload, u32 size)
{
	u32 len = roundup(size, 4), need, hdr, room;
	u64 delta;
	u8 *p;

	/* A large event stores its length + 4 in array[0]. */
	hdr = (len && len <= RB_MAX_SMALL_DATA) ? 4 : 8;
	room = w->page_size - w->data_offset;
	delta = cpu->active ? ts - cpu->last_ts : 0;
	need = hdr + len + (delta > RB_TS_MASK ? 8 : 0);
	/*
	 * A TIME_EXTEND holds 59 bits of delta; a longer gap (2^59 ns, 18
	 * years: crafted times) starts a page, whose time stamp is absolute.
	 */
	if (cpu->active &&
	    (cpu->used + need > room || delta >> (RB_TS_SHIFT + 32))) {
		int ret = cpu_flush_page(w, cpu);

		if (ret)
			return ret;
	}
	if (!cpu->active) {
		cpu->active = true;
		cpu->page_ts = ts;
		cpu->last_ts = ts;
		delta = 0;
	}

	p = cpu->page + w->data_offset + cpu->used;
	if (delta > RB_TS_MASK) {
		tdw__put32(w, p, event_header(w, RB_TYPE_TIME_EXTEND, delta));
		tdw__put32(w, p + 4, delta >> RB_TS_SHIFT);
		p += 8;
		cpu->used += 8;
		delta = 0;
		w->stats.time_extends++;
	}
	if (hdr == 4) {
		tdw__put32(w, p, event_header(w, len / 4, delta));
	} else {
		tdw__put32(w, p, event_header(w, 0, delta));
		tdw__put32(w, p + 4, len + 4);
		w->stats.large_events++;
	}
	memcpy(p + hdr, payload, size);
	if (len != size)
		memset(p + hdr + size, 0, len - size);
	cpu->used += hdr + len;
	cpu->last_ts = ts;
	w->stats.events++;
	return 0;
}

/* An event of a page as the writer encodes it. */
struct tdw_ev {
	u32	start;		/* offset in the page, TIME_EXTEND included */
	u32	data;		/* offset of the payload */
	u32	len;		/* payload length, padded to 4 bytes */
	u32	end;
	u64	ts;
	bool	extend;
	bool	large;
};

static void decode_header(const struct tdw *w, u32 h, u32 *type_len,
			  u32 *delta)
{
	if (w->file_be) {
		*type_len = h >> RB_TS_SHIFT;
		*delta = h & RB_TS_MASK;
	} else {
		*type_len = h & 31;
		*delta = h >> 5;
	}
}

/* The event at @off of a page with events up to @end, after one at @ts. */
static bool page_event(const struct tdw *w, const u8 *page, u32 off, u32 end,
		       u64 ts, struct tdw_ev *ev)
{
	u32 type_len, delta;

	ev->start = off;
	ev->extend = false;
	if (off + 4 > end)
		return false;
	decode_header(w, get32(w, page + off), &type_len, &delta);
	if (type_len == RB_TYPE_TIME_EXTEND) {
		if (off + 8 > end)
			return false;
		ts += delta + ((u64)get32(w, page + off + 4) << RB_TS_SHIFT);
		off += 8;
		ev->extend = true;
		if (off + 4 > end)
			return false;
		decode_header(w, get32(w, page + off), &type_len, &delta);
	}
	ev->ts = ts + delta;
	ev->large = type_len == 0;
	if (ev->large) {
		if (off + 8 > end)
			return false;
		ev->len = get32(w, page + off + 4) - 4;
		ev->data = off + 8;
	} else if (type_len <= 28) {
		ev->len = type_len * 4;
		ev->data = off + 4;
	} else {
		return false;
	}
	if (ev->len > end - ev->data)
		return false;
	ev->end = ev->data + ev->len;
	return true;
}

/* Events of page @i of the batch: up to *@end, starting at time *@ts. */
static void page_bounds(const struct tdw *w, const struct tdw_cpu *cpu,
			u32 i, u32 *end, u64 *ts)
{
	const u8 *page = cpu->batch + (size_t)i * w->page_size;
	u64 commit;

	if (i == cpu->batched) {
		*end = cpu->active ? w->data_offset + cpu->used : w->data_offset;
		*ts = cpu->page_ts;
		return;
	}
	commit = w->commit_size == 8 ? get64(w, page + 8) : get32(w, page + 8);
	*end = w->data_offset + (commit & ((1U << 27) - 1));
	*ts = get64(w, page);
}

/*
 * An event older than the last one of its CPU.  Events of one CPU can come
 * slightly out of time order (an interrupt that records an event between
 * the time and the write of another), and the ordered-events queue of a
 * perf session may let one through.  Put it in its place among the events
 * of the current and the previous page, as if the events had come in time
 * order: take out the events after its place, go back to the state the
 * writer had there, and add it and them again.  Events with the same time
 * keep their order.  Returns -EAGAIN when the place is not in those pages,
 * or before the lost events of a tdw__mark_lost().
 */
static int cpu_reorder(struct tdw *w, struct tdw_cpu *cpu, u64 ts,
		       const void *payload, u32 size)
{
	u32 first = cpu->batched ? cpu->batched - 1 : 0, i, p = 0, o = 0;
	u32 end, n = 0, extends = 0, large = 0;
	u64 t, prev_ts = 0, commit;
	struct tdw_ev ev;
	bool found = false;
	size_t sl = 0;
	u8 *page;
	int ret;

	if (!w->scratch) {
		w->scratch = malloc((size_t)6 * w->page_size);
		if (!w->scratch)
			return -ENOMEM;
	}
	/* The first event later than @ts. */
	for (i = first; i <= cpu->batched && !found; i++) {
		page = cpu->batch + (size_t)i * w->page_size;
		page_bounds(w, cpu, i, &end, &t);
		for (u32 off = w->data_offset; off < end; off = ev.end) {
			if (!page_event(w, page, off, end, t, &ev))
				return -EINVAL;
			t = ev.ts;
			if (ev.ts > ts) {
				found = true;
				p = i;
				o = ev.start;
				break;
			}
			prev_ts = ev.ts;
		}
	}
	if (!found || (cpu->barrier >= 0 &&
		       (p < (u32)cpu->barrier ||
			(p == (u32)cpu->barrier && o == w->data_offset))))
		return -EAGAIN;
	if (o == w->data_offset) {
		/*
		 * First on its page: it may fit at the end of the page before,
		 * which must be in memory, unless nothing came before.
		 */
		if (p > first) {
			p--;
			page_bounds(w, cpu, p, &o, &t);
		} else if (p || cpu->size) {
			return -EAGAIN;
		}
	}

	/* Take out the events from there on. */
	for (i = p; i <= cpu->batched; i++) {
		page = cpu->batch + (size_t)i * w->page_size;
		page_bounds(w, cpu, i, &end, &t);
		for (u32 off = w->data_offset; off < end; off = ev.end) {
			if (!page_event(w, page, off, end, t, &ev))
				return -EINVAL;
			t = ev.ts;
			if (i == p && ev.start < o)
				continue;
			if (sl + 12 + ev.len > (size_t)6 * w->page_size)
				return -EAGAIN;
			memcpy(w->scratch + sl, &ev.ts, 8);
			memcpy(w->scratch + sl + 8, &ev.len, 4);
			memcpy(w->scratch + sl + 12, page + ev.data, ev.len);
			sl += 12 + ev.len;
			n++;
			extends += ev.extend;
			large += ev.large;
		}
	}

	/* Back to the state after the event before them. */
	for (i = p; i < cpu->batched; i++) {
		page = cpu->batch + (size_t)i * w->page_size;
		commit = w->commit_size == 8 ? get64(w, page + 8) : get32(w, page + 8);
		w->stats.pages--;
		if (commit & RB_MISSED_EVENTS)
			w->stats.missed_pages--;
		if (i == p) {
			cpu->missed = commit & RB_MISSED_EVENTS;
			cpu->page_ts = get64(w, page);
		}
	}
	cpu->batched = p;
	cpu->page = cpu->batch + (size_t)p * w->page_size;
	cpu->used = o - w->data_offset;
	cpu->active = cpu->used != 0;
	cpu->last_ts = prev_ts;
	w->stats.events -= n;
	w->stats.time_extends -= extends;
	w->stats.large_events -= large;
	w->stats.reordered++;

	/* And in time order again. */
	ret = cpu_add(w, cpu, ts, payload, size);
	for (size_t off = 0; !ret && off < sl; ) {
		u32 len;

		memcpy(&t, w->scratch + off, 8);
		memcpy(&len, w->scratch + off + 8, 4);
		ret = cpu_add(w, cpu, t, w->scratch + off + 12, len);
		off += 12 + len;
	}
	return ret;
}

int tdw__add_event(struct tdw *w, unsigned int nr, u64 ts,
		   const void *payload, u32 size)
{
	struct tdw_cpu *cpu = get_cpu(w, nr);
	u32 len, hdr;
	int ret;

	if (!cpu)
		return cpu_out_of_range(w, nr) ? -ERANGE : -ENOMEM;
	if (!cpu->batch) {
		cpu->batch = malloc((size_t)w->batch_pages * w->page_size);
		if (!cpu->batch)
			return -ENOMEM;
		cpu->page = cpu->batch;
	}
	len = roundup(min(size, w->page_size), 4);
	hdr = (len && len <= RB_MAX_SMALL_DATA) ? 4 : 8;
	if (size > w->page_size || hdr + len > w->page_size - w->data_offset) {
		w->stats.dropped_too_big++;
		w->stats.max_too_big = max(w->stats.max_too_big, size);
		return 0;
	}
	if (ts < cpu->last_ts) {
		ret = cpu_reorder(w, cpu, ts, payload, size);
		if (ret != -EAGAIN)
			return ret;
		if (w->opts.strict_order)
			return -EAGAIN;
		w->stats.out_of_order++;
		ts = cpu->last_ts;
	}
	return cpu_add(w, cpu, ts, payload, size);
}

int tdw__mark_lost(struct tdw *w, unsigned int nr, u64 ts)
{
	struct tdw_cpu *cpu = get_cpu(w, nr);
	int ret;

	if (!cpu)
		return cpu_out_of_range(w, nr) ? -ERANGE : -ENOMEM;
	/* The mark goes after the events so far, which must not be later. */
	if (ts < cpu->last_ts && w->opts.strict_order)
		return -EAGAIN;
	/* Events after the loss start a new page, as in the kernel. */
	ret = cpu_flush_page(w, cpu);
	if (ret)
		return ret;
	cpu->missed = true;
	cpu->barrier = cpu->batched;
	return 0;
}

/* Output side: sequential writes with position tracking. */
struct tdw_out {
	FILE	*fp;
	u64	pos;
	int	err;
};

static void out_write(struct tdw_out *o, const void *data, size_t len)
{
	if (o->err || !len)
		return;
	if (fwrite(data, 1, len, o->fp) != len)
		o->err = -errno ?: -EIO;
	o->pos += len;
}

static void out_buf(struct tdw_out *o, const struct tdw_buf *b)
{
	if (b->failed)
		o->err = -ENOMEM;
	out_write(o, b->sb.buf, b->sb.len);
}

static void out_zero(struct tdw_out *o, size_t len)
{
	static const u8 zeros[256];

	while (len) {
		size_t n = min(len, sizeof(zeros));

		out_write(o, zeros, n);
		len -= n;
	}
}

static const char *comp_name(const struct tdw *w)
{
	switch (w->opts.compression) {
	case TDW_COMP_ZLIB:
		return "zlib";
	case TDW_COMP_ZSTD:
		return "zstd";
	case TDW_COMP_NONE:
	default:
		return "none";
	}
}

static const char *comp_version(const struct tdw *w)
{
	switch (w->opts.compression) {
#ifdef HAVE_ZLIB_SUPPORT
	case TDW_COMP_ZLIB:
		return zlibVersion();
#endif
#ifdef HAVE_ZSTD_SUPPORT
	case TDW_COMP_ZSTD:
		return ZSTD_versionString();
#endif
	case TDW_COMP_NONE:
	default:
		return "";
	}
}

/* Compress @in into @out (reset first); returns 0 or -errno. */
static int compress_buf(const struct tdw *w, const void *in, size_t len,
			struct tdw_buf *out)
{
	out->sb.len = 0;
	switch (w->opts.compression) {
#ifdef HAVE_ZSTD_SUPPORT
	case TDW_COMP_ZSTD: {
		size_t bound = ZSTD_compressBound(len), ret;

		if (strbuf_grow(&out->sb, bound))
			return -ENOMEM;
		ret = ZSTD_compress(out->sb.buf, bound, in, len, 3);
		if (ZSTD_isError(ret))
			return -EINVAL;
		return strbuf_setlen(&out->sb, ret);
	}
#endif
#ifdef HAVE_ZLIB_SUPPORT
	case TDW_COMP_ZLIB: {
		uLongf dlen = compressBound(len);

		if (strbuf_grow(&out->sb, dlen))
			return -ENOMEM;
		if (compress2((Bytef *)out->sb.buf, &dlen, in, len,
			      Z_BEST_COMPRESSION) != Z_OK)
			return -EINVAL;
		return strbuf_setlen(&out->sb, dlen);
	}
#endif
	case TDW_COMP_NONE:
	default:
		return -EINVAL;
	}
}

/* Section descriptions, offsets into the STRINGS section. */
static const char * const tdw_strings[] = {
	"options", "headers", "ftrace events", "events format", "kallsyms",
	"printk", "command lines", "flyrecord",
};

static u32 string_id(unsigned int idx)
{
	u32 off = 0;

	for (unsigned int i = 0; i < idx; i++)
		off += strlen(tdw_strings[i]) + 1;
	return off;
}

static void section_header_bytes(const struct tdw *w, u8 *hdr, u16 id,
				 u16 flags, u32 desc, u64 size)
{
	tdw__put16(w, hdr, id);
	tdw__put16(w, hdr + 2, flags);
	tdw__put32(w, hdr + 4, desc);
	tdw__put64(w, hdr + 8, size);
}

static void section_header(const struct tdw *w, struct tdw_out *o, u16 id,
			   u16 flags, u32 desc, u64 size)
{
	u8 hdr[16];

	section_header_bytes(w, hdr, id, flags, desc, size);
	out_write(o, hdr, sizeof(hdr));
}

/* Write a v7 section; returns the offset of its header. */
static u64 write_section(const struct tdw *w, struct tdw_out *o, u16 id,
			 unsigned int desc, const struct tdw_buf *body)
{
	u64 start = o->pos;
	struct tdw_buf z = { .sb = STRBUF_INIT };
	u8 sizes[8];

	if (body->failed)
		o->err = -ENOMEM;
	if (w->opts.compression == TDW_COMP_NONE || id == TDW_OPT_STRINGS) {
		section_header(w, o, id, 0, string_id(desc), body->sb.len);
		out_buf(o, body);
		return start;
	}
	if (compress_buf(w, body->sb.buf, body->sb.len, &z)) {
		o->err = -EINVAL;
		buf_free(&z);
		return start;
	}
	section_header(w, o, id, TDW_SEC_COMPRESSED, string_id(desc),
		       z.sb.len + 8);
	tdw__put32(w, sizes, z.sb.len);
	tdw__put32(w, sizes + 4, body->sb.len);
	out_write(o, sizes, sizeof(sizes));
	out_buf(o, &z);
	buf_free(&z);
	return start;
}

static void body_header_info(const struct tdw *w, struct tdw_buf *b)
{
	buf_add(b, "header_page", 12);
	buf_add64(w, b, w->header_page_size);
	buf_add(b, w->header_page, w->header_page_size);
	buf_add(b, "header_event", 13);
	buf_add64(w, b, w->header_event_size);
	buf_add(b, w->header_event, w->header_event_size);
}

static void body_events(const struct tdw *w, struct tdw_buf *b)
{
	buf_add32(w, b, w->nr_systems + (w->nr_synth ? 1 : 0));
	buf_add(b, w->events, w->events_len);
	if (w->nr_synth) {
		buf_addstr(b, "perf");
		buf_add32(w, b, w->nr_synth);
		buf_add(b, w->synth.sb.buf, w->synth.sb.len);
		if (w->synth.failed)
			b->failed = true;
	}
}

static void body_kallsyms(const struct tdw *w, struct tdw_buf *b)
{
	buf_add32(w, b, w->kallsyms_size);
	buf_add(b, w->kallsyms, w->kallsyms_size);
}

static void body_printk(const struct tdw *w, struct tdw_buf *b)
{
	buf_add32(w, b, w->printk_size);
	buf_add(b, w->printk, w->printk_size);
}

static int cmp_pid(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * Command lines seen by perf (COMM events, thread names), then those of
 * the recording's saved_cmdlines for the other pids: libtraceevent keeps
 * every line, and for a pid with two it shows either.  The kernel writes
 * a task's name there as it is: an empty one, or one with a newline
 * (the rest of the name then is a line without a pid), would stop
 * libtraceevent there as in tdw__add_cmdline().  Each line is written
 * again as perf's are; a line without a pid is left out.
 */
static void body_cmdlines(const struct tdw *w, struct tdw_buf *b)
{
	const char *p = (const char *)w->saved_cmdlines;
	const char *end = p + w->saved_cmdlines_size;
	struct tdw_buf saved = { .sb = STRBUF_INIT };
	char line[TDW_CMDLINE_MAX];

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *next = nl ? nl + 1 : end, *q = p;
		int pid = 0, digits = 0;

		for (; q < next && isdigit((unsigned char)*q) && digits < 9;
		     q++, digits++)
			pid = pid * 10 + (*q - '0');
		if (digits && q < next && *q == ' ' &&
		    (!w->nr_cmd_pids ||
		     !bsearch(&pid, w->cmd_pids, w->nr_cmd_pids, sizeof(pid),
			      cmp_pid))) {
			q++;
			buf_add(&saved, line,
				cmdline_line(line, pid, q, (nl ?: end) - q));
		}
		p = next;
	}
	buf_add64(w, b, w->cmdlines.sb.len + saved.sb.len);
	buf_add(b, w->cmdlines.sb.buf, w->cmdlines.sb.len);
	buf_add(b, saved.sb.buf, saved.sb.len);
	if (w->cmdlines.failed || saved.failed)
		b->failed = true;
	buf_free(&saved);
}

/*
 * Copy the spill file of @cpu to the output: in the kernel with
 * copy_file_range(), which saves reading every page into the batch buffer
 * and writing it again; with read() and the output's stdio from where it
 * stopped when the kernel cannot (spill files on another file system than
 * the output: EXDEV since Linux 5.19; kernels before 4.5).
 */
static void copy_cpu(struct tdw *w, struct tdw_out *o, struct tdw_cpu *cpu)
{
	u64 left = cpu->size;
	off_t in = 0;

	if (!left || o->err || cpu->direct)
		return;
	if (!fflush(o->fp)) {
		while (left) {
			ssize_t n = copy_file_range(cpu->fd, &in, fileno(o->fp),
						    NULL, left, 0);

			if (n <= 0)
				break;
			left -= n;
			o->pos += n;
		}
		/* The output's offset moved under stdio: tell it. */
		if (in && fseeko(o->fp, 0, SEEK_END)) {
			o->err = -errno;
			return;
		}
	}
	if (!left)
		return;
	if (lseek(cpu->fd, in, SEEK_SET) < 0) {
		o->err = -errno;
		return;
	}
	/* The batch buffer is free once everything is in the spill file. */
	while (left && !o->err) {
		size_t len = min_t(u64, left, (u64)w->batch_pages * w->page_size);
		ssize_t n = read(cpu->fd, cpu->batch, len);

		if (n != (ssize_t)len) {
			o->err = -EIO;
			return;
		}
		out_write(o, cpu->batch, n);
		left -= n;
	}
}

/*
 * Compressed flyrecord data of one CPU, straight to the output: u32 chunk
 * count, then per chunk u32 compressed size, u32 uncompressed size and the
 * data.  Only one chunk is in memory at a time.
 */
static void compress_cpu(struct tdw *w, struct tdw_out *o, struct tdw_cpu *cpu)
{
	u64 pages = cpu->size / w->page_size, done = 0;
	struct tdw_buf z = { .sb = STRBUF_INIT };
	u8 sizes[8], *chunk;

	if (!pages || o->err)
		return;
	chunk = malloc((size_t)TDW_CHUNK_PAGES * w->page_size);
	if (!chunk) {
		o->err = -ENOMEM;
		return;
	}
	tdw__put32(w, sizes, DIV_ROUND_UP(pages, TDW_CHUNK_PAGES));
	out_write(o, sizes, 4);
	if (lseek(cpu->fd, 0, SEEK_SET) < 0)
		o->err = -errno;
	while (done < pages && !o->err) {
		size_t len = min_t(u64, pages - done, TDW_CHUNK_PAGES) *
			     w->page_size;

		if (read(cpu->fd, chunk, len) != (ssize_t)len) {
			o->err = -EIO;
			break;
		}
		if (compress_buf(w, chunk, len, &z)) {
			o->err = -ENOMEM;
			break;
		}
		tdw__put32(w, sizes, z.sb.len);
		tdw__put32(w, sizes + 4, len);
		out_write(o, sizes, sizeof(sizes));
		out_write(o, z.sb.buf, z.sb.len);
		done += len / w->page_size;
	}
	buf_free(&z);
	free(chunk);
}

/* Overwrite @len bytes at @off, written before; the position stays. */
static void out_patch(struct tdw_out *o, u64 off, const void *data,
		      size_t len)
{
	if (o->err)
		return;
	if (fflush(o->fp) || fseeko(o->fp, off, SEEK_SET) ||
	    fwrite(data, 1, len, o->fp) != len || fseeko(o->fp, 0, SEEK_END))
		o->err = -errno ?: -EIO;
}

struct cpu_place {
	u64	offset;
	u64	size;
};

/*
 * The trace_clock file of the recording: the clocks ftrace offers, the
 * current one in brackets, as trace-cmd record copies it from tracefs.
 */
static const char * const tdw_clocks[] = {
	"local", "global", "counter", "uptime", "perf", "mono", "mono_raw",
	"boot", "tai",
};

static void clock_list(const struct tdw *w, struct tdw_buf *b)
{
	const char *clock = w->opts.clock ?: "local";
	bool found = false;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tdw_clocks); i++) {
		bool cur = !strcmp(tdw_clocks[i], clock);

		found |= cur;
		if (i)
			buf_add(b, " ", 1);
		if (cur)
			buf_add(b, "[", 1);
		buf_add(b, tdw_clocks[i], strlen(tdw_clocks[i]));
		if (cur)
			buf_add(b, "]", 1);
	}
	if (!found) {
		buf_add(b, " [", 2);
		buf_add(b, clock, strlen(clock));
		buf_add(b, "]", 1);
	}
	buf_add(b, "\n", 1);
}

static void add_str_option(const struct tdw *w, struct tdw_buf *b, u16 id,
			   const char *str)
{
	buf_add16(w, b, id);
	buf_add32(w, b, strlen(str) + 1);
	buf_addstr(b, str);
}

/*
 * The options trace-cmd record writes about the recording
 * (tracecmd/trace-record.c add_options()): the OFFSET of --ts-offset, the
 * TRACECLOCK file with its NUL, UNAME and VERSION.  v6 and v7 alike.
 */
static void add_recorder_options(const struct tdw *w, struct tdw_buf *b)
{
	struct tdw_buf clocks = { .sb = STRBUF_INIT };

	if (w->opts.has_offset) {
		char off[32];

		snprintf(off, sizeof(off), "%lld", (long long)w->opts.ts_offset);
		add_str_option(w, b, TDW_OPT_OFFSET, off);
	}
	clock_list(w, &clocks);
	buf_add(&clocks, "", 1);
	buf_add16(w, b, TDW_OPT_TRACECLOCK);
	buf_add32(w, b, clocks.sb.len);
	buf_add(b, clocks.sb.buf, clocks.sb.len);
	if (clocks.failed)
		b->failed = true;
	buf_free(&clocks);
	if (w->opts.uname)
		add_str_option(w, b, TDW_OPT_UNAME, w->opts.uname);
	add_str_option(w, b, TDW_OPT_VERSION,
		       w->opts.version_str ?: "perf data convert");
}

static void build_options(const struct tdw *w, struct tdw_buf *b,
			  const u64 *sec, u64 fly_off,
			  const struct cpu_place *place)
{
	static const u16 ids[] = {
		TDW_OPT_HEADER_INFO, TDW_OPT_FTRACE_EVENTS,
		TDW_OPT_EVENT_FORMATS, TDW_OPT_KALLSYMS, TDW_OPT_PRINTK,
		TDW_OPT_CMDLINES,
	};
	const char *clock = w->opts.clock ?: "local";
	unsigned int i;

	b->sb.len = 0;
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		buf_add16(w, b, ids[i]);
		buf_add32(w, b, 8);
		buf_add64(w, b, sec[i]);
	}
	buf_add16(w, b, TDW_OPT_CPUCOUNT);
	buf_add32(w, b, 4);
	buf_add32(w, b, w->nr_cpus);
	add_recorder_options(w, b);

	buf_add16(w, b, TDW_OPT_BUFFER);
	buf_add32(w, b, 8 + 1 + strlen(clock) + 1 + 4 + 4 + w->nr_cpus * 20);
	buf_add64(w, b, fly_off);
	buf_addstr(b, "");
	buf_addstr(b, clock);
	buf_add32(w, b, w->page_size);
	buf_add32(w, b, w->nr_cpus);
	for (i = 0; i < w->nr_cpus; i++) {
		buf_add32(w, b, i);
		buf_add64(w, b, place[i].offset);
		buf_add64(w, b, place[i].size);
	}
	buf_add16(w, b, TDW_OPT_DONE);
	buf_add32(w, b, 8);
	buf_add64(w, b, 0);
}

static void write_initial_header(const struct tdw *w, struct tdw_out *o,
				 const char *version)
{
	u8 tmp[4];

	out_write(o, TDW_MAGIC, TDW_MAGIC_LEN);
	out_write(o, version, strlen(version) + 1);
	tmp[0] = w->file_be;
	tmp[1] = w->long_size;
	out_write(o, tmp, 2);
	tdw__put32(w, tmp, w->page_size);
	out_write(o, tmp, 4);
}

/* The initial header of a v7 file, up to the offset of the options. */
static void write_v7_header(const struct tdw *w, struct tdw_out *o)
{
	write_initial_header(w, o, "7");
	out_write(o, comp_name(w), strlen(comp_name(w)) + 1);
	out_write(o, comp_version(w), strlen(comp_version(w)) + 1);
}

/* Its size, with the offset of the options. */
static u64 v7_header_size(const struct tdw *w)
{
	return TDW_MAGIC_LEN + 2 + 2 + 4 + strlen(comp_name(w)) + 1 +
	       strlen(comp_version(w)) + 1 + 8;
}

/*
 * A v7 file without compression: the pages of one CPU go to the output
 * as they fill, at the first page boundary after the initial header and
 * the flyrecord section's header.  trace-cmd finds each CPU's data from
 * the offsets in the BUFFER option (and reads the section header there
 * only for its flags), and walks the sections one after the other from
 * the initial header on for the strings: the flyrecord section, whose
 * size covers every CPU's data, comes first, the metadata sections after
 * it (finish_v7()).
 */
static int direct_init(struct tdw *w)
{
	struct stat st;

	if (!w->opts.out || fstat(fileno(w->opts.out), &st) ||
	    !S_ISREG(st.st_mode)) {
		pr_err("trace.dat: the output must be a regular file\n");
		return -EINVAL;
	}
	if (w->opts.version == 7 && w->opts.compression == TDW_COMP_NONE)
		w->data_off = roundup(v7_header_size(w) + 16,
				      (u64)w->page_size);
	return 0;
}

/* HEADER_INFO, FTRACE_EVENTS, then the others: their offsets in @sec. */
static void write_metadata(const struct tdw *w, struct tdw_out *o, u64 *sec)
{
	void (*bodies[])(const struct tdw *, struct tdw_buf *) = {
		body_header_info, body_events, body_kallsyms, body_printk,
		body_cmdlines,
	};
	static const u16 body_ids[] = {
		TDW_OPT_HEADER_INFO, TDW_OPT_EVENT_FORMATS, TDW_OPT_KALLSYMS,
		TDW_OPT_PRINTK, TDW_OPT_CMDLINES,
	};
	static const unsigned int body_desc[] = { 1, 3, 4, 5, 6 };
	struct tdw_buf b = { .sb = STRBUF_INIT };

	for (unsigned int i = 0; i < ARRAY_SIZE(bodies); i++) {
		b.sb.len = 0;
		bodies[i](w, &b);
		sec[i == 0 ? 0 : i + 1] = write_section(w, o, body_ids[i],
							body_desc[i], &b);
		if (i == 0) {
			struct tdw_buf f = { .sb = STRBUF_INIT };

			buf_add(&f, w->ftrace, w->ftrace_len);
			sec[1] = write_section(w, o, TDW_OPT_FTRACE_EVENTS, 2,
					       &f);
			buf_free(&f);
		}
	}
	buf_free(&b);
}

static void write_strings(const struct tdw *w, struct tdw_out *o)
{
	struct tdw_buf b = { .sb = STRBUF_INIT };

	for (unsigned int i = 0; i < ARRAY_SIZE(tdw_strings); i++)
		buf_addstr(&b, tdw_strings[i]);
	write_section(w, o, TDW_OPT_STRINGS, 0, &b);
	buf_free(&b);
}

/*
 * The layout of direct_init(): the CPU data after the direct CPU's, the
 * metadata sections, the options and the strings, then the headers at the
 * start.  The file is cut after the direct CPU's pages first: a writer
 * before this one (a conversion started again) may have written more.
 */
static int finish_v7(struct tdw *w, struct tdw_out *o)
{
	struct tdw_buf opts = { .sb = STRBUF_INIT };
	u64 sec[6], fly_off = v7_header_size(w), opt_off, end = w->data_off;
	struct tdw_out head = { .fp = o->fp };
	struct cpu_place *place;
	unsigned int i;
	u8 tmp[8];

	place = calloc(w->nr_cpus, sizeof(*place));
	if (!place)
		return -ENOMEM;
	for (i = 0; i < w->nr_cpus; i++) {
		if (w->cpus[i].direct) {
			place[i].offset = end;
			place[i].size = w->cpus[i].size;
			end += w->cpus[i].size;
		}
	}
	if (fflush(o->fp) || ftruncate(fileno(o->fp), end) ||
	    fseeko(o->fp, end, SEEK_SET))
		o->err = -errno;
	o->pos = end;
	for (i = 0; i < w->nr_cpus; i++) {
		if (w->cpus[i].direct)
			continue;
		place[i].offset = o->pos;
		copy_cpu(w, o, &w->cpus[i]);
		place[i].size = o->pos - place[i].offset;
	}
	end = o->pos;
	write_metadata(w, o, sec);
	opt_off = o->pos;
	build_options(w, &opts, sec, fly_off, place);
	section_header(w, o, TDW_OPT_DONE, 0, string_id(0), opts.sb.len);
	out_buf(o, &opts);
	buf_free(&opts);
	free(place);
	write_strings(w, o);
	if (o->err)
		return o->err;

	if (fflush(o->fp) || fseeko(o->fp, 0, SEEK_SET))
		return -errno;
	write_v7_header(w, &head);
	tdw__put64(w, tmp, opt_off);
	out_write(&head, tmp, 8);
	section_header(w, &head, TDW_OPT_BUFFER, 0, string_id(7),
		       end - fly_off - 16);
	out_zero(&head, w->data_off - head.pos);
	if (!head.err && fseeko(o->fp, 0, SEEK_END))
		head.err = -errno;
	return head.err;
}

/*
 * Compressed: the metadata sections, the options, the flyrecord section,
 * the strings.  The size of compressed CPU data is known once it is
 * written: the options and the flyrecord section header are written
 * again then.
 */
static int finish_v7_compressed(struct tdw *w, struct tdw_out *o)
{
	struct tdw_buf opts = { .sb = STRBUF_INIT };
	u64 sec[6], opt_ptr, opt_off, fly_off, data_off;
	struct cpu_place *place;
	unsigned int i;
	u8 tmp[16];

	place = calloc(w->nr_cpus, sizeof(*place));
	if (!place)
		return -ENOMEM;
	write_v7_header(w, o);
	opt_ptr = o->pos;
	out_zero(o, 8);
	write_metadata(w, o, sec);

	build_options(w, &opts, sec, 0, place);
	opt_off = o->pos;
	fly_off = opt_off + 16 + opts.sb.len;
	data_off = fly_off + 16;
	build_options(w, &opts, sec, fly_off, place);
	section_header(w, o, TDW_OPT_DONE, 0, string_id(0), opts.sb.len);
	out_buf(o, &opts);

	section_header(w, o, TDW_OPT_BUFFER, TDW_SEC_COMPRESSED, string_id(7),
		       0);
	for (i = 0; i < w->nr_cpus; i++) {
		place[i].offset = o->pos;
		compress_cpu(w, o, &w->cpus[i]);
		place[i].size = o->pos - place[i].offset;
	}
	build_options(w, &opts, sec, fly_off, place);
	out_patch(o, opt_off + 16, opts.sb.buf, opts.sb.len);
	section_header_bytes(w, tmp, TDW_OPT_BUFFER, TDW_SEC_COMPRESSED,
			     string_id(7), o->pos - data_off);
	out_patch(o, fly_off, tmp, 16);

	write_strings(w, o);
	tdw__put64(w, tmp, opt_off);
	out_patch(o, opt_ptr, tmp, 8);
	buf_free(&opts);
	free(place);
	return o->err;
}

/*
 * v6: the metadata in the order of the tracing data, cmdlines, the CPU
 * count, options, "flyrecord" with per-CPU offsets and sizes, the trace
 * clock, then page aligned CPU data.
 */
static int finish_v6(struct tdw *w, struct tdw_out *o)
{
	struct tdw_buf b = { .sb = STRBUF_INIT }, clocks = { .sb = STRBUF_INIT };
	u64 off;
	unsigned int i;

	write_initial_header(w, o, "6");
	body_header_info(w, &b);
	buf_add(&b, w->ftrace, w->ftrace_len);
	body_events(w, &b);
	body_kallsyms(w, &b);
	body_printk(w, &b);
	body_cmdlines(w, &b);
	buf_add32(w, &b, w->nr_cpus);
	buf_add(&b, "options  ", 10);
	add_recorder_options(w, &b);
	buf_add16(w, &b, TDW_OPT_DONE);
	buf_add(&b, "flyrecord", 10);
	out_buf(o, &b);

	clock_list(w, &clocks);
	if (clocks.failed)
		o->err = -ENOMEM;
	off = o->pos + w->nr_cpus * 16 + 8 + clocks.sb.len;
	off = roundup(off, (u64)w->page_size);
	b.sb.len = 0;
	for (i = 0; i < w->nr_cpus; i++) {
		buf_add64(w, &b, w->cpus[i].size ? off : 0);
		buf_add64(w, &b, w->cpus[i].size);
		off += w->cpus[i].size;
	}
	buf_add64(w, &b, clocks.sb.len);
	buf_add(&b, clocks.sb.buf, clocks.sb.len);
	out_buf(o, &b);
	out_zero(o, roundup(o->pos, (u64)w->page_size) - o->pos);
	for (i = 0; i < w->nr_cpus; i++)
		copy_cpu(w, o, &w->cpus[i]);
	buf_free(&b);
	buf_free(&clocks);
	return o->err;
}

int tdw__finish(struct tdw *w)
{
	FILE *fp = w->opts.out;
	struct tdw_out o = { .fp = fp };
	int ret;

	if (w->nr_cmd_pids)
		qsort(w->cmd_pids, w->nr_cmd_pids, sizeof(int), cmp_pid);

	for (unsigned int i = 0; i < w->nr_cpus; i++) {
		if (w->cpus[i].missed && !w->cpus[i].active)
			w->stats.missed_unmarked++;
		ret = cpu_flush_page(w, &w->cpus[i]);
		if (!ret)
			ret = cpu_write_batch(w, &w->cpus[i], true);
		if (ret)
			return ret;
	}
	ret = spill_stop(w, false);
	if (ret)
		return ret;
	if (w->opts.version == 6)
		ret = finish_v6(w, &o);
	else if (w->opts.compression != TDW_COMP_NONE)
		ret = finish_v7_compressed(w, &o);
	else
		ret = finish_v7(w, &o);
	if (!ret && fflush(fp))
		ret = -errno;
	return ret;
}
