/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_TRACE_DAT_WRITER_H
#define __PERF_TRACE_DAT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/*
 * Streaming writer of trace-cmd trace.dat files (v6 and v7) built from
 * the tracing data that perf stores in perf.data (header_page,
 * header_event, ftrace and event formats, kallsyms, printk formats,
 * saved_cmdlines) and raw tracepoint payloads.
 *
 * Events are framed into ftrace ring-buffer pages per CPU.  Full pages
 * are written to an unlinked per-CPU temporary file as they fill (one
 * CPU's straight to the output, see tdw_opts.out), so memory use does
 * not depend on the input size; tdw__finish() assembles the output file.
 */

enum tdw_compression {
	TDW_COMP_NONE,
	TDW_COMP_ZLIB,
	TDW_COMP_ZSTD,
};

struct tdw_opts {
	int			version;	/* 6 or 7 */
	enum tdw_compression	compression;
	const char		*clock;		/* ftrace clock name */
	const char		*tmpdir;	/* where per-CPU spill files go */
	/*
	 * The output, a regular file: in a v7 file without compression the
	 * pages of one CPU, the first to fill a batch, go to their place
	 * there as they fill instead of to a spill file, so that
	 * tdw__finish() copies one CPU less.  The writer's thread may write
	 * to it until tdw__finish() or tdw__delete(): close it after them.
	 */
	FILE			*out;
	int			nr_cpus;	/* CPUs of the recording */
	const char		*uname;		/* "sysname node release machine" */
	const char		*version_str;	/* VERSION option */
	bool			has_offset;	/* write an OFFSET option */
	s64			ts_offset;	/* ns added to every timestamp */
	/*
	 * An event that cannot be put in time order (see tdw__add_event())
	 * is refused with -EAGAIN, not given the time of the one before.
	 */
	bool			strict_order;
};

struct tdw_stats {
	u64	events;
	u64	pages;
	u64	time_extends;
	u64	large_events;
	u64	dropped_too_big;
	u32	max_too_big;	/* size of the largest dropped event */
	u64	out_of_order;	/* given the time of the event before */
	u64	reordered;	/* put in time order */
	u64	missed_pages;
	u64	pages_in_place;	/* written to the output as they filled */
	/*
	 * CPUs whose last lost-events mark has no event after it: the flag
	 * goes on the page of the next event, and there is none.
	 */
	u32	missed_unmarked;
};

struct tdw;

struct tdw *tdw__new(const void *tracing_data, size_t size,
		     const struct tdw_opts *opts);
void tdw__delete(struct tdw *w);
/*
 * Tracing data with no event formats, for a recording that has none: the
 * ring buffer headers of a kernel with @long_size and @big_endian.  The
 * caller frees it; NULL when out of memory.
 */
void *tdw__empty_tracing_data(bool big_endian, int long_size, size_t *size);

/* Parsed properties of the recording, for the caller. */
bool tdw__file_bigendian(const struct tdw *w);
int tdw__long_size(const struct tdw *w);
/* First event id that is free for synthetic events. */
unsigned int tdw__next_free_id(const struct tdw *w);

/* Encoding helpers for payloads in the recording's byte order. */
void tdw__put16(const struct tdw *w, void *dst, u16 val);
void tdw__put32(const struct tdw *w, void *dst, u32 val);
void tdw__put64(const struct tdw *w, void *dst, u64 val);

/* Add an event format file of a synthetic event system ("perf"). */
int tdw__add_synthetic_format(struct tdw *w, const char *format);

/*
 * Add an event to the stream of @cpu.  An event older than the one before
 * it goes to its place in time order when that place is on the current or
 * the previous page of the CPU (events of one CPU slightly out of order);
 * else it gets the time of the one before, or with opts->strict_order, it
 * is refused with -EAGAIN.
 */
int tdw__add_event(struct tdw *w, unsigned int cpu, u64 ts,
		   const void *payload, u32 size);
/*
 * Events were lost on @cpu at time @ts: the next page of @cpu gets the
 * MISSED_EVENTS flag (none if no event follows: see missed_unmarked).
 * With opts->strict_order, -EAGAIN if an event later than @ts is there
 * already.
 */
int tdw__mark_lost(struct tdw *w, unsigned int cpu, u64 ts);
int tdw__add_cmdline(struct tdw *w, int pid, const char *comm);
/*
 * Kallsyms text ("addr type name" lines as in /proc/kallsyms) for a
 * recording whose tracing data has none; the writer takes @text, which
 * must come from malloc().
 */
bool tdw__has_kallsyms(const struct tdw *w);
/* An event format (of the recording or synthetic) prints a symbol. */
bool tdw__prints_symbols(const struct tdw *w);
void tdw__set_kallsyms(struct tdw *w, char *text, size_t len);
/*
 * CPUs at most: the largest NR_CPUS a Linux kernel can be configured with
 * (x86_64 with MAXSMP, powerpc).  tdw_opts.nr_cpus is cut to it.
 */
#define TDW_MAX_CPUS	8192U

/* Write the file; the caller closes tdw_opts.out. */
int tdw__finish(struct tdw *w);
const struct tdw_stats *tdw__stats(const struct tdw *w);

#endif /* __PERF_TRACE_DAT_WRITER_H */
