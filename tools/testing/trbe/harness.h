/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test fixture: driver probe against the models, assertions and the
 * invariants checked after every step.
 */
#ifndef __TRBE_TEST_HARNESS_H
#define __TRBE_TEST_HARNESS_H

#define ASSERT_TRUE(cond) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: ASSERT_TRUE(%s) failed\n",		\
		       __FILE__, __LINE__, #cond);			\
		return false;						\
	}								\
} while (0)

#define ASSERT_FALSE(cond)	ASSERT_TRUE(!(cond))

#define ASSERT_EQ(a, b) do {						\
	unsigned long long __a = (unsigned long long)(a);		\
	unsigned long long __b = (unsigned long long)(b);		\
	if (__a != __b) {						\
		printf("# %s:%d: ASSERT_EQ(%s, %s) failed: 0x%llx != 0x%llx\n", \
		       __FILE__, __LINE__, #a, #b, __a, __b);		\
		return false;						\
	}								\
} while (0)

#define ASSERT_CLEAN() do {						\
	if (!harness_check_invariants()) {				\
		printf("# %s:%d: invariants broken\n",			\
		       __FILE__, __LINE__);				\
		return false;						\
	}								\
} while (0)

#define ERRATUM_OVERWRITE_FILL_MODE	BIT(0)
#define ERRATUM_WRITE_OUT_OF_RANGE	BIT(1)
#define ERRATUM_TRBE_IS_BROKEN		BIT(2)
#define HARNESS_ALL_CPUS		(BIT(NR_CPUS) - 1)

static struct platform_driver *harness_platform_driver;
static struct platform_device harness_pdev = { .name = "arm,trace-buffer-extension" };
/* The random tests' default seed; SEED= (environment or argument) overrides it. */
static unsigned long long harness_seed = 0x30736c213e4f11a3ULL;
static unsigned long harness_random_steps = 3000;

int platform_driver_register(struct platform_driver *drv)
{
	harness_platform_driver = drv;
	return 0;
}

/*
 * SEED=<n>, STEPS=<n> and TRBE_CORE=base|fixed from the environment
 * (TRBE_SEED is the old name of SEED; CORE= only as an argument, as make
 * exports its own CORE); the arguments of main() override them.
 */
static bool harness_parse_setting(const char *name, const char *val)
{
	char *end;

	if (!strcmp(name, "SEED") || !strcmp(name, "TRBE_SEED")) {
		harness_seed = strtoull(val, &end, 0);
		return *val && !*end;
	}
	if (!strcmp(name, "STEPS")) {
		harness_random_steps = strtoul(val, &end, 0);
		return *val && !*end && harness_random_steps;
	}
	if (!strcmp(name, "CORE") || !strcmp(name, "TRBE_CORE")) {
		if (!strcmp(val, "base"))
			harness_core = HARNESS_CORE_BASE;
		else if (!strcmp(val, "fixed"))
			harness_core = HARNESS_CORE_FIXED;
		else
			return false;
		return true;
	}
	return false;
}

static bool harness_settings_from_env(void)
{
	static const char *const names[] = {
		"TRBE_SEED", "SEED", "STEPS", "TRBE_CORE",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const char *v = getenv(names[i]);

		if (v && *v && !harness_parse_setting(names[i], v)) {
			printf("# bad %s=%s\n", names[i], v);
			return false;
		}
	}
	return true;
}

/* Reset the models, set the errata of @cpus and probe the driver. */
static bool harness_setup_errata(unsigned long errata, unsigned long cpus)
{
	int cpu;

	hw_reset_all();
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		if (!(cpus & BIT(cpu)))
			continue;
		if (errata & ERRATUM_OVERWRITE_FILL_MODE)
			hw[cpu].caps[ARM64_WORKAROUND_TRBE_OVERWRITE_FILL_MODE] = true;
		if (errata & ERRATUM_WRITE_OUT_OF_RANGE)
			hw[cpu].caps[ARM64_WORKAROUND_TRBE_WRITE_OUT_OF_RANGE] = true;
		if (errata & ERRATUM_TRBE_IS_BROKEN)
			hw[cpu].caps[ARM64_WORKAROUND_1902691] = true;
	}
	if (arm_trbe_init() || !harness_platform_driver)
		return false;
	if (harness_platform_driver->probe(&harness_pdev))
		return false;
	harness_drvdata = platform_get_drvdata(&harness_pdev);
	return harness_drvdata;
}

static bool harness_setup(void)
{
	return harness_setup_errata(0, 0);
}

static struct trbe_cpudata *cpudata_of(int cpu)
{
	return per_cpu_ptr(harness_drvdata->cpudata, cpu);
}

/* The TRBE sink buffer of @rb (not for an ETF event's buffer). */
static struct trbe_buf *buf_of(struct perf_buffer *rb)
{
	return ((struct etm_event_data *)rb->aux_priv)->snk_config;
}

static struct etm_ctxt *ctxt_of(int cpu)
{
	return &etm_ctxt_percpu[cpu];
}

static unsigned long reg_base(int cpu)
{
	return hw[cpu].trbbaser & TRBBASER_EL1_BASE_MASK;
}

static unsigned long reg_limit(int cpu)
{
	return hw[cpu].trblimitr & TRBLIMITR_EL1_LIMIT_MASK;
}

/* Emit up to @len bytes on @cpu, across wraps, while the TRBE collects. */
static unsigned long emit(int cpu, unsigned long len)
{
	unsigned long done = 0, n;

	while (done < len) {
		n = hw_emit(cpu, len - done);
		done += n;
		harness_irq_work_all();
		if (!n)
			break;
	}
	return done;
}

/*
 * The invariants of the issue, for every CPU:
 * - an enabled TRBE has an open transaction published to the IRQ
 *   handler, and is programmed with the sink buffer of that handle;
 * - that buffer is associated with this CPU (buf->cpudata, cpudata->buf);
 * - BASE <= PTR < LIMIT, all inside that buffer, and outside snapshot
 *   mode [PTR, LIMIT) lies inside [head, head + size) of the handle;
 * - the ETM context matches the handle: perf_get_aux(handle) ==
 *   ctxt->event_data whenever the handle is bound.
 * The per-store and per-record checks of the models feed the same count.
 */
static bool harness_check_invariants(void)
{
	int before = harness_violations, cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct trbe_cpudata *cpudata = cpudata_of(cpu);
		struct perf_output_handle *h = hw_published_handle(cpu);
		struct etm_ctxt *ctxt = ctxt_of(cpu);
		struct trbe_buf *buf;
		unsigned long start, end, base, limit, ptr;

		if (ctxt->handle.event &&
		    perf_get_aux(&ctxt->handle) != ctxt->event_data)
			violation("cpu%d: ETM context event_data %p, handle bound to %p (rb %s)",
				  cpu, (void *)ctxt->event_data,
				  perf_get_aux(&ctxt->handle),
				  ctxt->handle.rb->name);
		if (cpudata->buf && cpudata->buf->cpudata != cpudata)
			violation("cpu%d: cpudata->buf not associated back", cpu);
		if (!hw_enabled(cpu))
			continue;
		if (!h || !h->event) {
			violation("cpu%d: TRBE enabled without an open transaction",
				  cpu);
			continue;
		}
		buf = etm_perf_sink_config(h);
		if (!buf) {
			violation("cpu%d: TRBE enabled, handle has no sink buffer",
				  cpu);
			continue;
		}
		if (buf->cpudata != cpudata || cpudata->buf != buf)
			violation_of("cpu%d", cpu,
				     "TRBE programmed with a buffer not associated with the CPU");
		start = (unsigned long)h->rb->mem;
		end = start + perf_aux_size(h->rb);
		base = reg_base(cpu);
		limit = reg_limit(cpu);
		ptr = hw[cpu].trbptr;
		if (buf->trbe_base != start)
			violation("cpu%d: sink buffer is not the AUX buffer of rb %s",
				  cpu, h->rb->name);
		if (base < start || limit > end || ptr < base || ptr >= limit)
			violation_of("cpu%d", cpu,
				     "BASE 0x%lx PTR 0x%lx LIMIT 0x%lx outside rb %s [0x%lx, 0x%lx)",
				     base, ptr, limit, h->rb->name, start, end);
		else if (!h->rb->aux_overwrite &&
			 ((ptr - start + perf_aux_size(h->rb) -
			   h->head % perf_aux_size(h->rb)) %
			  perf_aux_size(h->rb)) + (limit - ptr) > h->size)
			violation("cpu%d: [PTR, LIMIT) outside [head, head + size) of rb %s",
				  cpu, h->rb->name);
	}
	return harness_violations == before && !harness_warnings;
}

#endif /* __TRBE_TEST_HARNESS_H */
