/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the make run flows (swaux-flow.c, cs-etm-flow.c) share: messages,
 * pinning, and forking the children that inherit P without letting a child
 * take over P itself.
 */
#ifndef RIG_RUN_FLOW_H
#define RIG_RUN_FLOW_H

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

static const char *flow_name = "flow";

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", flow_name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

/*
 * Before forking the children: the forking task becomes SCHED_FIFO (its
 * children start as SCHED_OTHER), so no child runs on its CPU before
 * flow_forked() has made their perf contexts differ from its own.
 */
static void flow_fork_begin(void)
{
	struct sched_param sp = { .sched_priority = 2 };

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		die("sched_setscheduler(SCHED_FIFO): %s", strerror(errno));
}

/*
 * After each fork, in the parent. A context switch between two tasks whose
 * perf contexts are clones (a parent and the child it just forked, until
 * the parent's context changes) swaps the contexts instead of switching
 * the events: the child, born on the parent's CPU, would go on with the
 * parent's events, P itself, and no inherited event would be the writer
 * the scenario redirects. An event added to the parent's context moves
 * its generation on, and the contexts are clones no more.
 */
static void flow_forked(void)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.disabled	= 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		die("perf_event_open(dummy, self): %s", strerror(errno));
	close(fd);
}

/* After the children are forked: back to SCHED_OTHER. */
static void flow_fork_end(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_OTHER, &sp))
		die("sched_setscheduler(SCHED_OTHER): %s", strerror(errno));
}

#endif
