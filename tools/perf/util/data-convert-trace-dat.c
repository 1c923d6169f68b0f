// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data to trace-cmd trace.dat conversion.
 *
 * The metadata (header_page, header_event, ftrace and event formats,
 * kallsyms, printk formats, saved_cmdlines, byte order, long size, page
 * size) is the tracing data perf saved at record time; raw tracepoint
 * payloads are framed into ring-buffer pages per CPU as samples arrive
 * in time order, and spilled to per-CPU temporary files as pages fill.
 *
 * With --all, samples of other events and LOST, LOST_SAMPLES and AUX
 * records become events of a synthetic "perf" system as well.
 *
 * The options trace-cmd record writes about a recording come from the
 * recording too: the trace clock, UNAME, VERSION (of this perf), OFFSET
 * for --tod, kallsyms from the kernel map when the tracing data has none,
 * and a command line for every task perf saw, including those that
 * exited before the end.
 */

#include "data-convert.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <internal/lib.h>

#include "util/auxtrace.h"
#include "util/build-id.h"
#include "util/debug.h"
#include "util/env.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/hashmap.h"
#include "util/header.h"
#include "util/machine.h"
#include "util/ordered-events.h"
#include "util/map.h"
#include "util/maps.h"
#include "util/dso.h"
#include "util/symbol.h"
#include "util/addr_location.h"
#include "util/sample.h"
#include "util/strbuf.h"
#include "util/thread.h"
#include "util/session.h"
#include "util/time-utils.h"
#include "util/tool.h"
#include "util/trace-dat-writer.h"

enum synth_event {
	SYNTH_SAMPLE,
	SYNTH_LOST,
	SYNTH_LOST_SAMPLES,
	SYNTH_AUX,
	SYNTH_SWITCH,
	SYNTH_MAX,
};

struct convert_trace_dat {
	struct perf_tool	tool;
	struct perf_session	*session;
	const char		*output_name;
	struct tdw		*w;
	struct tdw_opts		wopts;
	bool			synthetic;
	struct itrace_synth_opts itrace_opts;	/* .set, nothing synthesized */
	bool			user_maps;	/* callchains are resolved */
	bool			this_machine;	/* recorded where it converts */
	/* The kernel's symbols, see kernel_symbols(). */
	const char		*kallsyms;	/* its kallsyms file, or NULL */
	char			*kcore_kallsyms; /* a --kcore recording's */
	const char		*kallsyms_name;	/* symbol_conf's before */
	bool			kallsyms_chosen;
	bool			ksyms_done;	/* kernel_symbols(), this session */
	bool			ksyms_warned;	/* that there are none */
	char			kallsyms_path[PATH_MAX];
	/* /proc/kallsyms, read beside the conversion: kallsyms_prefetch(). */
	pthread_t		ksyms_thread;
	bool			ksyms_reading;	/* the thread was started */
	struct strbuf		ksyms_text;
	ssize_t			ksyms_read;	/* strbuf_read()'s */
	bool			ksyms_opened;
	void			*tracing_data;
	size_t			tracing_data_size;
	bool			synth_used[SYNTH_MAX];
	struct perf_time_interval *ptime_range;
	int			range_size;
	int			range_num;
	int			err;
	bool			drop_pages;
	u64			round_pos;	/* of the previous round */
	u64			dropped_to;

	/* Per-CPU mode: events in file order, see percpu_in_order(). */
	bool			percpu;
	bool			restart;	/* the order did not hold */
	bool			timed;		/* an event with a time was read */
	u64			max_time;	/* of the events read */
	u64			round_max;	/* max_time at the previous round */
	u64			flushed;	/* what the queue would have flushed */
	struct ordered_events	sideband;	/* task names, kernel maps */
	struct hashmap		*comms;		/* tid -> command line */

	char			*uname;
	char			*version;
	bool			tod;
	bool			unknown_task;	/* an event of tid -1 */

	u64			tracepoints;
	u64			synthesized;
	u64			dropped;
	u64			skipped;
};

static const char synth_common[] =
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

static const char * const synth_name[SYNTH_MAX] = {
	[SYNTH_SAMPLE]		= "sample",
	[SYNTH_LOST]		= "lost",
	[SYNTH_LOST_SAMPLES]	= "lost_samples",
	[SYNTH_AUX]		= "aux",
	[SYNTH_SWITCH]		= "switch",
};

static const char * const synth_fields[SYNTH_MAX] = {
	[SYNTH_SAMPLE] =
	"\tfield:u64 ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 period;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:int pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int tid;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] event;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] callchain;\toffset:36;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"%s ip=%pS pid=%d tid=%d period=%llu%s%s\", __get_str(event), REC->ip, REC->pid, REC->tid, REC->period, __get_dynamic_array_len(callchain) > 1 ? \" callchain=\" : \"\", __get_str(callchain)\n",
	[SYNTH_LOST] =
	"\tfield:u64 id;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 lost;\toffset:16;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"id=%llu lost=%llu\", REC->id, REC->lost\n",
	[SYNTH_LOST_SAMPLES] =
	"\tfield:u64 lost;\toffset:8;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"lost=%llu\", REC->lost\n",
	[SYNTH_AUX] =
	"\tfield:u64 aux_offset;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 aux_size;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 flags;\toffset:24;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"offset=%#llx size=%llu flags=%s\", REC->aux_offset, REC->aux_size, __print_flags(REC->flags, \"|\", {"
	" 0x1, \"TRUNCATED\" }, {"
	" 0x2, \"OVERWRITE\" }, {"
	" 0x4, \"PARTIAL\" }, {"
	" 0x8, \"COLLISION\" }, {"
	" 0x100, \"CORESIGHT_RAW\" })\n",
	[SYNTH_SWITCH] =
	"\tfield:u64 out;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 preempt;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:s64 next_prev_pid;\toffset:24;\tsize:8;\tsigned:1;\n"
	"\tfield:s64 next_prev_tid;\toffset:32;\tsize:8;\tsigned:1;\n\n"
	"print fmt: \"%s%s next_prev_pid=%lld next_prev_tid=%lld\", REC->out ? \"out\" : \"in\", REC->preempt ? \" preempt\" : \"\", REC->next_prev_pid, REC->next_prev_tid\n",
};

/* ftrace clock matching the perf clock of the recording. */
static const char *recording_clock(struct perf_session *session)
{
	struct evsel *evsel = evlist__first(session->evlist);

	if (!evsel || !evsel->core.attr.use_clockid)
		return "perf";	/* local_clock(), ftrace's "perf" clock */

	switch (evsel->core.attr.clockid) {
	case CLOCK_MONOTONIC:
		return "mono";
	case CLOCK_MONOTONIC_RAW:
		return "mono_raw";
	case CLOCK_BOOTTIME:
		return "boot";
	case CLOCK_TAI:
		return "tai";
	default:
		/* No ftrace clock (CLOCK_REALTIME...): still nanoseconds. */
		pr_warning("trace.dat: clockid %d has no ftrace trace clock; writing 'perf'\n",
			   evsel->core.attr.clockid);
		return "perf";
	}
}

/* UNAME as trace-cmd record writes it: "sysname nodename release machine". */
static char *recording_uname(struct perf_env *env)
{
	char *s;

	if (!env->os_release && !env->hostname && !env->arch)
		return NULL;
	if (asprintf(&s, "Linux %s %s %s", env->hostname ?: "(none)",
		     env->os_release ?: "unknown", env->arch ?: "unknown") < 0)
		return NULL;
	return s;
}

/*
 * A recording without tracepoints has no tracing data.  With --all its
 * samples, AUX and LOST records are converted all the same: the formats
 * are the synthetic ones alone, on the ring buffer headers of the
 * recording's kernel (byte order and long size).
 */
static int no_tracing_data(struct convert_trace_dat *c)
{
	struct perf_session *session = c->session;
	bool be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	int long_size;

	if (c->tracing_data)
		return 0;
	if (!c->synthetic) {
		pr_err("%s: no tracing data: record tracepoints (perf record -e sys:event), or convert its samples, AUX and LOST records with --all\n",
		       session->data->path);
		return -1;
	}
	if (session->header.needs_swap)
		be = !be;
	long_size = perf_env__kernel_is_64_bit(perf_session__env(session)) ? 8 : 4;
	c->tracing_data = tdw__empty_tracing_data(be, long_size,
						  &c->tracing_data_size);
	if (!c->tracing_data) {
		pr_err("%s: out of memory\n", session->data->path);
		return -1;
	}
	return 0;
}

static void kallsyms_prefetch(struct convert_trace_dat *c);

static int writer_open(struct convert_trace_dat *c)
{
	struct perf_env *env = perf_session__env(c->session);

	if (no_tracing_data(c))
		return -EINVAL;
	c->wopts.clock = recording_clock(c->session);
	c->wopts.strict_order = c->percpu;
	c->wopts.nr_cpus = env->nr_cpus_avail;
	/*
	 * A count no kernel has (corrupt input: see TDW_MAX_CPUS) would be
	 * the size of the CPU table of the output: the CPUs of the events
	 * make it instead.
	 */
	if (env->nr_cpus_avail > (int)TDW_MAX_CPUS) {
		pr_warning("%s: the recording says %d CPUs, more than the %u the converter takes: ignored\n",
			   c->session->data->path, env->nr_cpus_avail, TDW_MAX_CPUS);
		c->wopts.nr_cpus = 0;
	}
	c->uname = recording_uname(env);
	c->wopts.uname = c->uname;
	if (c->tod) {
		if (!env->clock.enabled) {
			pr_err("Can't provide --tod time, missing clock data. Please record with -k/--clockid option.\n");
			return -EINVAL;
		}
		c->wopts.has_offset = true;
		c->wopts.ts_offset = (s64)(env->clock.tod_ns - env->clock.clockid_ns);
	}
	c->w = tdw__new(c->tracing_data, c->tracing_data_size, &c->wopts);
	if (!c->w)
		return -EINVAL;	/* the writer said why */
	kallsyms_prefetch(c);
	return 0;
}

/*
 * A writer that cannot be made stops the session with the one message
 * said: an error returned to perf would add its own about the event.
 */
static int __create_writer(struct convert_trace_dat *c)
{
	if (!c->err)
		c->err = writer_open(c);
	if (c->err)
		session_done = 1;
	return c->err;
}

/*
 * The writer, on the first event: the recording's metadata is read then.
 * Nonzero: c->err is set and the session stopped, the event callbacks
 * return 0.
 */
static inline int create_writer(struct convert_trace_dat *c)
{
	return c->w ? 0 : __create_writer(c);
}

/*
 * The id of a synthetic event is fixed by its type, whichever comes first,
 * and the formats of those used are added at the end in that order: the
 * file does not depend on the order the events come in.
 */
static int synth_id(struct convert_trace_dat *c, enum synth_event type)
{
	unsigned int id = tdw__next_free_id(c->w) + type;

	/* common_type is a u16. */
	if (id > 0xffff) {
		if (!c->err)
			pr_err("%s: the recording's event ids leave no room for the events of --all\n",
			       c->session->data->path);
		c->err = -EINVAL;
		session_done = 1;
		return -1;
	}
	c->synth_used[type] = true;
	return id;
}

static int add_synth_formats(struct convert_trace_dat *c)
{
	unsigned int base = tdw__next_free_id(c->w);
	int type, ret = 0;
	char *fmt;

	for (type = 0; type < SYNTH_MAX && !ret; type++) {
		if (!c->synth_used[type])
			continue;
		if (asprintf(&fmt, "name: %s\nID: %u\nformat:\n%s%s",
			     synth_name[type], base + type, synth_common,
			     synth_fields[type]) < 0)
			return -ENOMEM;
		ret = tdw__add_synthetic_format(c->w, fmt);
		free(fmt);
	}
	return ret;
}

static unsigned int sample_cpu(const struct perf_sample *sample)
{
	return sample->cpu == (u32)-1 ? 0 : sample->cpu;
}

/*
 * The task of a synthetic event, its common_pid.  Tid 0 is the idle task,
 * which trace-cmd shows as <idle>.  Tid -1 is a task perf cannot name: one
 * that is exiting (the kernel reports -1 once its pid is released), or an
 * event without PERF_SAMPLE_TID.  It is not the idle task: it keeps -1,
 * and gets a command line of its own, "<unknown>".
 */
static s32 sample_pid(struct convert_trace_dat *c,
		      const struct perf_sample *sample)
{
	if (sample->tid == (u32)-1)
		c->unknown_task = true;
	return sample->tid;
}

/*
 * Per-CPU mode.  A trace.dat holds one stream of events per CPU.  In a
 * per-CPU recording (perf record -a, or a workload without --per-thread)
 * the events of a CPU come from one ring buffer, in time order but for an
 * event recorded by an interrupt between the time and the write of
 * another.  perf's ordered-events queue, which sorts every event of the
 * recording, is not needed for that: the events go to the writer in file
 * order, and it puts one that comes a little late in its place.  That is
 * what the queue delivers for each CPU when
 *  - the writer finds the place of every late event in the pages it still
 *    has (it does not in a per-thread recording, where several ring
 *    buffers feed one CPU and their events interleave),
 *  - no event is older than what the queue would have flushed at the
 *    previous FINISHED_ROUND (the queue's "out of order events"),
 *  - no event without a time follows one with a time (the queue delivers
 *    those at once, ahead of the events it holds).
 * Every event is checked as it is read; at the first one that breaks a
 * rule the conversion stops and starts again with the queue.  The events
 * that change what perf knows of tasks and kernel maps (COMM, FORK, EXIT,
 * kernel MMAPs, KSYMBOL...) go through a queue of their own, a small one,
 * so that names and kallsyms come out as with the global queue.
 */
static void percpu_stop(struct convert_trace_dat *c, const char *why, u64 time)
{
	pr_debug("trace.dat: %s, at time %" PRIu64 "\n", why, time);
	pr_debug("trace.dat: converting again with the ordered events queue\n");
	c->restart = true;
	/* The second pass warns about what the recording lost, not this one. */
	c->tool.no_warn = true;
	session_done = 1;
}

static bool untimed(u64 time)
{
	return !time || time == ~0ULL;
}

/* Per-CPU mode: the time of an event that writes nothing to the output. */
static void percpu_note(struct convert_trace_dat *c, u64 time)
{
	if (!c->percpu || untimed(time))
		return;
	c->timed = true;
	if (time > c->max_time)
		c->max_time = time;
}

/* An event that percpu_in_order() does not pass at once. */
static bool percpu_check(struct convert_trace_dat *c, u64 time)
{
	if (untimed(time)) {
		if (!c->timed)
			return true;
		percpu_stop(c, "an event without a time after events with one", time);
		return false;
	}
	percpu_stop(c, "an event older than the previous round", time);
	return false;
}

/*
 * The same for one that does; false if file order does not hold for it.
 * Once per event: the common case inline.
 */
static inline bool percpu_in_order(struct convert_trace_dat *c, u64 time)
{
	if (!c->percpu)
		return true;
	if (unlikely(untimed(time) || time < c->flushed))
		return percpu_check(c, time);
	c->timed = true;
	if (time > c->max_time)
		c->max_time = time;
	return true;
}

/* An error of the writer: of its files (the output, the spill files). */
static void write_error(const struct convert_trace_dat *c, int err)
{
	pr_err("Error writing %s: %s%s\n", c->output_name, strerror(-err),
	       err == -EMFILE ?
	       " (a temporary file for each CPU: raise the limit, ulimit -n)" : "");
}

/* What the writer said of an event: -EAGAIN and -ERANGE are handled here. */
static int writer_error(struct convert_trace_dat *c,
			const struct perf_sample *sample, int ret)
{
	if (ret == -EAGAIN) {
		percpu_stop(c, "events of a CPU too far out of time order",
			    sample->time);
		return 0;
	}
	if (ret == -ERANGE) {
		/* One message: perf would add its own for an error returned. */
		if (!c->err)
			pr_err("%s: event on CPU %u: corrupt input\n",
			       c->session->data->path, sample->cpu);
		c->err = -EINVAL;
		session_done = 1;
		return 0;
	}
	/*
	 * The spill files beside the output: ENOSPC, EIO, ENOMEM.  Stop
	 * here, with this one message.
	 */
	if (!c->err)
		write_error(c, ret);
	c->err = ret;
	session_done = 1;
	return 0;
}

static inline int writer_ret(struct convert_trace_dat *c,
			     const struct perf_sample *sample, int ret)
{
	return likely(ret >= 0) ? ret : writer_error(c, sample, ret);
}

static int add_event(struct convert_trace_dat *c,
		     const struct perf_sample *sample, const void *payload,
		     u32 size)
{
	return writer_ret(c, sample, tdw__add_event(c->w, sample_cpu(sample),
						    sample->time, payload,
						    size));
}

static bool skip_time(struct convert_trace_dat *c,
		      const struct perf_sample *sample)
{
	if (!c->range_num ||
	    !perf_time__ranges_skip_sample(c->ptime_range, c->range_num,
					   sample->time))
		return false;
	c->skipped++;
	return true;
}

static size_t comm_hash(long tid, void *ctx __maybe_unused)
{
	return tid;
}

static bool comm_equal(long a, long b, void *ctx __maybe_unused)
{
	return a == b;
}

/* @tid is named @comm from now on (a copy). */
static int set_comm(struct convert_trace_dat *c, int tid, const char *comm)
{
	char *name = strdup(comm), *old = NULL;
	int ret;

	if (!name)
		return -ENOMEM;
	ret = hashmap__set(c->comms, tid, name, NULL, &old);
	if (ret) {
		free(name);
		return ret;
	}
	free(old);
	return 0;
}

/*
 * A new task @tid takes the name of its parent @ptid, or ":tid" when the
 * parent has none (a parent perf never saw becomes ":ptid"): the names perf
 * report and perf script give such tasks.
 */
static int fork_comm(struct convert_trace_dat *c, int tid, int ptid)
{
	char name[32];
	char *pcomm;
	int ret;

	if (hashmap__find(c->comms, ptid, &pcomm))
		return set_comm(c, tid, pcomm);
	snprintf(name, sizeof(name), ":%d", ptid);
	ret = set_comm(c, ptid, name);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), ":%d", tid);
	return set_comm(c, tid, name);
}

static void free_comms(struct convert_trace_dat *c)
{
	struct hashmap_entry *cur;
	size_t bkt;

	if (!c->comms)
		return;
	hashmap__for_each_entry(c->comms, cur, bkt)
		free(cur->pvalue);
	hashmap__clear(c->comms);
}

static bool user_mmap(const union perf_event *event)
{
	u16 cpumode = event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return (event->header.type == PERF_RECORD_MMAP ||
		event->header.type == PERF_RECORD_MMAP2) &&
	       cpumode != PERF_RECORD_MISC_KERNEL &&
	       cpumode != PERF_RECORD_MISC_GUEST_KERNEL;
}

static void kernel_symbols(struct convert_trace_dat *c, struct machine *machine);

/*
 * What the converter keeps of a side-band event: task names (COMM, FORK,
 * EXIT) in a table of its own, and kernel maps for kallsyms.  Task names
 * are all a trace.dat wants of a task: perf's threads (a namespace and
 * maps for each, looked up in /proc) are not created for them.
 * User-space mappings are of no use in a trace.dat (and mapping the vDSO
 * of every new process reads perf's own /proc/self/maps): left out.
 */
static int deliver_sideband(struct convert_trace_dat *c, union perf_event *event,
			    struct perf_sample *sample, struct machine *machine)
{
	const struct perf_tool *tool = &c->tool;
	int err;

	switch (event->header.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		err = event->header.type == PERF_RECORD_MMAP ?
		      perf_event__process_mmap(tool, event, sample, machine) :
		      perf_event__process_mmap2(tool, event, sample, machine);
		if (!err && !user_mmap(event))
			kernel_symbols(c, machine);
		return err;
	case PERF_RECORD_COMM:
		return set_comm(c, event->comm.tid, event->comm.comm);
	case PERF_RECORD_FORK:
		/* In per-CPU mode the maps were forked in file order. */
		if (c->user_maps && !c->percpu) {
			int ret = perf_event__process_fork(tool, event, sample,
							   machine);

			if (ret)
				return ret;
		}
		return fork_comm(c, event->fork.tid, event->fork.ptid);
	case PERF_RECORD_EXIT:
		/* An exited task keeps its name. */
		return 0;
	case PERF_RECORD_ITRACE_START:
		return perf_event__process_itrace_start(tool, event, sample, machine);
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		return perf_event__process_aux_output_hw_id(tool, event, sample, machine);
	case PERF_RECORD_KSYMBOL:
		return perf_event__process_ksymbol(tool, event, sample, machine);
	case PERF_RECORD_BPF_EVENT:
		return perf_event__process_bpf(tool, event, sample, machine);
	default:
		return 0;
	}
}

/* Side-band events that change nothing the converter writes. */
static bool no_effect(const struct convert_trace_dat *c,
		      const union perf_event *event)
{
	switch (event->header.type) {
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	/* Code bytes, for AUX decoders: nothing is decoded here. */
	case PERF_RECORD_TEXT_POKE:
		return true;
	default:
		return !c->user_maps && user_mmap(event);
	}
}

/* Side-band events that add or remove maps of a task or of the kernel. */
static bool maps_event(const union perf_event *event)
{
	switch (event->header.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
		return true;
	default:
		return false;
	}
}

static int process_sideband(const struct perf_tool *tool, union perf_event *event,
			    struct perf_sample *sample, struct machine *machine)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	int ret;

	if (no_effect(c, event)) {
		percpu_note(c, sample->time);
		return 0;
	}
	if (!percpu_in_order(c, sample->time))
		return 0;
	/*
	 * The maps, user space and kernel ones (modules, BPF programs), for
	 * the callchains of samples, go in file order, which is time order on
	 * each CPU: a sample sees the maps its task had when it was taken, as
	 * perf report sees them without the ordered queue.  The queue would
	 * deliver them rounds after the samples that need them.
	 */
	if (c->user_maps && c->percpu && maps_event(event))
		return deliver_sideband(c, event, sample, machine);
	if (c->user_maps && c->percpu &&
	    event->header.type == PERF_RECORD_FORK) {
		ret = perf_event__process_fork(tool, event, sample, machine);
		if (ret)
			return ret;
	}
	if (c->percpu && machine == &c->session->machines.host) {
		ret = ordered_events__queue(&c->sideband, event, sample->time,
					    0, NULL);
		if (ret != -ETIME)
			return ret;
	}
	return deliver_sideband(c, event, sample, machine);
}

static int sideband_deliver(struct ordered_events *oe,
			    struct ordered_event *oevent)
{
	struct convert_trace_dat *c =
		container_of(oe, struct convert_trace_dat, sideband);
	struct perf_sample sample;
	int ret;

	perf_sample__init(&sample, /*all=*/false);
	ret = evlist__parse_sample(c->session->evlist, oevent->event, &sample);
	if (!ret)
		ret = deliver_sideband(c, oevent->event, &sample,
				       &c->session->machines.host);
	perf_sample__exit(&sample);
	return ret;
}

/* PERF_RECORD_READ and deferred callchains: only their time counts. */
static int process_other(const struct perf_tool *tool,
			 union perf_event *event __maybe_unused,
			 struct perf_sample *sample,
			 struct machine *machine __maybe_unused)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);

	percpu_note(c, sample->time);
	return 0;
}

/* Common fields of a synthetic event, then @nr u64 values. */
static int add_synth(struct convert_trace_dat *c, enum synth_event type,
		     const struct perf_sample *sample, const u64 *vals,
		     int nr)
{
	u8 buf[8 + 4 * 8];
	int id, i;

	if (!c->synthetic)
		return 0;
	id = synth_id(c, type);
	if (id < 0)
		return 0;	/* c->err */
	memset(buf, 0, 8);
	tdw__put16(c->w, buf, id);
	tdw__put32(c->w, buf + 4, sample_pid(c, sample));
	for (i = 0; i < nr; i++)
		tdw__put64(c->w, buf + 8 + 8 * i, vals[i]);
	c->synthesized++;
	return add_event(c, sample, buf, 8 + 8 * nr);
}

/*
 * A side band record as a synthetic event with --all; without it, or
 * outside --time, only its time is noted for the per-CPU order.
 */
static int add_synth_record(struct convert_trace_dat *c, enum synth_event type,
			    const struct perf_sample *sample, const u64 *vals,
			    int nr)
{
	if (skip_time(c, sample) || !c->synthetic) {
		percpu_note(c, sample->time);
		return 0;
	}
	if (!percpu_in_order(c, sample->time) || create_writer(c))
		return 0;
	return add_synth(c, type, sample, vals, nr);
}

/*
 * The longest callchain text of a sample, cut at a frame beyond: with the
 * event name the sample stays within a 4 KiB ring buffer page.
 */
#define CALLCHAIN_TEXT_MAX	3072

/*
 * The callchain of a sample as text, innermost first: "sym+0xoff <- ..."
 * where perf resolves the address from the recording's maps, the address
 * where it cannot.  The context markers (PERF_CONTEXT_*) set the mode the
 * following addresses are resolved in; they are not printed.  A user
 * callchain the kernel defers (PERF_CONTEXT_USER_DEFERRED, then a cookie)
 * comes in a CALLCHAIN_DEFERRED record of its own: the chain ends there,
 * with a marker instead of the cookie.
 */
static int callchain_text(struct perf_sample *sample, struct machine *machine,
			  struct strbuf *sb)
{
	struct ip_callchain *chain = sample->callchain;
	u8 cpumode = sample->cpumode;
	struct thread *thread;
	int ret = 0;
	u64 i;

	if (!chain || !chain->nr)
		return 0;
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	for (i = 0; i < chain->nr; i++) {
		u64 ip = chain->ips[i];
		struct addr_location al;
		size_t len = sb->len;

		if (ip == PERF_CONTEXT_USER_DEFERRED) {
			ret = strbuf_addstr(sb, len ? " <- (user callchain deferred)" :
					    "(user callchain deferred)");
			break;
		}
		if (ip >= PERF_CONTEXT_MAX) {
			if (ip == PERF_CONTEXT_KERNEL)
				cpumode = PERF_RECORD_MISC_KERNEL;
			else if (ip == PERF_CONTEXT_USER)
				cpumode = PERF_RECORD_MISC_USER;
			else if (ip == PERF_CONTEXT_HV)
				cpumode = PERF_RECORD_MISC_HYPERVISOR;
			else if (ip == PERF_CONTEXT_GUEST_KERNEL)
				cpumode = PERF_RECORD_MISC_GUEST_KERNEL;
			else if (ip == PERF_CONTEXT_GUEST_USER)
				cpumode = PERF_RECORD_MISC_GUEST_USER;
			continue;
		}
		addr_location__init(&al);
		if (len && strbuf_addstr(sb, " <- "))
			ret = -ENOMEM;
		else if (thread && thread__find_symbol_fb(thread, cpumode, ip, &al) &&
			 al.sym)
			ret = strbuf_addf(sb, "%s+0x%" PRIx64, al.sym->name,
					  al.addr - al.sym->start);
		else
			ret = strbuf_addf(sb, "0x%" PRIx64, ip);
		addr_location__exit(&al);
		if (ret)
			break;
		if (sb->len > CALLCHAIN_TEXT_MAX) {
			strbuf_setlen(sb, len);
			ret = strbuf_addstr(sb, len ? " <- ..." : "...");
			break;
		}
	}
	thread__put(thread);
	return ret;
}

static int add_synth_sample(struct convert_trace_dat *c,
			    struct perf_sample *sample, struct machine *machine)
{
	const char *name = evsel__name(sample->evsel);
	size_t len = min_t(size_t, strlen(name), 255) + 1, clen;
	struct strbuf chain;
	u8 *buf;
	int id, ret;

	id = synth_id(c, SYNTH_SAMPLE);
	if (id < 0)
		return 0;	/* c->err */
	if (strbuf_init(&chain, 0) || callchain_text(sample, machine, &chain))
		goto nomem;
	clen = chain.len + 1;
	buf = calloc(1, 40 + len + clen);
	if (!buf)
		goto nomem;
	tdw__put16(c->w, buf, id);
	tdw__put32(c->w, buf + 4, sample_pid(c, sample));
	tdw__put64(c->w, buf + 8, sample->ip);
	tdw__put64(c->w, buf + 16, sample->period);
	tdw__put32(c->w, buf + 24, sample->pid);
	tdw__put32(c->w, buf + 28, sample->tid);
	tdw__put32(c->w, buf + 32, (len << 16) | 40);
	tdw__put32(c->w, buf + 36, (clen << 16) | (40 + len));
	memcpy(buf + 40, name, len - 1);
	if (chain.len)
		memcpy(buf + 40 + len, chain.buf, chain.len);
	strbuf_release(&chain);
	c->synthesized++;
	ret = add_event(c, sample, buf, 40 + len + clen);
	free(buf);
	return ret;
nomem:
	strbuf_release(&chain);
	pr_err("%s: out of memory\n", c->session->data->path);
	return c->err = -ENOMEM;
}

static int process_sample_event(const struct perf_tool *tool,
				union perf_event *event __maybe_unused,
				struct perf_sample *sample,
				struct machine *machine)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	struct evsel *evsel = sample->evsel;
	bool tp = evsel->core.attr.type == PERF_TYPE_TRACEPOINT &&
		  sample->raw_data && sample->raw_size;

	if (skip_time(c, sample)) {
		percpu_note(c, sample->time);
		return 0;
	}
	if (!tp && !c->synthetic)
		percpu_note(c, sample->time);
	else if (!percpu_in_order(c, sample->time))
		return 0;
	if (create_writer(c))
		return 0;

	if (tp) {
		c->tracepoints++;
		return add_event(c, sample, sample->raw_data,
				 sample->raw_size);
	}
	if (!c->synthetic) {
		c->dropped++;
		return 0;
	}
	return add_synth_sample(c, sample, machine);
}

static int process_lost(const struct perf_tool *tool, union perf_event *event,
			struct perf_sample *sample, struct machine *machine)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	u64 vals[2] = { event->lost.id, event->lost.lost };
	int ret;

	ret = perf_event__process_lost(tool, event, sample, machine);
	if (ret)
		return ret;
	if (skip_time(c, sample) ||
	    (sample->cpu == (u32)-1 && !c->synthetic)) {
		percpu_note(c, sample->time);
		return 0;
	}
	if (!percpu_in_order(c, sample->time) || create_writer(c))
		return 0;
	if (sample->cpu != (u32)-1) {
		ret = writer_ret(c, sample, tdw__mark_lost(c->w, sample->cpu,
							   sample->time));
		if (ret || c->restart || c->err)
			return ret;
	}
	return add_synth(c, SYNTH_LOST, sample, vals, 2);
}

static int process_lost_samples(const struct perf_tool *tool,
				union perf_event *event,
				struct perf_sample *sample,
				struct machine *machine __maybe_unused)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	u64 val = event->lost_samples.lost;

	return add_synth_record(c, SYNTH_LOST_SAMPLES, sample, &val, 1);
}

static int process_aux(const struct perf_tool *tool, union perf_event *event,
		       struct perf_sample *sample,
		       struct machine *machine __maybe_unused)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	u64 vals[3] = {
		event->aux.aux_offset, event->aux.aux_size, event->aux.flags,
	};

	return add_synth_record(c, SYNTH_AUX, sample, vals, 3);
}

/*
 * PERF_RECORD_SWITCH and _SWITCH_CPU_WIDE (perf record --switch-events; AUX
 * PMUs such as cs_etm and intel_pt record them anyway) as perf:switch
 * events with --all: when the recording's tasks ran, for a recording
 * without sched tracepoints. next_prev_pid/tid are -1 for a per-task
 * switch record, which does not name the other task.
 */
static int process_switch(const struct perf_tool *tool, union perf_event *event,
			  struct perf_sample *sample,
			  struct machine *machine __maybe_unused)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	bool cpu_wide = event->header.type == PERF_RECORD_SWITCH_CPU_WIDE;
	u64 vals[4] = {
		!!(event->header.misc & PERF_RECORD_MISC_SWITCH_OUT),
		!!(event->header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT),
		cpu_wide ? (u64)(s64)(s32)event->context_switch.next_prev_pid : (u64)-1,
		cpu_wide ? (u64)(s64)(s32)event->context_switch.next_prev_tid : (u64)-1,
	};

	return add_synth_record(c, SYNTH_SWITCH, sample, vals, 4);
}

/*
 * On 64-bit hosts perf's reader maps the whole input at once and keeps
 * every page it has read: the peak RSS would grow with the input.  Events
 * before the previous FINISHED_ROUND have been queued and, mostly,
 * delivered; let the kernel drop their pages.  The mapping is shared and
 * read-only, so a page that is still needed is faulted back in from the
 * page cache.  In steps of DROP_STEP bytes: each madvise() flushes the TLB
 * of every CPU that runs the process, and a round is often less than a
 * megabyte.
 */
#define DROP_STEP	(32ULL << 20)

static int process_finished_round(const struct perf_tool *tool,
				  union perf_event *event,
				  struct ordered_events *oe)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	struct perf_session *session = c->session;
	u8 *base = session->one_mmap_addr, *pos = (u8 *)event;
	int ret = perf_event__process_finished_round(tool, event, oe);
	u64 end;

	if (!ret && c->percpu) {
		/* What the queue would flush now: see percpu_in_order(). */
		c->flushed = c->round_max;
		c->round_max = c->max_time;
		ret = ordered_events__flush_time(&c->sideband, c->flushed);
	}
	if (ret || !c->drop_pages || !session->one_mmap || !base ||
	    pos < base || pos >= base + session->one_mmap_size)
		return ret;
	end = round_down(c->round_pos, page_size);
	if (end >= c->dropped_to + DROP_STEP) {
		madvise(base + c->dropped_to, end - c->dropped_to,
			MADV_DONTNEED);
		c->dropped_to = end;
	}
	c->round_pos = pos - base;
	return 0;
}

/*
 * Pipe mode: the tracing data follows the event in the stream.  Keep a
 * copy and let perf parse it from a memfd as if it came from the pipe.
 */
static int process_tracing_data(const struct perf_tool *tool,
				struct perf_session *session,
				union perf_event *event)
{
	struct convert_trace_dat *c =
		container_of(tool, struct convert_trace_dat, tool);
	u32 size = event->tracing_data.size;
	int fd = perf_data__fd(session->data);
	int ret = size;
	void *buf;

	if (!perf_data__is_pipe(session->data)) {
#ifdef HAVE_LIBTRACEEVENT
		return perf_event__process_tracing_data(tool, session, event);
#else
		return 0;
#endif
	}
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	if (readn(fd, buf, size) != (ssize_t)size) {
		/* The stream ends here: stop without a second message. */
		pr_err("%s: unexpected end of event stream in the tracing data\n",
		       session->data->path);
		free(buf);
		c->err = -EIO;
		return size;
	}
	/* The writer keeps pointers into the tracing data it was made with. */
	if (c->w) {
		pr_err("%s: tracing data after the first event: corrupt input\n",
		       session->data->path);
		free(buf);
		c->err = -EINVAL;
		session_done = 1;
		return size;
	}
	free(c->tracing_data);
	c->tracing_data = buf;
	c->tracing_data_size = size;

#ifdef HAVE_LIBTRACEEVENT
	{
		int memfd = memfd_create("perf-tracing-data", 0);

		if (memfd < 0)
			return -errno;
		if (writen(memfd, buf, size) != (ssize_t)size ||
		    lseek(memfd, 0, SEEK_SET) < 0) {
			close(memfd);
			return -EIO;
		}
		session->data->file.fd = memfd;
		ret = perf_event__process_tracing_data(tool, session, event);
		session->data->file.fd = fd;
		close(memfd);
	}
#endif
	return ret;
}

static int read_tracing_feature(struct perf_file_section *section,
				struct perf_header *ph __maybe_unused,
				int feat, int fd, void *data)
{
	struct convert_trace_dat *c = data;

	if (feat != HEADER_TRACING_DATA)
		return 0;
	c->tracing_data = malloc(section->size);
	if (!c->tracing_data)
		return -ENOMEM;
	if (pread(fd, c->tracing_data, section->size, section->offset) !=
	    (ssize_t)section->size) {
		zfree(&c->tracing_data);
		return -EIO;
	}
	c->tracing_data_size = section->size;
	return 0;
}

/* A command line for every task named by the recording. */
static int add_cmdlines(struct convert_trace_dat *c)
{
	struct hashmap_entry *cur;
	size_t bkt;
	int ret;

	hashmap__for_each_entry(c->comms, cur, bkt) {
		if (cur->key < 0)
			continue;
		ret = tdw__add_cmdline(c->w, cur->key, cur->pvalue);
		if (ret)
			return ret;
	}
	return 0;
}

/* One /proc/kallsyms line per symbol of @map, with "\t[module]" for modules. */
struct kallsyms_out {
	FILE		*f;
	struct map	*kernel;
};

static int kallsyms_map(struct map *map, void *data)
{
	struct kallsyms_out *out = data;
	FILE *f = out->f;
	struct dso *dso = map__dso(map);
	const char *mod = NULL;
	struct symbol *sym;
	struct rb_node *nd;

	if (!dso || dso__kernel(dso) != DSO_SPACE__KERNEL || !dso__loaded(dso))
		return 0;
	if (map != out->kernel)
		mod = dso__short_name(dso);
	map__for_each_symbol(map, sym, nd) {
		char type = symbol__type(sym) == STT_OBJECT ? 'd' : 't';

		if (symbol__binding(sym) != STB_LOCAL)
			type = toupper(type);
		if (mod)
			fprintf(f, "%016" PRIx64 " %c %s\t%s\n",
				map__unmap_ip(map, sym->start), type, sym->name,
				mod);
		else
			fprintf(f, "%016" PRIx64 " %c %s\n",
				map__unmap_ip(map, sym->start), type, sym->name);
	}
	return 0;
}

/*
 * Whether the recording was made on the machine that converts it: the
 * host name and kernel release in its header are this machine's.  Read
 * before anything (symbol__init()) fills a missing release from uname().
 */
static bool recorded_here(struct perf_env *env)
{
	struct utsname uts;

	return env->hostname && env->os_release && !uname(&uts) &&
	       !strcmp(env->hostname, uts.nodename) &&
	       !strcmp(env->os_release, uts.release);
}

/*
 * Whether a kallsyms text has @ref where the recording's kernel had it:
 * addresses hidden by kptr_restrict, another boot (KASLR) or another
 * kernel fail.
 */
static bool kallsyms_matches(const char *p, const char *end,
			     const struct ref_reloc_sym *ref)
{
	size_t nlen = strlen(ref->name);

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p) ?: end;
		char *sym;
		u64 addr = strtoull(p, &sym, 16);

		/* "ADDR T NAME" */
		if (sym + 3 + nlen == nl && sym[0] == ' ' && sym[2] == ' ' &&
		    toupper(sym[1]) == 'T' && !memcmp(sym + 3, ref->name, nlen))
			return addr && addr == ref->addr;
		p = nl + 1;
	}
	return false;
}

static const char proc_kallsyms[] = "/proc/kallsyms";

/*
 * The kallsyms file of the recording's kernel: /proc/kallsyms when that
 * kernel runs here (its build-id; without one, a recording made here),
 * else the copy perf record put in the build-id cache.  NULL when there
 * is none: perf would fall back to this machine's /proc/kallsyms, the
 * symbols of another kernel.
 */
static const char *kallsyms_file(struct convert_trace_dat *c, struct dso *kdso,
				 char *path, size_t size)
{
	char sbuild_id[SBUILD_ID_SIZE];
	struct build_id bid;

	if (!dso__has_build_id(kdso))
		return c->this_machine ? proc_kallsyms : NULL;
	if (!sysfs__read_build_id("/sys/kernel/notes", &bid) &&
	    dso__build_id_equal(kdso, &bid))
		return proc_kallsyms;
	build_id__snprintf(dso__bid(kdso), sbuild_id, sizeof(sbuild_id));
	if (build_id_cache__kallsyms_path(sbuild_id, path, size))
		return path;
	return NULL;
}

/*
 * Without a kallsyms file of the recording's kernel: a vmlinux with its
 * build-id where perf looks for one (vmlinux_path, the build-id cache;
 * dso__load_vmlinux() checks the build-id).  Otherwise the kernel map
 * stays empty, marked loaded so that nothing (a callchain, a TEXT_POKE)
 * falls back to this machine's /proc/kallsyms.
 */
static bool kernel_vmlinux(struct convert_trace_dat *c, struct map *kmap)
{
	struct dso *kdso = map__dso(kmap);

	if (dso__loaded(kdso))
		return dso__has_symbols(kdso);
	if (dso__has_build_id(kdso) &&
	    symbol__init(perf_session__env(c->session)) >= 0 &&
	    dso__load_vmlinux_path(kdso, kmap) > 0)
		return true;
	dso__set_loaded(kdso);
	return false;
}

/* Once, when the kernel's symbols are wanted and there are none. */
static void no_kernel_symbols(struct convert_trace_dat *c, struct map *kmap)
{
	struct perf_env *env = perf_session__env(c->session);
	struct dso *kdso = map__dso(kmap);
	char sbuild_id[SBUILD_ID_SIZE];

	if (c->ksyms_warned)
		return;
	c->ksyms_warned = true;
	if (!dso__has_build_id(kdso)) {
		pr_warning("trace.dat: the recording has no kernel build-id and was made on another machine (%s, %s): kernel addresses left unresolved, kallsyms empty\n",
			   env->hostname ?: "unknown host",
			   env->os_release ?: "unknown kernel");
		return;
	}
	build_id__snprintf(dso__bid(kdso), sbuild_id, sizeof(sbuild_id));
	pr_warning("trace.dat: the recording's kernel (build-id %s) does not run here and neither the build-id cache nor a vmlinux has its symbols: kernel addresses left unresolved, kallsyms empty\n",
		   sbuild_id);
}

/*
 * The symbols of the recording's kernel, for kallsyms and the kernel
 * frames of --all's callchains, chosen when its kernel map appears
 * (PERF_RECORD_MMAP), before a sample can load them: a perf record
 * --kcore recording's own kallsyms (perf_session__new() puts them in
 * symbol_conf.kallsyms_name), else kallsyms_file()'s, kept in
 * symbol_conf.kallsyms_name for the kernel map to load, as perf report
 * --kallsyms=FILE does; else kernel_vmlinux(), whose vmlinux search
 * finds nothing in the common case of a recording of another machine.
 * Once per session: a second one (-EAGAIN, percpu_restart()) has a
 * kernel map of its own.
 */
static void kernel_symbols(struct convert_trace_dat *c, struct machine *machine)
{
	struct map *kmap;

	if (c->ksyms_done || machine != &c->session->machines.host)
		return;
	kmap = machine__kernel_map(machine);
	if (!kmap)
		return;
	c->ksyms_done = true;
	if (!c->kallsyms_chosen) {
		c->kallsyms_chosen = true;
		c->kallsyms = symbol_conf.kallsyms_name ?:
			      kallsyms_file(c, map__dso(kmap), c->kallsyms_path,
					    sizeof(c->kallsyms_path));
		if (c->kallsyms)
			symbol_conf.kallsyms_name = c->kallsyms;
	}
	if (!c->kallsyms && !kernel_vmlinux(c, kmap) && c->user_maps)
		no_kernel_symbols(c, kmap);
}

/* Whether add_kallsyms() is to read /proc/kallsyms, as far as known yet. */
static bool kallsyms_here(struct convert_trace_dat *c)
{
	if (c->kallsyms_chosen)
		return c->kallsyms && !strcmp(c->kallsyms, proc_kallsyms);
	return c->this_machine && !symbol_conf.kallsyms_name;
}

static void *kallsyms_read(void *arg)
{
	struct convert_trace_dat *c = arg;
	int fd = open(proc_kallsyms, O_RDONLY);

	c->ksyms_opened = fd >= 0;
	if (fd < 0)
		return NULL;
	c->ksyms_read = strbuf_read(&c->ksyms_text, fd, 1 << 20);
	close(fd);
	return NULL;
}

/*
 * /proc/kallsyms takes the kernel tens of milliseconds to print: when
 * add_kallsyms() is likely to want it, read it on a thread of its own
 * from the first event on.  Every signal is blocked there: they are for
 * this thread, whose handler removes the output.
 */
static void kallsyms_prefetch(struct convert_trace_dat *c)
{
	sigset_t all, saved;

	if (c->ksyms_reading || tdw__has_kallsyms(c->w) ||
	    !tdw__prints_symbols(c->w) || !kallsyms_here(c))
		return;
	strbuf_init(&c->ksyms_text, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	c->ksyms_reading = !pthread_create(&c->ksyms_thread, NULL,
					   kallsyms_read, c);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/*
 * Wait for kallsyms_prefetch()'s thread: the text it read into @sb and
 * strbuf_read()'s return into @n, or, without @sb, the text dropped.
 * False if it could not open the file.
 */
static bool kallsyms_prefetched(struct convert_trace_dat *c,
				struct strbuf *sb, ssize_t *n)
{
	if (!c->ksyms_reading)
		return false;
	pthread_join(c->ksyms_thread, NULL);
	c->ksyms_reading = false;
	if (sb) {
		*sb = c->ksyms_text;
		*n = c->ksyms_read;
		strbuf_init(&c->ksyms_text, 0);
	} else {
		strbuf_release(&c->ksyms_text);
	}
	return c->ksyms_opened;
}

/*
 * @file as the kernel printed it, which is what trace-cmd stores, if it
 * has the kernel's reference symbol (_text) where the recording does (the
 * same boot, or a boot without KASLR).  Reading it as is saves loading
 * every symbol into the kernel map and printing it again, which takes
 * several times longer.  NULL otherwise.
 */
static char *kallsyms_text(struct convert_trace_dat *c, const char *file,
			   const struct kmap *km, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	ssize_t n = -1;
	int fd;

	if (!km || !km->ref_reloc_sym || !km->ref_reloc_sym->name) {
		kallsyms_prefetched(c, NULL, NULL);
		return NULL;
	}
	if (c->ksyms_reading && !strcmp(file, proc_kallsyms)) {
		if (!kallsyms_prefetched(c, &sb, &n))
			return NULL;
	} else {
		kallsyms_prefetched(c, NULL, NULL);
		fd = open(file, O_RDONLY);
		if (fd < 0)
			return NULL;
		n = strbuf_read(&sb, fd, 1 << 20);
		close(fd);
	}
	if (n <= 0 || sb.buf[sb.len - 1] != '\n' ||
	    !kallsyms_matches(sb.buf, sb.buf + sb.len, km->ref_reloc_sym)) {
		pr_debug("trace.dat: %s not used for kallsyms as it is\n", file);
		strbuf_release(&sb);
		return NULL;
	}
	pr_debug("trace.dat: kallsyms from %s\n", file);
	return strbuf_detach(&sb, len);
}

/*
 * perf record stores no kallsyms in the tracing data.  When an event
 * format prints a symbol, write the symbols of the recording's kernel
 * (kernel_symbols()) so that %pS and %ps fields resolve in trace-cmd:
 * the kallsyms text as it is when the addresses are the recording's,
 * else loaded into the kernel map, which relocates them to the
 * recording's addresses, and printed from there.  Reading them takes
 * longer than converting a small recording, so not otherwise.
 */
static void add_kallsyms(struct convert_trace_dat *c)
{
	struct perf_env *env = perf_session__env(c->session);
	struct machine *machine = &c->session->machines.host;
	struct map *kmap = machine__kernel_map(machine);
	struct kallsyms_out out = { .kernel = kmap };
	char *text = NULL;
	size_t len = 0;

	if (tdw__has_kallsyms(c->w) || !tdw__prints_symbols(c->w) || !kmap) {
		kallsyms_prefetched(c, NULL, NULL);
		return;
	}
	kernel_symbols(c, machine);
	if (c->kallsyms) {
		text = kallsyms_text(c, c->kallsyms, map__kmap(kmap), &len);
		if (text) {
			tdw__set_kallsyms(c->w, text, len);
			return;
		}
		if (symbol__init(env) < 0 || map__load(kmap) < 0) {
			pr_warning("trace.dat: cannot load the kernel symbols of %s: kallsyms left empty\n",
				   c->kallsyms);
			return;
		}
	} else if (!kernel_vmlinux(c, kmap)) {
		no_kernel_symbols(c, kmap);
		return;
	}
	out.f = open_memstream(&text, &len);
	if (!out.f)
		return;
	maps__for_each_map(machine__kernel_maps(machine), kallsyms_map, &out);
	if (fclose(out.f) || !len) {
		free(text);
		return;
	}
	tdw__set_kallsyms(c->w, text, len);
}

/*
 * Per-CPU mode needs a file (a second pass may be needed), one stream of
 * data (the readers of a directory take turns), and no AUX area data (its
 * decoders need the ordered queue).
 */
static bool percpu_possible(struct perf_session *session)
{
	return !perf_data__is_pipe(session->data) &&
	       !perf_data__is_dir(session->data) &&
	       !perf_header__has_feat(&session->header, HEADER_AUXTRACE);
}

/* Back to the state before the first pass, for one with the ordered queue. */
static void percpu_restart(struct convert_trace_dat *c)
{
	perf_session__delete(c->session);
	c->session = NULL;
	ordered_events__reinit(&c->sideband);
	c->ksyms_done = false;
	free_comms(c);
	tdw__delete(c->w);
	c->w = NULL;
	zfree(&c->uname);
	memset(c->synth_used, 0, sizeof(c->synth_used));
	c->err = 0;
	c->round_pos = 0;
	c->dropped_to = 0;
	c->tracepoints = 0;
	c->synthesized = 0;
	c->dropped = 0;
	c->skipped = 0;
	c->unknown_task = false;
	c->percpu = false;
	c->restart = false;
	c->tool.no_warn = false;
}

static int parse_compression(const char *name, enum tdw_compression *comp)
{
	if (!name || !strcmp(name, "none")) {
		*comp = TDW_COMP_NONE;
		return 0;
	}
	if (!strcmp(name, "zstd")) {
#ifdef HAVE_ZSTD_SUPPORT
		*comp = TDW_COMP_ZSTD;
		return 0;
#else
		pr_err("zstd support is not compiled in (libzstd-dev).\n");
		return -1;
#endif
	}
	if (!strcmp(name, "zlib")) {
#ifdef HAVE_ZLIB_SUPPORT
		*comp = TDW_COMP_ZLIB;
		return 0;
#else
		pr_err("zlib support is not compiled in (zlib1g-dev).\n");
		return -1;
#endif
	}
	pr_err("Unknown trace.dat compression '%s' (none, zlib or zstd).\n",
	       name);
	return -1;
}

/*
 * SIGINT, SIGTERM and SIGHUP remove the temporary output, say so, then end
 * perf as they would have without a handler (the exit status shows the
 * signal), wherever the conversion is: also while it waits for a pipe,
 * which perf's reader reads again after EINTR.  The handler calls only
 * async-signal-safe functions.  A signal that perf was started with
 * ignored (nohup, a background job of a script) stays ignored.
 */
static const int convert_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static char convert_tmp[PATH_MAX];	/* the file to remove, "" = none */
static char convert_msg[PATH_MAX + 64];
static size_t convert_msg_len;

static void convert_interrupt(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	ssize_t n __maybe_unused;

	if (convert_tmp[0])
		unlink(convert_tmp);
	if (convert_msg_len)
		n = write(STDERR_FILENO, convert_msg, convert_msg_len);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void convert_signals(bool on)
{
	static struct sigaction old[ARRAY_SIZE(convert_sigs)];
	static bool installed[ARRAY_SIZE(convert_sigs)];
	struct sigaction sa = { .sa_handler = convert_interrupt };
	size_t i;

	sigfillset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(convert_sigs); i++) {
		if (on && !installed[i]) {
			if (sigaction(convert_sigs[i], NULL, &old[i]) ||
			    old[i].sa_handler == SIG_IGN)
				continue;
			installed[i] = !sigaction(convert_sigs[i], &sa, NULL);
		} else if (!on && installed[i]) {
			sigaction(convert_sigs[i], &old[i], NULL);
			installed[i] = false;
		}
	}
}

/*
 * Hold the signals while the temporary output is created or takes the
 * output's name, so that the handler finds the file it has to remove.
 */
static void convert_signals_hold(bool hold, sigset_t *saved)
{
	sigset_t set;
	size_t i;

	if (!hold) {
		pthread_sigmask(SIG_SETMASK, saved, NULL);
		return;
	}
	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(convert_sigs); i++)
		sigaddset(&set, convert_sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, saved);
}

/*
 * The output: written to a temporary file beside it, which takes its
 * name only when complete, so that a failed or interrupted conversion
 * leaves no partial trace.dat and the file --force would replace stays
 * until then.  The temporary file has no name (O_TMPFILE) until then:
 * perf killed by a signal no handler sees (SIGKILL, a crash) leaves
 * nothing either.  Where it cannot be made so (file system, kernel, no
 * /proc to link it from), it is a named file, removed on SIGINT, SIGTERM
 * and SIGHUP.  The writer seeks back to patch section offsets: the output
 * must be a regular file.  A symlink is followed, and its target is
 * replaced.
 */
struct trace_dat_output {
	char	*path;		/* the output, symlinks resolved */
	char	*dir;		/* its directory, for the spill files too */
	char	*tmp;		/* the temporary file's name, if it has one */
	int	unnamed;	/* else the unnamed file, for linkat(), or -1 */
	FILE	*file;
	bool	force;
};

/*
 * The temporary file without a name, in @o->dir.  It gets one with
 * linkat(): of the file itself (AT_EMPTY_PATH: with CAP_DAC_READ_SEARCH,
 * or for a file the caller opened since Linux 6.10), else of its
 * /proc/self/fd link.
 */
static int output_unnamed(struct trace_dat_output *o __maybe_unused)
{
#ifdef O_TMPFILE
	return open(o->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
#else
	errno = EOPNOTSUPP;
	return -1;
#endif
}

static int output_link(int fd, const char *path)
{
	char proc[64];

#ifdef AT_EMPTY_PATH
	if (!linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH))
		return 0;
	if (errno != EPERM && errno != ENOENT)
		return -1;
#endif
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/*
 * A named temporary file beside the output, @o->tmp, which the signal
 * handler removes, with the mode an unnamed one gets from the umask.
 */
static int output_named(struct trace_dat_output *o)
{
	sigset_t saved;
	mode_t mask;
	int fd, err;

	if (asprintf(&o->tmp, "%s.tmpXXXXXX", o->path) < 0) {
		o->tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	convert_signals_hold(true, &saved);
	fd = mkstemp(o->tmp);
	err = errno;
	if (fd >= 0 && strlen(o->tmp) < sizeof(convert_tmp))
		memcpy(convert_tmp, o->tmp, strlen(o->tmp) + 1);
	convert_signals_hold(false, &saved);
	if (fd < 0) {
		zfree(&o->tmp);
		errno = err;
		return -1;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask))
		pr_debug("trace.dat: fchmod %s: %s\n", o->tmp, strerror(errno));
	return fd;
}

static int output_open(struct trace_dat_output *o, const char *name,
		       bool force)
{
	struct stat st;
	sigset_t saved;
	size_t len;
	char *copy;
	int fd;

	o->force = force;
	if (!lstat(name, &st) && S_ISLNK(st.st_mode) && stat(name, &st) &&
	    errno == ENOENT) {
		pr_err("%s is a symbolic link to a file that does not exist: give the file to write\n",
		       name);
		return -1;
	}
	if (!stat(name, &st)) {
		if (S_ISDIR(st.st_mode)) {
			pr_err("%s is a directory: give the name of the trace.dat file to write\n",
			       name);
			return -1;
		}
		/* What --force cannot change first. */
		if (!S_ISREG(st.st_mode)) {
			pr_err("%s is not a regular file: a trace.dat is written to a file (it is not a stream)\n",
			       name);
			return -1;
		}
		if (!force) {
			pr_err("Output file %s exists. Use --force to overwrite it.\n",
			       name);
			return -1;
		}
		o->path = realpath(name, NULL);
		if (!o->path) {
			pr_err("Cannot create output file %s: %s\n", name,
			       strerror(errno));
			return -1;
		}
	} else if (errno == ENOENT) {
		o->path = strdup(name);
	} else {
		pr_err("Cannot create output file %s: %s\n", name,
		       strerror(errno));
		return -1;
	}
	copy = o->path ? strdup(o->path) : NULL;
	o->dir = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	if (!o->dir) {
		pr_err("out of memory\n");
		return -1;
	}
	len = scnprintf(convert_msg, sizeof(convert_msg),
			"perf data convert: interrupted, %s not written\n",
			name);
	convert_signals_hold(true, &saved);
	convert_msg_len = len;
	convert_signals_hold(false, &saved);
	fd = output_unnamed(o);
	/* Kept open to be linked after the writer's fclose(). */
	if (fd >= 0) {
		o->unnamed = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (o->unnamed < 0) {
			pr_err("Cannot create output file %s: %s\n", name,
			       strerror(errno));
			close(fd);
			return -1;
		}
	} else {
		fd = output_named(o);
		if (fd < 0) {
			pr_err("Cannot create output file %s: %s\n", name,
			       strerror(errno));
			return -1;
		}
	}
	o->file = fdopen(fd, "w");
	if (!o->file) {
		pr_err("Cannot create output file %s: %s\n", name,
		       strerror(errno));
		close(fd);
		return -1;
	}
	return 0;
}

/* renameat2(RENAME_EXCHANGE): @a and @b swap names in one step. */
static int rename_exchange(const char *a __maybe_unused,
			   const char *b __maybe_unused)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 28)
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
	errno = EOPNOTSUPP;
	return -1;
#endif
}

/*
 * With --force, the unnamed file takes a temporary name beside the
 * output (OUT.tmp and six characters, as mkstemp() makes them), to be
 * swapped with it.  The signals are held.
 */
static int output_name_tmp(struct trace_dat_output *o)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec ts;
	u64 x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = (u64)ts.tv_nsec << 20 ^ ts.tv_sec ^ (u64)getpid() << 40;
	for (unsigned int i = 0; i < 100; i++) {
		char *tmp;

		if (asprintf(&tmp, "%s.tmpXXXXXX", o->path) < 0) {
			errno = ENOMEM;
			return -1;
		}
		for (char *p = tmp + strlen(tmp) - 6; *p; p++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			*p = chars[x % (sizeof(chars) - 1)];
		}
		if (!output_link(o->unnamed, tmp)) {
			o->tmp = tmp;
			if (strlen(tmp) < sizeof(convert_tmp))
				memcpy(convert_tmp, tmp, strlen(tmp) + 1);
			return 0;
		}
		free(tmp);
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * Where the unnamed file cannot be linked (a file system without hard
 * links, no /proc and no right to AT_EMPTY_PATH), its data go to a named
 * temporary file, which then takes the name.  The caller holds the
 * signals; the copy, as long as the file is large, runs with the mask of
 * before (@unheld) once the handler knows the file to remove.
 */
static int output_copy_named(struct trace_dat_output *o,
			     const sigset_t *unheld)
{
	off_t in = 0, out = 0, size;
	char buf[65536];
	sigset_t held;
	int fd, err = 0;

	size = lseek(o->unnamed, 0, SEEK_END);
	fd = size < 0 ? -1 : output_named(o);
	if (fd < 0)
		return -1;
	pthread_sigmask(SIG_SETMASK, !strcmp(convert_tmp, o->tmp) ? unheld : NULL,
			&held);
	while (in < size) {
		ssize_t n = copy_file_range(o->unnamed, &in, fd, &out,
					    size - in, 0);

		if (n <= 0)
			break;
	}
	/* Where the kernel cannot copy between the two. */
	while (in < size && !err) {
		ssize_t n = pread(o->unnamed, buf,
				  min_t(off_t, sizeof(buf), size - in), in);

		if (n <= 0) {
			err = n ? errno : EIO;
			break;
		}
		/* A short write is tried again: the next one says why. */
		for (ssize_t done = 0, w; done < n && !err; done += w) {
			w = pwrite(fd, buf + done, n - done, out + done);
			if (w <= 0)
				err = w ? errno : EIO;
		}
		in += n;
		out += n;
	}
	if (close(fd) && !err)
		err = errno;
	pthread_sigmask(SIG_SETMASK, &held, NULL);
	errno = err;
	return err ? -1 : 0;
}

/*
 * The complete file takes the name.  The unnamed file is linked to it
 * without --force, which fails if a file of that name appeared
 * meanwhile; with --force it gets a temporary name first.  A named one
 * is linked (without --force) or swapped with the old file (--force),
 * then the old one is removed: a rename() over the old file would make
 * ext4 (auto_da_alloc) write the whole new file to disk inside it (86 ms
 * for a 100 MB trace.dat).  Where they cannot be swapped (file system, C
 * library), rename() replaces it.  Where the names cannot be linked,
 * rename() after a check without --force.  @unheld: the signal mask of
 * before the caller's hold, for output_copy_named().
 */
static int output_rename(struct trace_dat_output *o, const sigset_t *unheld)
{
	int err;

	if (!o->tmp) {
		if (!o->force && !output_link(o->unnamed, o->path))
			return 0;
		if (o->force && !output_name_tmp(o))
			goto named;
		err = errno;
		if (err == EEXIST && !o->force)
			goto exists;
		if (output_copy_named(o, unheld)) {
			err = errno;
			goto fail;
		}
	}
named:
	if (!o->force) {
		if (!link(o->tmp, o->path))
			return 0;
		err = errno;
		if (err == EEXIST)
			goto exists;
		/* No hard links on this file system: check, then rename. */
		if ((err != EPERM && err != EOPNOTSUPP) ||
		    !access(o->path, F_OK))
			goto fail;
	} else if (!rename_exchange(o->tmp, o->path)) {
		return 0;	/* o->tmp is the old file now */
	}
	if (!rename(o->tmp, o->path)) {
		zfree(&o->tmp);
		return 0;
	}
	err = errno;
fail:
	pr_err("Error writing %s: %s\n", o->path, strerror(err));
	return -1;
exists:
	pr_err("Output file %s exists. Use --force to overwrite it.\n",
	       o->path);
	return -1;
}

static int output_commit(struct trace_dat_output *o)
{
	sigset_t saved;
	int ret;

	convert_signals_hold(true, &saved);
	ret = output_rename(o, &saved);
	if (!ret) {
		if (o->tmp)
			unlink(o->tmp);
		zfree(&o->tmp);
		convert_tmp[0] = '\0';
		convert_msg_len = 0;
	}
	convert_signals_hold(false, &saved);
	return ret;
}

static void output_close(struct trace_dat_output *o)
{
	sigset_t saved;

	/* The last close of an unnamed file frees it: no signal held. */
	if (o->file)
		fclose(o->file);
	if (o->unnamed >= 0)
		close(o->unnamed);
	convert_signals_hold(true, &saved);
	if (o->tmp)
		unlink(o->tmp);
	convert_tmp[0] = '\0';
	convert_msg_len = 0;
	convert_signals_hold(false, &saved);
	free(o->tmp);
	free(o->dir);
	free(o->path);
}

/* The tool: what each kind of record becomes. */
static void convert_tool_init(struct convert_trace_dat *c)
{
	perf_tool__init(&c->tool, /*ordered_events=*/true);
	c->tool.sample		= process_sample_event;
	c->tool.read		= process_other;
	c->tool.callchain_deferred = process_other;
	c->tool.mmap		= process_sideband;
	c->tool.mmap2		= process_sideband;
	c->tool.comm		= process_sideband;
	c->tool.namespaces	= process_sideband;
	c->tool.cgroup		= process_sideband;
	c->tool.fork		= process_sideband;
	c->tool.exit		= process_sideband;
	c->tool.itrace_start	= process_sideband;
	c->tool.aux_output_hw_id = process_sideband;
	c->tool.context_switch	= process_switch;
	c->tool.throttle	= process_sideband;
	c->tool.unthrottle	= process_sideband;
	c->tool.ksymbol		= process_sideband;
	c->tool.bpf		= process_sideband;
	c->tool.text_poke	= process_sideband;
	c->tool.lost		= process_lost;
	c->tool.lost_samples	= process_lost_samples;
	c->tool.aux		= process_aux;
	c->tool.tracing_data	= process_tracing_data;
	c->tool.build_id	= perf_event__process_build_id;
	c->tool.id_index	= perf_event__process_id_index;
	/*
	 * The AUX area data is not decoded (perf_tool__init()'s stubs skip
	 * it): only its PERF_RECORD_AUX records become perf:aux events. A
	 * decoder would synthesize nothing here, and one that checks the
	 * data would fail the conversion of a recording whose AUX data is
	 * bad.
	 */
	c->tool.event_update	= perf_event__process_event_update;
	c->tool.attr		= perf_event__process_attr;
	c->tool.feature		= perf_event__process_feature;
	c->tool.finished_round	= process_finished_round;
	c->tool.ordering_requires_timestamps = true;
	c->itrace_opts.set = true;
	/*
	 * Callchains are converted as the record has them: samples need not
	 * wait for their deferred user part.
	 */
	c->tool.merge_deferred_callchains = false;
	ordered_events__init(&c->sideband, sideband_deliver, NULL);
	ordered_events__set_copy_on_queue(&c->sideband, true);
}

/* The options, the output file and what the whole conversion keeps. */
static int convert_prepare(struct convert_trace_dat *c,
			   struct trace_dat_output *o, const char *path,
			   const char *output_name,
			   struct perf_data_convert_opts *opts)
{
	const char *v = opts->trace_dat_version;

	if (v && strcmp(v, "6") && strcmp(v, "7")) {
		pr_err("trace.dat version must be 6 or 7, not '%s'.\n", v);
		return -1;
	}
	c->wopts.version = v && !strcmp(v, "6") ? 6 : 7;
	if (parse_compression(opts->trace_dat_compression,
			      &c->wopts.compression))
		return -1;
	if (c->wopts.version == 6 && c->wopts.compression != TDW_COMP_NONE) {
		pr_err("trace.dat version 6 cannot be compressed.\n");
		return -1;
	}

	c->output_name = output_name;
	if (output_open(o, output_name, opts->force))
		return -1;
	c->wopts.tmpdir = o->dir;
	c->wopts.out = o->file;

	c->comms = hashmap__new(comm_hash, comm_equal, NULL);
	if (IS_ERR(c->comms)) {
		c->comms = NULL;
		pr_err("%s: out of memory\n", path);
		return -1;
	}
	if (asprintf(&c->version, "perf version %s", perf_version_string) < 0)
		c->version = NULL;
	c->wopts.version_str = c->version;
	return 0;
}

/*
 * Symbols: user space ones for the callchains of --all, and whether the
 * kernel's may come from this machine (add_kallsyms()).
 */
static int convert_symbols(struct convert_trace_dat *c, const char *path)
{
	struct perf_session *session = c->session;
	struct evsel *evsel;

	c->this_machine = recorded_here(perf_session__env(session));
	c->user_maps = false;
	if (c->synthetic) {
		evlist__for_each_entry(session->evlist, evsel)
			if (evsel->core.attr.sample_type & PERF_SAMPLE_CALLCHAIN)
				c->user_maps = true;
	}
	/* As --to-json: the ELF symbol tables of user space DSOs. */
	if (c->user_maps && symbol__init(perf_session__env(session)) < 0) {
		pr_err("%s: cannot initialize symbol resolution\n", path);
		return -1;
	}
	return 0;
}

/*
 * Open the session and read what the conversion needs before the
 * events: the tracing data, the --time ranges, the symbols.
 */
static int convert_open(struct convert_trace_dat *c, struct perf_data *data,
			struct perf_data_convert_opts *opts)
{
	struct perf_session *session;
	const char *path = data->path;

	c->tool.ordered_events = !c->percpu;
	session = perf_session__new(data, &c->tool);
	/* A perf record --kcore recording's kallsyms, see kernel_symbols(). */
	if (symbol_conf.kallsyms_name != c->kallsyms_name && !c->kallsyms_chosen)
		c->kcore_kallsyms = (char *)symbol_conf.kallsyms_name;
	if (IS_ERR(session)) {
		/* perf said why (cannot open, incompatible), but for ENOMEM. */
		if (PTR_ERR(session) == -ENOMEM)
			pr_err("%s: out of memory\n", path);
		return -1;
	}
	c->session = session;
	/*
	 * AUX area decoders (cs_etm, intel_pt...) read their options from
	 * the session: synthesize nothing from the trace, only its
	 * PERF_RECORD_AUX records become perf:aux events.
	 */
	session->itrace_synth_opts = &c->itrace_opts;
	/* The idle task, as perf names it (trace-cmd shows <idle>). */
	if (set_comm(c, 0, "swapper")) {
		pr_err("%s: out of memory\n", path);
		return -1;
	}
	if (c->percpu && !percpu_possible(session)) {
		c->percpu = false;
		/* What perf_session__new() decides for an ordered tool. */
		c->tool.ordered_events = perf_data__is_pipe(data) ||
					 evlist__sample_id_all(session->evlist);
	}

	if (!c->tracing_data && !perf_data__is_pipe(data) &&
	    perf_header__has_feat(&session->header, HEADER_TRACING_DATA) &&
	    perf_header__process_sections(&session->header,
					  perf_data__fd(data), c,
					  read_tracing_feature) < 0) {
		pr_err("%s: cannot read the tracing data\n", path);
		return -1;
	}

	if (!perf_data__is_pipe(data) && no_tracing_data(c))
		return -1;

	if (opts->time_str && !c->ptime_range &&
	    perf_time__parse_for_ranges(opts->time_str, session,
					&c->ptime_range, &c->range_size,
					&c->range_num) < 0)
		return -1;

	if (convert_symbols(c, path))
		return -1;

	/* Not for a private mapping, where events are byte-swapped in place. */
	c->drop_pages = !session->header.needs_swap && !perf_data__is_pipe(data);
	return 0;
}

/*
 * Convert the events into the writer's per-CPU pages.  -EAGAIN: the
 * file is not in the order a per-CPU conversion needs, the session was
 * closed, open it again to convert through the ordered events queue.
 */
static int convert_process(struct convert_trace_dat *c, const char *path)
{
	struct perf_session *session = c->session;
	int ret;

	ret = perf_session__process_events(session);
	session_done = 0;
	if (c->restart && !c->err) {
		percpu_restart(c);
		return -EAGAIN;
	}
	if (!ret && c->percpu)
		ret = ordered_events__flush(&c->sideband, OE_FLUSH__FINAL);
	/* A pipe that ends inside an event: perf said so, write nothing. */
	if (!ret && !c->err && session->truncated)
		c->err = -EIO;
	if (!ret && !c->err)
		ret = create_writer(c);
	if (ret || c->err) {
		if (!c->err)
			pr_err("%s: cannot process the input (%d)\n", path,
			       ret);
		return -1;
	}
	return 0;
}

/* The metadata sections, then the file, renamed into place. */
static int convert_write(struct convert_trace_dat *c,
			 struct trace_dat_output *o, const char *path)
{
	FILE *out = o->file;
	int ret;

	if (add_synth_formats(c)) {
		pr_err("%s: out of memory\n", path);
		return -1;
	}
	add_kallsyms(c);
	ret = add_cmdlines(c);
	if (!ret && c->unknown_task)
		ret = tdw__add_cmdline(c->w, -1, "<unknown>");
	if (!ret)
		ret = tdw__finish(c->w);
	if (ret) {
		write_error(c, ret);
		return -1;
	}
	o->file = NULL;
	if (fclose(out)) {
		pr_err("Error writing %s: %s\n", c->output_name, strerror(errno));
		return -1;
	}
	return output_commit(o) ? -1 : 0;
}

static void convert_report(struct convert_trace_dat *c, const char *path,
			   struct perf_data_convert_opts *opts)
{
	const struct tdw_stats *st = tdw__stats(c->w);

	fprintf(stderr,
		"[ perf data convert: Converted '%s' into trace.dat v%d (%s) '%s': %" PRIu64
		" events (%" PRIu64 " tracepoint, %" PRIu64 " synthetic, %" PRIu64
		" large, %" PRIu64 " time extends), %" PRIu64 " pages (%" PRIu64
		" after lost events), %" PRIu64 " skipped, %" PRIu64 " dropped ]\n",
		path, c->wopts.version,
		opts->trace_dat_compression ?: "none", c->output_name, st->events,
		c->tracepoints, c->synthesized, st->large_events, st->time_extends,
		st->pages, st->missed_pages, c->skipped,
		c->dropped + st->dropped_too_big);
	if (st->dropped_too_big)
		pr_warning("trace.dat: %" PRIu64 " events too big for a page, largest %u bytes\n",
			   st->dropped_too_big, st->max_too_big);
	if (st->missed_unmarked)
		pr_warning("trace.dat: events lost after the last event of %u CPU(s) are not marked: a trace.dat marks a loss on the page of the next event\n",
			   st->missed_unmarked);
	pr_debug("trace.dat: %s, %" PRIu64 " events put in time order on their CPU\n",
		 c->percpu ? "converted in file order" : "converted with the ordered events queue",
		 st->reordered);
	if (st->out_of_order)
		pr_warning("trace.dat: %" PRIu64 " events out of order got the previous time\n",
			   st->out_of_order);
}

/*
 * Open, convert, write, report.  A per-CPU recording is converted in
 * file order first; when that order does not hold it is converted again
 * through the ordered events queue (convert_process(): -EAGAIN).
 */
int trace_dat_convert__perf2dat(const char *_input_name, const char *output_name,
				struct perf_data_convert_opts *opts)
{
	struct convert_trace_dat c = {
		.synthetic = opts->all,
		.tod = opts->tod,
		.percpu = true,
	};
	struct perf_data data = {
		.mode = PERF_DATA_MODE_READ,
		.path = _input_name,
		.force = opts->force,
	};
	struct trace_dat_output o = { .unnamed = -1 };
	int ret = -1;

	convert_tool_init(&c);
	c.kallsyms_name = symbol_conf.kallsyms_name;
	/* Before the temporary file exists: a signal must not leave it. */
	convert_signals(true);
	if (convert_prepare(&c, &o, _input_name, output_name, opts))
		goto out;
	do {
		ret = convert_open(&c, &data, opts);
		if (!ret)
			ret = convert_process(&c, _input_name);
	} while (ret == -EAGAIN);
	if (!ret)
		ret = convert_write(&c, &o, _input_name);
	if (!ret)
		convert_report(&c, data.path, opts);
out:
	kallsyms_prefetched(&c, NULL, NULL);
	perf_session__delete(c.session);
	symbol_conf.kallsyms_name = c.kallsyms_name;
	free(c.kcore_kallsyms);
	/* The writer's thread may still write to the output: stop it first. */
	tdw__delete(c.w);
	output_close(&o);
	convert_signals(false);
	ordered_events__free(&c.sideband);
	free_comms(&c);
	hashmap__free(c.comms);
	free(c.tracing_data);
	free(c.ptime_range);
	free(c.uname);
	free(c.version);
	return ret ? -1 : 0;
}
