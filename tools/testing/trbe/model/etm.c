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
 */

struct etm_ctxt {
	struct perf_output_handle handle;
	struct etm_event_data *event_data;
};

static struct etm_ctxt etm_ctxt_percpu[NR_CPUS];
static struct coresight_device *percpu_sink[NR_CPUS];

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

/* A path is source (the ETE) -> sink (the TRBE of the same CPU). */
static int path_cpu(struct coresight_path *path)
{
	return (int)path->trace_id;
}

static struct coresight_device *coresight_get_sink(struct coresight_path *path)
{
	return percpu_sink[path_cpu(path)];
}

static int coresight_enable_path(struct coresight_path *path,
				 enum cs_mode mode)
{
	struct coresight_device *sink = coresight_get_sink(path);

	return sink_ops(sink)->enable(sink, mode, path);
}

static void coresight_disable_path(struct coresight_path *path)
{
	struct coresight_device *sink = coresight_get_sink(path);

	sink_ops(sink)->disable(sink);
}

/* etm4_enable_perf(): the ETE allows tracing at EL0 and EL1 through TRFCR. */
static int coresight_enable_source(struct coresight_path *path)
{
	struct trbe_hw *t = &hw[path_cpu(path)];

	t->trfcr |= TRFCR_EL1_ExTRE | TRFCR_EL1_E0TRE;
	t->source_enabled = true;
	return 0;
}

static void coresight_disable_source(struct coresight_path *path)
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
		struct coresight_path *path;

		if (!percpu_sink[cpu])
			continue;
		if (event->cpu != -1 && event->cpu != cpu)
			continue;
		path = calloc(1, sizeof(*path));
		path->trace_id = cpu;
		*per_cpu_ptr(event_data->path, cpu) = path;
		cpumask_set_cpu(cpu, &event_data->mask);
		if (!sink)
			sink = percpu_sink[cpu];
	}
	if (sink)
		event_data->snk_config =
			sink_ops(sink)->alloc_buffer(sink, event, pages,
						     nr_pages, overwrite);
	return event_data;
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
	if (coresight_enable_source(path))
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
	coresight_disable_source(path);

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
