// SPDX-License-Identifier: GPL-2.0
/*
 * The PERF_EVENT_IOC_SET_OUTPUT scenario: P is a per-task, per-CPU,
 * inherited cs_etm event without a mapping of its own; A and B are AUX
 * buffers mapped by two other, disabled events on the same CPU. P's
 * output goes to A, the child C (C->parent == P) traces into A, P is
 * redirected to B (ring_buffer_attach() stops only P, which is not
 * running), then C's TRBE fills its window and raises the IRQ:
 * perf_aux_output_begin() in trbe_handle_overflow() follows C->parent
 * and binds the handle to B, which has never been enabled on this CPU.
 *
 * That is the base perf core (CORE=base). With the fixed core
 * (CORE=fixed) SET_OUTPUT stops C on A and restarts it on B, so no
 * overflow ever begins on another buffer: the same tests then check that
 * C's data up to the redirect is reported in A and that C goes on
 * tracing into B, with no IRQ rebind at all.
 */

struct redirect_fixture {
	struct perf_event *oa, *ob, *p, *c;
	struct perf_buffer *a, *b;
};

static void __redirect_fixture(struct redirect_fixture *f, int cpu,
			       bool snapshot)
{
	f->oa = ev_create("A-owner", cpu, NULL);
	f->a = rb_create("A", f->oa, 8, snapshot, 0);
	f->oa->state = HARNESS_EVENT_OFF;
	f->ob = ev_create("B-owner", cpu, NULL);
	f->b = rb_create("B", f->ob, 8, snapshot, 0);
	f->ob->state = HARNESS_EVENT_OFF;
	f->p = ev_create("P", cpu, NULL);
	perf_model_set_output(f->p, f->oa);
	f->c = ev_create("C", cpu, f->p);
}

static void redirect_fixture(struct redirect_fixture *f, int cpu)
{
	__redirect_fixture(f, cpu, false);
}

/* Fixed core: SET_OUTPUT moved C from A, ended at @a_bytes, to B. */
static bool restarted_on_b(struct redirect_fixture *f, unsigned long a_head)
{
	ASSERT_EQ(f->c->state, HARNESS_EVENT_ACTIVE);
	ASSERT_EQ(f->a->aux_head, a_head);
	ASSERT_TRUE(!buf_of(f->a)->cpudata);
	ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f->b);
	ASSERT_TRUE(ctxt_of(TCPU)->handle.event == f->c);
	ASSERT_TRUE(buf_of(f->b)->cpudata == cpudata_of(TCPU));
	ASSERT_TRUE(cpudata_of(TCPU)->buf == buf_of(f->b));
	ASSERT_TRUE(hw_enabled(TCPU));
	ASSERT_EQ(reg_base(TCPU), f->b->mem);
	ASSERT_CLEAN();
	return true;
}

static bool test_set_output_redirect_overflow(void)
{
	struct redirect_fixture f;

	ASSERT_TRUE(harness_setup());
	redirect_fixture(&f, TCPU);
	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_CLEAN();
	ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	ASSERT_TRUE(buf_of(f.a)->cpudata == cpudata_of(TCPU));
	ASSERT_EQ(reg_base(TCPU), f.a->mem);
	emit(TCPU, 5000);

	/* redirect the parent while the child's transaction is on A */
	ASSERT_EQ(perf_model_set_output(f.p, f.ob), 0);
	ASSERT_TRUE(f.p->rb == f.b);
	if (harness_core == HARNESS_CORE_FIXED) {
		ASSERT_TRUE(restarted_on_b(&f, 5000));
		ASSERT_EQ(f.a->bytes_reported, 5000);
		emit(TCPU, 6 * PAGE_SIZE);
		ASSERT_CLEAN();
		ASSERT_EQ(irq_rebinds, 0);
		ASSERT_EQ(f.b->bytes_reported, 4 * PAGE_SIZE);
		ASSERT_EQ(reg_base(TCPU), f.b->mem);
		ev_sched_out(f.c);
		ASSERT_CLEAN();
		ASSERT_EQ(f.a->bytes_reported + f.b->bytes_reported,
			  hw[TCPU].bytes_stored);
		return true;
	}
	ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	ASSERT_TRUE(!buf_of(f.b)->cpudata);
	ASSERT_CLEAN();

	/* the child's next overflow */
	printf("# C fills its window on A; the overflow IRQ begins a new transaction\n");
	emit(TCPU, 4 * PAGE_SIZE);
	printf("# survived the overflow: %lu IRQ rebind(s)\n", irq_rebinds);
	ASSERT_CLEAN();
	ASSERT_EQ(irq_rebinds, 1);
	ASSERT_EQ(f.a->bytes_reported, 4 * PAGE_SIZE);
	/* the new transaction on B was ended truncated, B never programmed */
	ASSERT_EQ(f.b->bytes_reported, 0);
	ASSERT_EQ(f.b->nr_truncated, 1);
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_TRUE(!hw_published_handle(TCPU));
	ASSERT_TRUE(!buf_of(f.b)->cpudata);
	/* perf disabled C; etm-perf tore the A path down without a WARN */
	ASSERT_EQ(f.c->state, HARNESS_EVENT_OFF);
	ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
	ASSERT_TRUE(!buf_of(f.a)->cpudata);
	ASSERT_TRUE(!cpudata_of(TCPU)->buf);

	/* re-enabling installs B through the sink enable path */
	ev_enable(f.p);
	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_CLEAN();
	ASSERT_EQ(reg_base(TCPU), f.b->mem);
	ASSERT_TRUE(buf_of(f.b)->cpudata == cpudata_of(TCPU));
	emit(TCPU, 6 * PAGE_SIZE);
	ASSERT_CLEAN();
	ASSERT_EQ(f.b->bytes_reported, 4 * PAGE_SIZE);
	user_consume(f.b, ~0UL);
	emit(TCPU, PAGE_SIZE);
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_EQ(f.a->bytes_reported + f.b->bytes_reported,
		  hw[TCPU].bytes_stored);
	return true;
}

/*
 * The same with snapshot buffers: begin does not account space, and the
 * base driver programs A's base and write pointer with a limit at the end
 * of B, so the unit would write from A towards B.
 */
static bool test_set_output_redirect_snapshot(void)
{
	struct redirect_fixture f;

	ASSERT_TRUE(harness_setup());
	__redirect_fixture(&f, TCPU, true);
	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_CLEAN();
	ASSERT_EQ(reg_limit(TCPU), f.a->mem + 8 * PAGE_SIZE);
	emit(TCPU, 3000);
	ASSERT_EQ(perf_model_set_output(f.p, f.ob), 0);
	ASSERT_CLEAN();
	if (harness_core == HARNESS_CORE_FIXED) {
		ASSERT_TRUE(restarted_on_b(&f, 3000));
		ASSERT_EQ(reg_limit(TCPU), f.b->mem + 8 * PAGE_SIZE);
		emit(TCPU, 10 * PAGE_SIZE);
		ev_sched_out(f.c);
		ASSERT_CLEAN();
		ASSERT_EQ(irq_rebinds, 0);
		ASSERT_EQ(f.a->aux_head, 3000);
		ASSERT_EQ(f.b->aux_head, 10 * PAGE_SIZE);
		return true;
	}

	emit(TCPU, 8 * PAGE_SIZE + 1000);
	printf("# survived the overflow: %lu IRQ rebind(s)\n", irq_rebinds);
	ASSERT_CLEAN();
	ASSERT_EQ(irq_rebinds, 1);
	ASSERT_EQ(f.a->aux_head, 8 * PAGE_SIZE);
	ASSERT_EQ(f.b->aux_head, 0);
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_EQ(f.c->state, HARNESS_EVENT_OFF);
	ASSERT_TRUE(!buf_of(f.a)->cpudata);
	ASSERT_TRUE(!buf_of(f.b)->cpudata);

	ev_enable(f.p);
	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_CLEAN();
	ASSERT_EQ(reg_base(TCPU), f.b->mem);
	ASSERT_EQ(reg_limit(TCPU), f.b->mem + 8 * PAGE_SIZE);
	emit(TCPU, 10 * PAGE_SIZE);
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_EQ(f.b->aux_head, 10 * PAGE_SIZE);
	return true;
}

/*
 * The same redirect into the buffer of a cs_etm event E whose sink is an
 * ETF (attr.config2): E's sink configuration is a struct cs_buffers, 48
 * bytes, C's a struct trbe_buf, 64 bytes. perf_event_set_output() only
 * checks that both events are cs_etm. With the base core, C's next
 * overflow begins on E's buffer and the 7.3 driver reads the cs_buffers
 * as a trbe_buf (ASan: heap-buffer-overflow); a driver that checks the
 * buffer begin returned ends that transaction truncated instead. With
 * the fixed core C is restarted on E at once and traces into the ETF.
 */
static bool test_set_output_redirect_etf(void)
{
	struct perf_event *oe;
	struct perf_buffer *e;
	struct redirect_fixture f;

	ASSERT_TRUE(harness_setup());
	redirect_fixture(&f, TCPU);
	oe = ev_create("E-owner", TCPU, NULL);
	oe->sink_etf = true;
	e = rb_create("E", oe, 8, false, 0);
	oe->state = HARNESS_EVENT_OFF;
	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_CLEAN();
	emit(TCPU, 5000);

	ASSERT_EQ(perf_model_set_output(f.p, oe), 0);
	ASSERT_TRUE(f.p->rb == e);
	ASSERT_CLEAN();
	if (harness_core == HARNESS_CORE_FIXED) {
		/* C ended on A and is now tracing through E's ETF path */
		ASSERT_EQ(f.a->aux_head, 5000);
		ASSERT_EQ(f.c->state, HARNESS_EVENT_ACTIVE);
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == e);
		ASSERT_TRUE(ctxt_of(TCPU)->event_data == e->aux_priv);
		ASSERT_EQ(etf_enabled[TCPU], 1);
		ASSERT_FALSE(hw_enabled(TCPU));
		ASSERT_TRUE(!cpudata_of(TCPU)->buf);
	} else {
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	}

	printf("# C fills its window; the overflow IRQ begins a new transaction\n");
	emit(TCPU, 4 * PAGE_SIZE);
	printf("# survived the overflow: %lu IRQ rebind(s)\n", irq_rebinds);
	ASSERT_CLEAN();
	if (harness_core == HARNESS_CORE_BASE) {
		ASSERT_EQ(irq_rebinds, 1);
		ASSERT_EQ(f.a->bytes_reported, 4 * PAGE_SIZE);
		/* the transaction on E ended truncated, the TRBE off */
		ASSERT_EQ(e->bytes_reported, 0);
		ASSERT_EQ(e->nr_truncated, 1);
		ASSERT_FALSE(hw_enabled(TCPU));
		ASSERT_EQ(f.c->state, HARNESS_EVENT_OFF);
		ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
		ASSERT_TRUE(!buf_of(f.a)->cpudata);
		ASSERT_TRUE(!cpudata_of(TCPU)->buf);
		ASSERT_EQ(etf_enabled[TCPU], 0);
		/* re-enabled, C starts on E's ETF path */
		ev_enable(f.p);
		ASSERT_TRUE(ev_sched_in(f.c));
		ASSERT_EQ(etf_enabled[TCPU], 1);
		ASSERT_FALSE(hw_enabled(TCPU));
		emit(TCPU, PAGE_SIZE);
		ASSERT_CLEAN();
	} else {
		ASSERT_EQ(irq_rebinds, 0);
		ASSERT_EQ(f.a->aux_head, 5000);
	}
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_EQ(etf_enabled[TCPU], 0);
	ASSERT_FALSE(hw_enabled(TCPU));
	ASSERT_EQ(f.a->bytes_reported, hw[TCPU].bytes_stored);
	return true;
}

/*
 * AUX pause with an ETF sink: etm_event_pause() (the real one, from the
 * tree's coresight-etm-perf.c) copies what the ETF holds into the
 * buffer, ends the transaction and begins the next on the same handle.
 * C's output event P, and so C, trace through an ETF into A; P is
 * redirected to B, whose sink is an ETF too, while C is active; then
 * C's AUX pauses. With the base core, C's begin in the pause follows
 * C->parent to B while the ETF and ctxt->event_data stay on A: the 7.3
 * pause leaves the handle on B (the ETM context invariant breaks), and
 * the next stop WARNs on the mismatch and returns early with the ETF
 * enabled and B's transaction open. A pause that checks the buffer
 * begin returned ends that transaction truncated, perf disables C, and
 * the stop tears the A path down. With the fixed core, SET_OUTPUT moved
 * C to B already and the pause ends and begins on B.
 */
static bool test_set_output_redirect_etf_pause(void)
{
	struct redirect_fixture f;

	ASSERT_TRUE(harness_setup());
	f.oa = ev_create("A-owner", TCPU, NULL);
	f.oa->sink_etf = true;
	f.a = rb_create("A", f.oa, 8, false, 0);
	f.oa->state = HARNESS_EVENT_OFF;
	f.ob = ev_create("B-owner", TCPU, NULL);
	f.ob->sink_etf = true;
	f.b = rb_create("B", f.ob, 8, false, 0);
	f.ob->state = HARNESS_EVENT_OFF;
	f.p = ev_create("P", TCPU, NULL);
	ASSERT_EQ(perf_model_set_output(f.p, f.oa), 0);
	f.c = ev_create("C", TCPU, f.p);

	ASSERT_TRUE(ev_sched_in(f.c));
	ASSERT_CLEAN();
	ASSERT_EQ(etf_enabled[TCPU], 1);
	ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	etf_emit(TCPU, 1000);
	/* a pause and resume without a redirect: the ETF's bytes go to A */
	ev_aux_pause(f.c, true);
	ASSERT_CLEAN();
	ASSERT_EQ(f.a->aux_head, 1000);
	etf_emit(TCPU, 300);		/* paused: the ETE emits nothing */
	ev_aux_pause(f.c, false);
	ASSERT_CLEAN();
	ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.a);
	etf_emit(TCPU, 1000);

	ASSERT_EQ(perf_model_set_output(f.p, f.ob), 0);
	ASSERT_TRUE(f.p->rb == f.b);
	ASSERT_CLEAN();
	etf_emit(TCPU, 2000);
	printf("# C's AUX pauses: the ETF is emptied, the next transaction begins\n");
	ev_aux_pause(f.c, true);
	ASSERT_CLEAN();
	if (harness_core == HARNESS_CORE_BASE) {
		/* A got everything the ETF held; B only a truncated record */
		ASSERT_EQ(f.a->aux_head, 4000);
		ASSERT_EQ(f.b->aux_head, 0);
		ASSERT_EQ(f.b->nr_truncated, 1);
		ASSERT_EQ(f.b->aux_nest, 0);
		ASSERT_EQ(f.c->state, HARNESS_EVENT_OFF);
		ASSERT_TRUE(!ctxt_of(TCPU)->handle.event);
		ASSERT_TRUE(!ctxt_of(TCPU)->event_data);
		ASSERT_EQ(etf_enabled[TCPU], 0);
		/* re-enabled, C starts on B's ETF configuration */
		ev_enable(f.p);
		ASSERT_TRUE(ev_sched_in(f.c));
		ASSERT_CLEAN();
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.b);
		ASSERT_TRUE(ctxt_of(TCPU)->event_data == f.b->aux_priv);
	} else {
		/* SET_OUTPUT ended C on A at 2000 and restarted it on B */
		ASSERT_EQ(f.a->aux_head, 2000);
		ASSERT_EQ(f.b->aux_head, 2000);
		ASSERT_TRUE(ctxt_of(TCPU)->handle.rb == f.b);
		ev_aux_pause(f.c, false);
		ASSERT_CLEAN();
	}
	etf_emit(TCPU, 500);
	ev_sched_out(f.c);
	ASSERT_CLEAN();
	ASSERT_EQ(etf_enabled[TCPU], 0);
	ASSERT_EQ(f.a->aux_nest, 0);
	ASSERT_EQ(f.b->aux_nest, 0);
	ASSERT_EQ(f.b->aux_head, harness_core == HARNESS_CORE_BASE ? 500 : 2500);
	ASSERT_EQ(f.a->bytes_reported, f.a->aux_head);
	ASSERT_EQ(f.b->bytes_reported, f.b->aux_head);
	return true;
}
