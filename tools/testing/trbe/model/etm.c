// SPDX-License-Identifier: GPL-2.0
/*
 * etm-perf model: what drivers/hwtracing/coresight/coresight-etm-perf.c
 * does around a per-CPU sink, reduced to one ETE source and the TRBE
 * sink per CPU. etm_event_start(), etm_event_stop(), etm_event_add() and
 * etm_event_del() follow the 7.3 code line by line (minus address
 * filters, configurations and the trace ID), including the per-CPU
 * ctxt->event_data and the WARN in etm_event_stop() that checks
 * perf_get_aux(handle) == ctxt->event_data. etm_perf_sink_config() is
 * the real one, from coresight-etm-perf.h, and so are the AUX pause and
 * resume, etm_event_pause() and etm_event_resume(): the Makefile takes
 * them out of the tree's coresight-etm-perf.c (generated/etm-perf-pause.c).
 *
 * Buffer lifetime: etm_free_aux() is what perf's __rb_free_aux() calls
 * when the last reference to an AUX area goes (munmap, model/perf.c). It
 * frees the sink buffer through the sink's free_buffer callback (for the
 * TRBE, the driver's arm_trbe_free_buffer()), the paths and the event
 * data, at once rather than from a work item, so that ASan reports any
 * later access to them.
 *
 * A second sink, an ETF, stands for a cs_etm event whose config2 names
 * a sink other than the per-CPU TRBE: its sink configuration is a
 * struct cs_buffers from the real coresight-priv.h, allocated with
 * exactly its size as tmc_alloc_etf_buffer() does. The ETF keeps the
 * trace in its own SRAM (etf_emit() puts bytes there, while the ETE is
 * enabled and not paused), so enabling it programs nothing the models
 * check; it records that it is enabled. Its update_buffer() copies the
 * SRAM into the AUX pages of the sink configuration it is given, at the
 * handle's head, as tmc_update_etf_buffer() does, and checks that the
 * configuration is the one of the buffer the handle is bound to.
 */

struct etm_ctxt {
	struct perf_output_handle handle;
	struct etm_event_data *event_data;
};

static struct etm_ctxt etm_ctxt_percpu[NR_CPUS];
static struct coresight_device *percpu_sink[NR_CPUS];

/* A path: the ETE of @cpu to @sink (the TRBE of that CPU, or the ETF). */
struct harness_path {
	struct coresight_path path;
	struct coresight_device *sink;
	int cpu;
};

static unsigned long etm_aux_freed;	/* etm_free_aux() calls */
static unsigned long etf_enabled[NR_CPUS];
static unsigned long etf_sram[NR_CPUS];	/* bytes in the ETF, not yet copied */
static bool ete_paused[NR_CPUS];	/* coresight_pause_source() */
#define ETF_BYTE	0xe7

static void *etf_alloc_buffer(struct coresight_device *csdev,
			      struct perf_event *event, void **pages,
			      int nr_pages, bool overwrite)
{
	/* tmc_alloc_etf_buffer() */
	struct cs_buffers *buf = kzalloc_node(sizeof(*buf), GFP_KERNEL,
					      NUMA_NO_NODE);

	if (!buf)
		return NULL;
	buf->snapshot = overwrite;
	buf->nr_pages = nr_pages;
	buf->data_pages = pages;
	return buf;
}

static void etf_free_buffer(void *config)
{
	kfree(config);
}

static int etf_enable(struct coresight_device *csdev, enum cs_mode mode,
		      struct coresight_path *path)
{
	struct cs_buffers *buf = etm_perf_sink_config(path->handle);

	if (!buf)
		return -EINVAL;
	etf_enabled[harness_cpu]++;
	return 0;
}

static int etf_disable(struct coresight_device *csdev)
{
	if (!etf_enabled[harness_cpu])
		violation("cpu%d: ETF disabled, not enabled", harness_cpu);
	else
		etf_enabled[harness_cpu]--;
	return 0;
}

static unsigned long etf_update_buffer(struct coresight_device *csdev,
				       struct perf_output_handle *handle,
				       void *sink_config)
{
	struct cs_buffers *buf = sink_config;
	struct etm_event_data *bound = perf_get_aux(handle);
	unsigned long size = etf_sram[harness_cpu], bufsize, i;

	if (!buf || !size)
		return 0;
	if (!bound || bound->snk_config != buf) {
		violation("cpu%d: ETF copies into another buffer than rb %s",
			  harness_cpu, handle->rb ? handle->rb->name : "(none)");
		return 0;
	}
	etf_sram[harness_cpu] = 0;
	if (size > handle->size) {
		size = handle->size;
		perf_aux_output_flag(handle, PERF_AUX_FLAG_TRUNCATED);
	}
	bufsize = (unsigned long)buf->nr_pages << PAGE_SHIFT;
	for (i = 0; i < size; i++) {
		unsigned long off = (handle->head + i) % bufsize;

		((u8 *)buf->data_pages[off >> PAGE_SHIFT])[off % PAGE_SIZE] =
			ETF_BYTE;
	}
	return size;
}

/* The ETE of @cpu emits @len bytes into the ETF (none while paused). */
static void etf_emit(int cpu, unsigned long len)
{
	if (etf_enabled[cpu] && hw[cpu].source_enabled)
		etf_sram[cpu] += len;
}

static const struct coresight_ops_sink etf_sink_ops = {
	.enable		= etf_enable,
	.disable	= etf_disable,
	.alloc_buffer	= etf_alloc_buffer,
	.free_buffer	= etf_free_buffer,
	.update_buffer	= etf_update_buffer,
};

static const struct coresight_ops etf_ops = {
	.sink_ops	= &etf_sink_ops,
};

static struct coresight_device etf_csdev = {
	.type		= CORESIGHT_DEV_TYPE_SINK,
	.subtype.sink_subtype = CORESIGHT_DEV_SUBTYPE_SINK_BUFFER,
	.ops		= &etf_ops,
	.cpu		= -1,
};

struct coresight_device *coresight_register(struct coresight_desc *desc)
{
	struct coresight_device *csdev = calloc(1, sizeof(*csdev));

	csdev->pdata = desc->pdata;
	csdev->type = desc->type;
	csdev->subtype = desc->subtype;
	csdev->ops = desc->ops;
	csdev->dev.parent = desc->dev;
	csdev->dev.name = desc->name;
	csdev->cpu = desc->cpu;
	return csdev;
}

struct coresight_device *coresight_get_percpu_sink(int cpu)
{
	return percpu_sink[cpu];
}

void coresight_set_percpu_sink(int cpu, struct coresight_device *csdev)
{
	percpu_sink[cpu] = csdev;
}

static struct coresight_path *etm_event_cpu_path(struct etm_event_data *data,
						 int cpu)
{
	return *per_cpu_ptr(data->path, cpu);
}

static struct coresight_path *etm_event_get_ctxt_path(struct etm_ctxt *ctxt)
{
	struct etm_event_data *event_data = READ_ONCE(ctxt->event_data);

	if (!event_data)
		return NULL;
	return etm_event_cpu_path(event_data, smp_processor_id());
}

static int path_cpu(struct coresight_path *path)
{
	return container_of(path, struct harness_path, path)->cpu;
}

/* Declared by coresight-priv.h, as the following two. */
struct coresight_device *coresight_get_sink(struct coresight_path *path)
{
	return container_of(path, struct harness_path, path)->sink;
}

int coresight_enable_path(struct coresight_path *path, enum cs_mode mode)
{
	struct coresight_device *sink = coresight_get_sink(path);

	return sink_ops(sink)->enable(sink, mode, path);
}

void coresight_disable_path(struct coresight_path *path)
{
	struct coresight_device *sink = coresight_get_sink(path);

	sink_ops(sink)->disable(sink);
}

/* etm4_enable_perf(): the ETE allows tracing at EL0 and EL1 through TRFCR. */
static int etm_model_enable_source(struct coresight_path *path)
{
	struct trbe_hw *t = &hw[path_cpu(path)];

	t->trfcr |= TRFCR_EL1_ExTRE | TRFCR_EL1_E0TRE;
	t->source_enabled = true;
	ete_paused[path_cpu(path)] = false;
	return 0;
}

static void etm_model_disable_source(struct coresight_path *path)
{
	hw[path_cpu(path)].source_enabled = false;
	ete_paused[path_cpu(path)] = false;
}

/* The ETE of each CPU, for the source calls of etm_event_pause/resume(). */
static struct coresight_device ete_csdev[NR_CPUS];

struct coresight_device *coresight_get_source(struct coresight_path *path)
{
	int cpu = path_cpu(path);

	ete_csdev[cpu].type = CORESIGHT_DEV_TYPE_SOURCE;
	ete_csdev[cpu].cpu = cpu;
	ete_csdev[cpu].dev.name = "ete";
	return &ete_csdev[cpu];
}

/* etm4_pause_perf() and etm4_resume_perf(): TRBE or ETF, the ETE stops. */
void coresight_pause_source(struct coresight_device *csdev)
{
	if (hw[csdev->cpu].source_enabled) {
		hw[csdev->cpu].source_enabled = false;
		ete_paused[csdev->cpu] = true;
	}
}

int coresight_resume_source(struct coresight_device *csdev)
{
	if (ete_paused[csdev->cpu]) {
		hw[csdev->cpu].source_enabled = true;
		ete_paused[csdev->cpu] = false;
	}
	return 0;
}

#include "etm-perf-pause.c"

static void *etm_setup_aux(struct perf_event *event, void **pages,
			   int nr_pages, bool overwrite)
{
	struct etm_event_data *event_data = calloc(1, sizeof(*event_data));
	struct coresight_device *sink = NULL;
	int cpu;

	event_data->path = calloc(NR_CPUS, sizeof(*event_data->path));
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct harness_path *hp;

		if (!percpu_sink[cpu])
			continue;
		if (event->cpu != -1 && event->cpu != cpu)
			continue;
		hp = calloc(1, sizeof(*hp));
		hp->cpu = cpu;
		hp->path.trace_id = cpu;
		hp->sink = event->sink_etf ? &etf_csdev : percpu_sink[cpu];
		*per_cpu_ptr(event_data->path, cpu) = &hp->path;
		cpumask_set_cpu(cpu, &event_data->mask);
		if (!sink)
			sink = hp->sink;
	}
	if (sink)
		event_data->snk_config =
			sink_ops(sink)->alloc_buffer(sink, event, pages,
						     nr_pages, overwrite);
	return event_data;
}

/* etm_free_aux() and free_event_data(), synchronously. */
static void etm_free_aux(void *data)
{
	struct etm_event_data *event_data = data;
	struct coresight_device *sink;
	int cpu;

	etm_aux_freed++;
	/* free_sink_buffer() */
	if (event_data->snk_config) {
		cpu = cpumask_next(-1, &event_data->mask);
		if (!WARN_ON(cpu >= NR_CPUS)) {
			sink = coresight_get_sink(etm_event_cpu_path(event_data,
								     cpu));
			sink_ops(sink)->free_buffer(event_data->snk_config);
		}
	}
	for_each_cpu(cpu, &event_data->mask)
		free(container_of(etm_event_cpu_path(event_data, cpu),
				  struct harness_path, path));
	free(event_data->path);
	free(event_data);
}

static void etm_event_start(struct perf_event *event, int flags)
{
	int cpu = smp_processor_id();
	struct etm_event_data *event_data;
	struct etm_ctxt *ctxt = &etm_ctxt_percpu[cpu];
	struct perf_output_handle *handle = &ctxt->handle;
	struct coresight_path *path;

	if (flags & PERF_EF_RESUME) {
		path = etm_event_get_ctxt_path(ctxt);
		if (etm_event_resume(path) < 0)
			goto fail;
		return;
	}

	/* Have we messed up our tracking ? */
	if (WARN_ON(READ_ONCE(ctxt->event_data)))
		goto fail;

	event_data = perf_aux_output_begin(handle, event);
	if (!event_data)
		goto fail;

	if (!cpumask_test_cpu(cpu, &event_data->mask))
		goto out;

	path = etm_event_cpu_path(event_data, cpu);
	path->handle = handle;

	/* Nothing will happen without a path */
	if (coresight_enable_path(path, CS_MODE_PERF))
		goto fail_end_stop;

	/* Finally enable the tracer */
	if (etm_model_enable_source(path))
		goto fail_disable_path;

out:
	/* Tell the perf core the event is alive */
	event->hw.state = 0;
	/* Save the event_data for this ETM */
	WRITE_ONCE(ctxt->event_data, event_data);
	return;

fail_disable_path:
	coresight_disable_path(path);
fail_end_stop:
	if (READ_ONCE(handle->event)) {
		perf_aux_output_flag(handle, PERF_AUX_FLAG_TRUNCATED);
		perf_aux_output_end(handle, 0);
	}
fail:
	event->hw.state = PERF_HES_STOPPED;
}

static void etm_event_stop(struct perf_event *event, int mode)
{
	int cpu = smp_processor_id();
	unsigned long size;
	struct coresight_device *sink;
	struct etm_ctxt *ctxt = &etm_ctxt_percpu[cpu];
	struct perf_output_handle *handle = &ctxt->handle;
	struct coresight_path *path = etm_event_get_ctxt_path(ctxt);
	struct etm_event_data *event_data;

	if (mode & PERF_EF_PAUSE)
		return etm_event_pause(path, event, ctxt);

	/*
	 * If we still have access to the event_data via handle,
	 * confirm that we haven't messed up the tracking.
	 */
	if (handle->event &&
	    WARN_ON(perf_get_aux(handle) != ctxt->event_data))
		return;

	event_data = READ_ONCE(ctxt->event_data);
	/* Clear the event_data as this ETM is stopping the trace. */
	WRITE_ONCE(ctxt->event_data, NULL);

	if (event->hw.state == PERF_HES_STOPPED)
		return;

	/* We must have a valid event_data for a running event */
	if (WARN_ON(!event_data))
		return;

	if (handle->event && (mode & PERF_EF_UPDATE) &&
	    !cpumask_test_cpu(cpu, &event_data->mask)) {
		event->hw.state = PERF_HES_STOPPED;
		perf_aux_output_end(handle, 0);
		return;
	}

	if (!path)
		return;
	sink = coresight_get_sink(path);

	/* stop tracer */
	etm_model_disable_source(path);

	/* tell the core */
	event->hw.state = PERF_HES_STOPPED;

	if (handle->event && (mode & PERF_EF_UPDATE)) {
		if (WARN_ON_ONCE(handle->event != event))
			return;

		size = sink_ops(sink)->update_buffer(sink, handle,
						     event_data->snk_config);
		if (READ_ONCE(handle->event))
			perf_aux_output_end(handle, size);
		else
			WARN_ON(size);
	}

	/* Disabling the path make its elements available to other sessions */
	coresight_disable_path(path);
}

static int etm_event_add(struct perf_event *event, int mode)
{
	int ret = 0;
	struct hw_perf_event *hwc = &event->hw;

	if (mode & PERF_EF_START) {
		etm_event_start(event, 0);
		if (hwc->state & PERF_HES_STOPPED)
			ret = -EINVAL;
	} else {
		hwc->state = PERF_HES_STOPPED;
	}

	return ret;
}

static void etm_event_del(struct perf_event *event, int mode)
{
	etm_event_stop(event, PERF_EF_UPDATE);
}
