// SPDX-License-Identifier: GPL-2.0
/* The TRBE errata the driver works around, switched on per test. */

static bool test_erratum_overwrite_fill_mode(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;
	unsigned long i;
	int round;

	ASSERT_TRUE(harness_setup_errata(ERRATUM_OVERWRITE_FILL_MODE, BIT(TCPU)));
	ASSERT_TRUE(trbe_may_overwrite_in_fill_mode(cpudata_of(TCPU)));
	ASSERT_EQ(cpudata_of(TCPU)->trbe_align, PAGE_SIZE);
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_CLEAN();
	/* BASE at the page of the write offset, TRBPTR 256 bytes into it */
	ASSERT_EQ(reg_base(TCPU), rb->mem);
	ASSERT_EQ(hw[TCPU].trbptr,
		  rb->mem + TRBE_WORKAROUND_OVERWRITE_FILL_MODE_SKIP_BYTES);
	emit(TCPU, 4 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].irqs_delivered, 1);
	ASSERT_EQ(rb->bytes_reported, 4 * PAGE_SIZE);
	/* the bytes the unit may have overwritten are IGNORE padding */
	for (i = 0; i < TRBE_WORKAROUND_OVERWRITE_FILL_MODE_SKIP_BYTES; i++)
		ASSERT_EQ(rb->mem[i], ETE_IGNORE_PACKET);
	ASSERT_EQ(reg_base(TCPU), rb->mem + 4 * PAGE_SIZE);
	for (round = 0; round < 5; round++) {
		user_consume(rb, ~0UL);
		emit(TCPU, 3 * PAGE_SIZE + 77);
		ASSERT_CLEAN();
	}
	ev_sched_out(e);
	ASSERT_CLEAN();
	return true;
}

static bool test_erratum_write_out_of_range(void)
{
	struct perf_event *e;
	struct perf_buffer *rb;
	int round;

	ASSERT_TRUE(harness_setup_errata(ERRATUM_WRITE_OUT_OF_RANGE, BIT(TCPU)));
	ASSERT_TRUE(trbe_may_write_out_of_range(cpudata_of(TCPU)));
	e = ev_create("E", TCPU, NULL);
	rb = rb_create("E", e, 8, false, 0);
	ASSERT_TRUE(ev_sched_in(e));
	ASSERT_CLEAN();
	/* LIMIT one page short of the window: the unit may write past it */
	ASSERT_EQ(reg_limit(TCPU), rb->mem + 3 * PAGE_SIZE);
	emit(TCPU, 4 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_EQ(hw[TCPU].irqs_delivered, 1);
	ASSERT_EQ(rb->bytes_reported, 3 * PAGE_SIZE);
	for (round = 0; round < 8; round++) {
		user_consume(rb, ~0UL);
		emit(TCPU, 2 * PAGE_SIZE + 999);
		ASSERT_CLEAN();
	}
	ev_sched_out(e);
	ASSERT_CLEAN();
	return true;
}
