/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions copied from the kernel, kept minimal: only what
 * coresight-trbe.c, coresight-trbe.h and coresight-etm-perf.h use.
 * Layouts the driver or the models depend on (perf_output_handle,
 * coresight_path, etm_event_data via the real header) are verbatim.
 */
#ifndef __TRBE_TEST_DUP_H
#define __TRBE_TEST_DUP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned short umode_t;

/* include/vdso/const.h, include/linux/bits.h */
#define UL(x)			(x##UL)
#define ULL(x)			(x##ULL)
#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BITS_PER_LONG		64
#define GENMASK(h, l) \
	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define GENMASK_ULL(h, l) \
	(((~0ULL) - (1ULL << (l)) + 1) & (~0ULL >> (64 - 1 - (h))))

/* arch/arm64/include/asm/sysreg.h */
#define Op0_shift	19
#define Op0_mask	0x3
#define Op1_shift	16
#define Op1_mask	0x7
#define CRn_shift	12
#define CRn_mask	0xf
#define CRm_shift	8
#define CRm_mask	0xf
#define Op2_shift	5
#define Op2_mask	0x7
#define sys_reg(op0, op1, crn, crm, op2) \
	(((op0) << Op0_shift) | ((op1) << Op1_shift) | \
	 ((crn) << CRn_shift) | ((crm) << CRm_shift) | \
	 ((op2) << Op2_shift))
#define TRBSR_EL1_BSC_MASK		GENMASK(5, 0)
#define TRBSR_EL1_BSC_SHIFT		0

/* arch/arm64/include/asm/cpufeature.h */
static inline unsigned int
cpuid_feature_extract_unsigned_field_width(u64 features, int field, int width)
{
	return (u64)(features << (64 - width - field)) >> (64 - width);
}

static inline unsigned int
cpuid_feature_extract_unsigned_field(u64 features, int field)
{
	return cpuid_feature_extract_unsigned_field_width(features, field, 4);
}

/* include/linux/kernel.h, math.h, align.h, minmax.h, sizes.h */
#define ARRAY_SIZE(arr)		(sizeof(arr) / sizeof((arr)[0]))
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define __round_mask(x, y)	((__typeof__(x))((y) - 1))
#define round_up(x, y)		((((x) - 1) | __round_mask(x, y)) + 1)
#define round_down(x, y)	((x) & ~__round_mask(x, y))
#define roundup(x, y) ({ typeof(y) __y = (y); \
			 (((x) + (__y - 1)) / __y) * __y; })
#define rounddown(x, y) ({ typeof(x) __x = (x); \
			   __x - (__x % (y)); })
#define min(a, b) ({ __auto_type __a = (a); __auto_type __b = (b); \
		     __a < __b ? __a : __b; })
#define max(a, b) ({ __auto_type __a = (a); __auto_type __b = (b); \
		     __a > __b ? __a : __b; })
#define SZ_2K			0x00000800
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* include/linux/err.h */
#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)
static inline bool IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

/* include/vdso/page.h (4K pages) */
#define PAGE_SHIFT		12
#define PAGE_SIZE		BIT(PAGE_SHIFT)
#define PAGE_MASK		(~(PAGE_SIZE - 1))

/* include/linux/circ_buf.h */
#define CIRC_CNT(head, tail, size) (((head) - (tail)) & ((size) - 1))
#define CIRC_SPACE(head, tail, size) CIRC_CNT((tail), ((head) + 1), (size))

/* include/linux/bitmap.h, bitops (non-atomic is enough: one thread) */
#define BITS_TO_LONGS(nr)	(((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define DECLARE_BITMAP(name, bits) unsigned long name[BITS_TO_LONGS(bits)]
static inline void set_bit(long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}

static inline bool test_bit(long nr, const unsigned long *addr)
{
	return addr[nr / BITS_PER_LONG] & (1UL << (nr % BITS_PER_LONG));
}

/* include/linux/cpumask.h */
#define NR_CPUS			4
typedef struct cpumask { DECLARE_BITMAP(bits, NR_CPUS); } cpumask_t;
static inline bool cpumask_test_cpu(int cpu, const cpumask_t *m)
{
	return test_bit(cpu, m->bits);
}

static inline void cpumask_set_cpu(int cpu, cpumask_t *m)
{
	set_bit(cpu, m->bits);
}

static inline void cpumask_clear_cpu(int cpu, cpumask_t *m)
{
	m->bits[cpu / BITS_PER_LONG] &= ~(1UL << (cpu % BITS_PER_LONG));
}

static inline void cpumask_copy(cpumask_t *d, const cpumask_t *s)
{
	*d = *s;
}

/* The next CPU of @m after @n, or NR_CPUS. */
static inline int cpumask_next(int n, const cpumask_t *m)
{
	for (n++; n < NR_CPUS; n++)
		if (cpumask_test_cpu(n, m))
			break;
	return n;
}

#define for_each_cpu(cpu, mask)					\
	for ((cpu) = cpumask_next(-1, (mask)); (cpu) < NR_CPUS;	\
	     (cpu) = cpumask_next((cpu), (mask)))

/* include/linux/types.h, list.h */
struct list_head { struct list_head *next, *prev; };
struct hlist_node { struct hlist_node *next, **pprev; };
#define hlist_entry_safe(ptr, type, member) \
	({ typeof(ptr) ____ptr = (ptr); \
	   ____ptr ? container_of(____ptr, type, member) : NULL; })

/* include/linux/workqueue_types.h */
struct work_struct;
typedef void (*work_func_t)(struct work_struct *work);
struct work_struct { work_func_t func; };

/* include/linux/irqreturn.h, irq.h */
typedef enum irqreturn {
	IRQ_NONE		= (0 << 0),
	IRQ_HANDLED		= (1 << 0),
	IRQ_WAKE_THREAD		= (1 << 1),
} irqreturn_t;
typedef irqreturn_t (*irq_handler_t)(int, void *);
#define IRQ_TYPE_NONE		0

/* include/uapi/linux/perf_event.h */
#define PERF_AUX_FLAG_TRUNCATED			0x0001
#define PERF_AUX_FLAG_OVERWRITE			0x0002
#define PERF_AUX_FLAG_PARTIAL			0x0004
#define PERF_AUX_FLAG_COLLISION			0x0008
#define PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK	0xff00
#define PERF_AUX_FLAG_CORESIGHT_FORMAT_CORESIGHT 0x0000
#define PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW	 0x0100

/* include/linux/perf_event.h */
#define PERF_HES_STOPPED	0x01
#define PERF_HES_UPTODATE	0x02
#define PERF_HES_ARCH		0x04
#define PERF_EF_START		0x01
#define PERF_EF_RELOAD		0x02
#define PERF_EF_UPDATE		0x04
#define PERF_EF_PAUSE		0x08
#define PERF_EF_RESUME		0x10

struct perf_event;
struct perf_buffer;

struct perf_output_handle {
	struct perf_event		*event;
	struct perf_buffer		*rb;
	unsigned long			wakeup;
	unsigned long			size;
	union {
		u64			flags;		/* perf_output*() */
		u64			aux_flags;	/* perf_aux_output*() */
		struct {
			u64		skip_read : 1;
		};
	};
	union {
		void			*addr;
		unsigned long		head;
	};
	int				page;
};

/* include/linux/device.h, sysfs.h, platform_device.h, mod_devicetable.h */
struct device {
	struct device *parent;
	void *driver_data;
	const char *name;
};

struct attribute {
	const char *name;
	umode_t mode;
};

struct device_attribute {
	struct attribute attr;
	ssize_t (*show)(struct device *dev, struct device_attribute *attr,
			char *buf);
	ssize_t (*store)(struct device *dev, struct device_attribute *attr,
			 const char *buf, size_t count);
};

#define __ATTR_RO(_name) { .attr = { .name = #_name, .mode = 0444 },	\
			   .show = _name##_show }
#define DEVICE_ATTR_RO(_name) \
	struct device_attribute dev_attr_##_name = __ATTR_RO(_name)
struct attribute_group {
	const char *name;
	struct attribute **attrs;
};

struct platform_device {
	const char *name;
	struct device dev;
};

struct platform_device_id {
	char name[20];
	unsigned long driver_data;
};

struct of_device_id {
	char name[32];
	char type[32];
	char compatible[128];
	const void *data;
};

struct device_driver {
	const char *name;
	const struct of_device_id *of_match_table;
	bool suppress_bind_attrs;
};

struct platform_driver {
	int (*probe)(struct platform_device *pdev);
	void (*remove)(struct platform_device *pdev);
	struct device_driver driver;
	const struct platform_device_id *id_table;
};

/* include/linux/cpuhotplug.h */
enum cpuhp_state {
	CPUHP_INVALID = -1,
	CPUHP_AP_ONLINE_DYN = 100,
};

/* include/linux/coresight.h */
enum coresight_dev_type {
	CORESIGHT_DEV_TYPE_SINK,
	CORESIGHT_DEV_TYPE_LINK,
	CORESIGHT_DEV_TYPE_LINKSINK,
	CORESIGHT_DEV_TYPE_SOURCE,
	CORESIGHT_DEV_TYPE_HELPER,
	CORESIGHT_DEV_TYPE_MAX
};

enum coresight_dev_subtype_sink {
	CORESIGHT_DEV_SUBTYPE_SINK_DUMMY,
	CORESIGHT_DEV_SUBTYPE_SINK_PORT,
	CORESIGHT_DEV_SUBTYPE_SINK_BUFFER,
	CORESIGHT_DEV_SUBTYPE_SINK_SYSMEM,
	CORESIGHT_DEV_SUBTYPE_SINK_PERCPU_SYSMEM,
};

union coresight_dev_subtype {
	enum coresight_dev_subtype_sink sink_subtype;
};

struct coresight_platform_data {
	int nr_inconns;
	int nr_outconns;
};

struct csdev_access {
	bool io_mem;
};

#define CORESIGHT_DESC_CPU_BOUND	BIT(0)
struct coresight_device;
struct coresight_desc {
	enum coresight_dev_type type;
	union coresight_dev_subtype subtype;
	const struct coresight_ops *ops;
	struct coresight_platform_data *pdata;
	struct device *dev;
	const struct attribute_group **groups;
	const char *name;
	struct csdev_access access;
	u32 flags;
	int cpu;
};

struct coresight_path {
	struct list_head		path_list;
	u8				trace_id;
	struct perf_output_handle	*handle;
};

enum cs_mode {
	CS_MODE_DISABLED = 0,
	CS_MODE_SYSFS	 = BIT(0),
	CS_MODE_PERF	 = BIT(1),
};

struct coresight_ops_sink {
	int (*enable)(struct coresight_device *csdev, enum cs_mode mode,
		      struct coresight_path *path);
	int (*disable)(struct coresight_device *csdev);
	void *(*alloc_buffer)(struct coresight_device *csdev,
			      struct perf_event *event, void **pages,
			      int nr_pages, bool overwrite);
	void (*free_buffer)(void *config);
	unsigned long (*update_buffer)(struct coresight_device *csdev,
				       struct perf_output_handle *handle,
				       void *sink_config);
};

struct coresight_ops {
	int (*trace_id)(struct coresight_device *csdev, enum cs_mode mode,
			struct coresight_device *sink);
	int (*pm_save_disable)(struct coresight_device *csdev);
	void (*pm_restore_enable)(struct coresight_device *csdev);
	const struct coresight_ops_sink *sink_ops;
};

/* Reduced: the members the TRBE driver and etm-perf's sink calls use. */
struct coresight_device {
	struct coresight_platform_data *pdata;
	enum coresight_dev_type type;
	union coresight_dev_subtype subtype;
	const struct coresight_ops *ops;
	struct device dev;
	int cpu;
};

#define CORESIGHT_UNLOCK	0xc5acce55
#define sink_ops(csdev)		((csdev)->ops->sink_ops)

static inline bool coresight_is_percpu_sink(struct coresight_device *csdev)
{
	return csdev && (csdev->type == CORESIGHT_DEV_TYPE_SINK) &&
	       (csdev->subtype.sink_subtype == CORESIGHT_DEV_SUBTYPE_SINK_PERCPU_SYSMEM);
}

/*
 * What the real drivers/hwtracing/coresight/coresight-priv.h (included by
 * coresight-etm-perf.h, for struct cs_buffers among others) needs beyond
 * the above: mod_devicetable.h, amba/bus.h,
 * device/bus.h, asm-generic/local.h and forward declarations.
 */
struct mutex;
struct fwnode_handle;
struct coresight_connection;
struct coresight_sysfs_link;

struct device_type {
	const char *name;
};

struct amba_id {
	unsigned int		id;
	unsigned int		mask;
	void			*data;
};

struct amba_cs_uci_id {
	unsigned int devarch;
	unsigned int devarch_mask;
	unsigned int devtype;
	void *data;
};

typedef struct {
	long counter;
} atomic_long_t;

typedef struct {
	atomic_long_t a;
} local_t;

#endif /* __TRBE_TEST_DUP_H */
