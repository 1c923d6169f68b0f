// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_EVENT_IOC_SET_OUTPUT of an inherited AUX event while its children
 * are tracing, against the perf_swaux test PMU (test_modules/perf_swaux.c)
 * or any other AUX PMU, e.g. cs_etm with a TRBE sink on Armv9.
 *
 * P is a per-task event on CPU X with inherit and no mmap of its own; A and
 * B are AUX buffers mapped through two other, disabled events on X. P is
 * redirected to A, the test forks children that trace on X, and P is
 * redirected to B while a child is running. Once the ioctl has returned,
 * nothing may be written into A any more, the children's records must show
 * up in B, and the module must never see a writer programmed with a buffer
 * other than its handle's (mismatches) or writing into a freed buffer.
 *
 * The controller runs on another CPU than X, so that a child is running,
 * with an AUX transaction open, when the ioctl is issued.
 *
 * Environment:
 *   AUX_SET_OUTPUT_PMU	the AUX PMU (default swaux). With another PMU the
 *			swaux record format and module counters do not
 *			exist: the checks are that the old buffer's
 *			aux_head and data do not change once SET_OUTPUT
 *			has returned, that the children's data reaches
 *			the new buffer, and no kernel splat. The owner
 *			events of A and B live in sleeping holder
 *			processes (cs_etm is exclusive: one event per
 *			CPU in a task context) and set an AUX watermark
 *			of 1/16 of the buffer (frequent overflow
 *			interrupts). cs_etm traces into the TRBE of X:
 *			the sink id from cs_etm/sinks/trbe<X> goes into
 *			config2, as perf does for cs_etm/@trbe<X>/.
 *   AUX_SET_OUTPUT_CPU	X (default: the last online CPU)
 *
 * Skips (exit 4) when the PMU is not available (swaux: module not loaded),
 * cs_etm has no TRBE sink for X, or the system has a single CPU. The swaux
 * fixture (module-only tests) skips with another PMU.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "test_modules/swaux_abi.h"

#define PMU_DIR		"/sys/bus/event_source/devices/"
#define PARAM_DIR	"/sys/module/" SWAUX_MODULE_NAME "/parameters/"

#define DATA_PAGES	8
#define AUX_PAGES	256
#define MAX_CHILDREN	8
#define MAX_BUFS	3

struct auxbuf {
	int			fd;	/* owner event, disabled */
	void			*base;
	size_t			base_len;
	void			*aux;
	size_t			aux_len;
	struct perf_event_mmap_page *pc;
	unsigned char		*copy;	/* contents when P left it */
	__u64			t_saved; /* CLOCK_MONOTONIC ns when copied */
	__u64			head_saved; /* aux_head when copied */
};

/* Shared with the children */
struct shared {
	atomic_int		stop;
	atomic_int		running;
};

static long page_size;

/* The AUX PMU under test (AUX_SET_OUTPUT_PMU, AUX_SET_OUTPUT_CPU) */
static struct {
	const char	*name;
	int		type;		/* -1: absent */
	int		cpu;		/* X */
	bool		swaux;		/* swaux records and module counters */
	__u64		config2;	/* cs_etm: sink id of the TRBE of X */
	char		skip[512];	/* why the tests cannot run */
} pmu = { .type = -1 };

static int pmu_type(const char *name)
{
	char path[256];
	int type = -1;
	FILE *f;

	snprintf(path, sizeof(path), PMU_DIR "%s/type", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* The highest CPU number in /sys/devices/system/cpu/online */
static int last_online_cpu(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	char line[1024];
	char *p;

	if (!f)
		return cpu;
	if (fgets(line, sizeof(line), f)) {
		p = line + strlen(line);
		while (p > line && !isdigit((unsigned char)p[-1]))
			p--;
		while (p > line && isdigit((unsigned char)p[-1]))
			p--;
		if (isdigit((unsigned char)*p))
			cpu = atoi(p);
	}
	fclose(f);
	return cpu;
}

/*
 * Fill in pmu from the environment. Returns -1, with the reason in
 * pmu.skip, if the tests cannot run here; exits on a bad setting.
 */
static int pmu_setup(void)
{
	const char *name = getenv("AUX_SET_OUTPUT_PMU");
	const char *cpu = getenv("AUX_SET_OUTPUT_CPU");
	unsigned long long sink;
	char path[256];
	FILE *f;

	pmu.name = name && *name ? name : SWAUX_PMU_NAME;
	pmu.swaux = !strcmp(pmu.name, SWAUX_PMU_NAME);
	pmu.cpu = last_online_cpu();
	if (cpu && *cpu) {
		char *end;
		long v = strtol(cpu, &end, 10);

		if (*end || v < 0 || v >= CPU_SETSIZE)
			ksft_exit_fail_msg("AUX_SET_OUTPUT_CPU=%s: not a CPU number\n", cpu);
		pmu.cpu = v;
	}

	pmu.type = pmu_type(pmu.name);
	if (pmu.type < 0) {
		if (pmu.swaux)
			snprintf(pmu.skip, sizeof(pmu.skip), "no %s PMU: load %s.ko",
				 SWAUX_PMU_NAME, SWAUX_MODULE_NAME);
		else
			snprintf(pmu.skip, sizeof(pmu.skip), "no %s PMU (no %s%s)",
				 pmu.name, PMU_DIR, pmu.name);
		return -1;
	}
	if (strcmp(pmu.name, "cs_etm"))
		return 0;

	/* The TRBE of X, chosen as perf does for cs_etm/@trbe<X>/ */
	snprintf(path, sizeof(path), PMU_DIR "cs_etm/sinks/trbe%d", pmu.cpu);
	f = fopen(path, "r");
	if (!f) {
		snprintf(pmu.skip, sizeof(pmu.skip),
			 "no TRBE sink for CPU %d (no %s): this test is about TRBE",
			 pmu.cpu, path);
		return -1;
	}
	if (fscanf(f, "%llx", &sink) != 1)
		sink = 0;
	fclose(f);
	if (!(sink & 0xffffffffull)) {
		snprintf(pmu.skip, sizeof(pmu.skip), "cannot read a sink id from %s", path);
		return -1;
	}
	pmu.config2 = sink & 0xffffffffull;	/* format/sinkid: config2:0-31 */
	return 0;
}

static long read_param(const char *name)
{
	char path[256];
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

static void write_param(const char *name, long val)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%ld\n", val);
	fclose(f);
}

/* Number of kernel log lines that report a splat */
static int dmesg_splats(void)
{
	static const char * const pats[] = {
		"WARNING:", "BUG:", "Oops", "circular locking",
		"possible recursive locking", "inconsistent lock state",
		"KASAN:", "UBSAN:", "INFO: task",
	};
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	int n = 0;
	char *buf;

	if (len <= 0)
		return 0;
	buf = malloc(len + 1);
	if (!buf)
		return 0;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (len < 0)
		len = 0;
	buf[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(pats); i++)
		for (char *p = strstr(buf, pats[i]); p; p = strstr(p + 1, pats[i]))
			n++;
	free(buf);
	return n;
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The first CPU this task may run on other than @cpu; -1 if there is none */
static int other_cpu(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != cpu && CPU_ISSET(c, &set))
			return c;
	return -1;
}

/*
 * A process that sleeps until it is killed, or its parent exits: the task
 * context of an owner event when the PMU is not swaux.
 */
static pid_t holder_spawn(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (;;)
		pause();
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int open_event(int type, pid_t pid, int cpu, bool inherit, bool disabled)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= type,
		.disabled	= disabled,
		.inherit	= inherit,
		.exclude_hv	= 1,
	};

	if (!pmu.swaux) {
		/* The sink (cs_etm); an overflow interrupt every 1/16 of a buffer */
		attr.config2 = pmu.config2;
		attr.exclude_kernel = 1;
		attr.aux_watermark = AUX_PAGES * page_size / 16;
	}
	return syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* An AUX buffer owned by a disabled event of task @owner (0: this one) on @cpu */
static int auxbuf_open(struct auxbuf *b, int type, pid_t owner, int cpu, bool snapshot)
{
	memset(b, 0, sizeof(*b));
	b->fd = open_event(type, owner, cpu, false, true);
	if (b->fd < 0)
		return -1;

	b->base_len = (1 + DATA_PAGES) * page_size;
	b->base = mmap(NULL, b->base_len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->base == MAP_FAILED)
		return -1;
	b->pc = b->base;
	b->aux_len = AUX_PAGES * page_size;
	b->pc->aux_offset = b->base_len;
	b->pc->aux_size = b->aux_len;
	b->aux = mmap(NULL, b->aux_len, PROT_READ | (snapshot ? 0 : PROT_WRITE),
		      MAP_SHARED, b->fd, b->base_len);
	if (b->aux == MAP_FAILED)
		return -1;
	b->copy = malloc(b->aux_len);
	return b->copy ? 0 : -1;
}

static void auxbuf_unmap(struct auxbuf *b)
{
	if (b->aux && b->aux != MAP_FAILED)
		munmap(b->aux, b->aux_len);
	if (b->base && b->base != MAP_FAILED)
		munmap(b->base, b->base_len);
	b->aux = NULL;
	b->base = NULL;
}

static void auxbuf_close(struct auxbuf *b)
{
	auxbuf_unmap(b);
	if (b->fd > 0)
		close(b->fd);
	free(b->copy);
	memset(b, 0, sizeof(*b));
}

static __u64 aux_head(struct auxbuf *b)
{
	return __atomic_load_n(&b->pc->aux_head, __ATOMIC_ACQUIRE);
}

/* Let the writer go on in non-snapshot mode: consume everything. */
static void auxbuf_consume(struct auxbuf *b)
{
	__u64 head;

	if (!b->aux)
		return;
	head = aux_head(b);
	__atomic_store_n(&b->pc->aux_tail, head, __ATOMIC_RELEASE);
}

/*
 * Remember the contents and the time. A record written while the copy is
 * taken may be in it, so the time catches what the copy cannot: records
 * carry the ktime_get_ns() (CLOCK_MONOTONIC) of their write.
 */
static void auxbuf_save(struct auxbuf *b)
{
	b->t_saved = now_ns();
	b->head_saved = aux_head(b);
	memcpy(b->copy, b->aux, b->aux_len);
}

struct scan {
	int	records;	/* valid records */
	int	from_pid;	/* records written while a task of @pid ran */
	int	inherited;	/* records of inherited events */
	int	bad;		/* records flagged or with buf_id != handle_buf_id */
	int	changed;	/* records that differ from the saved copy */
	int	changed_inherited;
	int	late;		/* records written after the copy was taken */
};

static void auxbuf_scan(struct auxbuf *b, pid_t pid, bool against_copy,
			struct scan *s)
{
	const size_t rs = sizeof(struct swaux_record);

	memset(s, 0, sizeof(*s));
	for (size_t off = 0; off + rs <= b->aux_len; off += rs) {
		const struct swaux_record *r = b->aux + off;

		if (r->magic != SWAUX_MAGIC || r->size != rs)
			continue;
		s->records++;
		if ((pid_t)r->pid == pid)
			s->from_pid++;
		if (r->flags & SWAUX_F_INHERITED)
			s->inherited++;
		if ((r->flags & SWAUX_F_MISMATCH) || r->buf_id != r->handle_buf_id)
			s->bad++;
		if (against_copy && memcmp(r, b->copy + off, rs)) {
			s->changed++;
			if (r->flags & SWAUX_F_INHERITED)
				s->changed_inherited++;
		}
		if (against_copy && r->time > b->t_saved)
			s->late++;
	}
}

/*
 * Written since auxbuf_save(): contents differ, or a record is younger
 * (swaux), or aux_head moved (other PMUs).
 */
static bool auxbuf_changed(struct auxbuf *b)
{
	struct scan s;

	if (memcmp(b->aux, b->copy, b->aux_len))
		return true;
	if (!pmu.swaux)
		return aux_head(b) != b->head_saved;
	auxbuf_scan(b, 0, true, &s);
	return s.late > 0;
}

/* Not a PMU's untouched buffer any more: aux_head moved or data arrived */
static bool auxbuf_written(struct auxbuf *b)
{
	const unsigned char *p = b->aux;

	if (aux_head(b))
		return true;
	for (size_t i = 0; i < b->aux_len; i++)
		if (p[i])
			return true;
	return false;
}

/*
 * A tracing child on X. Round-robin at the lowest RT priority: the children
 * take turns in 100 ms slices, so the child running when P is redirected
 * keeps running (and its transaction stays open) well after the ioctl
 * returns, instead of being switched out at a point the test cannot
 * choose. Set before moving to X, where an RT child may already spin.
 */
static void child_loop(struct shared *sh, int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };
	atomic_ulong spin = 0;

	if (sched_setscheduler(0, SCHED_RR, &sp))
		_exit(3);
	if (pin_to(cpu))
		_exit(2);
	atomic_fetch_add(&sh->running, 1);
	while (!atomic_load(&sh->stop))
		spin++;
	_exit(0);
}

FIXTURE(redirect) {
	int		type;
	int		cpu;		/* X: where P and the children trace */
	int		ctl_cpu;	/* where the controller runs */
	int		p_fd;
	int		nr_bufs;
	struct auxbuf	buf[MAX_BUFS];
	pid_t		holder[MAX_BUFS]; /* owner task of buf[i] (0: this one) */
	struct shared	*sh;
	pid_t		pgid;
	pid_t		child[MAX_CHILDREN];
	int		nr_children;
	long		mismatches;
	long		dead_writes;
	int		splats;
};

FIXTURE_VARIANT(redirect) {
	bool	snapshot;
	int	children;
};

FIXTURE_VARIANT_ADD(redirect, one_child) {
	.snapshot = false,
	.children = 1,
};

FIXTURE_VARIANT_ADD(redirect, one_child_snapshot) {
	.snapshot = true,
	.children = 1,
};

FIXTURE_VARIANT_ADD(redirect, many_children) {
	.snapshot = false,
	.children = 4,
};

FIXTURE_VARIANT_ADD(redirect, many_children_snapshot) {
	.snapshot = true,
	.children = 4,
};

static void consume_all(struct __test_metadata *_metadata __maybe_unused,
			FIXTURE_DATA(redirect) *self,
			const FIXTURE_VARIANT(redirect) *variant)
{
	if (variant->snapshot)
		return;
	for (int i = 0; i < self->nr_bufs; i++)
		auxbuf_consume(&self->buf[i]);
}

/* Wait @ms while keeping non-snapshot buffers drained */
static void run_for(struct __test_metadata *_metadata,
		    FIXTURE_DATA(redirect) *self,
		    const FIXTURE_VARIANT(redirect) *variant, long ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end) {
		consume_all(_metadata, self, variant);
		sleep_ms(10);
	}
}

FIXTURE_SETUP(redirect)
{
	int ncpus;

	page_size = sysconf(_SC_PAGESIZE);
	self->p_fd = -1;
	self->type = pmu.type;
	if (self->type < 0)
		SKIP(return, "%s", pmu.skip);

	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	self->cpu = pmu.cpu;
	self->ctl_cpu = other_cpu(self->cpu);
	if (ncpus < 2 || self->ctl_cpu < 0)
		SKIP(return, "needs 2 CPUs: the controller must not run on CPU X");
	ASSERT_EQ(pin_to(self->ctl_cpu), 0);

	if (pmu.swaux) {
		/* Overflow every few ticks: several per test phase */
		write_param("overflow_bytes", 1024);
		write_param("bytes_per_tick", 256);
		write_param("period_us", 1000);

		self->mismatches = read_param("mismatches");
		self->dead_writes = read_param("dead_writes");
		ASSERT_GE(self->mismatches, 0);
	} else {
		TH_LOG("PMU %s (type %d), CPU X %d, controller on CPU %d, config2 %#llx",
		       pmu.name, self->type, self->cpu, self->ctl_cpu,
		       (unsigned long long)pmu.config2);
		/* Before P exists: a holder must not inherit P */
		for (int i = 0; i < MAX_BUFS; i++) {
			self->holder[i] = holder_spawn();
			ASSERT_GT(self->holder[i], 0) TH_LOG("fork: %s", strerror(errno));
		}
	}
	self->splats = dmesg_splats();

	self->nr_bufs = 2;
	for (int i = 0; i < self->nr_bufs; i++) {
		int ret = auxbuf_open(&self->buf[i], self->type, self->holder[i],
				      self->cpu, variant->snapshot);

		ASSERT_EQ(ret, 0) TH_LOG("AUX buffer %d: %s", i, strerror(errno));
	}

	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(self->sh, MAP_FAILED);

	/* P: per-task on X, inherited, enabled, no mmap of its own */
	self->p_fd = open_event(self->type, 0, self->cpu, true, false);
	ASSERT_GE(self->p_fd, 0) TH_LOG("P: %s", strerror(errno));
}

static void stop_children(FIXTURE_DATA(redirect) *self)
{
	if (!self->sh || self->sh == MAP_FAILED)
		return;
	atomic_store(&self->sh->stop, 1);
	for (int i = 0; i < self->nr_children; i++)
		waitpid(self->child[i], NULL, 0);
	self->nr_children = 0;
}

FIXTURE_TEARDOWN(redirect)
{
	stop_children(self);
	if (self->p_fd >= 0)
		close(self->p_fd);
	for (int i = 0; i < MAX_BUFS; i++)
		if (self->buf[i].fd > 0)
			auxbuf_close(&self->buf[i]);
	for (int i = 0; i < MAX_BUFS; i++) {
		if (self->holder[i] > 0) {
			kill(self->holder[i], SIGKILL);
			waitpid(self->holder[i], NULL, 0);
		}
	}
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
}

static int start_children(FIXTURE_DATA(redirect) *self, int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (!pid)
			child_loop(self->sh, self->cpu);
		self->child[self->nr_children++] = pid;
	}
	while (atomic_load(&self->sh->running) < n) {
		/* A child that exited early could not pin itself or go RR */
		for (int i = 0; i < self->nr_children; i++) {
			if (waitpid(self->child[i], NULL, WNOHANG) == self->child[i]) {
				self->child[i] = self->child[--self->nr_children];
				return -1;
			}
		}
		sleep_ms(1);
	}
	return 0;
}

/*
 * Wait until a child's records show up in @b (its transaction is open).
 * Other PMUs: until @b, fresh, has data; only the children run on X.
 */
static bool wait_child_records(FIXTURE_DATA(redirect) *self __maybe_unused,
			       const FIXTURE_VARIANT(redirect) *variant,
			       struct auxbuf *b, long timeout_ms)
{
	double end = now_ms() + timeout_ms;
	struct scan s;

	do {
		if (!pmu.swaux) {
			if (auxbuf_written(b))
				return true;
		} else {
			auxbuf_scan(b, 0, false, &s);
			if (s.inherited)
				return true;
		}
		if (!variant->snapshot)
			auxbuf_consume(b);
		sleep_ms(5);
	} while (now_ms() < end);
	return false;
}

/* The module's counters (swaux) and dmesg */
static void check_module(struct __test_metadata *_metadata,
			 FIXTURE_DATA(redirect) *self)
{
	if (pmu.swaux) {
		long mism = read_param("mismatches") - self->mismatches;
		long dead = read_param("dead_writes") - self->dead_writes;

		EXPECT_EQ(mism, 0) TH_LOG("writer buffer != handle buffer %ld times", mism);
		EXPECT_EQ(dead, 0) TH_LOG("%ld writes into freed AUX buffers", dead);
	}
	EXPECT_EQ(dmesg_splats(), self->splats) TH_LOG("kernel splat in dmesg");
}

/*
 * redirect_and_check() with a PMU whose data is opaque: aux_head and the
 * data of @from did not change after SET_OUTPUT returned; the children's
 * data reached @to. In snapshot mode aux_head only moves when a child
 * stops, which a lone child spinning on X may not do within the check:
 * new data in @to counts too.
 */
static void redirect_check_data(struct __test_metadata *_metadata,
				struct auxbuf *from, struct auxbuf *to)
{
	__u64 head = aux_head(from);

	EXPECT_FALSE(auxbuf_changed(from))
		TH_LOG("old buffer written after SET_OUTPUT returned: aux_head %llu -> %llu%s",
		       (unsigned long long)from->head_saved, (unsigned long long)head,
		       head == from->head_saved ? ", data changed" : "");
	if (!to)
		return;
	head = aux_head(to);
	EXPECT_TRUE(auxbuf_changed(to))
		TH_LOG("no child data reached the new buffer: aux_head %llu -> %llu",
		       (unsigned long long)to->head_saved, (unsigned long long)head);
}

/*
 * Redirect P from @from to @to (NULL: fd -1) with children tracing, then
 * check that @from is left alone and, if there is one, @to gets records.
 */
static void redirect_and_check(struct __test_metadata *_metadata,
			       FIXTURE_DATA(redirect) *self,
			       const FIXTURE_VARIANT(redirect) *variant,
			       struct auxbuf *from, struct auxbuf *to)
{
	struct scan s;

	if (to)
		auxbuf_save(to);
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, to ? (long)to->fd : -1L), 0)
		TH_LOG("SET_OUTPUT: %s", strerror(errno));
	/* From here on nothing may write into @from. */
	auxbuf_save(from);

	run_for(_metadata, self, variant, 300);

	if (!pmu.swaux) {
		redirect_check_data(_metadata, from, to);
		return;
	}
	auxbuf_scan(from, 0, true, &s);
	EXPECT_FALSE(auxbuf_changed(from))
		TH_LOG("old buffer written after SET_OUTPUT returned: %d new records, %d of %s",
		       s.changed, s.changed_inherited, "children");
	if (to) {
		auxbuf_scan(to, 0, true, &s);
		EXPECT_GT(s.changed_inherited, 0)
			TH_LOG("no child record reached the new buffer (%d records, %d new)",
			       s.records, s.changed);
		EXPECT_EQ(s.bad, 0) TH_LOG("%d mismatched records in the new buffer", s.bad);
	}
}

/* The scenario: P -> A, fork, P -> B while a child traces into A */
TEST_F_TIMEOUT(redirect, switch_buffer, 60)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	consume_all(_metadata, self, variant);
	ASSERT_TRUE(wait_child_records(self, variant, A, 20000))
		TH_LOG("children never wrote into A");

	redirect_and_check(_metadata, self, variant, A, B);
	stop_children(self);
	check_module(_metadata, self);
}

/* A -> B -> A -> B ...: each time the old buffer must be left alone */
TEST_F_TIMEOUT(redirect, repeated, 90)
{
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, self->buf[0].fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, &self->buf[0], 20000));

	for (int i = 0; i < 6; i++)
		redirect_and_check(_metadata, self, variant, &self->buf[i % 2],
				   &self->buf[(i + 1) % 2]);
	stop_children(self);
	check_module(_metadata, self);
}

/* P -> A, fork, P -> nothing (fd -1), then P -> B */
TEST_F_TIMEOUT(redirect, to_none, 60)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, 20000));

	redirect_and_check(_metadata, self, variant, A, NULL);
	redirect_and_check(_metadata, self, variant, A, B);
	stop_children(self);
	check_module(_metadata, self);
}

struct unmapper {
	struct auxbuf	*b;
	atomic_int	go;
};

static void *unmap_thread(void *arg)
{
	struct unmapper *u = arg;

	while (!atomic_load(&u->go))
		;
	auxbuf_unmap(u->b);
	return NULL;
}

/* P -> A, fork, P -> B while B is being unmapped */
TEST_F_TIMEOUT(redirect, unmap_new, 60)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];
	struct unmapper u = { .b = B };
	pthread_t th;
	int ret;

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, 20000));

	ASSERT_EQ(pthread_create(&th, NULL, unmap_thread, &u), 0);
	atomic_store(&u.go, 1);
	ret = ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, B->fd);
	/* -EINVAL if the unmap won: B is gone */
	ASSERT_TRUE(ret == 0 || errno == EINVAL) TH_LOG("SET_OUTPUT: %s", strerror(errno));
	/* From here on nothing may write into A. */
	if (!ret)
		auxbuf_save(A);
	pthread_join(th, NULL);
	if (ret) {
		/* B already gone: P still on A, move it away explicitly */
		ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, -1L), 0);
		auxbuf_save(A);
	}
	run_for(_metadata, self, variant, 300);
	EXPECT_FALSE(auxbuf_changed(A)) TH_LOG("A written after SET_OUTPUT returned");
	stop_children(self);
	check_module(_metadata, self);
}

/*
 * Bounded stress: children fork and exit on X, the controller redirects P
 * between three buffers and to none, and unmaps and recreates buffers.
 * Only the module's counters and dmesg are checked.
 */
TEST_F_TIMEOUT(redirect, stress, 120)
{
	double end;
	int iter = 0;
	pid_t forker;

	ASSERT_EQ(auxbuf_open(&self->buf[2], self->type, self->holder[2],
			      self->cpu, variant->snapshot), 0);
	self->nr_bufs = 3;
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, self->buf[0].fd), 0);

	forker = fork();
	ASSERT_GE(forker, 0);
	if (!forker) {
		/* Short-lived tracing children, @children at a time */
		if (pin_to(self->cpu))
			_exit(2);
		while (!atomic_load(&self->sh->stop)) {
			for (int i = 0; i < variant->children; i++) {
				pid_t pid = fork();

				if (!pid) {
					double stop = now_ms() + 2 + (i * 3) % 7;

					while (now_ms() < stop)
						;
					_exit(0);
				}
			}
			while (wait(NULL) > 0)
				;
		}
		_exit(0);
	}
	self->child[self->nr_children++] = forker;

	end = now_ms() + 4000;
	while (now_ms() < end) {
		int i = iter++ % 7;
		struct auxbuf *b = &self->buf[i % 3];

		consume_all(_metadata, self, variant);
		if (i == 6) {
			/* munmap a buffer P may be using and recreate it */
			auxbuf_close(b);
			ASSERT_EQ(auxbuf_open(b, self->type, self->holder[i % 3],
					      self->cpu, variant->snapshot), 0);
			continue;
		}
		if (i == 3) {
			ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, -1L), 0);
		} else {
			ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, b->fd), 0)
				TH_LOG("SET_OUTPUT: %s", strerror(errno));
		}
		sleep_ms(iter % 5);
	}
	TH_LOG("%d iterations", iter);
	stop_children(self);
	check_module(_metadata, self);
}

/* The module on its own: an event with its own buffer gets sane records */
FIXTURE(swaux) {
	int		type;
	int		cpu;
	struct auxbuf	b;
	long		mismatches;
	int		splats;
};

FIXTURE_VARIANT(swaux) {
	bool	snapshot;
	bool	per_cpu;	/* pid -1 instead of a task */
};

FIXTURE_VARIANT_ADD(swaux, task) { .snapshot = false, .per_cpu = false };
FIXTURE_VARIANT_ADD(swaux, task_snapshot) { .snapshot = true, .per_cpu = false };
FIXTURE_VARIANT_ADD(swaux, cpu) { .snapshot = false, .per_cpu = true };
FIXTURE_VARIANT_ADD(swaux, cpu_snapshot) { .snapshot = true, .per_cpu = true };

FIXTURE_SETUP(swaux)
{
	page_size = sysconf(_SC_PAGESIZE);
	if (!pmu.swaux)
		SKIP(return, "module-only test: AUX_SET_OUTPUT_PMU=%s, not %s",
		     pmu.name, SWAUX_PMU_NAME);
	self->type = pmu.type;
	if (self->type < 0)
		SKIP(return, "%s", pmu.skip);
	self->cpu = pmu.cpu;
	ASSERT_EQ(pin_to(self->cpu), 0);
	self->mismatches = read_param("mismatches");
	self->splats = dmesg_splats();
}

FIXTURE_TEARDOWN(swaux)
{
	if (self->b.fd > 0)
		auxbuf_close(&self->b);
}

TEST_F_TIMEOUT(swaux, own_buffer, 30)
{
	atomic_ulong spin = 0;
	struct auxbuf *b = &self->b;
	struct scan s;
	double end;

	memset(b, 0, sizeof(*b));
	b->fd = open_event(self->type, variant->per_cpu ? -1 : 0, self->cpu,
			   false, true);
	ASSERT_GE(b->fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	b->base_len = (1 + DATA_PAGES) * page_size;
	b->base = mmap(NULL, b->base_len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	ASSERT_NE(b->base, MAP_FAILED);
	b->pc = b->base;
	b->aux_len = AUX_PAGES * page_size;
	b->pc->aux_offset = b->base_len;
	b->pc->aux_size = b->aux_len;
	b->aux = mmap(NULL, b->aux_len, PROT_READ | (variant->snapshot ? 0 : PROT_WRITE),
		      MAP_SHARED, b->fd, b->base_len);
	ASSERT_NE(b->aux, MAP_FAILED);

	ASSERT_EQ(ioctl(b->fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	end = now_ms() + 300;
	while (now_ms() < end) {
		spin++;
		if (!variant->snapshot && !(spin & 0xfffff))
			auxbuf_consume(b);
	}
	ASSERT_EQ(ioctl(b->fd, PERF_EVENT_IOC_DISABLE, 0), 0);

	auxbuf_scan(b, getpid(), false, &s);
	EXPECT_GT(s.records, 0);
	if (!variant->per_cpu)
		EXPECT_EQ(s.from_pid, s.records);
	EXPECT_EQ(s.inherited, 0);
	EXPECT_EQ(s.bad, 0);
	EXPECT_NE(b->pc->aux_head, 0ULL);
	EXPECT_EQ(read_param("mismatches"), self->mismatches);
	EXPECT_EQ(dmesg_splats(), self->splats);
}

int main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	if (pmu_setup() < 0)
		ksft_exit_skip("%s\n", pmu.skip);
	return test_harness_run(argc, argv);
}
