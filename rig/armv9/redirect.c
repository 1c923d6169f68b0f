// SPDX-License-Identifier: GPL-2.0
/*
 * redirect: the PERF_EVENT_IOC_SET_OUTPUT redirect scenario with cs_etm
 * (ETE + TRBE) on an Armv9 machine or Arm FVP. rig/armv9/run.sh builds and
 * runs it on the target, as root. It cannot do anything useful elsewhere.
 *
 *   redirect solo DIR CPU NCHILD MS AUX_KB SINKID
 *	The scenario with its own events (no perf tool involved):
 *	  A, B	disabled cs_etm events on CPU, each in the task context of its
 *		own sleeping holder process, each with an mmapped ring buffer
 *		and AUX area (AUX_KB, normal mode, aux_watermark AUX_KB/16 so
 *		that the TRBE raises overflow interrupts often);
 *	  P	a per-task cs_etm event on CPU with inherit, on a workload
 *		pinned to CPU, no mmap of its own.
 *	P -> A (SET_OUTPUT), enable P, DIR/stage1: the workload forks NCHILD
 *	children pinned to CPU (inherited events C, C->parent == P), they
 *	trace into A; after DIR/stage2 and 300 ms: P -> B while the children
 *	run, DIR/stage3; the children spin MS ms more and exit.
 *	While it waits, the controller (pinned to another CPU) consumes both
 *	ring buffers and discards the AUX data (aux_tail = aux_head), so that
 *	no AUX area fills up (a full one disables the event). P, A and B use
 *	CLOCK_MONOTONIC and PERF_SAMPLE_TID | PERF_SAMPLE_TIME, so every
 *	PERF_RECORD_AUX says who wrote it and when.
 *	Checks:
 *	  1. the children traced into A before the redirect (the scenario
 *	     happened);
 *	  2. nothing was written to A after SET_OUTPUT P -> B returned: A's
 *	     aux_head did not move and no PERF_RECORD_AUX in A is later (data
 *	     an inherited child kept writing into the old buffer, or a TRBE
 *	     overflow that reprogrammed the hardware from the wrong buffer);
 *	  3. the children followed P to B (PERF_RECORD_AUX from a child in B,
 *	     with data).
 *	SINKID is the cs_etm sinkid (config2) of the CPU's TRBE sink, or 0 for
 *	the default sink. Prints "solo: ..." lines, last "solo: verdict: ...".
 *	Exit 0 if every check passed, 3 if one failed, 1 on a setup error.
 *
 *   redirect spin DIR CPU NCHILD
 *	A forking workload for `perf record -e cs_etm//`: pinned to CPU, forks
 *	NCHILD children pinned to CPU, writes DIR/started, and all of them
 *	alternate 2 ms of spinning with 1 ms of sleep until DIR/stop exists
 *	(at most 300 s).
 *
 * Why the redirected event is not perf's own: perf record opens one cs_etm
 * event per CPU and mmaps it (the AUX area lives on it), and
 * PERF_EVENT_IOC_SET_OUTPUT refuses an event with its own mmap. Redirecting
 * an event of ours into perf's buffer puts records with ids perf does not
 * know into perf.data, which perf report refuses to parse. So run.sh runs
 * this scenario alone and again while perf record traces a forking
 * workload on the same CPU (same TRBE), and decodes perf's recording.
 * cs_etm is an exclusive PMU: per-task and CPU-wide cs_etm events cannot
 * coexist, and a task context holds one per CPU; hence the holders.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_perf_event_open
#error "no SYS_perf_event_open in sys/syscall.h"
#endif

#define RB_PAGES	128		/* data pages of each ring buffer */
#define TIMEOUT_S	120
#define NO_TIME		UINT64_MAX

/* PMU name; REDIRECT_PMU overrides it (only to test this helper's mechanics
 * against the rig's swaux software AUX PMU in the x86_64 VM). */
static const char *pmu_name = "cs_etm";

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("redirect: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stdout);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(cpu %d): %s", cpu, strerror(errno));
}

/* Pin the controller to an allowed CPU other than cpu; -1 if there is none. */
static int pin_elsewhere(int cpu)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (c != cpu && CPU_ISSET(c, &set)) {
			pin(c);
			return c;
		}
	}
	return -1;
}

/* Die with the parent (the controller, or the workload for its children). */
static void die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void flag_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int flag_exists(const char *dir, const char *name)
{
	char p[4096];

	flag_path(p, sizeof(p), dir, name);
	return access(p, F_OK) == 0;
}

static void flag_set(const char *dir, const char *name)
{
	char p[4096];
	int fd;

	flag_path(p, sizeof(p), dir, name);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create %s: %s", p, strerror(errno));
	close(fd);
}

static void spin_for(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* Workload side: wait for a flag, spinning (a traced task must run) or not. */
static void work_wait(const char *dir, const char *name, int spin)
{
	uint64_t end = now_ns() + TIMEOUT_S * 1000000000ull;

	while (!flag_exists(dir, name)) {
		if (now_ns() > end)
			die("timed out waiting for %s/%s", dir, name);
		if (!spin)
			usleep(1000);
	}
}

/* solo's workload: the process P is opened on. */
static int work(const char *dir, int cpu, int nchild, int ms)
{
	int i, st, rc = 0;

	die_with_parent();
	pin(cpu);
	work_wait(dir, "stage1", 0);
	for (i = 0; i < nchild; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			die_with_parent();
			work_wait(dir, "stage3", 1);
			spin_for((uint64_t)ms * 1000000ull);
			_exit(0);
		}
	}
	spin_for(20000000ull);
	flag_set(dir, "stage2");
	work_wait(dir, "stage3", 1);
	spin_for((uint64_t)ms * 1000000ull);
	for (i = 0; i < nchild; i++) {
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	return rc;
}

static void spin_loop(const char *dir)
{
	uint64_t end = now_ns() + 300ull * 1000000000ull;

	while (!flag_exists(dir, "stop") && now_ns() < end) {
		spin_for(2000000ull);
		usleep(1000);
	}
}

/* The workload perf record traces. */
static int spin(const char *dir, int cpu, int nchild)
{
	int i, st, rc = 0;

	pin(cpu);
	for (i = 0; i < nchild; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			die_with_parent();
			spin_loop(dir);
			_exit(0);
		}
	}
	flag_set(dir, "started");
	spin_loop(dir);
	for (i = 0; i < nchild; i++) {
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	return rc;
}

static int pmu_type(void)
{
	char p[256];
	FILE *f;
	int type;

	snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/type", pmu_name);
	f = fopen(p, "r");
	if (!f || fscanf(f, "%d", &type) != 1)
		die("no %s PMU (%s)", pmu_name, p);
	fclose(f);
	return type;
}

/* Everything a ring buffer's records tell about who wrote into it, and when. */
struct stats {
	unsigned long aux[2][2];	/* [child][after redirect] PERF_RECORD_AUX */
	uint64_t aux_bytes[2][2];
	unsigned long truncated, partial, collision, itrace_start, hw_id;
	unsigned long lost_records, other;
	uint64_t lost;
};

struct buf {
	const char *name;
	int fd;
	pid_t holder;
	long pg;
	struct perf_event_mmap_page *up;
	unsigned char *data;
	uint64_t data_size, aux_size;
	void *aux;
	struct stats st;
};

static pid_t workload_pid;
static uint64_t t_redirect = NO_TIME;

static void attr_init(struct perf_event_attr *a, uint64_t sinkid)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = pmu_type();
	a->config2 = sinkid;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *open_hint(int err)
{
	switch (err) {
	case EBUSY:
		return " (cs_etm is exclusive: is another cs_etm session, e.g. a CPU-wide perf record, running?)";
	case ENOENT:
	case EINVAL:
		return " (wrong sinkid, or no trace path from this CPU's ETE to its TRBE?)";
	default:
		return "";
	}
}

/* A process that sleeps until killed: the task context of an owner event. */
static pid_t holder_spawn(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		die_with_parent();
		for (;;)
			pause();
	}
	return pid;
}

static uint64_t pow2_pages(uint64_t bytes, long pg)
{
	uint64_t n = 2;

	while (n * (uint64_t)pg < bytes)
		n <<= 1;
	return n;
}

/* A disabled cs_etm event on cpu, in a holder's context, owning a buffer */
static void buf_open(struct buf *b, const char *name, int cpu, uint64_t aux_kb, uint64_t sinkid)
{
	struct perf_event_attr attr;
	uint64_t aux_pages;

	memset(b, 0, sizeof(*b));
	b->name = name;
	b->pg = sysconf(_SC_PAGESIZE);
	b->holder = holder_spawn();
	attr_init(&attr, sinkid);
	aux_pages = pow2_pages(aux_kb * 1024, b->pg);
	attr.aux_watermark = (uint32_t)(aux_pages * (uint64_t)b->pg / 16);
	b->fd = perf_event_open(&attr, b->holder, cpu);
	if (b->fd < 0) {
		int e = errno;

		die("perf_event_open(cs_etm, holder %s pid %d, cpu %d): %s%s", name,
		    (int)b->holder, cpu, strerror(e), open_hint(e));
	}
	b->up = mmap(NULL, (1 + RB_PAGES) * b->pg, PROT_READ | PROT_WRITE, MAP_SHARED,
		     b->fd, 0);
	if (b->up == MAP_FAILED)
		die("mmap %s's ring buffer: %s", name, strerror(errno));
	b->data = (unsigned char *)b->up + (b->up->data_offset ? b->up->data_offset : (uint64_t)b->pg);
	b->data_size = b->up->data_size ? b->up->data_size : RB_PAGES * (uint64_t)b->pg;
	b->up->aux_offset = (1 + RB_PAGES) * (uint64_t)b->pg;
	b->up->aux_size = aux_pages * (uint64_t)b->pg;
	b->aux_size = b->up->aux_size;
	b->aux = mmap(NULL, b->aux_size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
		      (off_t)b->up->aux_offset);
	if (b->aux == MAP_FAILED)
		die("mmap %s's AUX area (%" PRIu64 " KiB): %s (the TRBE driver refused the buffer?)",
		    name, b->aux_size / 1024, strerror(errno));
}

static void ring_copy(struct buf *b, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos % b->data_size;
	size_t n = len;

	if (off + n > b->data_size)
		n = (size_t)(b->data_size - off);
	memcpy(dst, b->data + off, n);
	if (n < len)
		memcpy((unsigned char *)dst + n, b->data, len - n);
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One record; every one but PERF_RECORD_SAMPLE ends with {pid, tid, time}. */
static void account(struct buf *b, const unsigned char *r, size_t size)
{
	const struct perf_event_header *h = (const void *)r;
	struct stats *s = &b->st;
	uint64_t time, flags, bytes;
	uint32_t pid;
	int child, after;

	if (size < sizeof(*h) + 16) {
		s->other++;
		return;
	}
	pid = rd32(r + size - 16);
	time = rd64(r + size - 8);
	switch (h->type) {
	case PERF_RECORD_AUX:
		if (size < sizeof(*h) + 24 + 16) {
			s->other++;
			return;
		}
		bytes = rd64(r + sizeof(*h) + 8);
		flags = rd64(r + sizeof(*h) + 16);
		child = pid != (uint32_t)workload_pid;
		after = t_redirect != NO_TIME && time > t_redirect;
		s->aux[child][after]++;
		s->aux_bytes[child][after] += bytes;
		if (flags & PERF_AUX_FLAG_TRUNCATED)
			s->truncated++;
		if (flags & PERF_AUX_FLAG_PARTIAL)
			s->partial++;
		if (flags & PERF_AUX_FLAG_COLLISION)
			s->collision++;
		break;
	case PERF_RECORD_ITRACE_START:
		s->itrace_start++;
		break;
	case 21:	/* PERF_RECORD_AUX_OUTPUT_HW_ID (uapi headers >= 5.16) */
		s->hw_id++;
		break;
	case PERF_RECORD_LOST:
		s->lost_records++;
		if (size >= sizeof(*h) + 16)
			s->lost += rd64(r + sizeof(*h) + 8);
		break;
	default:
		s->other++;
		break;
	}
}

/* Consume the ring buffer's records; discard the AUX data. */
static void drain(struct buf *b)
{
	static unsigned char rec[65536];
	uint64_t head = __atomic_load_n(&b->up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = b->up->data_tail;

	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		ring_copy(b, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			die("%s: corrupt ring buffer record (type %u size %u)", b->name,
			    h.type, h.size);
		ring_copy(b, tail, rec, h.size);
		account(b, rec, h.size);
		tail += h.size;
	}
	__atomic_store_n(&b->up->data_tail, tail, __ATOMIC_RELEASE);
	__atomic_store_n(&b->up->aux_tail,
			 __atomic_load_n(&b->up->aux_head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

static uint64_t aux_head(struct buf *b)
{
	return __atomic_load_n(&b->up->aux_head, __ATOMIC_ACQUIRE);
}

static void drain_for(struct buf *a, struct buf *b, uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	do {
		drain(a);
		drain(b);
		usleep(1000);
	} while (now_ns() < end);
}

static void ctl_wait(struct buf *a, struct buf *b, const char *dir, const char *name)
{
	uint64_t end = now_ns() + TIMEOUT_S * 1000000000ull;

	while (!flag_exists(dir, name)) {
		if (now_ns() > end)
			die("timed out waiting for %s/%s", dir, name);
		drain_for(a, b, 0);
	}
}

static void redirect(int p_fd, struct buf *to)
{
	if (ioctl(p_fd, PERF_EVENT_IOC_SET_OUTPUT, to->fd))
		die("SET_OUTPUT P -> %s: %s", to->name, strerror(errno));
}

static void print_buf(struct buf *b)
{
	struct stats *s = &b->st;

	printf("solo: %s: PERF_RECORD_AUX before the redirect: workload %lu (%" PRIu64
	       " bytes), children %lu (%" PRIu64 " bytes); after: workload %lu (%" PRIu64
	       " bytes), children %lu (%" PRIu64 " bytes)\n", b->name,
	       s->aux[0][0], s->aux_bytes[0][0], s->aux[1][0], s->aux_bytes[1][0],
	       s->aux[0][1], s->aux_bytes[0][1], s->aux[1][1], s->aux_bytes[1][1]);
	printf("solo: %s: aux_head %" PRIu64 ", flags truncated %lu partial %lu collision %lu, itrace_start %lu, hw_id %lu, lost records %lu (%" PRIu64 " lost), other %lu\n",
	       b->name, aux_head(b), s->truncated, s->partial, s->collision,
	       s->itrace_start, s->hw_id, s->lost_records, s->lost, s->other);
}

static int check(int ok, const char *what, const char *detail)
{
	printf("solo: check: %s: %s%s%s\n", what, ok ? "ok" : "FAIL",
	       detail[0] ? ": " : "", detail);
	return ok;
}

static int solo(const char *dir, int cpu, int nchild, int ms, uint64_t aux_kb, uint64_t sinkid)
{
	struct perf_event_attr attr;
	struct buf a, b;
	uint64_t h0, h1, deadline;
	char detail[256];
	int p_fd, st, ctl_cpu, ok = 1;
	pid_t w, r;

	ctl_cpu = pin_elsewhere(cpu);
	w = fork();
	if (w < 0)
		die("fork: %s", strerror(errno));
	if (!w)
		_exit(work(dir, cpu, nchild, ms));
	workload_pid = w;
	printf("solo: cpu %d, workload pid %d with %d children, controller on cpu %d, AUX %" PRIu64 " KiB, sinkid 0x%" PRIx64 "\n",
	       cpu, (int)w, nchild, ctl_cpu, aux_kb, sinkid);
	buf_open(&a, "A", cpu, aux_kb, sinkid);
	buf_open(&b, "B", cpu, aux_kb, sinkid);
	attr_init(&attr, sinkid);
	attr.inherit = 1;
	p_fd = perf_event_open(&attr, w, cpu);
	if (p_fd < 0) {
		int e = errno;

		die("perf_event_open(cs_etm, pid %d, cpu %d, inherit): %s%s", (int)w, cpu,
		    strerror(e), open_hint(e));
	}
	redirect(p_fd, &a);
	if (ioctl(p_fd, PERF_EVENT_IOC_ENABLE, 0))
		die("enable P: %s", strerror(errno));
	printf("solo: P -> A, P enabled, workload forks\n");
	fflush(stdout);
	flag_set(dir, "stage1");
	ctl_wait(&a, &b, dir, "stage2");
	drain_for(&a, &b, 300000000ull);

	redirect(p_fd, &b);
	t_redirect = now_ns();
	h0 = aux_head(&a);
	flag_set(dir, "stage3");
	printf("solo: P -> B while the children run (A's aux_head %" PRIu64 ")\n", h0);
	fflush(stdout);

	deadline = now_ns() + TIMEOUT_S * 1000000000ull;
	for (;;) {
		drain_for(&a, &b, 0);
		r = waitpid(w, &st, WNOHANG);
		if (r == w)
			break;
		if (r < 0)
			die("waitpid: %s", strerror(errno));
		if (now_ns() > deadline)
			die("the workload did not finish in %d s", TIMEOUT_S);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		die("the workload failed (status 0x%x)", st);
	/* The workload reaped its children: no writer is left. */
	drain(&a);
	drain(&b);
	h1 = aux_head(&a);
	close(p_fd);
	print_buf(&a);
	print_buf(&b);

	snprintf(detail, sizeof(detail), "%lu records, %" PRIu64 " bytes",
		 a.st.aux[1][0], a.st.aux_bytes[1][0]);
	ok &= check(a.st.aux[1][0] > 0, "the children traced into A before the redirect", detail);
	snprintf(detail, sizeof(detail), "aux_head moved by %" PRIu64 " bytes, %lu later PERF_RECORD_AUX",
		 h1 - h0, a.st.aux[0][1] + a.st.aux[1][1]);
	ok &= check(h1 == h0 && !a.st.aux[0][1] && !a.st.aux[1][1],
		    "nothing written to A after the redirect", detail);
	snprintf(detail, sizeof(detail), "%lu records, %" PRIu64 " bytes",
		 b.st.aux[1][1], b.st.aux_bytes[1][1]);
	ok &= check(b.st.aux[1][1] > 0 && b.st.aux_bytes[1][1] > 0,
		    "the children followed P to B", detail);
	if (a.st.lost_records || b.st.lost_records)
		printf("solo: note: ring buffer records were lost; the counts above are incomplete\n");

	kill(a.holder, SIGKILL);
	kill(b.holder, SIGKILL);
	waitpid(a.holder, NULL, 0);
	waitpid(b.holder, NULL, 0);
	printf("solo: verdict: %s\n", ok ? "ok" : "FAIL");
	return ok ? 0 : 3;
}

static int num(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == 0 || *end || v < 0 || v > 1000000)
		die("bad %s '%s'", what, s);
	return (int)v;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("REDIRECT_PMU"))
		pmu_name = getenv("REDIRECT_PMU");
	if (argc == 8 && !strcmp(argv[1], "solo"))
		return solo(argv[2], num(argv[3], "CPU"), num(argv[4], "NCHILD"),
			    num(argv[5], "MS"), (uint64_t)num(argv[6], "AUX_KB"),
			    strtoull(argv[7], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "spin"))
		return spin(argv[2], num(argv[3], "CPU"), num(argv[4], "NCHILD"));
	fprintf(stderr,
		"usage: redirect solo DIR CPU NCHILD MS AUX_KB SINKID\n"
		"       redirect spin DIR CPU NCHILD\n");
	return 2;
}
