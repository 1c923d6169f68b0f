// SPDX-License-Identifier: GPL-2.0
/*
 * perf AUX model: the parts of kernel/events/ring_buffer.c and
 * kernel/events/core.c the TRBE driver and etm-perf rely on.
 *
 * perf_aux_output_begin(), perf_aux_output_end(), perf_aux_output_skip(),
 * perf_aux_output_flag() and perf_get_aux() are line-by-line ports of
 * ring_buffer.c (7.3): begin follows event->parent to the output event
 * and binds the handle to that event's *current* rb, accounts space from
 * aux_head/aux_tail, disables the event when there is none; end commits
 * aux_head (or takes it from the handle in overwrite mode), emits the
 * PERF_RECORD_AUX and disables the event on TRUNCATED.
 *
 * PERF_EVENT_IOC_SET_OUTPUT comes in two models of the perf core, chosen
 * per run (harness_core, trbe_test --core=base|fixed):
 * - base: 7.3's perf_event_set_output() and ring_buffer_attach(): it
 *   stops the event itself (perf_event_stop(event, 0)) and swaps
 *   event->rb; inherited children are left alone with their transaction
 *   open on the old buffer;
 * - fixed: the series' perf/core patches ("Stop inherited AUX events
 *   when SET_OUTPUT changes buffer", "Restart AUX events on the new
 *   buffer after SET_OUTPUT"): stop the event and its children on the
 *   old rb and switch to the new one (one step on the kernel: a
 *   cross-CPU call on the events' CPU), then stop the event and its
 *   children with restart, so that each begins its next transaction on
 *   the new buffer (or stays stopped if there is none).
 *
 * Buffer lifetime, the same in both: munmap() of an AUX area
 * (perf_model_munmap_aux(), after perf_mmap_close()) stops the AUX events
 * writing into it, perf_pmu_output_stop(), which for inherited events
 * looks at the parent's *current* rb, then drops the mapping's reference;
 * the last reference frees the AUX pages and, through etm_free_aux(), the
 * sink buffer (arm_trbe_free_buffer()) and the event data.
 *
 * Model checks: every PERF_RECORD_AUX may only cover bytes the hardware
 * model wrote or the driver padded with ETE_IGNORE_PACKET.
 */

#define HARNESS_MAX_EVENTS	16
#define HARNESS_MAX_RBS		8

struct perf_event_mmap_page {
	u64 aux_head;
	u64 aux_tail;
};

struct perf_buffer {
	int				refcount;
	long				aux_watermark;
	long				aux_head;
	unsigned int			aux_nest;
	long				aux_wakeup;
	int				aux_nr_pages;
	int				aux_overwrite;
	int				aux_mmap_count;
	int				aux_refcount;
	void				**aux_pages;
	void				*aux_priv;
	struct perf_event_mmap_page	*user_page;
	/* model state */
	const char			*name;
	u8				*mem;
	unsigned long			nr_records;
	unsigned long			bytes_reported;
	unsigned long			nr_truncated;
	unsigned long			nr_collision;
	unsigned long			wakeups;
	u64				last_flags;
	unsigned long			last_size;
	bool				aux_freed;
};

static struct perf_event *events[HARNESS_MAX_EVENTS];
static int nr_events;
static struct perf_buffer *rbs[HARNESS_MAX_RBS];
static int nr_rbs;
static unsigned long irq_rebinds;	/* begin() in IRQ bound another rb */
static unsigned long harness_step;

enum harness_core {
	HARNESS_CORE_BASE,		/* 7.3 perf core */
	HARNESS_CORE_FIXED,		/* with the series' SET_OUTPUT fix */
};

static enum harness_core harness_core;
static const char *const harness_core_names[] = { "base", "fixed" };

/* etm-perf model */
static void *etm_setup_aux(struct perf_event *event, void **pages,
			   int nr_pages, bool overwrite);
static int etm_event_add(struct perf_event *event, int mode);
static void etm_event_del(struct perf_event *event, int mode);
static void etm_event_start(struct perf_event *event, int flags);
static void etm_event_stop(struct perf_event *event, int mode);
static void etm_free_aux(void *data);

static inline unsigned long perf_aux_size(struct perf_buffer *rb)
{
	return (unsigned long)rb->aux_nr_pages << PAGE_SHIFT;
}

static inline bool rb_has_aux(struct perf_buffer *rb)
{
	return !!rb->aux_nr_pages;
}

static struct perf_buffer *ring_buffer_get(struct perf_event *event)
{
	struct perf_buffer *rb = event->rb;

	if (rb && rb->refcount <= 0)
		rb = NULL;
	if (rb)
		rb->refcount++;
	return rb;
}

static void ring_buffer_put(struct perf_buffer *rb)
{
	rb->refcount--;
}

/* __rb_free_aux(): the PMU's buffer, then the AUX pages. */
static void __rb_free_aux(struct perf_buffer *rb)
{
	if (rb->aux_priv) {
		etm_free_aux(rb->aux_priv);
		rb->aux_priv = NULL;
	}
	free(rb->aux_pages);
	rb->aux_pages = NULL;
	free(rb->mem);
	rb->mem = NULL;
	rb->aux_nr_pages = 0;
	rb->aux_freed = true;
}

static void rb_free_aux(struct perf_buffer *rb)
{
	if (!--rb->aux_refcount)
		__rb_free_aux(rb);
}

static void perf_event_disable_inatomic(struct perf_event *event)
{
	event->pending_disable = true;
}

static void perf_output_wakeup(struct perf_output_handle *handle)
{
	handle->rb->wakeups++;
}

static struct perf_buffer *perf_model_rb_of(struct perf_event *event)
{
	return event->parent ? event->parent->rb : event->rb;
}

static void perf_model_check_report(struct perf_buffer *rb,
				    unsigned long start, unsigned long size)
{
	unsigned long i, bufsize = perf_aux_size(rb);

	if (!bufsize) {
		violation("rb %s: PERF_RECORD_AUX for a freed AUX area",
			  rb->name);
		return;
	}
	for (i = 0; i < size; i++) {
		u8 b = rb->mem[(start + i) % bufsize];

		if (b == HW_POISON) {
			violation_of("rb %s", rb->name,
				     "PERF_RECORD_AUX [%lu, +%lu) reports byte %lu that was never written",
				     start, size, start + i);
			return;
		}
	}
}

static void perf_event_aux_event(struct perf_event *event,
				 unsigned long head, unsigned long size,
				 u64 flags)
{
	struct perf_buffer *out = perf_model_rb_of(event);

	if (!out)
		return;
	out->nr_records++;
	out->last_flags = flags;
	out->last_size = size;
	if (flags & PERF_AUX_FLAG_TRUNCATED)
		out->nr_truncated++;
	if (flags & PERF_AUX_FLAG_COLLISION)
		out->nr_collision++;
}

void perf_aux_output_flag(struct perf_output_handle *handle, u64 flags)
{
	/*
	 * OVERWRITE is determined by perf_aux_output_end() and can't
	 * be passed in directly.
	 */
	if (WARN_ON_ONCE(flags & PERF_AUX_FLAG_OVERWRITE))
		return;

	handle->aux_flags |= flags;
}

void *perf_aux_output_begin(struct perf_output_handle *handle,
			    struct perf_event *event)
{
	struct perf_event *output_event = event;
	unsigned long aux_head, aux_tail;
	struct perf_buffer *rb;
	unsigned int nest;

	if (output_event->parent)
		output_event = output_event->parent;

	rb = ring_buffer_get(output_event);
	if (!rb)
		return NULL;

	if (fail_aux_begin)
		goto err;

	if (!rb_has_aux(rb))
		goto err;

	if (!rb->aux_mmap_count)
		goto err;

	if (rb->aux_refcount <= 0)
		goto err;
	rb->aux_refcount++;

	nest = READ_ONCE(rb->aux_nest);
	if (WARN_ON_ONCE(nest))
		goto err_put;

	WRITE_ONCE(rb->aux_nest, nest + 1);

	/* Model: note a handle that the IRQ path rebinds to another rb. */
	if (harness_in_irq && handle->rb && handle->rb != rb &&
	    ++irq_rebinds <= 3) {
		fprintf(stdout,
			"# step %lu: cpu%d overflow IRQ: %s() rebinds the handle from rb %s to rb %s\n",
			harness_step, harness_cpu, __func__, handle->rb->name, rb->name);
	}

	aux_head = rb->aux_head;

	handle->rb = rb;
	handle->event = event;
	handle->head = aux_head;
	handle->size = 0;
	handle->aux_flags = 0;

	if (!rb->aux_overwrite) {
		aux_tail = READ_ONCE(rb->user_page->aux_tail);
		handle->wakeup = rb->aux_wakeup + rb->aux_watermark;
		if (aux_head - aux_tail < perf_aux_size(rb))
			handle->size = CIRC_SPACE(aux_head, aux_tail, perf_aux_size(rb));

		if (!handle->size) { /* A, matches D */
			perf_event_disable_inatomic(handle->event);
			perf_output_wakeup(handle);
			WRITE_ONCE(rb->aux_nest, 0);
			goto err_put;
		}
	}

	return handle->rb->aux_priv;

err_put:
	rb_free_aux(rb);

err:
	ring_buffer_put(rb);
	handle->event = NULL;

	return NULL;
}

static bool rb_need_aux_wakeup(struct perf_buffer *rb)
{
	if (rb->aux_overwrite)
		return false;

	if (rb->aux_head - rb->aux_wakeup >= rb->aux_watermark) {
		rb->aux_wakeup = rounddown(rb->aux_head, rb->aux_watermark);
		return true;
	}

	return false;
}

void perf_aux_output_end(struct perf_output_handle *handle, unsigned long size)
{
	bool wakeup = !!(handle->aux_flags & PERF_AUX_FLAG_TRUNCATED);
	struct perf_buffer *rb = handle->rb;
	unsigned long aux_head;

	if (!handle->event) {
		violation("%s() on a handle with no transaction", __func__);
		return;
	}

	if (rb->aux_overwrite) {
		handle->aux_flags |= PERF_AUX_FLAG_OVERWRITE;

		aux_head = handle->head;
		rb->aux_head = aux_head;
		perf_model_check_report(rb, aux_head - size, size);
	} else {
		handle->aux_flags &= ~PERF_AUX_FLAG_OVERWRITE;

		aux_head = rb->aux_head;
		rb->aux_head += size;
		perf_model_check_report(rb, aux_head, size);
		if ((unsigned long)rb->aux_head - rb->user_page->aux_tail >
		    perf_aux_size(rb))
			violation("rb %s: aux_head %ld overran aux_tail %llu",
				  rb->name, rb->aux_head,
				  (unsigned long long)rb->user_page->aux_tail);
	}
	rb->bytes_reported += size;

	if (size ||
	    (handle->aux_flags & ~(u64)(PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK |
					PERF_AUX_FLAG_OVERWRITE)))
		perf_event_aux_event(handle->event, aux_head, size,
				     handle->aux_flags);

	WRITE_ONCE(rb->user_page->aux_head, rb->aux_head);
	if (rb_need_aux_wakeup(rb))
		wakeup = true;

	if (wakeup) {
		if (handle->aux_flags & PERF_AUX_FLAG_TRUNCATED)
			perf_event_disable_inatomic(handle->event);
		perf_output_wakeup(handle);
	}

	handle->event = NULL;

	WRITE_ONCE(rb->aux_nest, 0);
	rb_free_aux(rb);
	ring_buffer_put(rb);
}

int perf_aux_output_skip(struct perf_output_handle *handle, unsigned long size)
{
	struct perf_buffer *rb = handle->rb;

	if (size > handle->size)
		return -ENOSPC;

	rb->aux_head += size;

	WRITE_ONCE(rb->user_page->aux_head, rb->aux_head);
	if (rb_need_aux_wakeup(rb)) {
		perf_output_wakeup(handle);
		handle->wakeup = rb->aux_wakeup + rb->aux_watermark;
	}

	handle->head = rb->aux_head;
	handle->size -= size;

	return 0;
}

void *perf_get_aux(struct perf_output_handle *handle)
{
	/* this is only valid between perf_aux_output_begin and *_end */
	if (!handle->event)
		return NULL;

	return handle->rb->aux_priv;
}

void *vmap(struct page **pages, unsigned int count, unsigned long flags,
	   int prot)
{
	unsigned int i;

	/* The model's AUX pages are contiguous: vmap() is the identity. */
	for (i = 1; i < count; i++)
		if ((char *)pages[i] != (char *)pages[0] + i * PAGE_SIZE)
			return NULL;
	return pages[0];
}

/* ---- events, buffers and the scheduler ---- */

static struct perf_event *ev_create(const char *name, int cpu,
				    struct perf_event *parent)
{
	struct perf_event *e = calloc(1, sizeof(*e));

	e->name = name;
	e->cpu = cpu;
	e->parent = parent;
	e->hw.state = PERF_HES_STOPPED;
	e->state = HARNESS_EVENT_INACTIVE;
	events[nr_events++] = e;
	return e;
}

/* mmap() of the data and AUX areas by @owner: perf_mmap() + rb_alloc_aux(). */
static struct perf_buffer *rb_create(const char *name, struct perf_event *owner,
				     int nr_pages, bool overwrite,
				     long watermark)
{
	struct perf_buffer *rb = calloc(1, sizeof(*rb));
	int i;

	rb->name = name;
	rb->refcount = 1;
	rb->user_page = calloc(1, sizeof(*rb->user_page));
	rb->mem = aligned_alloc(PAGE_SIZE, nr_pages * PAGE_SIZE);
	memset(rb->mem, HW_POISON, nr_pages * PAGE_SIZE);
	rb->aux_pages = calloc(nr_pages, sizeof(void *));
	for (i = 0; i < nr_pages; i++)
		rb->aux_pages[i] = rb->mem + i * PAGE_SIZE;
	rb->aux_nr_pages = nr_pages;
	rb->aux_overwrite = overwrite;
	rb->aux_watermark = watermark ? watermark :
			    (long)nr_pages << (PAGE_SHIFT - 1);
	rb->aux_mmap_count = 1;
	rb->aux_refcount = 1;
	rb->aux_priv = etm_setup_aux(owner, rb->aux_pages, nr_pages, overwrite);
	owner->rb = rb;
	owner->has_mmap = true;
	rbs[nr_rbs++] = rb;
	return rb;
}

static struct perf_buffer *rb_for_addr(unsigned long addr)
{
	int i;

	for (i = 0; i < nr_rbs; i++) {
		unsigned long start = (unsigned long)rbs[i]->mem;

		if (!start)
			continue;
		if (addr >= start && addr < start + perf_aux_size(rbs[i]))
			return rbs[i];
	}
	return NULL;
}

static struct trbe_drvdata *harness_drvdata;

static struct perf_output_handle *hw_published_handle(int cpu)
{
	if (!harness_drvdata)
		return NULL;
	return *per_cpu_ptr(harness_drvdata->handle, cpu);
}

static bool perf_model_check_store(int cpu, unsigned long addr)
{
	struct perf_output_handle *h = hw_published_handle(cpu);
	struct perf_buffer *rb = rb_for_addr(addr);
	unsigned long size, off, hoff;

	if (!rb) {
		violation("cpu%d: TRBE store to 0x%lx, which no AUX buffer backs",
			  cpu, addr);
		return false;
	}
	if (!h || !h->event) {
		violation("cpu%d: TRBE store into rb %s with no open transaction",
			  cpu, rb->name);
		return true;
	}
	if (h->rb != rb) {
		violation("cpu%d: TRBE store into rb %s while the handle is bound to rb %s",
			  cpu, rb->name, h->rb->name);
		return true;
	}
	if (rb->aux_overwrite)
		return true;
	size = perf_aux_size(rb);
	off = addr - (unsigned long)rb->mem;
	hoff = h->head % size;
	if ((off + size - hoff) % size >= h->size) {
		violation_of("cpu%d", cpu,
			     "TRBE store into rb %s at offset %lu, outside [head %lu, head + size %lu)",
			     rb->name, off, h->head, h->head + h->size);
	}
	return true;
}

/* The perf core's irq_work: pending disables of events on this CPU. */
static void ev_sched_out(struct perf_event *e);

void irq_work_run(void)
{
	int i;

	for (i = 0; i < nr_events; i++) {
		struct perf_event *e = events[i];

		if (!e->pending_disable || e->cpu != harness_cpu)
			continue;
		e->pending_disable = false;
		/* perf_event_disable_local(): event_sched_out() + OFF */
		ev_sched_out(e);
		e->state = HARNESS_EVENT_OFF;
	}
}

static void harness_irq_work_all(void)
{
	int saved = harness_cpu, cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		harness_cpu = cpu;
		irq_work_run();
	}
	harness_cpu = saved;
}

static bool ev_sched_in(struct perf_event *e)
{
	int ret;

	if (e->state != HARNESS_EVENT_INACTIVE)
		return false;
	harness_cpu = e->cpu;
	ret = etm_event_add(e, PERF_EF_START);
	if (!ret)
		e->state = HARNESS_EVENT_ACTIVE;
	irq_work_run();
	return !ret;
}

static void ev_sched_out(struct perf_event *e)
{
	int saved = harness_cpu;

	if (e->state != HARNESS_EVENT_ACTIVE)
		return;
	harness_cpu = e->cpu;
	etm_event_del(e, 0);
	e->state = HARNESS_EVENT_INACTIVE;
	harness_cpu = saved;
}

/* PERF_EVENT_IOC_ENABLE on a parent also enables its children. */
static void ev_enable(struct perf_event *e)
{
	int i;

	if (e->state == HARNESS_EVENT_OFF)
		e->state = HARNESS_EVENT_INACTIVE;
	for (i = 0; i < nr_events; i++)
		if (events[i]->parent == e &&
		    events[i]->state == HARNESS_EVENT_OFF)
			events[i]->state = HARNESS_EVENT_INACTIVE;
}

/* perf_event_stop(): pmu::stop(PERF_EF_UPDATE) on an active event. */
static void perf_event_stop(struct perf_event *e, int restart)
{
	int saved = harness_cpu;

	if (e->state != HARNESS_EVENT_ACTIVE)
		return;
	harness_cpu = e->cpu;
	etm_event_stop(e, PERF_EF_UPDATE);
	if (restart)
		etm_event_start(e, 0);
	harness_cpu = saved;
}

/*
 * perf_event_aux_pause(): an overflow of a sampling event with
 * attr.aux_pause or aux_resume, in NMI, on the AUX event's CPU; the
 * irq_work it queues (a pending disable) runs right after.
 */
static void ev_aux_pause(struct perf_event *e, bool pause)
{
	int saved = harness_cpu;

	if (e->state != HARNESS_EVENT_ACTIVE)
		return;
	harness_cpu = e->cpu;
	if (pause && !e->hw.aux_paused) {
		e->hw.aux_paused = 1;
		etm_event_stop(e, PERF_EF_PAUSE);
	} else if (!pause && e->hw.aux_paused) {
		e->hw.aux_paused = 0;
		etm_event_start(e, PERF_EF_RESUME);
	}
	irq_work_run();
	harness_cpu = saved;
}

/* ring_buffer_attach(): stop the event itself, then swap its rb. */
static void ring_buffer_attach(struct perf_event *event, struct perf_buffer *rb)
{
	/* has_aux(event): cs_etm is an AUX PMU */
	perf_event_stop(event, 0);
	if (event->rb)
		ring_buffer_put(event->rb);
	event->rb = rb;
}

static void perf_event_stop_children(struct perf_event *event, int restart)
{
	int i;

	for (i = 0; i < nr_events; i++)
		if (events[i]->parent == event)
			perf_event_stop(events[i], restart);
}

/*
 * ioctl(event, PERF_EVENT_IOC_SET_OUTPUT, output), output NULL for fd -1:
 * perf_event_set_output(). The base core only stops @event; its children
 * keep their open transaction. The fixed core stops the children on the
 * old buffer and restarts them (and @event) on the new one.
 */
static int perf_model_set_output(struct perf_event *event,
				 struct perf_event *output)
{
	struct perf_buffer *rb = NULL;

	WARN_ON_ONCE(event->parent);
	if (output && (event == output || output->cpu != event->cpu))
		return -EINVAL;
	if (event->has_mmap)
		return -EINVAL;
	if (output) {
		rb = ring_buffer_get(output);
		if (!rb)
			return -EINVAL;
	}

	if (harness_core == HARNESS_CORE_BASE) {
		ring_buffer_attach(event, rb);
		return 0;
	}

	/* perf_event_switch_aux() */
	if (event->rb) {
		perf_event_stop(event, 0);
		perf_event_stop_children(event, 0);
	}
	ring_buffer_attach(event, rb);
	/* perf_event_restart_aux() */
	perf_event_stop(event, 1);
	perf_event_stop_children(event, 1);
	return 0;
}

/*
 * perf_pmu_output_stop(): stop every active AUX event whose output
 * event (the parent, for an inherited one) is on @rb right now.
 */
static void perf_pmu_output_stop(struct perf_buffer *rb)
{
	int i;

	for (i = 0; i < nr_events; i++) {
		struct perf_event *e = events[i];
		struct perf_event *parent = e->parent ?: e;

		if (parent->rb == rb)
			perf_event_stop(e, 0);
	}
}

/* munmap() of @rb's AUX area by its owner: perf_mmap_close(). */
static void perf_model_munmap_aux(struct perf_buffer *rb)
{
	if (!rb->aux_mmap_count || --rb->aux_mmap_count)
		return;
	perf_pmu_output_stop(rb);
	rb_free_aux(rb);
	WARN_ON_ONCE(rb->aux_refcount);
}

/* Userspace consumes up to @max bytes of AUX data and moves aux_tail. */
static unsigned long user_consume(struct perf_buffer *rb, unsigned long max)
{
	unsigned long tail = rb->user_page->aux_tail;
	unsigned long head = rb->user_page->aux_head;
	unsigned long size = perf_aux_size(rb), n, i;

	if (rb->aux_overwrite)
		return 0;
	n = min(head - tail, max);
	for (i = 0; i < n; i++)
		rb->mem[(tail + i) % size] = HW_POISON;
	rb->user_page->aux_tail = tail + n;
	return n;
}
