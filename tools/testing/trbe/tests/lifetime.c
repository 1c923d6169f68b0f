// SPDX-License-Identifier: GPL-2.0
/*
 * AUX buffer lifetime: munmap() of an AUX area frees the sink buffer and
 * the event data (etm_free_aux(), arm_trbe_free_buffer()), so ASan
 * reports any later access to them.
 */

/* An idle event's AUX area is freed through the driver's free path. */
static bool test_munmap_frees_aux(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	emit(TCPU, 3 * PAGE_SIZE);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(rb->bytes_reported, 3 * PAGE_SIZE);
	ASSERT_EQ(rb->aux_refcount, 1);
	perf_model_munmap_aux(rb);
	ASSERT_CLEAN();
	ASSERT_TRUE(rb->aux_freed);
	ASSERT_TRUE(!rb->aux_priv);
	ASSERT_EQ(etm_aux_freed, 1);
	/* with no AUX area, the next start fails and nothing is traced */
	ASSERT_FALSE(ev_sched_in(e));
	ASSERT_FALSE(hw_enabled(TCPU));
	emit(TCPU, PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].bytes_stored, 3 * PAGE_SIZE);
	return true;
}

/*
 * munmap() while the event traces into the area: perf_pmu_output_stop()
 * stops it first, its transaction ends, then the area is freed.
 */
static bool test_munmap_stops_active_event(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;

	ASSERT_TRUE(harness_setup());
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	emit(TCPU, 5000);
	ASSERT_TRUE(hw_enabled(TCPU));
	perf_model_munmap_aux(rb);
	ASSERT_CLEAN();
	ASSERT_TRUE(rb->aux_freed);
	ASSERT_EQ(rb->bytes_reported, 5000);
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	/* the event is still scheduled in, stopped: its stop is a no-op */
	ASSERT_EQ(e->state, HARNESS_EVENT_ACTIVE);
	emit(TCPU, PAGE_SIZE);
	ev_sched_out(e);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].bytes_stored, 5000);
	return true;
}

/* P -> A, its child C scheduled in and 5000 bytes traced into A. */
static bool child_traced_into_a(struct redirect_fixture *f)
{
	ASSERT_TRUE(harness_setup());
	redirect_fixture(f, TCPU);
	ASSERT_TRUE(ev_sched_in(f->c));
	emit(TCPU, 5000);
	ASSERT_CLEAN();
	return true;
}

/*
 * The failed-begin use after free. P -> A, the child C traces into A;
 * SET_OUTPUT(P, -1). With the base core C keeps its transaction on A; its
 * next overflow ends it and the begin fails (P has no buffer): the driver
 * leaves the TRBE disabled and the handle disconnected, but C stays
 * scheduled in with etm-perf's ctxt->event_data and the TRBE's
 * cpudata->buf on A. A's owner unmaps A: perf_pmu_output_stop() skips C
 * (its parent is no longer on A), so A's event data and trbe_buf are
 * freed, and C's next etm_event_stop() reads them (ASan:
 * heap-use-after-free), whichever driver. With the fixed core SET_OUTPUT
 * stops C on A before it detaches A, so nothing refers to A any more
 * when it is freed.
 */
static bool test_failed_begin_use_after_free(void)
{
	struct redirect_fixture f;

	ASSERT_TRUE(child_traced_into_a(&f));

	ASSERT_EQ(perf_model_set_output(f.p, NULL), 0);
	ASSERT_TRUE(!f.p->rb);
	ASSERT_CLEAN();
	if (harness_core == HARNESS_CORE_FIXED) {
		/* stopped on A, the restart's begin failed: stays stopped */
		ASSERT_EQ(f.a->bytes_reported, 5000);
		ASSERT_FALSE(hw_enabled(TCPU));
		ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
		ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	} else {
		ASSERT_TRUE(hw_enabled(TCPU));
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	}

	printf("# C fills its window on A; the overflow IRQ's begin fails\n");
	emit(TCPU, 4 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_EQ(f.c->state, HARNESS_EVENT_ACTIVE);
	if (harness_core == HARNESS_CORE_BASE) {
		ASSERT_TRUE(!hw_published_handle(TCPU));
		ASSERT_TRUE(!ctxt_of(TCPU)->handle.event);
		ASSERT_EQ(f.a->bytes_reported, 4 * PAGE_SIZE);
		printf("# after the failed begin: C active, ctxt->event_data %s, cpudata->buf %s\n",
		       ctxt_of(TCPU)->event_data == f.a->aux_priv ? "on A" : "not on A",
		       cpudata_of(TCPU)->buf == buf_of(f.a) ? "on A" : "not on A");
	}

	printf("# A's owner unmaps A\n");
	perf_model_munmap_aux(f.a);
	ASSERT_TRUE(f.a->aux_freed);
	ASSERT_EQ(etm_aux_freed, 1);
	printf("# C is scheduled out\n");
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);

	/* a new output: C traces into B from its next sched-in */
	ASSERT_EQ(perf_model_set_output(f.p, f.ob), 0);
	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_EQ(reg_base(TCPU), f.b->mem);
	emit(TCPU, 2 * PAGE_SIZE);
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_EQ(f.b->bytes_reported, 2 * PAGE_SIZE);
	return true;
}

/*
 * The old buffer freed in the overflow interrupt. P -> A, C traces into
 * A; SET_OUTPUT(P, B). With the base core C keeps its transaction, and
 * with it a reference to A's AUX area, so when A's owner unmaps A
 * (perf_pmu_output_stop() skips C: its parent is on B) the area stays
 * until C lets go of it. C's next overflow does: perf_aux_output_end()
 * on A drops the last reference, which frees A's event data and trbe_buf
 * (etm_free_aux(); the model frees at once, etm-perf from a work item
 * queued on this CPU, which cannot run before the handler returns). The
 * driver's truncation path after that end should not read the trbe_buf
 * all the same: the series driver takes the cpudata before the end. C's
 * etm-perf context still points at A's freed event data, which only the
 * fixed core avoids (as in test_failed_begin_use_after_free). With the
 * fixed core SET_OUTPUT stopped C on A and restarted it on B before A
 * was unmapped.
 */
static bool test_set_output_overflow_frees_old(void)
{
	struct redirect_fixture f;

	ASSERT_TRUE(child_traced_into_a(&f));

	ASSERT_EQ(perf_model_set_output(f.p, f.ob), 0);
	ASSERT_CLEAN();
	printf("# A's owner unmaps A\n");
	perf_model_munmap_aux(f.a);
	if (harness_core == HARNESS_CORE_BASE) {
		/* C still holds A: not freed yet */
		ASSERT_FALSE(f.a->aux_freed);
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	} else {
		ASSERT_TRUE(f.a->aux_freed);
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.b);
	}
	printf("# C fills its window; the overflow IRQ ends on A and begins on B\n");
	emit(TCPU, 4 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_TRUE(f.a->aux_freed);
	ASSERT_EQ(etm_aux_freed, 1);
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	return true;
}
