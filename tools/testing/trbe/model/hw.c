// SPDX-License-Identifier: GPL-2.0
/*
 * TRBE hardware model, one instance per CPU.
 *
 * Registers: TRBLIMITR_EL1, TRBPTR_EL1, TRBBASER_EL1, TRBSR_EL1,
 * TRBMAR_EL1, TRBIDR_EL1 (plus TRFCR_EL1 and ID_AA64DFR0_EL1, which the
 * driver reads). Behaviour follows the TRBE chapter of the Arm ARM for
 * what the driver programs: fill mode only; trace is written at TRBPTR
 * while TRBLIMITR.E == 1, TRBSR.S == 0 and tracing is allowed; when the
 * write pointer reaches LIMIT it wraps to BASE, and in fill mode the
 * wrap is a trace buffer management event: TRBSR.{WRAP, S, IRQ} set,
 * EC = 0 (other buffer management event), BSC = 1 (buffer filled). A
 * write to an address no AUX buffer backs is a stage 1 data abort
 * (EC = 0b100100), which also stops collection and raises the IRQ.
 *
 * Errata (switchable per CPU and per test, read by the driver at probe
 * through this_cpu_has_cap()):
 * - ARM64_WORKAROUND_TRBE_OVERWRITE_FILL_MODE: after the fill event the
 *   unit goes on to write HW_OVERWRITE_BYTES at BASE, and TRBPTR is left
 *   there instead of at BASE;
 * - ARM64_WORKAROUND_TRBE_WRITE_OUT_OF_RANGE: the unit writes up to
 *   HW_OUT_OF_RANGE_BYTES beyond LIMIT before it wraps.
 *
 * Every store is checked against the perf transaction the driver has
 * published for this CPU (drvdata->handle): it must land in the AUX
 * buffer that handle is bound to and, outside snapshot mode, inside
 * [head, head + size). Violations are recorded, not fatal.
 */

#define HW_OVERWRITE_BYTES	192
#define HW_OUT_OF_RANGE_BYTES	64
#define HW_POISON		0x00	/* never written by the model */
#define HW_EC_STAGE1_ABORT	0x24

struct trbe_hw {
	u64 trblimitr, trbptr, trbbaser, trbsr, trbmar, trbidr;
	u64 trfcr;
	bool irq_enabled;
	bool source_enabled;		/* the ETE feeding this TRBE */
	int irqs_masked;
	u8 next_byte;
	unsigned long bytes_stored;
	unsigned long irqs_delivered;
	bool caps[ARM64_NCAPS];
};

static struct trbe_hw hw[NR_CPUS];
int harness_cpu;
bool fail_aux_begin;
bool fail_kzalloc;
static unsigned int hw_irq_nr = 27;
static irq_handler_t hw_irq_handler;
static void *hw_irq_dev_id;
static cpumask_t hw_possible;

static int harness_violations;
static int harness_warnings;
static bool harness_in_irq;

/* Printed up to HARNESS_MAX_REPORTS times per test, all counted. */
#define HARNESS_MAX_REPORTS	10
#define violation(fmt, ...) do {					\
	if (++harness_violations <= HARNESS_MAX_REPORTS)		\
		printf("# VIOLATION: " fmt "\n", ##__VA_ARGS__);	\
	else if (harness_violations == HARNESS_MAX_REPORTS + 1)	\
		printf("# VIOLATION: (further violations counted, not printed)\n"); \
} while (0)
/* violation("cpu%d: " fmt, cpu, ...), the format on a line of its own */
#define violation_of(what_fmt, what, fmt, ...)				\
	violation(what_fmt ": " fmt, what, ##__VA_ARGS__)

void harness_warn(const char *file, int line, const char *cond)
{
	harness_warnings++;
	printf("# WARNING: %s:%d: WARN_ON(%s)\n", file, line, cond);
}

static void hw_reset_all(void)
{
	int cpu;

	memset(hw, 0, sizeof(hw));
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		cpumask_set_cpu(cpu, &hw_possible);
		/* TRBIDR: Align = 6 (64 bytes), F = 1, P = 0 */
		hw[cpu].trbidr = (6ULL << TRBIDR_EL1_Align_SHIFT) | TRBIDR_EL1_F;
		hw[cpu].next_byte = 1;
	}
}

bool this_cpu_has_cap(unsigned int cap)
{
	return cap < ARM64_NCAPS && hw[harness_cpu].caps[cap];
}

u64 trbe_hw_read_sysreg(u32 reg)
{
	struct trbe_hw *t = &hw[harness_cpu];

	switch (reg) {
	case SYS_TRBLIMITR_EL1:	return t->trblimitr;
	case SYS_TRBPTR_EL1:	return t->trbptr;
	case SYS_TRBBASER_EL1:	return t->trbbaser;
	case SYS_TRBSR_EL1:	return t->trbsr;
	case SYS_TRBMAR_EL1:	return t->trbmar;
	case SYS_TRBIDR_EL1:	return t->trbidr;
	case SYS_TRFCR_EL1:	return t->trfcr;
	case SYS_ID_AA64DFR0_EL1:
		return ID_AA64DFR0_EL1_TraceBuffer_IMP <<
		       ID_AA64DFR0_EL1_TraceBuffer_SHIFT;
	}
	violation("read of unmodelled system register 0x%x", reg);
	return 0;
}

void trbe_hw_write_sysreg(u32 reg, u64 val)
{
	struct trbe_hw *t = &hw[harness_cpu];
	bool enabled = t->trblimitr & TRBLIMITR_EL1_E;

	switch (reg) {
	case SYS_TRBLIMITR_EL1:
		t->trblimitr = val & ~TRBLIMITR_EL1_RES0;
		if ((val & TRBLIMITR_EL1_E) &&
		    ((val & TRBLIMITR_EL1_FM_MASK) >> TRBLIMITR_EL1_FM_SHIFT) !=
		    TRBLIMITR_EL1_FM_FILL)
			violation("cpu%d: TRBE enabled in a mode other than fill",
				  harness_cpu);
		return;
	case SYS_TRBPTR_EL1:
		if (enabled)
			violation("cpu%d: TRBPTR written while enabled",
				  harness_cpu);
		t->trbptr = val;
		return;
	case SYS_TRBBASER_EL1:
		if (enabled)
			violation("cpu%d: TRBBASER written while enabled",
				  harness_cpu);
		t->trbbaser = val & ~TRBBASER_EL1_RES0;
		return;
	case SYS_TRBSR_EL1:
		t->trbsr = val & ~TRBSR_EL1_RES0;
		return;
	case SYS_TRBMAR_EL1:
		t->trbmar = val;
		return;
	case SYS_TRFCR_EL1:
		t->trfcr = val & ~TRFCR_EL1_RES0;
		return;
	}
	violation("write of unmodelled system register 0x%x", reg);
}

void trbe_hw_isb(void)
{
}

/* Interrupt delivery: the TRBE PPI is level, asserted while TRBSR.IRQ. */
static void hw_deliver_irq(int cpu)
{
	int saved = harness_cpu;

	if (!(hw[cpu].trbsr & TRBSR_EL1_IRQ) || !hw[cpu].irq_enabled ||
	    hw[cpu].irqs_masked || harness_in_irq || !hw_irq_handler)
		return;
	harness_cpu = cpu;
	harness_in_irq = true;
	hw[cpu].irqs_delivered++;
	hw_irq_handler(hw_irq_nr, per_cpu_ptr((struct perf_output_handle **)
					      hw_irq_dev_id, cpu));
	harness_in_irq = false;
	harness_cpu = saved;
	if (hw[cpu].trbsr & TRBSR_EL1_IRQ)
		violation("cpu%d: TRBE IRQ still asserted after the handler",
			  cpu);
}

unsigned long harness_irq_save(void)
{
	return hw[harness_cpu].irqs_masked++;
}

void harness_irq_restore(unsigned long flags)
{
	hw[harness_cpu].irqs_masked = flags;
	if (!flags)
		hw_deliver_irq(harness_cpu);
}

int platform_get_irq_affinity(struct platform_device *dev, unsigned int num,
			      const struct cpumask **affinity)
{
	*affinity = &hw_possible;
	return hw_irq_nr;
}

bool irq_is_percpu(unsigned int irq)
{
	return true;
}

int request_percpu_irq_affinity(unsigned int irq, irq_handler_t handler,
				const char *devname,
				const struct cpumask *affinity,
				void __percpu *percpu_dev_id)
{
	hw_irq_handler = handler;
	hw_irq_dev_id = percpu_dev_id;
	return 0;
}

void free_percpu_irq(unsigned int irq, void __percpu *dev_id)
{
	hw_irq_handler = NULL;
	hw_irq_dev_id = NULL;
}

void enable_percpu_irq(unsigned int irq, unsigned int type)
{
	hw[harness_cpu].irq_enabled = true;
}

void disable_percpu_irq(unsigned int irq)
{
	hw[harness_cpu].irq_enabled = false;
}

int smp_call_function_single(int cpu, void (*func)(void *info), void *info,
			     int wait)
{
	int saved = harness_cpu;

	harness_cpu = cpu;
	func(info);
	harness_cpu = saved;
	return 0;
}

/* Implemented by the perf and etm models. */
static bool perf_model_check_store(int cpu, unsigned long addr);

/* One byte of trace leaves the unit: check, then store. */
static bool hw_store(int cpu, unsigned long addr)
{
	struct trbe_hw *t = &hw[cpu];
	u8 b = t->next_byte;

	if (!perf_model_check_store(cpu, addr))
		return false;
	*(u8 *)addr = b;
	t->bytes_stored++;
	/* Trace bytes are never the poison value nor an IGNORE packet. */
	do {
		b++;
	} while (b == HW_POISON || b == ETE_IGNORE_PACKET);
	t->next_byte = b;
	return true;
}

static bool hw_collecting(struct trbe_hw *t)
{
	return (t->trblimitr & TRBLIMITR_EL1_E) && !(t->trbsr & TRBSR_EL1_S) &&
	       t->source_enabled &&
	       (t->trfcr & (TRFCR_EL1_ExTRE | TRFCR_EL1_E0TRE));
}

static void hw_management_event(struct trbe_hw *t, u64 ec, u64 bsc)
{
	t->trbsr &= ~(TRBSR_EL1_EC_MASK | TRBSR_EL1_BSC_MASK);
	t->trbsr |= TRBSR_EL1_S | TRBSR_EL1_IRQ;
	t->trbsr |= (ec << TRBSR_EL1_EC_SHIFT) & TRBSR_EL1_EC_MASK;
	t->trbsr |= (bsc << TRBSR_EL1_BSC_SHIFT) & TRBSR_EL1_BSC_MASK;
}

/*
 * The ETE on @cpu emits @len bytes of trace. Returns how many the TRBE
 * accepted; a management event stops collection and delivers the IRQ.
 */
static unsigned long hw_emit(int cpu, unsigned long len)
{
	struct trbe_hw *t = &hw[cpu];
	unsigned long n = 0;
	int i;

	while (n < len && hw_collecting(t)) {
		unsigned long base = t->trbbaser & TRBBASER_EL1_BASE_MASK;
		unsigned long limit = t->trblimitr & TRBLIMITR_EL1_LIMIT_MASK;

		if (t->trbptr < base || t->trbptr >= limit) {
			violation("cpu%d: TRBPTR 0x%llx outside [BASE 0x%lx, LIMIT 0x%lx)",
				  cpu, (unsigned long long)t->trbptr, base, limit);
			hw_management_event(t, HW_EC_STAGE1_ABORT, 0);
			break;
		}
		if (!hw_store(cpu, t->trbptr)) {
			hw_management_event(t, HW_EC_STAGE1_ABORT, 0);
			break;
		}
		n++;
		t->trbptr++;
		if (t->trbptr != limit)
			continue;

		if (t->caps[ARM64_WORKAROUND_TRBE_WRITE_OUT_OF_RANGE])
			for (i = 0; i < HW_OUT_OF_RANGE_BYTES; i++)
				if (!hw_store(cpu, limit + i))
					break;
		t->trbptr = base;
		t->trbsr |= TRBSR_EL1_WRAP;
		if (t->caps[ARM64_WORKAROUND_TRBE_OVERWRITE_FILL_MODE]) {
			for (i = 0; i < HW_OVERWRITE_BYTES; i++)
				if (!hw_store(cpu, base + i))
					break;
			t->trbptr = base + i;
		}
		hw_management_event(t, 0, TRBE_BSC_FILLED);
		break;
	}
	hw_deliver_irq(cpu);
	return n;
}

/* Raise a management event with the given status bits and deliver it. */
static void hw_inject_status(int cpu, u64 bits)
{
	hw[cpu].trbsr |= bits | TRBSR_EL1_IRQ;
	hw_deliver_irq(cpu);
}

static bool hw_enabled(int cpu)
{
	return hw[cpu].trblimitr & TRBLIMITR_EL1_E;
}

void *harness_zalloc(size_t size)
{
	if (fail_kzalloc)
		return NULL;
	return calloc(1, size);
}

void *harness_zalloc_node(size_t size, int node)
{
	return harness_zalloc(size);
}

void *devm_kzalloc(struct device *dev, size_t size, int gfp)
{
	return harness_zalloc(size);
}

char *devm_kasprintf(struct device *dev, int gfp, const char *fmt, ...)
{
	char *s = harness_zalloc(32);
	va_list ap;

	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, 32, fmt, ap);
	va_end(ap);
	return s;
}
