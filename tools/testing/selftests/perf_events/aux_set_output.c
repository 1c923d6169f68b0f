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
 * with an AUX transaction open, when the ioctl is issued. A redirect during
 * which a child was switched out (and so restarted on any kernel) proves
 * nothing either way: it is checked like any other and then repeated, up
 * to TRIES times, until one ran with every child on its CPU throughout.
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
 *   AUX_SET_OUTPUT_ETE_MODEL=1
 *			cs_etm's trace comes from QEMU's ETE model (the
 *			TRBE/ETE test model behind -cpu max,x-trbe=on),
 *			whose 64-byte records carry the CPU, a per-CPU
 *			sequence number and the pid: the records are then
 *			checked as swaux ones are (who wrote each, that the
 *			new buffer's records all come after the old
 *			buffer's, none from another CPU, nothing that is
 *			not a model record).
 *
 * Skips (exit 4) when the PMU is not available (swaux: module not loaded),
 * cs_etm has no TRBE sink for X, or the system has a single CPU. The swaux
 * fixture (module-only tests) skips with another PMU.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "test_modules/swaux_abi.h"

#define PMU_DIR		"/sys/bus/event_source/devices/"
#define PARAM_DIR	"/sys/module/" SWAUX_MODULE_NAME "/parameters/"

#define DATA_PAGES	64	/* PERF_RECORD_AUX for a test's life, undrained */
#define AUX_PAGES	256
#define MAX_CHILDREN	8
#define MAX_BUFS	3
/* How long to wait for the first records of a writer: seconds under TCG */
#define WAIT_MS		5000

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

/* The ETE model's record size, as swaux's */
#define REC_SIZE	64

/* Shared with the children */
struct shared {
	atomic_int		stop;
	atomic_int		running;
	atomic_int		rotate;	/* children yield the CPU to each other */
};

static long page_size;

/* The AUX PMU under test (AUX_SET_OUTPUT_PMU, AUX_SET_OUTPUT_CPU) */
static struct {
	const char	*name;
	int		type;		/* -1: absent */
	int		cpu;		/* X */
	bool		swaux;		/* swaux records and module counters */
	bool		ete_model;	/* cs_etm trace of QEMU's ETE model */
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
	name = getenv("AUX_SET_OUTPUT_ETE_MODEL");
	pmu.ete_model = name && !strcmp(name, "1");

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

#define SWAUX_DEBUGFS	"/sys/kernel/debug/swaux/"

static unsigned long long event_id(int fd)
{
	unsigned long long id = 0;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id))
		return 0;
	return id;
}

/* The writer's log entries on @cpu so far (debugfs swaux/writers), or -1 */
static long swaux_log_n(int cpu)
{
	FILE *f = fopen(SWAUX_DEBUGFS "writers", "r");
	unsigned long long e, pa;
	long n = -1, ln;
	unsigned int b;
	int c;

	if (!f)
		return -1;
	while (fscanf(f, "%d %llu %llu %u %ld", &c, &e, &pa, &b, &ln) == 5)
		if (c == cpu)
			n = ln;
	fclose(f);
	return n;
}

/*
 * For a failure that the records alone do not explain: the module's
 * counters, its writers and what the writer of @cpu did from log entry
 * @since on (at most 40 lines).
 */
static void swaux_dump(struct __test_metadata *_metadata, int cpu, long since)
{
	static const char * const counters[] = { "begin_fail", "busy", "overflows" };
	char line[160], path[128];
	int lines = 0;
	FILE *f;

	for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
		snprintf(path, sizeof(path), SWAUX_DEBUGFS "%s", counters[i]);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f))
			TH_LOG("swaux %s: %s", counters[i], strtok(line, "\n"));
		if (f)
			fclose(f);
	}
	f = fopen(SWAUX_DEBUGFS "writers", "r");
	while (f && fgets(line, sizeof(line), f))
		TH_LOG("swaux writer (cpu event parent buf log-n): %s", strtok(line, "\n"));
	if (f)
		fclose(f);
	f = fopen(SWAUX_DEBUGFS "events", "r");
	while (f && fgets(line, sizeof(line), f))
		TH_LOG("swaux event: %s", strtok(line, "\n"));
	if (f)
		fclose(f);
	f = fopen(SWAUX_DEBUGFS "log_since", "w");
	if (f) {
		fprintf(f, "%ld\n", since < 0 ? 0 : since);
		fclose(f);
	}
	f = fopen(SWAUX_DEBUGFS "log", "r");
	while (f && fgets(line, sizeof(line), f) && lines < 40) {
		char *end;
		long c = strtol(line, &end, 10);

		if (end != line && c == cpu) {
			TH_LOG("swaux log (cpu n time kind event buf): %s", strtok(line, "\n"));
			lines++;
		}
	}
	if (f)
		fclose(f);
	f = fopen(SWAUX_DEBUGFS "log_since", "w");
	if (f) {
		fprintf(f, "0\n");
		fclose(f);
	}
}

static long read_long(const char *path)
{
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

static int write_long(const char *path, long val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", val) < 0;
	return fclose(f) || ret ? -1 : 0;
}

static long read_param(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return read_long(path);
}

static void write_param(const char *name, long val)
{
	char path[256];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	write_long(path, val);
}

/* The writer parameters the tests set, restored at each test's end */
static const char *const swaux_writer_params[] = {
	"overflow_bytes", "bytes_per_tick", "period_us",
};

#define NR_WRITER_PARAMS	ARRAY_SIZE(swaux_writer_params)

static void params_save(long *v)
{
	for (size_t i = 0; i < NR_WRITER_PARAMS; i++)
		v[i] = read_param(swaux_writer_params[i]);
}

static void params_restore(const long *v)
{
	for (size_t i = 0; i < NR_WRITER_PARAMS; i++)
		if (v[i] >= 0)
			write_param(swaux_writer_params[i], v[i]);
}

/*
 * Kernel splats since kmsg_open(): /dev/kmsg read from the end of the log
 * at the test's start, so older messages and a wrapped log do not count.
 */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Number of splat lines logged since kmsg_open(); the first in @first */
static int kmsg_splats(int fd, char *first, size_t len)
{
	static const char * const pats[] = {
		"WARNING:", "BUG:", "Oops", "circular locking",
		"possible recursive locking", "inconsistent lock state",
		"KASAN:", "UBSAN:", "INFO: task",
	};
	char rec[8192];
	int n = 0;

	if (first && len)
		first[0] = '\0';
	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);

		if (r < 0 && errno == EPIPE)	/* overwritten: go on */
			continue;
		if (r <= 0)
			break;
		rec[r] = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(pats); i++) {
			/* "prio,seq,time,flags;message\n[continuation...]" */
			const char *msg = strchr(rec, ';') ? strchr(rec, ';') + 1 : rec;

			if (!strstr(rec, pats[i]))
				continue;
			if (!n && first && len)
				snprintf(first, len, "%.*s", (int)strcspn(msg, "\n"), msg);
			n++;
			break;
		}
	}
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

/*
 * Context switches of tasks @pid[0..n-1] so far, voluntary or not
 * (/proc/<pid>/status); -1 if one cannot be read.
 *
 * A tracing child that is switched out and in again ends its transaction
 * and begins the next one on whatever buffer P has then, on any kernel: a
 * redirect during which a child was switched says nothing about how the
 * kernel treats a transaction that is open across SET_OUTPUT. The children
 * are SCHED_FIFO, but kernel threads still preempt them: X's kworker,
 * softirq and stopper threads, and unbound ones such as the RCU
 * grace-period kthread if they may run on X (hundreds of times a second in
 * an arm64 guest, until it was moved off X). The tests count the switches
 * over each redirect and repeat a redirect that had one.
 */
static long task_switches(const pid_t *pid, int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		char path[64], line[128];
		long v;
		FILE *f;
		int got = 0;

		snprintf(path, sizeof(path), "/proc/%d/status", pid[i]);
		f = fopen(path, "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1) {
				sum += v;
				got++;
			}
		}
		fclose(f);
		if (got != 2)
			return -1;
	}
	return sum;
}

/* Redirects tried until one ran with no child switched out in its window */
#define TRIES		20
/*
 * A redirect's window: from before the ioctl until SWITCH_MS after it, or
 * until a child's first record in the new buffer if that is later. A
 * child that stays on its CPU that long has overflowed (every four 1 ms
 * ticks) and written records after the ioctl, so a kernel with the bug has
 * shown it. The window is kept short: kernel threads preempt the children
 * several times a second.
 */
#define SWITCH_MS	50

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

/*
 * Set for one test (each runs in its own process): the owner events that
 * auxbuf_open() creates wake their readers for every record in the ring.
 */
static bool owner_wakes_each_record;
/* Set for one test: P (an inherited event) is opened pinned. */
static bool p_pinned;

static int open_event(int type, pid_t pid, int cpu, bool inherit, bool disabled)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= type,
		.disabled	= disabled,
		.inherit	= inherit,
		.exclude_hv	= 1,
	};

	/*
	 * P and its children: records carry who wrote them (tid) and for
	 * which event (P's id, which its children's records carry too).
	 */
	if (inherit) {
		attr.sample_id_all = 1;
		attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER;
	}
	if (p_pinned && inherit)
		attr.pinned = 1;
	if (owner_wakes_each_record && disabled && !inherit) {
		attr.watermark = 1;
		attr.wakeup_watermark = 1;
	}

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

/* The PMU's records tell who wrote them: swaux, or cs_etm on the ETE model */
static bool has_records(void)
{
	return pmu.swaux || pmu.ete_model;
}

struct scan {
	int	records;	/* valid records */
	int	from_pid;	/* records written while a task of @pid ran */
	int	inherited;	/* records of inherited events */
	int	bad;		/* records flagged or with buf_id != handle_buf_id */
	int	changed;	/* records that differ from the saved copy */
	int	changed_inherited;
	int	changed_pid;	/* ... written while a task of @pid ran */
	int	late;		/* records written after the copy was taken */
	/* ETE model */
	int	invalid;	/* 64-byte blocks that are no model record */
	int	other_cpu;	/* records of another CPU than X */
	__u64	seq_max;	/* highest sequence number (0: none) */
	__u64	changed_seq_min; /* lowest one of a changed record (0: none) */
	pid_t	first_pid;	/* the first inherited record's pid */
};

/*
 * One 64-byte record of QEMU's ETE model: [Overflow] A-Sync, TraceInfo
 * (no sections), Trace On, a Timestamp of (cpu << 48 | sequence number),
 * a Context packet with the context ID (CONTEXTIDR_EL1: the pid) and no
 * VMID, a 64-bit address, Ignore packets (0x70) up to the end. The same
 * layout tools/perf/util/swaux.c decodes in perf.data.
 * Returns 1 for a record, 0 for padding (Ignore packets only) or a block
 * never written (zeroes), -1 for anything else.
 */
struct ete_rec {
	__u32	cpu;
	__u32	pid;
	__u64	seq;
};

static bool all_bytes(const unsigned char *p, size_t n, unsigned char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return false;
	return true;
}

static int ete_model_parse(const unsigned char *p, struct ete_rec *r)
{
	static const unsigned char head[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-Sync */
		0x01, 0x00,				/* TraceInfo */
		0x04,					/* Trace On */
		0x02,					/* Timestamp */
	};
	const unsigned char *end = p + REC_SIZE;
	__u64 ts = 0;

	if (all_bytes(p, REC_SIZE, 0x70) || all_bytes(p, REC_SIZE, 0))
		return 0;
	if (p[0] == 0x00 && p[1] == 0x05)	/* Overflow */
		p += 2;
	if (memcmp(p, head, sizeof(head)))
		return -1;
	p += sizeof(head);
	for (int i = 0; i < 9; i++, p++) {	/* 7 bits a byte, the 9th has 8 */
		ts |= (__u64)(i < 8 ? *p & 0x7f : *p) << (7 * i);
		if (i == 8 || !(*p & 0x80)) {
			p++;
			break;
		}
	}
	if (p + 15 > end || p[0] != 0x81 || (p[1] & 0xc0) != 0x80 || p[6] != 0x9d ||
	    !all_bytes(p + 15, end - (p + 15), 0x70))
		return -1;
	r->pid = p[2] | p[3] << 8 | p[4] << 16 | (__u32)p[5] << 24;
	r->seq = ts & ((1ull << 48) - 1);
	r->cpu = ts >> 48;
	return 1;
}

/*
 * The ETE model's records in @b. A record is inherited when a task other
 * than this one wrote it: P's own task never runs on X but in p_active,
 * which counts by pid.
 */
static void auxbuf_scan_ete(struct auxbuf *b, pid_t pid, bool against_copy,
			    struct scan *s)
{
	const unsigned char *aux = b->aux;
	pid_t self = getpid();

	for (size_t off = 0; off + REC_SIZE <= b->aux_len; off += REC_SIZE) {
		bool changed = against_copy && memcmp(aux + off, b->copy + off, REC_SIZE);
		struct ete_rec r;
		int ret = ete_model_parse(aux + off, &r);

		if (ret < 0)
			s->invalid++;
		if (ret <= 0)
			continue;
		s->records++;
		if (r.cpu != (__u32)pmu.cpu) {
			s->other_cpu++;
			s->bad++;
			continue;
		}
		if (r.seq > s->seq_max)
			s->seq_max = r.seq;
		if ((pid_t)r.pid == pid)
			s->from_pid++;
		if ((pid_t)r.pid != self) {
			if (!s->inherited++)
				s->first_pid = r.pid;
		}
		if (!changed)
			continue;
		s->changed++;
		if ((pid_t)r.pid != self)
			s->changed_inherited++;
		if ((pid_t)r.pid == pid)
			s->changed_pid++;
		if (!s->changed_seq_min || r.seq < s->changed_seq_min)
			s->changed_seq_min = r.seq;
	}
	s->bad += s->invalid;
}

static void auxbuf_scan(struct auxbuf *b, pid_t pid, bool against_copy,
			struct scan *s)
{
	const size_t rs = sizeof(struct swaux_record);

	memset(s, 0, sizeof(*s));
	if (pmu.ete_model) {
		auxbuf_scan_ete(b, pid, against_copy, s);
		return;
	}
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
			if ((pid_t)r->pid == pid)
				s->changed_pid++;
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
	if (!pmu.swaux)	/* the ETE model's records carry no time */
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
 * A forked child holds the test's event fds (fork copies them; the mmaps
 * it does not, perf's are VM_DONTCOPY): an owner event the test closes
 * would live on in it, and an exclusive PMU (cs_etm) refuses a new event
 * of the same task on the same CPU with EBUSY while the old one lives.
 * The children need no fd but 0-2.
 */
static void drop_event_fds(void)
{
	if (syscall(SYS_close_range, 3, ~0U, 0)) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	}
}

/*
 * A tracing child on X, SCHED_FIFO at the lowest RT priority: it runs until
 * it yields, and the children yield to each other only while sh->rotate is
 * set. The test turns rotation off before it redirects P, so the child
 * running then keeps running, with its transaction open, until the test
 * has seen what became of it: no time slice ends between the ioctl and the
 * child's next overflow (that would hide the bug on a kernel that has it).
 * It is still switched out now and then for a kernel thread:
 * task_switches() tells the redirects that saw that, and they are
 * repeated. SCHED_FIFO is set before moving to X, where an RT child may
 * already spin.
 */
static void child_loop(struct shared *sh, int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };
	atomic_ulong spin = 0;

	/* A test that dies must not leave RT spinners behind */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	drop_event_fds();
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(3);
	if (pin_to(cpu))
		_exit(2);
	atomic_fetch_add(&sh->running, 1);
	while (!atomic_load(&sh->stop)) {
		spin++;
		if (atomic_load(&sh->rotate))
			sched_yield();
	}
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
	int		kmsg;		/* /dev/kmsg from the test's start */
	long		params[NR_WRITER_PARAMS]; /* swaux: restored at the end */
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

/*
 * Wait up to @ms for a child record in @to (written after its save),
 * keeping non-snapshot buffers drained: on a loaded host a TCG vCPU can
 * stall for longer than a redirect's window. Not waited for once @from
 * (NULL: unmapped) was written after the redirect: the test has failed.
 */
static void wait_new_child_records(struct __test_metadata *_metadata,
				   FIXTURE_DATA(redirect) *self,
				   const FIXTURE_VARIANT(redirect) *variant,
				   struct auxbuf *from, struct auxbuf *to, long ms)
{
	double end = now_ms() + ms;
	struct scan s;

	for (;;) {
		if (from && auxbuf_changed(from))
			return;
		auxbuf_scan(to, 0, true, &s);
		if (s.changed_inherited || now_ms() >= end)
			return;
		run_for(_metadata, self, variant, 10);
	}
}

FIXTURE_SETUP(redirect)
{
	int ncpus;

	page_size = sysconf(_SC_PAGESIZE);
	self->p_fd = -1;
	self->kmsg = -1;
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
		params_save(self->params);
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
	self->kmsg = kmsg_open();
	ASSERT_GE(self->kmsg, 0) TH_LOG("/dev/kmsg: %s", strerror(errno));

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
	if (self->kmsg >= 0)
		close(self->kmsg);
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
	if (pmu.swaux)
		params_restore(self->params);
}

/*
 * Fork @n children on X and let them take turns until each has run; then
 * rotation stops and one of them keeps X.
 */
static int start_children(FIXTURE_DATA(redirect) *self, int n)
{
	atomic_store(&self->sh->rotate, 1);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (!pid)
			child_loop(self->sh, self->cpu);
		self->child[self->nr_children++] = pid;
	}
	while (atomic_load(&self->sh->running) < n) {
		/* A child that exited early could not pin itself or go RT */
		for (int i = 0; i < self->nr_children; i++) {
			if (waitpid(self->child[i], NULL, WNOHANG) == self->child[i]) {
				self->child[i] = self->child[--self->nr_children];
				return -1;
			}
		}
		sleep_ms(1);
	}
	/* Every child has been switched in and out: now one keeps X. */
	sleep_ms(20);
	atomic_store(&self->sh->rotate, 0);
	return 0;
}

/*
 * Wait until a child's records show up in @b (its transaction is open), or
 * with @pid, records written while task @pid ran (swaux only).
 * Other PMUs: until @b, fresh, has data; only the children run on X.
 */
static bool wait_child_records(FIXTURE_DATA(redirect) *self __maybe_unused,
			       const FIXTURE_VARIANT(redirect) *variant,
			       struct auxbuf *b, pid_t pid, long timeout_ms)
{
	double end = now_ms() + timeout_ms;
	struct scan s;

	do {
		if (!has_records()) {
			if (auxbuf_written(b))
				return true;
		} else {
			auxbuf_scan(b, pid, false, &s);
			if (pid ? s.from_pid : s.inherited)
				return true;
		}
		if (!variant->snapshot)
			auxbuf_consume(b);
		sleep_ms(5);
	} while (now_ms() < end);
	return false;
}

static void expect_no_splat(struct __test_metadata *_metadata, int kmsg)
{
	char first[256];
	int n = kmsg_splats(kmsg, first, sizeof(first));

	EXPECT_EQ(n, 0) TH_LOG("%d kernel splat lines in /dev/kmsg, first: %s", n, first);
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
	expect_no_splat(_metadata, self->kmsg);
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

/* The children's context switches so far, -1 if they cannot be read */
static long children_switches(FIXTURE_DATA(redirect) *self)
{
	return task_switches(self->child, self->nr_children);
}

/*
 * Whether no child was switched out since @before (children_switches()),
 * taken just before a redirect and called SWITCH_MS after it: then the
 * redirect tested the kernel. Logs one that did not.
 */
static bool switch_free(struct __test_metadata *_metadata,
			FIXTURE_DATA(redirect) *self, long before, const char *what)
{
	long now = children_switches(self);

	if (before >= 0 && now == before)
		return true;
	TH_LOG("%s: child context switches during the redirect: %ld, inconclusive",
	       what, before < 0 || now < 0 ? -1 : now - before);
	return false;
}

/* The ETE model's trace in a buffer: model records only, all of CPU X */
static void check_ete_records(struct __test_metadata *_metadata, const struct scan *s,
			      const char *name)
{
	EXPECT_EQ(s->invalid, 0)
		TH_LOG("%s buffer: %d 64-byte blocks are no ETE model record",
		       name, s->invalid);
	EXPECT_EQ(s->other_cpu, 0)
		TH_LOG("%s buffer: %d records of another CPU than %d", name, s->other_cpu, pmu.cpu);
}

/*
 * Redirect P from @from to @to (NULL: fd -1) with children tracing, then
 * check that @from is left alone and, if there is one, @to gets records.
 * Returns whether no child was switched out meanwhile (switch_free()).
 *
 * With swaux, "meanwhile" lasts until a child's first record in @to, if
 * that comes after SWITCH_MS: a child must go on in @to without being
 * switched out. A kernel with the bug leaves a child that found no buffer
 * stopped until it is scheduled in again; what a sched-in brings about
 * proves nothing, and the redirect is then repeated.
 */
static bool redirect_and_check(struct __test_metadata *_metadata,
			       FIXTURE_DATA(redirect) *self,
			       const FIXTURE_VARIANT(redirect) *variant,
			       struct auxbuf *from, struct auxbuf *to)
{
	long sw = children_switches(self);
	struct scan s, fs;
	double t0;
	long left;
	bool clean;

	if (to)
		auxbuf_save(to);
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, to ? (long)to->fd : -1L), 0)
		TH_LOG("SET_OUTPUT: %s", strerror(errno));
	/* From here on nothing may write into @from. */
	auxbuf_save(from);
	t0 = now_ms();

	if (to && has_records())
		wait_new_child_records(_metadata, self, variant, from, to, WAIT_MS);
	left = SWITCH_MS - (long)(now_ms() - t0);
	if (left > 0)
		run_for(_metadata, self, variant, left);
	clean = switch_free(_metadata, self, sw, to ? "SET_OUTPUT" : "SET_OUTPUT -1");
	run_for(_metadata, self, variant, 300 - SWITCH_MS);

	if (!has_records()) {
		redirect_check_data(_metadata, from, to);
		return clean;
	}
	if (to)
		wait_new_child_records(_metadata, self, variant, from, to, WAIT_MS);
	auxbuf_scan(from, 0, true, &fs);
	EXPECT_FALSE(auxbuf_changed(from))
		TH_LOG("old buffer written after SET_OUTPUT returned: %d new records, %d of %s",
		       fs.changed, fs.changed_inherited, "children");
	if (pmu.ete_model)
		check_ete_records(_metadata, &fs, "old");
	if (to) {
		auxbuf_scan(to, 0, true, &s);
		EXPECT_GT(s.changed_inherited, 0)
			TH_LOG("no child record reached the new buffer (%d records, %d new)",
			       s.records, s.changed);
		EXPECT_EQ(s.bad, 0) TH_LOG("%d mismatched records in the new buffer", s.bad);
		if (pmu.ete_model) {
			check_ete_records(_metadata, &s, "new");
			/* What the new buffer got was traced after all of the old one's */
			EXPECT_TRUE(!s.changed_seq_min || s.changed_seq_min > fs.seq_max)
				TH_LOG("new records from sequence %llu, old up to %llu",
				       (unsigned long long)s.changed_seq_min,
				       (unsigned long long)fs.seq_max);
		}
	}
	return clean;
}

/* The scenario: P -> A, fork, P -> B while a child traces into A */
TEST_F_TIMEOUT(redirect, switch_buffer, 20)
{
	struct auxbuf *A = &self->buf[0];
	int i;

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	consume_all(_metadata, self, variant);
	ASSERT_TRUE(wait_child_records(self, variant, A, 0, WAIT_MS))
		TH_LOG("children never wrote into A");

	/* A -> B; if a child was switched out meanwhile, B -> A, ... */
	for (i = 0; i < TRIES; i++)
		if (redirect_and_check(_metadata, self, variant, &self->buf[i % 2],
				       &self->buf[(i + 1) % 2]))
			break;
	EXPECT_LT(i, TRIES) TH_LOG("a child was switched out in each of %d redirects", TRIES);
	stop_children(self);
	check_module(_metadata, self);
}

/*
 * A -> B -> A -> B ...: each time the old buffer must be left alone. Six
 * redirects, more if a child was switched out in each of them.
 */
TEST_F_TIMEOUT(redirect, repeated, 25)
{
	int i, clean = 0;

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, self->buf[0].fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, &self->buf[0], 0, WAIT_MS));

	for (i = 0; i < 6 || (!clean && i < 6 + TRIES); i++)
		clean += redirect_and_check(_metadata, self, variant, &self->buf[i % 2],
					    &self->buf[(i + 1) % 2]);
	EXPECT_GT(clean, 0) TH_LOG("a child was switched out in each of %d redirects", i);
	stop_children(self);
	check_module(_metadata, self);
}

/*
 * P -> A, fork, P -> nothing (fd -1), then P -> B: the children, stopped
 * for want of a buffer, go on in B. Again from B to A if a child was
 * switched out meanwhile (which restarts it on any kernel).
 */
TEST_F_TIMEOUT(redirect, to_none, 30)
{
	struct auxbuf *A = &self->buf[0];
	int i;

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, 0, WAIT_MS));

	for (i = 0; i < TRIES; i++) {
		struct auxbuf *from = &self->buf[i % 2], *to = &self->buf[(i + 1) % 2];
		bool clean = redirect_and_check(_metadata, self, variant, from, NULL);

		if (redirect_and_check(_metadata, self, variant, from, to) && clean)
			break;
	}
	EXPECT_LT(i, TRIES) TH_LOG("a child was switched out in each of %d tries", TRIES);
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
TEST_F_TIMEOUT(redirect, unmap_new, 15)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];
	struct unmapper u = { .b = B };
	pthread_t th;
	int ret;

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, 0, WAIT_MS));

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
TEST_F_TIMEOUT(redirect, stress, 20)
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
		drop_event_fds();
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
					      self->cpu, variant->snapshot), 0)
				TH_LOG("buffer %d again: %s", i % 3, strerror(errno));
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

/* PERF_RECORD_AUX as P writes it into a data ring */
struct aux_record {
	struct perf_event_header	header;
	__u64				offset;
	__u64				size;
	__u64				flags;
	/* sample_id_all: PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER */
	__u32				pid, tid;
	__u64				id;
};

/* Copy @len bytes at ring position @pos out of @b's data ring */
static void data_copy(struct auxbuf *b, void *dst, __u64 pos, size_t len)
{
	const unsigned char *data = (unsigned char *)b->base + b->pc->data_offset;
	__u64 size = b->pc->data_size;

	for (size_t i = 0; i < len; i++)
		((unsigned char *)dst)[i] = data[(pos + i) % size];
}

/*
 * The PERF_RECORD_AUX records in @b's data ring must describe its AUX area
 * from 0 to aux_head in order, with no gap and no overlap: all data
 * committed to @b is described in @b's ring, and nothing else is. Each one
 * must be P's (@id) and written by one of the @n tasks @pids; with swaux
 * none may be truncated (the test keeps the buffers drained). Non-snapshot
 * buffers only; call when no transaction is open on @b.
 */
static void check_aux_records(struct __test_metadata *_metadata, struct auxbuf *b,
			      const char *name, __u64 id, const pid_t *pids, int n)
{
	__u64 head = __atomic_load_n(&b->pc->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = b->pc->data_tail, end = 0, first_bad = ~0ull;
	__u64 aux_end = aux_head(b);
	int records = 0, lost = 0, bad = 0, empty = 0, truncated = 0;
	int other_id = 0, other_task = 0;

	ASSERT_LE(head - tail, b->pc->data_size) TH_LOG("%s: data ring overran", name);
	while (tail < head) {
		struct aux_record r;

		data_copy(b, &r.header, tail, sizeof(r.header));
		ASSERT_GE(r.header.size, sizeof(r.header)) TH_LOG("%s: bad record", name);
		if (r.header.type == PERF_RECORD_LOST)
			lost++;
		if (r.header.type == PERF_RECORD_AUX) {
			bool known = false;

			ASSERT_EQ(r.header.size, sizeof(r))
				TH_LOG("%s: PERF_RECORD_AUX of %u bytes", name, r.header.size);
			data_copy(b, &r, tail, sizeof(r));
			records++;
			empty += !r.size;
			truncated += !!(r.flags & PERF_AUX_FLAG_TRUNCATED);
			for (int i = 0; i < n; i++)
				known |= pids[i] == (pid_t)r.tid;
			if (r.id != id && !other_id++)
				TH_LOG("%s: a PERF_RECORD_AUX of event %llu, P is %llu", name,
				       (unsigned long long)r.id, (unsigned long long)id);
			if (!known && !other_task++)
				TH_LOG("%s: a PERF_RECORD_AUX written by task %u, not a child",
				       name, r.tid);
			/*
			 * A record of size 0 (a flag) still sits at the end.
			 * A sink may skip ahead without a record (TRBE pads
			 * with perf_aux_output_skip()): a gap counts only
			 * where the trace is swaux's or the ETE model's.
			 */
			if (r.offset < end || (r.offset > end && has_records())) {
				if (!bad++)
					first_bad = end;
				TH_LOG("%s: PERF_RECORD_AUX [%llu, %llu) after [0, %llu) (%s)",
				       name, (unsigned long long)r.offset,
				       (unsigned long long)(r.offset + r.size),
				       (unsigned long long)end,
				       r.offset > end ? "gap" : "overlap");
			}
			if (r.size)
				end = r.offset + r.size;
		}
		tail += r.header.size;
	}
	__atomic_store_n(&b->pc->data_tail, tail, __ATOMIC_RELEASE);

	EXPECT_EQ(lost, 0) TH_LOG("%s: %d PERF_RECORD_LOST", name, lost);
	EXPECT_EQ(other_id, 0) TH_LOG("%s: %d PERF_RECORD_AUX of another event", name, other_id);
	EXPECT_EQ(other_task, 0)
		TH_LOG("%s: %d PERF_RECORD_AUX written by another task", name, other_task);
	/* swaux truncates only when it finds no room; a sink may for other reasons */
	if (pmu.swaux)
		EXPECT_EQ(truncated, 0) TH_LOG("%s: %d truncated PERF_RECORD_AUX", name, truncated);
	TH_LOG("%s: %d PERF_RECORD_AUX (%d of size 0), [0, %llu)", name, records, empty,
	       (unsigned long long)end);
	EXPECT_EQ(bad, 0) TH_LOG("%s: %d records out of place, the first at %llu",
				 name, bad, (unsigned long long)first_bad);
	/* A sink that skips ahead without a record leaves aux_head past end */
	if (has_records()) {
		EXPECT_EQ(end, aux_end)
			TH_LOG("%s: %d PERF_RECORD_AUX describe [0, %llu), aux_head is %llu",
			       name, records, (unsigned long long)end,
			       (unsigned long long)aux_end);
	} else {
		EXPECT_LE(end, aux_end)
			TH_LOG("%s: %d PERF_RECORD_AUX describe [0, %llu), aux_head is %llu",
			       name, records, (unsigned long long)end,
			       (unsigned long long)aux_end);
	}
}

/*
 * P -> A, children tracing, P -> B -> A; then, with every transaction
 * ended, each buffer's PERF_RECORD_AUX records describe exactly its own
 * AUX data. The transaction a child has open when P is redirected is
 * described in the ring of the buffer it wrote into: not in the new
 * buffer's ring, and not dropped. (On a kernel that stops the children
 * before the parent's buffer changes, their records land right without
 * the handle->rb change of the PERF_RECORD_AUX patch too: this tests that
 * patch against the base, where a running child's record goes to B.)
 */
TEST_F_TIMEOUT(redirect, aux_records, 15)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];
	pid_t pids[MAX_CHILDREN];
	__u64 id;
	int n;

	if (variant->snapshot)
		SKIP(return, "snapshot mode: the records describe snapshots, not a stream");
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, 0, WAIT_MS));

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, B->fd), 0);
	ASSERT_TRUE(wait_child_records(self, variant, B, 0, WAIT_MS));
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	run_for(_metadata, self, variant, 100);
	n = self->nr_children;
	memcpy(pids, self->child, sizeof(pids));
	stop_children(self);

	id = event_id(self->p_fd);
	check_aux_records(_metadata, A, "A", id, pids, n);
	check_aux_records(_metadata, B, "B", id, pids, n);
	check_module(_metadata, self);
}

/*
 * P -> A, fork, P -> B, and A unmapped at once. A child still writing
 * into A would write into a freed AUX area: a use-after-free report with
 * the module's lifetime mode under KASAN, dead_writes otherwise; and
 * perf_mmap_close() would WARN about the AUX reference such a child holds.
 */
TEST_F_TIMEOUT(redirect, unmap_old, 25)
{
	struct auxbuf *A = &self->buf[0];
	struct scan s;
	int i;

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, 0, WAIT_MS));

	/*
	 * A -> B, A unmapped. If a child was switched out meanwhile, A is
	 * opened afresh and B -> A, B unmapped, and so on.
	 */
	for (i = 0; i < TRIES; i++) {
		int f = i % 2;
		struct auxbuf *from = &self->buf[f], *to = &self->buf[!f];
		long sw = children_switches(self);
		bool clean;

		auxbuf_save(to);
		ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, to->fd), 0);
		auxbuf_unmap(from);
		run_for(_metadata, self, variant, SWITCH_MS);
		clean = switch_free(_metadata, self, sw, "SET_OUTPUT and unmap");
		run_for(_metadata, self, variant, 300 - SWITCH_MS);

		if (has_records()) {
			wait_new_child_records(_metadata, self, variant, NULL, to, WAIT_MS);
			auxbuf_scan(to, 0, true, &s);
			EXPECT_GT(s.changed_inherited, 0)
				TH_LOG("no child record reached the new buffer");
		} else {
			EXPECT_TRUE(auxbuf_changed(to))
				TH_LOG("no child data reached the new buffer");
		}
		if (clean)
			break;
		auxbuf_close(from);
		ASSERT_EQ(auxbuf_open(from, self->type, self->holder[f], self->cpu,
				      variant->snapshot), 0);
	}
	EXPECT_LT(i, TRIES) TH_LOG("a child was switched out in each of %d tries", TRIES);
	stop_children(self);
	check_module(_metadata, self);
}

/*
 * P's own task R is running on X when P is redirected: P itself, not only
 * its children, ends its transaction on A and goes on with B.
 *
 * Not an A/B test: the base kernel stops P (ring_buffer_attach()) and
 * leaves it stopped until R is scheduled in again, so whether B gets data
 * within the test depends on the scheduler; nothing is written into A
 * either way. This guards the restart against regressions.
 */
TEST_F_TIMEOUT(redirect, p_active, 15)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];
	struct scan s;
	pid_t r;

	if (!has_records())
		SKIP(return, "needs swaux or ETE model records to tell R's data from others'");
	/* R must not inherit the fixture's P: P is opened on R instead. */
	close(self->p_fd);
	self->p_fd = -1;
	ASSERT_EQ(start_children(self, 1), 0);
	r = self->child[0];
	self->p_fd = open_event(self->type, r, self->cpu, true, true);
	ASSERT_GE(self->p_fd, 0) TH_LOG("P on R: %s", strerror(errno));
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	ASSERT_TRUE(wait_child_records(self, variant, A, r, WAIT_MS))
		TH_LOG("R never wrote into A");

	auxbuf_save(B);
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, B->fd), 0);
	/* From here on nothing may write into A. */
	auxbuf_save(A);
	run_for(_metadata, self, variant, 300);
	EXPECT_FALSE(auxbuf_changed(A)) TH_LOG("A written after SET_OUTPUT returned");
	auxbuf_scan(B, r, true, &s);
	EXPECT_GT(s.changed_pid, 0) TH_LOG("no record of R reached B (%d records, %d new)",
					   s.records, s.changed);
	EXPECT_EQ(s.bad, 0) TH_LOG("%d mismatched records in B", s.bad);
	stop_children(self);
	check_module(_metadata, self);
}

/*
 * Keep this task busy on X for up to @ms, until @b changed since its save,
 * keeping non-snapshot buffers drained
 */
static bool spin_until_changed(struct __test_metadata *_metadata,
			       FIXTURE_DATA(redirect) *self,
			       const FIXTURE_VARIANT(redirect) *variant,
			       struct auxbuf *b, long ms)
{
	double end = now_ms() + ms;

	do {
		if (auxbuf_changed(b))
			return true;
		consume_all(_metadata, self, variant);
	} while (now_ms() < end);
	return false;
}

#define PINNED_REDIRECTS	4

/*
 * P pinned, on the task that redirects it, which runs on X: the redirect
 * sleeps in the ioctl (moving an event between buffers waits for an RCU
 * grace period), and P is switched out and in while it does. P must find
 * a buffer to begin on then. A PMU's ->add() fails when its event cannot
 * begin a transaction (etm-perf, Intel PT, SPE, swaux), and a pinned event
 * that cannot be added goes to the error state: read() returns 0 bytes
 * and the event traces no more until it is enabled again.
 *
 * Not a test of the base kernel's bug: the base passes it. It fails with
 * a fix that leaves P without a buffer for the grace period. After each
 * redirect the test sleeps, so that P is scheduled in again and begins on
 * the new buffer whether the kernel restarts it (the series) or not (the
 * base), and checks that P traces on.
 */
TEST_F_TIMEOUT(redirect, pinned_self, 10)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];
	__u64 count;

	close(self->p_fd);
	self->p_fd = -1;
	ASSERT_EQ(pin_to(self->cpu), 0);
	p_pinned = true;
	self->p_fd = open_event(self->type, 0, self->cpu, true, true);
	p_pinned = false;
	ASSERT_GE(self->p_fd, 0) TH_LOG("pinned P on this task: %s", strerror(errno));
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	auxbuf_save(A);
	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	ASSERT_TRUE(spin_until_changed(_metadata, self, variant, A, WAIT_MS))
		TH_LOG("P never wrote into A");
	ASSERT_EQ(read(self->p_fd, &count, sizeof(count)), (ssize_t)sizeof(count));

	for (int i = 0; i < PINNED_REDIRECTS; i++) {
		struct auxbuf *to = i % 2 ? A : B;

		auxbuf_save(to);
		ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, to->fd), 0);
		ASSERT_EQ(read(self->p_fd, &count, sizeof(count)), (ssize_t)sizeof(count))
			TH_LOG("redirect %d left P in the error state", i + 1);
		/* Switched out and in: P begins on the new buffer on any kernel */
		sleep_ms(1);
		EXPECT_TRUE(spin_until_changed(_metadata, self, variant, to, WAIT_MS))
			TH_LOG("P wrote nothing into the new buffer after redirect %d", i + 1);
	}
	ASSERT_EQ(pin_to(self->ctl_cpu), 0);
	check_module(_metadata, self);
}

/* wake_old: the wakeup comes before the ioctl returns; this is slack */
#define WAKE_MS		1000

/*
 * A reader waiting on A (its owner's fd in poll() or epoll) when P leaves A
 * must be woken by the children's last PERF_RECORD_AUX in A: the stop at
 * the redirect writes it, but a child's wakeups follow P, which outputs to
 * B by then. Swaux is set up so that a transaction stays open without a
 * record until the redirect ends it; nothing else wakes A's reader, and a
 * redirect during which a child was switched out (its record woke the
 * reader while P still used A) is repeated.
 */
TEST_F_TIMEOUT(redirect, wake_old, 20)
{
	struct auxbuf *A = &self->buf[0], *B = &self->buf[1];
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep, i, n = 0;

	if (variant->snapshot)
		SKIP(return, "a snapshot buffer's reader is not woken by records");
	if (!pmu.swaux)
		SKIP(return, "needs a transaction without records until the redirect: swaux only");
	/* One record of 64 bytes a tick, no overflow for minutes */
	write_param("bytes_per_tick", REC_SIZE);
	write_param("overflow_bytes", 1L << 30);
	auxbuf_close(A);
	owner_wakes_each_record = true;
	ASSERT_EQ(auxbuf_open(A, self->type, self->holder[0], self->cpu, false), 0)
		TH_LOG("A: %s", strerror(errno));
	owner_wakes_each_record = false;
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, A->fd, &ev), 0);

	ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
	ASSERT_EQ(start_children(self, variant->children), 0);
	for (i = 0; i < TRIES; i++) {
		__u64 head;
		long sw;

		if (i) {
			/* Back to A: the children begin a new transaction there */
			auxbuf_save(A);
			ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, A->fd), 0);
			wait_new_child_records(_metadata, self, variant, NULL, A, WAIT_MS);
		} else {
			ASSERT_TRUE(wait_child_records(self, variant, A, 0, WAIT_MS))
				TH_LOG("children never wrote into A");
		}
		sw = children_switches(self);
		/*
		 * A few ticks for the child on X to write a record into the
		 * transaction it has open, without which its stop writes no
		 * PERF_RECORD_AUX: a child switched in just before began a new
		 * one. Checked by switch_free() from @sw on.
		 */
		sleep_ms(3);
		/* Whatever woke A's reader so far is consumed */
		while (epoll_wait(ep, &got, 1, 0) > 0)
			;
		head = __atomic_load_n(&A->pc->data_head, __ATOMIC_ACQUIRE);
		ASSERT_EQ(ioctl(self->p_fd, PERF_EVENT_IOC_SET_OUTPUT, B->fd), 0);
		/*
		 * The stops, their records and the wakeup are done when the
		 * ioctl returns; a child switched out later writes into B.
		 */
		if (!switch_free(_metadata, self, sw, "SET_OUTPUT"))
			continue;
		n = epoll_wait(ep, &got, 1, WAKE_MS);
		EXPECT_GT(__atomic_load_n(&A->pc->data_head, __ATOMIC_ACQUIRE), head)
			TH_LOG("no record reached A's ring at the redirect");
		EXPECT_EQ(n, 1)
			TH_LOG("A's reader was not woken within %d ms of the redirect", WAKE_MS);
		if (n == 1)
			EXPECT_NE(got.events & EPOLLIN, 0u)
				TH_LOG("woken with events %#x", got.events);
		break;
	}
	EXPECT_LT(i, TRIES) TH_LOG("a child was switched out in each of %d redirects", TRIES);
	close(ep);
	stop_children(self);
	check_module(_metadata, self);
}

#define MAX_CPUS	8

/*
 * perf record's layout: one inherited P per CPU on the test's task, each
 * on its own buffer A_c, children tracing on every CPU (SCHED_FIFO where
 * the controller does not run). All P are redirected to their B_c one
 * after the other; after its own ioctl no A_c may be written, and the B_c
 * of every CPU with a SCHED_FIFO child gets its records.
 */
TEST(per_cpu_all)
{
	struct auxbuf a[MAX_CPUS] = {}, b[MAX_CPUS] = {};
	int cpus[MAX_CPUS], p[MAX_CPUS], ncpus = 0, ctl, kmsg, try;
	long mism = read_param("mismatches"), dead = read_param("dead_writes");
	long params[NR_WRITER_PARAMS];
	struct shared *sh;
	pid_t child[MAX_CPUS];
	cpu_set_t set;
	struct scan s;

	if (!pmu.swaux)
		SKIP(return, "owner events of one task on every CPU: swaux only");
	page_size = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && ncpus < MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpus++] = c;
	if (ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	ctl = cpus[0];
	ASSERT_EQ(pin_to(ctl), 0);
	kmsg = kmsg_open();
	ASSERT_GE(kmsg, 0);
	params_save(params);
	write_param("overflow_bytes", 1024);
	write_param("bytes_per_tick", 256);
	write_param("period_us", 1000);

	for (int i = 0; i < ncpus; i++) {
		ASSERT_EQ(auxbuf_open(&a[i], pmu.type, 0, cpus[i], false), 0);
		ASSERT_EQ(auxbuf_open(&b[i], pmu.type, 0, cpus[i], false), 0);
		p[i] = open_event(pmu.type, 0, cpus[i], true, false);
		ASSERT_GE(p[i], 0) TH_LOG("P on CPU %d: %s", cpus[i], strerror(errno));
		ASSERT_EQ(ioctl(p[i], PERF_EVENT_IOC_SET_OUTPUT, a[i].fd), 0);
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(sh, MAP_FAILED);
	for (int i = 0; i < ncpus; i++) {
		child[i] = fork();
		ASSERT_GE(child[i], 0);
		if (!child[i]) {
			atomic_ulong spin = 0;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (cpus[i] != ctl) {
				struct sched_param sp = { .sched_priority = 1 };

				if (sched_setscheduler(0, SCHED_FIFO, &sp))
					_exit(3);
			}
			if (pin_to(cpus[i]))
				_exit(2);
			atomic_fetch_add(&sh->running, 1);
			while (!atomic_load(&sh->stop))
				spin++;
			_exit(0);
		}
	}
	while (atomic_load(&sh->running) < ncpus)
		sleep_ms(1);
	for (int i = 1; i < ncpus; i++) {
		double end = now_ms() + WAIT_MS;

		do {
			auxbuf_scan(&a[i], 0, false, &s);
			auxbuf_consume(&a[i]);
			if (!s.inherited)
				sleep_ms(5);
		} while (!s.inherited && now_ms() < end);
		ASSERT_GT(s.inherited, 0) TH_LOG("no child records in A on CPU %d", cpus[i]);
	}

	/*
	 * Every P from A_c to B_c; if a SCHED_FIFO child was switched out
	 * meanwhile, from B_c back to A_c, and so on.
	 */
	for (try = 0; try < TRIES; try++) {
		struct auxbuf *from = try % 2 ? b : a, *to = try % 2 ? a : b;
		long sw = task_switches(child + 1, ncpus - 1);
		long log_n[MAX_CPUS];
		bool clean = false;

		for (int i = 0; i < ncpus; i++)
			log_n[i] = swaux_log_n(cpus[i]);
		for (int i = 0; i < ncpus; i++) {
			auxbuf_save(&to[i]);
			ASSERT_EQ(ioctl(p[i], PERF_EVENT_IOC_SET_OUTPUT, to[i].fd), 0);
			/* From here on nothing may write into from[i]. */
			auxbuf_save(&from[i]);
		}
		for (int t = 0; t < 30; t++) {
			for (int i = 0; i < ncpus; i++)
				auxbuf_consume(&to[i]);
			sleep_ms(10);
			if (t == SWITCH_MS / 10 - 1)
				clean = sw >= 0 && task_switches(child + 1, ncpus - 1) == sw;
		}
		/* As wait_new_child_records(), for each CPU's pair of buffers */
		for (int i = 0; i < ncpus; i++) {
			double end = now_ms() + WAIT_MS;

			if (cpus[i] == ctl || auxbuf_changed(&from[i]))
				continue;
			for (;;) {
				auxbuf_scan(&to[i], 0, true, &s);
				if (s.changed_inherited || now_ms() >= end)
					break;
				for (int j = 0; j < ncpus; j++)
					auxbuf_consume(&to[j]);
				sleep_ms(10);
			}
		}
		for (int i = 0; i < ncpus; i++) {
			auxbuf_scan(&from[i], 0, true, &s);
			EXPECT_EQ(s.late, 0)
				TH_LOG("CPU %d: %d records in the old buffer after SET_OUTPUT",
				       cpus[i], s.late);
			auxbuf_scan(&to[i], 0, true, &s);
			if (cpus[i] != ctl && !s.changed_inherited) {
				EXPECT_GT(s.changed_inherited, 0)
					TH_LOG("CPU %d: no child record reached the new buffer",
					       cpus[i]);
				TH_LOG("child pid %d; P on CPU %d id %llu", child[i], cpus[i],
				       event_id(p[i]));
				swaux_dump(_metadata, cpus[i], log_n[i] - 2);
			}
			EXPECT_EQ(s.bad, 0)
				TH_LOG("CPU %d: %d mismatched records in the new buffer",
				       cpus[i], s.bad);
		}
		if (clean)
			break;
		TH_LOG("a SCHED_FIFO child was switched out during the redirect, inconclusive");
	}
	EXPECT_LT(try, TRIES) TH_LOG("a child was switched out in each of %d redirects", TRIES);

	atomic_store(&sh->stop, 1);
	for (int i = 0; i < ncpus; i++)
		waitpid(child[i], NULL, 0);
	for (int i = 0; i < ncpus; i++) {
		close(p[i]);
		auxbuf_close(&a[i]);
		auxbuf_close(&b[i]);
	}
	munmap(sh, sizeof(*sh));
	params_restore(params);
	EXPECT_EQ(read_param("mismatches") - mism, 0);
	EXPECT_EQ(read_param("dead_writes") - dead, 0);
	expect_no_splat(_metadata, kmsg);
	close(kmsg);
}

/*
 * An inherited per-task (cpu -1) AUX event cannot get a buffer through
 * SET_OUTPUT, as perf_mmap() refuses to map it: its children on several
 * CPUs would share one AUX buffer. Redirecting it to nothing stays fine.
 * If the kernel accepts it, the children are run on two CPUs to show what
 * follows (on the base kernel: WARN_ON_ONCE(nest) in
 * perf_aux_output_begin()).
 */
TEST(per_task_inherit)
{
	struct auxbuf a = {};
	char first[256];
	int p, kmsg, ret, err, n, c1;
	bool accepted;
	pid_t child[2];

	if (!pmu.swaux)
		SKIP(return, "two events of one task on an exclusive PMU: swaux only");
	page_size = sysconf(_SC_PAGESIZE);
	c1 = other_cpu(0);
	if (c1 < 0)
		SKIP(return, "needs 2 CPUs");
	kmsg = kmsg_open();
	ASSERT_GE(kmsg, 0);
	ASSERT_EQ(auxbuf_open(&a, pmu.type, 0, -1, false), 0) TH_LOG("%s", strerror(errno));
	p = open_event(pmu.type, 0, -1, true, false);
	ASSERT_GE(p, 0) TH_LOG("P: %s", strerror(errno));

	ret = ioctl(p, PERF_EVENT_IOC_SET_OUTPUT, a.fd);
	err = errno;
	accepted = !ret;
	if (accepted) {
		for (int i = 0; i < 2; i++) {
			child[i] = fork();
			ASSERT_GE(child[i], 0);
			if (!child[i]) {
				double stop = now_ms() + 300;

				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (pin_to(i ? c1 : 0))
					_exit(2);
				while (now_ms() < stop)
					auxbuf_consume(&a);
				_exit(0);
			}
		}
		for (int i = 0; i < 2; i++)
			waitpid(child[i], NULL, 0);
		n = kmsg_splats(kmsg, first, sizeof(first));
		TH_LOG("SET_OUTPUT accepted; children on CPUs 0 and %d: %d splat lines%s%s",
		       c1, n, n ? ", first: " : "", n ? first : "");
	}
	EXPECT_FALSE(accepted) TH_LOG("SET_OUTPUT of an inherited per-task AUX event accepted");
	if (!accepted)
		EXPECT_EQ(err, EINVAL) TH_LOG("SET_OUTPUT: %s", strerror(err));
	ret = ioctl(p, PERF_EVENT_IOC_SET_OUTPUT, -1L);
	EXPECT_EQ(ret, 0) TH_LOG("SET_OUTPUT -1: %s", strerror(errno));
	close(p);
	auxbuf_close(&a);
	if (!accepted)
		expect_no_splat(_metadata, kmsg);
	close(kmsg);
}

#define MAX_SAMPLE_RATE	"/proc/sys/kernel/perf_event_max_sample_rate"

/* PERF_RECORD_@type records in @b's ring, up to its first wrap */
static int count_ring_records(struct auxbuf *b, __u32 type)
{
	__u64 head = __atomic_load_n(&b->pc->data_head, __ATOMIC_ACQUIRE);
	const unsigned char *data = (const unsigned char *)b->base + page_size;
	__u64 size = b->base_len - page_size, off = 0;
	int n = 0;

	while (off + sizeof(struct perf_event_header) <= head && off < size) {
		const struct perf_event_header *h = (const void *)(data + off);

		if (h->size < sizeof(*h) || off + h->size > size)
			break;
		n += h->type == type;
		off += h->size;
	}
	return n;
}

/*
 * A throttled AUX event and SET_OUTPUT. P, on task R (SCHED_FIFO on X),
 * leads a group with a cpu-clock sampling sibling that a low
 * perf_event_max_sample_rate throttles a few samples into every tick:
 * perf_event_throttle_group() stops P as well, and the tick's unthrottle
 * starts it again. P is redirected between A and B many times meanwhile;
 * a restart must leave a throttled P to the unthrottle, or P is started
 * twice, the second time while it runs. The module counts starts
 * of an event already running; PERF_RECORD_THROTTLE records in A and B
 * show that P was throttled at all.
 */
FIXTURE(throttle) {
	long		rate;		/* perf_event_max_sample_rate, restored */
	long		params[NR_WRITER_PARAMS];
	struct auxbuf	a, b;
	struct shared	*sh;
	pid_t		r;
	int		p, sib, kmsg;
};

FIXTURE_SETUP(throttle)
{
	self->rate = -1;
	self->p = -1;
	self->sib = -1;
	self->kmsg = -1;
	if (!pmu.swaux)
		SKIP(return, "counts the module's double starts: swaux only");
	page_size = sysconf(_SC_PAGESIZE);
	if (other_cpu(pmu.cpu) < 0)
		SKIP(return, "needs 2 CPUs");
	ASSERT_EQ(pin_to(other_cpu(pmu.cpu)), 0);
	self->kmsg = kmsg_open();
	ASSERT_GE(self->kmsg, 0);
	params_save(self->params);
	write_param("overflow_bytes", 1024);
	write_param("bytes_per_tick", 256);
	write_param("period_us", 1000);
	self->rate = read_long(MAX_SAMPLE_RATE);
	ASSERT_GT(self->rate, 0) TH_LOG(MAX_SAMPLE_RATE ": %s", strerror(errno));
}

FIXTURE_TEARDOWN(throttle)
{
	if (self->p >= 0)
		ioctl(self->p, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	if (self->sh && self->sh != MAP_FAILED) {
		atomic_store(&self->sh->stop, 1);
		if (self->r > 0)
			waitpid(self->r, NULL, 0);
		munmap(self->sh, sizeof(*self->sh));
	}
	if (self->sib >= 0)
		close(self->sib);
	if (self->p >= 0)
		close(self->p);
	if (self->a.fd > 0)
		auxbuf_close(&self->a);
	if (self->b.fd > 0)
		auxbuf_close(&self->b);
	if (self->rate > 0)
		write_long(MAX_SAMPLE_RATE, self->rate);
	if (pmu.swaux)
		params_restore(self->params);
	if (self->kmsg >= 0)
		close(self->kmsg);
}

TEST_F_TIMEOUT(throttle, set_output, 20)
{
	struct perf_event_attr sa = {
		.size		= sizeof(sa),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_CPU_CLOCK,
		.sample_period	= 20000,	/* ns: dozens of samples a tick */
		.exclude_hv	= 1,
	};
	long dbl = read_param("double_starts");
	int throttles, unthrottles, i;

	ASSERT_GE(dbl, 0) TH_LOG("the module has no double_starts counter");
	ASSERT_EQ(auxbuf_open(&self->a, pmu.type, 0, pmu.cpu, false), 0);
	ASSERT_EQ(auxbuf_open(&self->b, pmu.type, 0, pmu.cpu, false), 0);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(self->sh, MAP_FAILED);
	self->r = fork();
	ASSERT_GE(self->r, 0);
	if (!self->r)
		child_loop(self->sh, pmu.cpu);
	while (atomic_load(&self->sh->running) < 1)
		sleep_ms(1);

	self->p = open_event(pmu.type, self->r, pmu.cpu, false, true);
	ASSERT_GE(self->p, 0) TH_LOG("P: %s", strerror(errno));
	self->sib = syscall(SYS_perf_event_open, &sa, self->r, pmu.cpu, self->p,
			    PERF_FLAG_FD_CLOEXEC);
	ASSERT_GE(self->sib, 0) TH_LOG("cpu-clock sibling: %s", strerror(errno));
	ASSERT_EQ(ioctl(self->p, PERF_EVENT_IOC_SET_OUTPUT, self->a.fd), 0);
	/* DIV_ROUND_UP(1000, HZ) samples a tick before the group is throttled */
	if (write_long(MAX_SAMPLE_RATE, 1000) && errno == EINVAL)
		SKIP(return, MAX_SAMPLE_RATE " is fixed (perf_cpu_time_max_percent 0 or 100)");
	ASSERT_EQ(read_long(MAX_SAMPLE_RATE), 1000)
		TH_LOG(MAX_SAMPLE_RATE ": %s", strerror(errno));
	ASSERT_EQ(ioctl(self->p, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	sleep_ms(20);

	for (i = 0; i < 200; i++) {
		struct auxbuf *to = i % 2 ? &self->a : &self->b;

		ASSERT_EQ(ioctl(self->p, PERF_EVENT_IOC_SET_OUTPUT, to->fd), 0)
			TH_LOG("SET_OUTPUT %d: %s", i, strerror(errno));
		auxbuf_consume(&self->a);
		auxbuf_consume(&self->b);
		sleep_ms(1 + i % 3);
	}
	/* Ticks: every throttle so far has been undone */
	sleep_ms(50);
	ASSERT_EQ(ioctl(self->p, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	dbl = read_param("double_starts") - dbl;
	throttles = count_ring_records(&self->a, PERF_RECORD_THROTTLE) +
		    count_ring_records(&self->b, PERF_RECORD_THROTTLE);
	unthrottles = count_ring_records(&self->a, PERF_RECORD_UNTHROTTLE) +
		      count_ring_records(&self->b, PERF_RECORD_UNTHROTTLE);
	TH_LOG("%d PERF_RECORD_THROTTLE, %d PERF_RECORD_UNTHROTTLE in A and B, %ld double starts",
	       throttles, unthrottles, dbl);
	/* Every tick (4 ms at HZ=250) throttles and unthrottles; 10 is a floor */
	ASSERT_GE(throttles, 10) TH_LOG("P's group was hardly throttled: nothing was tested");
	ASSERT_GE(unthrottles, 10) TH_LOG("P's group was hardly unthrottled: nothing was tested");
	EXPECT_EQ(dbl, 0) TH_LOG("%ld starts of an event already running", dbl);
	expect_no_splat(_metadata, self->kmsg);
}

/* The module on its own: an event with its own buffer gets sane records */
FIXTURE(swaux) {
	int		type;
	int		cpu;
	struct auxbuf	b;
	long		mismatches;
	int		kmsg;
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
	self->kmsg = -1;
	self->kmsg = kmsg_open();
	ASSERT_GE(self->kmsg, 0) TH_LOG("/dev/kmsg: %s", strerror(errno));
}

FIXTURE_TEARDOWN(swaux)
{
	if (self->b.fd > 0)
		auxbuf_close(&self->b);
	if (self->kmsg >= 0)
		close(self->kmsg);
}

TEST_F_TIMEOUT(swaux, own_buffer, 15)
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
	expect_no_splat(_metadata, self->kmsg);
}

/*
 * Load perf_swaux.ko from the test's directory (or its test_modules/, when
 * run from the source tree), with the parameters in AUX_SET_OUTPUT_MODPARAMS.
 * Returns true if this process loaded it; @why says why not otherwise.
 */
static bool swaux_load(char *why, size_t len)
{
	static const char * const where[] = { "%s/%s.ko", "%s/test_modules/%s.ko" };
	const char *params = getenv("AUX_SET_OUTPUT_MODPARAMS");
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0) {
		snprintf(why, len, "readlink /proc/self/exe: %s", strerror(errno));
		return false;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(why, len, "no %s.ko next to the test", SWAUX_MODULE_NAME);
	for (size_t i = 0; i < ARRAY_SIZE(where); i++) {
		int fd, ret;

		snprintf(path, sizeof(path), where[i], exe, SWAUX_MODULE_NAME);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
		close(fd);
		if (!ret)
			return true;
		snprintf(why, len, "finit_module(%s): %s", path, strerror(errno));
		return false;
	}
	return false;
}

static pid_t main_pid;

/* atexit: unload the module this process loaded (test_harness_run() exits) */
static void swaux_unload(void)
{
	if (getpid() != main_pid)
		return;
	if (syscall(SYS_delete_module, SWAUX_MODULE_NAME, O_NONBLOCK))
		ksft_print_msg("delete_module(%s): %s\n", SWAUX_MODULE_NAME, strerror(errno));
}

int main(int argc, char **argv)
{
	char why[PATH_MAX + 128];

	page_size = sysconf(_SC_PAGESIZE);
	main_pid = getpid();
	if (pmu_setup() < 0 && pmu.swaux) {
		if (!swaux_load(why, sizeof(why)))
			ksft_exit_skip("%s; %s\n", pmu.skip, why);
		atexit(swaux_unload);
		pmu.skip[0] = '\0';
		if (pmu_setup() < 0)
			ksft_exit_fail_msg("loaded %s.ko, but %s\n", SWAUX_MODULE_NAME, pmu.skip);
	} else if (pmu.type < 0) {
		ksft_exit_skip("%s\n", pmu.skip);
	}
	return test_harness_run(argc, argv);
}
