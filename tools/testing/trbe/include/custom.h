/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel facilities whose behaviour the tests control: system register
 * accessors and the per-CPU TRBE interrupt go to the hardware model
 * (model/hw.c), the perf AUX API to the ring buffer model
 * (model/perf.c), the coresight core calls to model/etm.c. Failure
 * injection is through the plain globals declared here.
 */
#ifndef __TRBE_TEST_CUSTOM_H
#define __TRBE_TEST_CUSTOM_H

#include <asm/sysreg-defs.h>
#include <asm/cpucap-defs.h>

/* Failure injection */
extern bool fail_aux_begin;	/* perf_aux_output_begin() returns NULL */
extern bool fail_kzalloc;	/* kzalloc_node()/kzalloc_objs() fail */

/* The CPU the harness is currently executing driver code on. */
extern int harness_cpu;
#define smp_processor_id()	(harness_cpu)
#define raw_smp_processor_id()	(harness_cpu)

/* WARN*() do not stop the driver; each one is recorded and fails the test. */
void harness_warn(const char *file, int line, const char *cond);
#define WARN_ON(cond) ({						\
	bool __w = !!(cond);						\
	if (__w)							\
		harness_warn(__FILE__, __LINE__, #cond);		\
	__w;								\
})
#define WARN_ON_ONCE(cond)	WARN_ON(cond)
/* One access each, not torn: relaxed atomics say that without volatile. */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

/* pr_fmt() is defined by the driver before any use. */
#define pr_err(fmt, ...)	printf("# " pr_fmt(fmt), ##__VA_ARGS__)
#define dev_err(dev, fmt, ...)	printf("# %s: " fmt, (dev)->name, ##__VA_ARGS__)

/* System registers: model/hw.c */
u64 trbe_hw_read_sysreg(u32 reg);
void trbe_hw_write_sysreg(u32 reg, u64 val);
void trbe_hw_isb(void);
#define read_sysreg_s(r)	trbe_hw_read_sysreg(r)
#define write_sysreg_s(v, r)	trbe_hw_write_sysreg(r, v)
#define isb()			trbe_hw_isb()
bool this_cpu_has_cap(unsigned int cap);

/* Interrupts: model/hw.c */
unsigned long harness_irq_save(void);
void harness_irq_restore(unsigned long flags);
#define local_irq_save(flags)	((flags) = harness_irq_save())
#define local_irq_restore(flags) harness_irq_restore(flags)
int platform_get_irq_affinity(struct platform_device *dev, unsigned int num,
			      const struct cpumask **affinity);
bool irq_is_percpu(unsigned int irq);
int request_percpu_irq_affinity(unsigned int irq, irq_handler_t handler,
				const char *devname,
				const struct cpumask *affinity,
				void __percpu *percpu_dev_id);
void free_percpu_irq(unsigned int irq, void __percpu *dev_id);
void enable_percpu_irq(unsigned int irq, unsigned int type);
void disable_percpu_irq(unsigned int irq);
void irq_work_run(void);

/* Per-CPU data: one slot per modelled CPU. */
#define alloc_percpu(type)	((typeof(type) *)calloc(NR_CPUS, sizeof(type)))
#define free_percpu(ptr)	free(ptr)
#define per_cpu_ptr(ptr, cpu)	(&(ptr)[(cpu)])
#define this_cpu_ptr(ptr)	per_cpu_ptr(ptr, harness_cpu)
int smp_call_function_single(int cpu, void (*func)(void *info), void *info,
			     int wait);

/* Memory */
struct page;
void *harness_zalloc(size_t size);
void *harness_zalloc_node(size_t size, int node);
static inline void *kzalloc_node(size_t size, int gfp, int node)
{
	return harness_zalloc_node(size, node);
}

#define kzalloc_objs(obj, n)		harness_zalloc(sizeof(obj) * (n))
#define kfree(p)			free(p)
void *devm_kzalloc(struct device *dev, size_t size, int gfp);
char *devm_kasprintf(struct device *dev, int gfp, const char *fmt, ...);
#define virt_to_page(addr)	((struct page *)(addr))
void *vmap(struct page **pages, unsigned int count, unsigned long flags,
	   int prot);

/* Device model */
static inline void *dev_get_drvdata(const struct device *dev)
{
	return dev->driver_data;
}

static inline void dev_set_drvdata(struct device *dev, void *data)
{
	dev->driver_data = data;
}

#define platform_get_drvdata(pdev)	dev_get_drvdata(&(pdev)->dev)
int platform_driver_register(struct platform_driver *drv);

/* Coresight core: model/etm.c */
struct coresight_device *coresight_register(struct coresight_desc *desc);
struct coresight_device *coresight_get_percpu_sink(int cpu);
void coresight_set_percpu_sink(int cpu, struct coresight_device *csdev);

/*
 * perf events: reduced struct perf_event (the members the driver and the
 * etm-perf model use, plus model state).
 */
struct hw_perf_event {
	int state;
	unsigned int aux_paused;
};

enum harness_event_state {
	HARNESS_EVENT_OFF,		/* disabled (PERF_EVENT_STATE_OFF) */
	HARNESS_EVENT_INACTIVE,		/* enabled, not scheduled in */
	HARNESS_EVENT_ACTIVE,		/* scheduled in, pmu::add() done */
};

struct perf_event {
	int cpu;
	struct perf_event *parent;
	struct perf_buffer *rb;
	struct hw_perf_event hw;
	/* model state */
	const char *name;
	enum harness_event_state state;
	bool pending_disable;
	bool has_mmap;
	bool sink_etf;		/* attr.config2 names an ETF sink */
};

/* perf AUX API: model/perf.c, after kernel/events/ring_buffer.c */
void *perf_aux_output_begin(struct perf_output_handle *handle,
			    struct perf_event *event);
void perf_aux_output_end(struct perf_output_handle *handle,
			 unsigned long size);
int perf_aux_output_skip(struct perf_output_handle *handle,
			 unsigned long size);
void *perf_get_aux(struct perf_output_handle *handle);
void perf_aux_output_flag(struct perf_output_handle *handle, u64 flags);

#endif /* __TRBE_TEST_CUSTOM_H */
