// SPDX-License-Identifier: GPL-2.0
/*
 * perf_swaux: a software AUX PMU for the perf_events selftests.
 *
 * QEMU emulates no AUX-capable PMU (no Intel PT, SPE, TRBE), so the AUX
 * paths of perf core cannot be exercised there.  This module registers a
 * PMU "swaux" that is built like a TRBE-style per-CPU sink:
 *
 *  - ->setup_aux() allocates the sink buffer, which becomes rb->aux_priv;
 *  - ->start() calls perf_aux_output_begin() and programs the per-CPU
 *    writer (the "hardware") with the buffer it returned;
 *  - an hrtimer pinned to the CPU plays the hardware: every tick it writes
 *    self-describing records (struct swaux_record) into the *programmed*
 *    buffer and, when the transaction is full, raises an "overflow" that
 *    is handled like trbe_handle_overflow(): end the transaction, begin a
 *    new one on the same handle and keep using the programmed buffer;
 *  - ->stop() ends the transaction.
 *
 * A correct perf core never lets the handle's buffer change under an open
 * transaction, so the programmed buffer always equals perf_get_aux().  Each
 * write (and each stop) where they differ is counted as a "mismatch", shown
 * in the records, in debugfs (swaux/) and in /sys/module/perf_swaux/
 * parameters/mismatches.  Writes into a buffer whose AUX area perf core
 * already freed are dropped and counted as "dead_writes".
 *
 * Lifetime mode (module parameter "lifetime", off unless asked for): each
 * buffer also has driver state of its own (struct swaux_sink, standing for
 * etm-perf's event data and a sink's buffer config) that ->free_aux()
 * frees at once, while the writer keeps a raw pointer to it, as etm-perf
 * does, and reads it before every write.  A write after ->free_aux() is
 * then a use-after-free that KASAN reports, rather than a statistic.  The
 * late access is a read, and the write itself is still refused through the
 * refcounted struct swaux_buf, so a kernel without KASAN is not corrupted.
 * It reads freed memory on purpose, on a kernel with the bug: ask for it
 * only under KASAN, and where a KASAN report may fail a run, not panic it.
 *
 * Only privileged users (CAP_PERFMON) may open its events.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>

#include "swaux_abi.h"

#define SWAUX_REC	sizeof(struct swaux_record)

static_assert(sizeof(struct swaux_record) == 64);

static unsigned int period_us = 1000;
module_param(period_us, uint, 0644);
MODULE_PARM_DESC(period_us, "Writer tick period in microseconds (default 1000)");

static unsigned int bytes_per_tick = 256;
module_param(bytes_per_tick, uint, 0644);
MODULE_PARM_DESC(bytes_per_tick, "Bytes written per tick, rounded down to records (default 256)");

static unsigned int overflow_bytes = 4096;
module_param(overflow_bytes, uint, 0644);
MODULE_PARM_DESC(overflow_bytes, "Bytes per transaction before an overflow (default 4096)");

static bool lifetime;
module_param(lifetime, bool, 0444);
MODULE_PARM_DESC(lifetime, "Writer keeps a raw pointer to per-buffer state freed by ->free_aux(), for KASAN (default off)");

/* Statistics, exported through debugfs and read-only module parameters */
static atomic_t stat_mismatch;		/* writer buffer != handle buffer */
static atomic_t stat_dead_writes;	/* writes into a freed AUX area */
static atomic_t stat_records;
static atomic_t stat_overflows;
static atomic_t stat_begin_fail;
static atomic_t stat_busy;		/* start with the CPU's writer in use */
static atomic_t stat_double_start;	/* start of an event already running */
static atomic_t stat_bufs;		/* live sink buffers */

static int swaux_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops swaux_stat_ops = {
	.get = swaux_stat_get,
};

module_param_cb(mismatches, &swaux_stat_ops, &stat_mismatch, 0444);
MODULE_PARM_DESC(mismatches, "Writes whose programmed buffer differs from the handle's");
module_param_cb(dead_writes, &swaux_stat_ops, &stat_dead_writes, 0444);
MODULE_PARM_DESC(dead_writes, "Writes dropped because the buffer was already freed");
module_param_cb(double_starts, &swaux_stat_ops, &stat_double_start, 0444);
MODULE_PARM_DESC(double_starts, "->start() of an event that is already running");

static atomic_t swaux_buf_ids = ATOMIC_INIT(0);

/*
 * Per-buffer driver state that lives exactly as long as perf core's AUX
 * area, until ->free_aux(): what etm-perf's event data is to a CoreSight
 * sink. Lifetime mode only.
 */
struct swaux_sink {
	u32		id;		/* == swaux_buf::id */
	unsigned long	size;
};

/* The sink buffer: rb->aux_priv */
struct swaux_buf {
	struct kref	ref;		/* perf core's (until ->free_aux) + writer's */
	raw_spinlock_t	lock;		/* protects dead vs. writes */
	bool		dead;		/* ->free_aux() was called */
	bool		snapshot;
	u32		id;
	struct swaux_sink *sink;	/* lifetime mode; freed by ->free_aux() */
	u64		seq;		/* records written into it (under lock) */
	int		cpu;
	unsigned long	size;
	int		nr_pages;
	void		*pages[] __counted_by(nr_pages);
};

/*
 * What the writer did, for a test that must know how a transaction ended
 * rather than guess from timing (debugfs swaux/log, oldest first):
 *  B  a transaction began at ->start(), writer programmed with buf_id
 *  O  overflow: the transaction ended and the next one began on the same
 *     handle; the writer goes on with its programmed buffer
 *  D  ended by ->del() (the task was switched out)
 *  S  ended by ->stop() alone (e.g. perf_event_stop())
 *  E  ended because the next transaction could not begin (writer idle)
 */
#define SWAUX_LOG_LEN	8192	/* per CPU, power of 2: seconds of overflows */

struct swaux_log_entry {
	u64	time;		/* ktime_get_ns() */
	u64	event_id;
	u32	buf_id;
	char	kind;
};

/* The per-CPU "hardware" */
struct swaux_writer {
	struct perf_output_handle handle;
	struct perf_event	*event;		/* owner of the open transaction */
	struct swaux_buf	*buf;		/* programmed buffer */
	struct swaux_sink	*sink;		/* buf->sink, not refcounted */
	unsigned long		written;	/* bytes since perf_aux_output_begin() */
	unsigned long		limit;		/* overflow point */
	struct hrtimer		timer;
	/* For debugfs swaux/writers and swaux/log: what a test waits for */
	u64			event_id;	/* copies of event->id, ... */
	u64			parent_id;	/* ... event->parent->id, ... */
	u32			buf_id;		/* ... buf->id; 0 when idle */
	raw_spinlock_t		log_lock;
	unsigned long		log_n;		/* entries ever logged */
	struct swaux_log_entry	*log;		/* SWAUX_LOG_LEN entries */
};

static DEFINE_PER_CPU(struct swaux_writer, swaux_writers);

static struct pmu swaux_pmu;
static struct dentry *swaux_debugfs;

/*
 * Every swaux event, for debugfs swaux/events: lets a test tool that took
 * another process's event fds (pidfd_getfd()) tell them apart by id.
 */
struct swaux_ev {
	struct list_head	node;
	struct perf_event	*event;
};

static LIST_HEAD(swaux_events);
static DEFINE_MUTEX(swaux_events_lock);

static void swaux_log(struct swaux_writer *w, char kind)
{
	struct swaux_log_entry *e;
	unsigned long flags;

	raw_spin_lock_irqsave(&w->log_lock, flags);
	e = &w->log[w->log_n++ & (SWAUX_LOG_LEN - 1)];
	e->time = ktime_get_ns();
	e->event_id = w->event_id;
	e->buf_id = w->buf_id;
	e->kind = kind;
	raw_spin_unlock_irqrestore(&w->log_lock, flags);
}

static void swaux_buf_release(struct kref *ref)
{
	struct swaux_buf *buf = container_of(ref, struct swaux_buf, ref);

	atomic_dec(&stat_bufs);
	kfree(buf);
}

static void *swaux_setup_aux(struct perf_event *event, void **pages,
			     int nr_pages, bool overwrite)
{
	int node = event->cpu == -1 ? NUMA_NO_NODE : cpu_to_node(event->cpu);
	struct swaux_buf *buf;

	if (!nr_pages || !is_power_of_2(nr_pages))
		return NULL;

	buf = kzalloc_node(struct_size(buf, pages, nr_pages), GFP_KERNEL, node);
	if (!buf)
		return NULL;
	if (lifetime) {
		buf->sink = kzalloc_node(sizeof(*buf->sink), GFP_KERNEL, node);
		if (!buf->sink) {
			kfree(buf);
			return NULL;
		}
	}

	kref_init(&buf->ref);
	raw_spin_lock_init(&buf->lock);
	buf->snapshot = overwrite;
	buf->id = atomic_inc_return(&swaux_buf_ids);
	buf->cpu = event->cpu;
	buf->nr_pages = nr_pages;
	buf->size = (unsigned long)nr_pages << PAGE_SHIFT;
	memcpy(buf->pages, pages, nr_pages * sizeof(*pages));
	if (buf->sink) {
		buf->sink->id = buf->id;
		buf->sink->size = buf->size;
	}
	atomic_inc(&stat_bufs);

	return buf;
}

static void swaux_free_aux(void *data)
{
	struct swaux_buf *buf = data;
	unsigned long flags;

	/* After this perf core frees the pages: no more writes. */
	raw_spin_lock_irqsave(&buf->lock, flags);
	buf->dead = true;
	raw_spin_unlock_irqrestore(&buf->lock, flags);

	/* Gone with the AUX area, whoever still points to it */
	kfree(buf->sink);
	buf->sink = NULL;

	kref_put(&buf->ref, swaux_buf_release);
}

/* Like compute_trbe_buffer_limit(): derived from the handle, not the buffer */
static unsigned long swaux_limit(struct perf_output_handle *handle,
				 struct swaux_buf *buf)
{
	unsigned long limit = max_t(unsigned long, overflow_bytes, SWAUX_REC);

	if (!buf->snapshot)
		limit = min(limit, handle->size);

	return rounddown(limit, SWAUX_REC);
}

static void swaux_check_handle(struct swaux_writer *w, u16 *flags,
			       u32 *handle_buf_id)
{
	struct swaux_buf *cur = perf_get_aux(&w->handle);

	*handle_buf_id = cur ? cur->id : 0;
	if (cur != w->buf) {
		atomic_inc(&stat_mismatch);
		*flags |= SWAUX_F_MISMATCH;
	}
}

/*
 * Lifetime mode: read the per-buffer state through the raw pointer taken
 * at ->start(), as a CoreSight sink reads its buffer config on every
 * interrupt and at ->stop(). After ->free_aux() KASAN reports this read;
 * the writes themselves are still refused through the refcounted buffer.
 * Once the buffer is known dead, stop: one report per writer and buffer.
 */
static void swaux_touch_sink(struct swaux_writer *w)
{
	if (!w->sink)
		return;
	(void)READ_ONCE(w->sink->size);
	if (READ_ONCE(w->buf->dead))
		w->sink = NULL;
}

static void swaux_write_one(struct swaux_writer *w)
{
	struct perf_event *event = w->handle.event;
	struct swaux_buf *buf = w->buf;
	struct swaux_record rec = {
		.magic		= SWAUX_MAGIC,
		.size		= SWAUX_REC,
		.time		= ktime_get_ns(),
		.cpu		= smp_processor_id(),
		.pid		= task_tgid_nr(current),
		.tid		= task_pid_nr(current),
		.buf_id		= buf->id,
		.writer_id	= w->event->id,
	};
	unsigned long off;

	swaux_touch_sink(w);

	rec.event_id = w->event->parent ? w->event->parent->id : w->event->id;
	if (w->event->parent)
		rec.flags |= SWAUX_F_INHERITED;
	if (buf->snapshot)
		rec.flags |= SWAUX_F_SNAPSHOT;
	if (event)
		swaux_check_handle(w, &rec.flags, &rec.handle_buf_id);
	rec.mismatches = atomic_read(&stat_mismatch);

	/* The hardware only knows its base: offsets wrap at its own size. */
	off = (w->handle.head + w->written) & (buf->size - 1);

	raw_spin_lock(&buf->lock);
	if (!buf->dead) {
		rec.seq = ++buf->seq;
		memcpy(buf->pages[off >> PAGE_SHIFT] + offset_in_page(off),
		       &rec, sizeof(rec));
		atomic_inc(&stat_records);
	} else {
		atomic_inc(&stat_dead_writes);
	}
	raw_spin_unlock(&buf->lock);

	w->written += SWAUX_REC;
}

/* Detach the writer; the caller ended (or never had) the transaction. */
static void swaux_writer_release(struct swaux_writer *w)
{
	struct swaux_buf *buf = w->buf;

	WRITE_ONCE(w->event_id, 0);
	WRITE_ONCE(w->parent_id, 0);
	WRITE_ONCE(w->buf_id, 0);
	w->event = NULL;
	w->buf = NULL;
	w->sink = NULL;
	w->written = 0;
	if (buf)
		kref_put(&buf->ref, swaux_buf_release);
}

/* End the transaction: as arm_trbe_update_buffer() + perf_aux_output_end() */
static void swaux_end(struct swaux_writer *w, bool truncated)
{
	struct perf_output_handle *handle = &w->handle;
	unsigned long size = w->written;

	swaux_touch_sink(w);
	if (w->buf->snapshot)
		handle->head += size;
	if (truncated)
		perf_aux_output_flag(handle, PERF_AUX_FLAG_TRUNCATED);
	perf_aux_output_end(handle, size);
	w->written = 0;
}

/*
 * Modelled on trbe_handle_overflow() as of v7.3: end, begin again on the
 * same handle, and carry on with the buffer programmed at ->start().
 * Returns false if the writer had to be disabled.
 */
static bool swaux_overflow(struct swaux_writer *w)
{
	struct perf_output_handle *handle = &w->handle;
	struct perf_event *event = handle->event;

	atomic_inc(&stat_overflows);
	swaux_end(w, false);

	if (!perf_aux_output_begin(handle, event)) {
		atomic_inc(&stat_begin_fail);
		event->hw.state |= PERF_HES_STOPPED;
		swaux_log(w, 'E');
		swaux_writer_release(w);
		return false;
	}

	w->limit = swaux_limit(handle, w->buf);
	if (!w->limit) {
		swaux_end(w, true);
		event->hw.state |= PERF_HES_STOPPED;
		swaux_log(w, 'E');
		swaux_writer_release(w);
		return false;
	}
	swaux_log(w, 'O');

	return true;
}

static enum hrtimer_restart swaux_tick(struct hrtimer *timer)
{
	struct swaux_writer *w = container_of(timer, struct swaux_writer, timer);
	unsigned int n = max_t(unsigned int, bytes_per_tick / SWAUX_REC, 1);

	if (!w->event)
		return HRTIMER_NORESTART;

	while (n--) {
		swaux_write_one(w);
		if (w->written >= w->limit && !swaux_overflow(w))
			return HRTIMER_NORESTART;
	}

	hrtimer_forward_now(timer, us_to_ktime(max(period_us, 10U)));
	return HRTIMER_RESTART;
}

static void swaux_event_start(struct perf_event *event, int flags)
{
	struct swaux_writer *w = this_cpu_ptr(&swaux_writers);
	struct perf_output_handle *handle = &w->handle;
	struct swaux_buf *buf;

	if (w->event == event) {
		/*
		 * Started twice without a stop in between: etm_event_start()
		 * WARNs here and marks the event stopped while its sink
		 * keeps running. Count it and keep the running transaction.
		 */
		atomic_inc(&stat_double_start);
		return;
	}
	if (w->event) {
		/* The sink is busy with another event on this CPU. */
		atomic_inc(&stat_busy);
		event->hw.state = PERF_HES_STOPPED;
		return;
	}

	buf = perf_aux_output_begin(handle, event);
	if (!buf) {
		atomic_inc(&stat_begin_fail);
		event->hw.state = PERF_HES_STOPPED;
		return;
	}

	/* Program the hardware from the buffer begin returned. */
	kref_get(&buf->ref);
	w->buf = buf;
	w->sink = buf->sink;
	w->event = event;
	w->written = 0;
	WRITE_ONCE(w->event_id, event->id);
	WRITE_ONCE(w->parent_id, event->parent ? event->parent->id : 0);
	WRITE_ONCE(w->buf_id, buf->id);
	w->limit = swaux_limit(handle, buf);
	if (!w->limit) {
		swaux_end(w, true);
		swaux_writer_release(w);
		event->hw.state = PERF_HES_STOPPED;
		return;
	}

	swaux_log(w, 'B');
	event->hw.state = 0;
	hrtimer_start(&w->timer, us_to_ktime(max(period_us, 10U)),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* Stop the writer; @del: on behalf of ->del() (the task is switched out) */
static void swaux_stop_writer(struct perf_event *event, bool del)
{
	struct swaux_writer *w = this_cpu_ptr(&swaux_writers);
	u32 handle_buf_id;
	u16 rec_flags = 0;

	if (event->hw.state & PERF_HES_STOPPED)
		return;
	event->hw.state = PERF_HES_STOPPED;

	if (w->event != event)
		return;

	swaux_log(w, del ? 'D' : 'S');
	hrtimer_try_to_cancel(&w->timer);

	if (w->handle.event) {
		/* etm_event_stop() WARNs here; count instead. */
		swaux_check_handle(w, &rec_flags, &handle_buf_id);
		swaux_end(w, false);
	}
	swaux_writer_release(w);
}

static void swaux_event_stop(struct perf_event *event, int flags)
{
	swaux_stop_writer(event, false);
}

/*
 * As etm_event_add(), pt_event_add() and arm_spe_pmu_add(): an event that
 * cannot start (no buffer to begin on, the sink busy) is not added, so a
 * pinned one goes to the error state.
 */
static int swaux_event_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START) {
		swaux_event_start(event, 0);
		if (event->hw.state & PERF_HES_STOPPED)
			return -EINVAL;
	}

	return 0;
}

static void swaux_event_del(struct perf_event *event, int flags)
{
	swaux_stop_writer(event, true);
}

static void swaux_event_read(struct perf_event *event)
{
}

static void swaux_event_destroy(struct perf_event *event)
{
	struct swaux_ev *ev = event->pmu_private;

	mutex_lock(&swaux_events_lock);
	list_del(&ev->node);
	mutex_unlock(&swaux_events_lock);
	kfree(ev);
}

static int swaux_event_init(struct perf_event *event)
{
	struct swaux_ev *ev;

	if (event->attr.type != swaux_pmu.type)
		return -ENOENT;

	if (event->attr.config || event->attr.config1 || event->attr.config2)
		return -EINVAL;

	/* A test PMU: no unprivileged user needs it */
	if (!perfmon_capable())
		return -EACCES;

	ev = kzalloc_obj(*ev, GFP_KERNEL);
	if (!ev)
		return -ENOMEM;

	ev->event = event;
	event->pmu_private = ev;
	event->destroy = swaux_event_destroy;
	mutex_lock(&swaux_events_lock);
	list_add_tail(&ev->node, &swaux_events);
	mutex_unlock(&swaux_events_lock);

	return 0;
}

/* One line per event: id cpu target-pid parent-id mmapped state */
static int swaux_events_show(struct seq_file *m, void *v)
{
	struct swaux_ev *ev;

	mutex_lock(&swaux_events_lock);
	list_for_each_entry(ev, &swaux_events, node) {
		struct perf_event *event = ev->event;
		struct task_struct *task = event->hw.target;

		seq_printf(m, "%llu %d %d %llu %d %d\n", event->id, event->cpu,
			   task ? task_pid_nr(task) : -1,
			   event->parent ? event->parent->id : 0,
			   refcount_read(&event->mmap_count) ? 1 : 0,
			   event->state);
	}
	mutex_unlock(&swaux_events_lock);

	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swaux_events);

/* swaux/log shows entries from this one on (n >= log_since) */
static u64 swaux_log_since;

/*
 * swaux/writers, one line per CPU: cpu event-id parent-id buf-id log-n
 * (event-id parent-id buf-id 0 0 0: idle; log-n: entries logged so far).
 * swaux/log: the last SWAUX_LOG_LEN entries per CPU from n = log_since on,
 * oldest first: cpu n time kind event-id buf-id. A reader that writes
 * log-n - 1 into swaux/log_since sees the entry that opened the current
 * transaction and what followed. Only the writer's own copies of the ids
 * are read, never the event or the buffer, which may be freed meanwhile.
 */
static int swaux_writers_show(struct seq_file *m, void *v)
{
	int cpu;

	for_each_online_cpu(cpu) {
		struct swaux_writer *w = per_cpu_ptr(&swaux_writers, cpu);

		seq_printf(m, "%d %llu %llu %u %lu\n", cpu, READ_ONCE(w->event_id),
			   READ_ONCE(w->parent_id), READ_ONCE(w->buf_id),
			   READ_ONCE(w->log_n));
	}

	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swaux_writers);

static int swaux_log_show(struct seq_file *m, void *v)
{
	int cpu;

	for_each_online_cpu(cpu) {
		struct swaux_writer *w = per_cpu_ptr(&swaux_writers, cpu);
		unsigned long n, end, flags;
		struct swaux_log_entry e;

		raw_spin_lock_irqsave(&w->log_lock, flags);
		end = w->log_n;
		raw_spin_unlock_irqrestore(&w->log_lock, flags);
		n = end > SWAUX_LOG_LEN ? end - SWAUX_LOG_LEN : 0;
		n = max_t(u64, n, READ_ONCE(swaux_log_since));
		for (; n < end; n++) {
			raw_spin_lock_irqsave(&w->log_lock, flags);
			/* Overwritten meanwhile: skip to what is still there */
			if (w->log_n - n > SWAUX_LOG_LEN) {
				raw_spin_unlock_irqrestore(&w->log_lock, flags);
				continue;
			}
			e = w->log[n & (SWAUX_LOG_LEN - 1)];
			raw_spin_unlock_irqrestore(&w->log_lock, flags);
			seq_printf(m, "%d %lu %llu %c %llu %u\n", cpu, n, e.time, e.kind,
				   e.event_id, e.buf_id);
		}
	}

	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swaux_log);

static struct pmu swaux_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	/*
	 * As etm-perf: no PERF_PMU_CAP_NO_INTERRUPT, so that a group it
	 * leads is unthrottled at the tick like one of cs_etm's.
	 */
	.capabilities	= PERF_PMU_CAP_ITRACE,
	.event_init	= swaux_event_init,
	.add		= swaux_event_add,
	.del		= swaux_event_del,
	.start		= swaux_event_start,
	.stop		= swaux_event_stop,
	.read		= swaux_event_read,
	.setup_aux	= swaux_setup_aux,
	.free_aux	= swaux_free_aux,
};

static void swaux_debugfs_init(void)
{
	swaux_debugfs = debugfs_create_dir("swaux", NULL);
	debugfs_create_atomic_t("mismatch", 0444, swaux_debugfs, &stat_mismatch);
	debugfs_create_atomic_t("dead_writes", 0444, swaux_debugfs, &stat_dead_writes);
	debugfs_create_atomic_t("records", 0444, swaux_debugfs, &stat_records);
	debugfs_create_atomic_t("overflows", 0444, swaux_debugfs, &stat_overflows);
	debugfs_create_atomic_t("begin_fail", 0444, swaux_debugfs, &stat_begin_fail);
	debugfs_create_atomic_t("busy", 0444, swaux_debugfs, &stat_busy);
	debugfs_create_atomic_t("buffers", 0444, swaux_debugfs, &stat_bufs);
	debugfs_create_file("events", 0444, swaux_debugfs, NULL, &swaux_events_fops);
	debugfs_create_file("writers", 0444, swaux_debugfs, NULL, &swaux_writers_fops);
	debugfs_create_file("log", 0444, swaux_debugfs, NULL, &swaux_log_fops);
	debugfs_create_u64("log_since", 0644, swaux_debugfs, &swaux_log_since);
}

static int __init swaux_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu) {
		struct swaux_writer *w = per_cpu_ptr(&swaux_writers, cpu);

		hrtimer_setup(&w->timer, swaux_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		raw_spin_lock_init(&w->log_lock);
		/* Not in the per-CPU area: modules get only a few KiB of it */
		w->log = kvcalloc_node(SWAUX_LOG_LEN, sizeof(*w->log), GFP_KERNEL,
				       cpu_to_node(cpu));
		if (!w->log) {
			ret = -ENOMEM;
			goto free_logs;
		}
	}

	ret = perf_pmu_register(&swaux_pmu, SWAUX_PMU_NAME, -1);
	if (ret)
		goto free_logs;

	swaux_debugfs_init();
	return 0;

free_logs:
	for_each_possible_cpu(cpu)
		kvfree(per_cpu_ptr(&swaux_writers, cpu)->log);
	return ret;
}

static void __exit swaux_exit(void)
{
	int cpu;

	debugfs_remove_recursive(swaux_debugfs);
	/* All events are gone (module refcount), so are the writers. */
	perf_pmu_unregister(&swaux_pmu);
	for_each_possible_cpu(cpu) {
		hrtimer_cancel(&per_cpu_ptr(&swaux_writers, cpu)->timer);
		kvfree(per_cpu_ptr(&swaux_writers, cpu)->log);
	}
}

module_init(swaux_init);
module_exit(swaux_exit);

MODULE_DESCRIPTION("Software AUX PMU for perf_events selftests");
MODULE_LICENSE("GPL");
MODULE_INFO(test, "Y");
