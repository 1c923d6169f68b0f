/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record format and knobs of the perf_swaux test module (a software AUX
 * PMU), shared by the module and the perf_events selftests.
 */
#ifndef _SWAUX_ABI_H
#define _SWAUX_ABI_H

#include <linux/types.h>

#define SWAUX_PMU_NAME		"swaux"
#define SWAUX_MODULE_NAME	"perf_swaux"
#define SWAUX_MAGIC		0x58554153	/* "SAUX" */

/* swaux_record::flags */
#define SWAUX_F_MISMATCH	0x0001	/* programmed buffer != handle's */
#define SWAUX_F_INHERITED	0x0002	/* written by an inherited event */
#define SWAUX_F_SNAPSHOT	0x0004	/* buffer is in overwrite mode */

/*
 * One record per "hardware" write. 64 bytes, so records never straddle a
 * page and a buffer can be scanned at 64-byte steps.
 */
struct swaux_record {
	__u32	magic;
	__u16	size;
	__u16	flags;
	__u64	seq;		/* nth record written into buffer buf_id, from 1 */
	__u64	time;		/* ktime_get_ns() */
	__u64	event_id;	/* primary id: the parent's id for a child */
	__u32	cpu;
	__u32	pid;		/* tgid of the task running the writer */
	__u32	tid;
	__u32	buf_id;		/* buffer the writer is programmed with */
	__u32	handle_buf_id;	/* buffer of the handle's AUX transaction */
	__u32	mismatches;	/* module-wide mismatch count at write time */
	__u64	writer_id;	/* id of the (possibly inherited) event */
};

#endif /* _SWAUX_ABI_H */
