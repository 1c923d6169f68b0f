// SPDX-License-Identifier: GPL-2.0
/* Probe, fill/wrap, snapshot, management IRQ status codes, begin failure. */

#define TCPU	1

static bool test_probe_reads_trbidr(void)
{
	int cpu;

	ASSERT_TRUE(harness_setup());
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct trbe_cpudata *cpudata = cpudata_of(cpu);

		ASSERT_TRUE(cpumask_test_cpu(cpu, &harness_drvdata->supported_cpus));
		ASSERT_EQ(cpudata->trbe_hw_align, 64);
		ASSERT_EQ(cpudata->trbe_align, 64);
		ASSERT_TRUE(cpudata->trbe_flag);
		ASSERT_EQ(cpudata->cpu, cpu);
		ASSERT_TRUE(coresight_get_percpu_sink(cpu));
		ASSERT_TRUE(dev_get_drvdata(&coresight_get_percpu_sink(cpu)->dev) == cpudata);
		ASSERT_TRUE(hw[cpu].irq_enabled);
		ASSERT_FALSE(hw_enabled(cpu));
		ASSERT_FALSE(trbe_may_overwrite_in_fill_mode(cpudata));
		ASSERT_FALSE(trbe_may_write_out_of_range(cpudata));
	}
	ASSERT_CLEAN();
	return true;
}

/* TRBIDR.P (owned by a higher EL), a broken TRBE, an unsupported Align. */
static bool test_probe_rejects_unusable_trbe(void)
{
	hw_reset_all();
	hw[1].trbidr |= TRBIDR_EL1_P;
	hw[2].caps[ARM64_WORKAROUND_1902691] = true;
	hw[3].trbidr = (hw[3].trbidr & ~TRBIDR_EL1_Align_MASK) | 12;
	ASSERT_FALSE(arm_trbe_init());
	ASSERT_FALSE(harness_platform_driver->probe(&harness_pdev));
	harness_drvdata = platform_get_drvdata(&harness_pdev);
	ASSERT_TRUE(cpumask_test_cpu(0, &harness_drvdata->supported_cpus));
	ASSERT_FALSE(cpumask_test_cpu(1, &harness_drvdata->supported_cpus));
	ASSERT_FALSE(cpumask_test_cpu(2, &harness_drvdata->supported_cpus));
	ASSERT_FALSE(cpumask_test_cpu(3, &harness_drvdata->supported_cpus));
	ASSERT_TRUE(coresight_get_percpu_sink(0));
	ASSERT_TRUE(!coresight_get_percpu_sink(1));
	ASSERT_TRUE(!coresight_get_percpu_sink(2));
	ASSERT_TRUE(!coresight_get_percpu_sink(3));
	ASSERT_CLEAN();
	return true;
}

static bool test_normal_fill_and_wrap(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;
	int round;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_CLEAN();
	ASSERT_TRUE(hw_enabled(TCPU));
	ASSERT_EQ(reg_base(TCPU), rb->mem);
	ASSERT_EQ(hw[TCPU].trbptr, rb->mem);
	/* wakeup at the watermark (half the buffer) bounds the first window */
	ASSERT_EQ(reg_limit(TCPU), rb->mem + 4 * PAGE_SIZE);
	ASSERT_TRUE(buf_of(rb)->cpudata == cpudata_of(TCPU));

	ASSERT_EQ(emit(TCPU, 10000), 10000);
	ASSERT_EQ(hw[TCPU].irqs_delivered, 0);
	ASSERT_EQ(hw[TCPU].trbptr, rb->mem + 10000);

	/* fill the window: wrap, IRQ, data committed, TRBE reprogrammed */
	ASSERT_EQ(hw_emit(TCPU, 10000), 4 * PAGE_SIZE - 10000);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].irqs_delivered, 1);
	ASSERT_EQ(rb->aux_head, 4 * PAGE_SIZE);
	ASSERT_EQ(rb->bytes_reported, 4 * PAGE_SIZE);
	ASSERT_EQ(rb->nr_collision, 1);
	ASSERT_TRUE(hw_enabled(TCPU));
	ASSERT_EQ(hw[TCPU].trbptr, rb->mem + 4 * PAGE_SIZE);
	ASSERT_TRUE(ctxt_of(TCPU)->handle.event == e);

	/* keep going around the ring, consuming behind the writer */
	for (round = 0; round < 6; round++) {
		user_consume(rb, ~0UL);
		emit(TCPU, 3 * PAGE_SIZE + 123);
		ASSERT_CLEAN();
		ASSERT_EQ(e->state, HARNESS_EVENT_ACTIVE);
	}
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_EQ(rb->bytes_reported, hw[TCPU].bytes_stored);
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!buf_of(rb)->cpudata);
	ASSERT_TRUE(rb->aux_head > (long)(8 * PAGE_SIZE));
	return true;
}

static bool test_buffer_full_truncates(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	/* nobody consumes: the buffer fills up and the event is disabled */
	emit(TCPU, 16 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_EQ(rb->nr_truncated, 1);
	ASSERT_EQ(e->state, HARNESS_EVENT_OFF);
	ASSERT_TRUE(!hw_published_handle(TCPU));
	ASSERT_TRUE(!ctxt_of(TCPU)->handle.event);
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	ASSERT_EQ(rb->bytes_reported, hw[TCPU].bytes_stored);
	ASSERT_TRUE(rb->user_page->aux_head - rb->user_page->aux_tail <
		    8 * PAGE_SIZE);

	/* userspace drains and re-enables: tracing resumes */
	user_consume(rb, ~0UL);
	ev_enable(e);
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_TRUE(hw_enabled(TCPU));
	emit(TCPU, PAGE_SIZE);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(rb->bytes_reported, hw[TCPU].bytes_stored);
	return true;
}

static bool test_misaligned_head_is_padded(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;
	unsigned long head, i;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	emit(TCPU, 1000);
	ev_sched_out(e);
	head = rb->aux_head;
	ASSERT_EQ(head, 1000);
	/* next session: head is padded up to the 64-byte TRBPTR alignment */
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].trbptr, rb->mem + 1024);
	ASSERT_EQ(rb->aux_head, 1024);
	for (i = head; i < 1024; i++)
		ASSERT_EQ(rb->mem[i], ETE_IGNORE_PACKET);
	emit(TCPU, 100);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(rb->aux_head, 1124);
	return true;
}

static bool test_snapshot_mode(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 4, true, 0);
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_CLEAN();
	ASSERT_TRUE(buf_of(rb)->snapshot);
	/* snapshot mode: the whole buffer, regardless of aux_tail */
	ASSERT_EQ(reg_limit(TCPU), rb->mem + 4 * PAGE_SIZE);
	ASSERT_EQ(emit(TCPU, 40000), 40000);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].irqs_delivered, 2);
	ASSERT_EQ(rb->aux_head, 2 * 4 * PAGE_SIZE);
	ASSERT_TRUE(rb->last_flags & PERF_AUX_FLAG_OVERWRITE);
	ASSERT_TRUE(hw_enabled(TCPU));
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(rb->aux_head, 40000);
	ASSERT_EQ(rb->user_page->aux_head, 40000);
	ASSERT_EQ(rb->last_size, 40000 - 2 * 4 * PAGE_SIZE);
	ASSERT_TRUE(rb->last_flags & PERF_AUX_FLAG_OVERWRITE);
	return true;
}

static bool test_spurious_irq(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;
	u64 limitr, baser, ptr;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	emit(TCPU, 1000);
	limitr = hw[TCPU].trblimitr;
	baser = hw[TCPU].trbbaser;
	ptr = hw[TCPU].trbptr;
	/* a management event that is neither a fill nor an abort */
	hw_inject_status(TCPU, TRBSR_EL1_S);
	harness_irq_work_all();
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].irqs_delivered, 1);
	ASSERT_FALSE(hw[TCPU].trbsr & TRBSR_EL1_IRQ);
	ASSERT_EQ(hw[TCPU].trblimitr, limitr);
	ASSERT_EQ(hw[TCPU].trbbaser, baser);
	ASSERT_EQ(hw[TCPU].trbptr, ptr);
	ASSERT_TRUE(ctxt_of(TCPU)->handle.event == e);
	ASSERT_EQ(rb->nr_records, 0);
	ASSERT_EQ(e->state, HARNESS_EVENT_ACTIVE);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(rb->bytes_reported, 1000);
	return true;
}

static bool fatal_status(u64 status)
{
	struct perf_event *e;
	struct perf_buffer *rb;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	emit(TCPU, 1000);
	hw_inject_status(TCPU, status);
	harness_irq_work_all();
	ASSERT_CLEAN();
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_EQ(rb->nr_truncated, 1);
	ASSERT_EQ(rb->bytes_reported, 0);
	ASSERT_EQ(e->state, HARNESS_EVENT_OFF);
	ASSERT_TRUE(!hw_published_handle(TCPU));
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	return true;
}

static bool test_fatal_external_abort(void)
{
	return fatal_status(TRBSR_EL1_S | TRBSR_EL1_EA);
}

static bool test_fatal_stage1_abort(void)
{
	return fatal_status(TRBSR_EL1_S |
			    ((u64)TRBE_EC_STAGE1_ABORT << TRBSR_EL1_EC_SHIFT));
}

static bool test_fatal_stage2_abort(void)
{
	return fatal_status(TRBSR_EL1_S |
			    ((u64)TRBE_EC_STAGE2_ABORT << TRBSR_EL1_EC_SHIFT));
}

static bool test_fatal_trigger(void)
{
	return fatal_status(TRBSR_EL1_S | TRBSR_EL1_TRG);
}

static bool test_begin_failure(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	fail_aux_begin = true;
	emit(TCPU, 8 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].irqs_delivered, 1);
	ASSERT_EQ(rb->bytes_reported, 4 * PAGE_SIZE);
	/* disconnected handle: TRBE off, etm-perf sees handle->event == NULL */
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_TRUE(!hw_published_handle(TCPU));
	ASSERT_TRUE(!ctxt_of(TCPU)->handle.event);
	ASSERT_EQ(e->state, HARNESS_EVENT_ACTIVE);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	ASSERT_TRUE(!buf_of(rb)->cpudata);

	fail_aux_begin = false;
	user_consume(rb, ~0UL);
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_TRUE(hw_enabled(TCPU));
	emit(TCPU, 100);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(rb->bytes_reported, 4 * PAGE_SIZE + 100);
	return true;
}
