// SPDX-License-Identifier: GPL-2.0
/*
 * etm-perf model: what drivers/hwtracing/coresight/coresight-etm-perf.c
 * does around a per-CPU sink, reduced to one ETE source and the TRBE
 * sink per CPU. etm_event_start(), etm_event_stop(), etm_event_add() and
 * etm_event_del() follow the 7.3 code line by line (minus pause/resume,
 * address filters, configurations and the trace ID), including the
 * per-CPU ctxt->event_data and the WARN in etm_event_stop() that checks
 * perf_get_aux(handle) == ctxt->event_data. etm_perf_sink_config() is
 * the real one, from coresight-etm-perf.h.
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
 * trace in its own SRAM, so enabling it programs nothing the models
 * check; it only records that it is enabled.
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
	/* The model's ETE writes nothing the ETF would keep. */
	return 0;
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
	return 0;
}

static void etm_model_disable_source(struct coresight_path *path)
{
	hw[path_cpu(path)].source_enabled = false;
}

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
