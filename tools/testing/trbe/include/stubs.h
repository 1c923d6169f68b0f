/* SPDX-License-Identifier: GPL-2.0 */
/*
 * No-op stand-ins for kernel facilities the TRBE driver references but
 * whose behaviour does not matter to the tests.
 */
#ifndef __TRBE_TEST_STUBS_H
#define __TRBE_TEST_STUBS_H

#define __init
#define __exit
#define __percpu
#define module_init(fn)	\
	static int (*__trbe_test_initcall)(void) __attribute__((unused)) = fn
#define module_exit(fn)	\
	static void (*__trbe_test_exitcall)(void) __attribute__((unused)) = fn
#define MODULE_DEVICE_TABLE(type, name)
#define MODULE_AUTHOR(x)
#define MODULE_DESCRIPTION(x)
#define MODULE_LICENSE(x)
#define of_match_ptr(ptr)	(ptr)
#define ACPI_PTR(ptr)		NULL
/* include/linux/kconfig.h: no option of coresight-priv.h is set. */
#define IS_ENABLED(option)	0

#define GFP_KERNEL		0
#define NUMA_NO_NODE		(-1)
#define VM_MAP			0x4
#define PAGE_KERNEL		0

static inline int cpu_to_node(int cpu)
{
	return 0;
}

static inline void preempt_disable(void)
{
}

static inline void preempt_enable(void)
{
}

static inline bool arm64_kernel_unmapped_at_el0(void)
{
	return false;
}

/* KVM only needs to know for its own context switch of TRBE state. */
static inline void kvm_enable_trbe(void)
{
}

static inline void kvm_disable_trbe(void)
{
}

/*
 * Barriers: the hardware model performs every store synchronously, so
 * the trace is always visible and every register write takes effect
 * at once.
 */
#define dsb(opt)		do { } while (0)
/* mb(): as above, nothing to order in the model */
#define mb()			do { } while (0)
#define __iomem
#define writel_relaxed(v, addr)	do { (void)(v); (void)(addr); } while (0)
#define tsb_csync()		do { } while (0)

static inline void vunmap(const void *addr)
{
}

static inline void coresight_unregister(struct coresight_device *csdev)
{
}

static inline int
cpuhp_setup_state_multi(enum cpuhp_state state, const char *name,
			int (*startup)(unsigned int cpu, struct hlist_node *node),
			int (*teardown)(unsigned int cpu, struct hlist_node *node))
{
	return CPUHP_AP_ONLINE_DYN;
}

static inline int cpuhp_state_add_instance(enum cpuhp_state state,
					   struct hlist_node *node)
{
	return 0;
}

static inline int cpuhp_state_remove_instance(enum cpuhp_state state,
					      struct hlist_node *node)
{
	return 0;
}

static inline void cpuhp_remove_multi_state(enum cpuhp_state state)
{
}

static inline void platform_driver_unregister(struct platform_driver *drv)
{
}

#endif /* __TRBE_TEST_STUBS_H */
