// SPDX-License-Identifier: GPL-2.0
/*
 * swaux-flow: the two user-space halves of `make run`'s redirect scenario.
 *
 *   swaux-flow work DIR CPU NCHILD MS
 *	The workload perf records (perf record ... -- swaux-flow work ...).
 *	Runs on another CPU than CPU; waits for DIR/stage1, forks NCHILD
 *	children, SCHED_RR and pinned to CPU, that spin until DIR/stage3
 *	exists plus MS milliseconds, writes DIR/stage2 100 ms later, waits
 *	for DIR/stage3, spins MS milliseconds, then reaps them.
 *
 *   swaux-flow ctl DIR CPU PERF_PID OUT
 *	The controller. Takes perf's swaux event fds with pidfd_getfd(),
 *	tells them apart with debugfs swaux/events (by id): P = the per-task,
 *	not mmapped swaux event on CPU (perf SET_OUTPUT it to its own buffer
 *	B, owned by the mmapped swaux event on CPU); A = a disabled swaux
 *	event of its own on CPU with its own AUX buffer. Then:
 *	  P -> A (SET_OUTPUT), DIR/stage1; the workload forks;
 *	  after DIR/stage2: P -> B, DIR/stage3.
 *	Inherited children of P must follow P to B. At the end it copies the
 *	records found in A to OUT and prints one summary line:
 *	  "ctl: A buf_id=N records=N after_redirect=N mismatch=N"
 *	after_redirect counts records of A written after P -> B by an
 *	inherited writer: misplaced data (the bug this project fixes).
 *
 *   swaux-flow solo DIR CPU NCHILD MS
 *	The same scenario without perf (the arm64 guest has no perf): forks
 *	the workload itself, opens P per task on it with inherit, its own B
 *	and A, and checks both buffers. Prints the "ctl: A ..." line and
 *	  "ctl: B buf_id=N bytes=N records=N invalid=N gaps=N mismatch=N"
 *	Exit 0 iff nothing was misplaced or lost, 3 if something was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "swaux_abi.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define AUX_PAGES	256
#define MAX_EVENTS	256

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("swaux-flow: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

static void stage_path(char *buf, size_t len, const char *dir, int n)
{
	snprintf(buf, len, "%s/stage%d", dir, n);
}

static int stage_exists(const char *dir, int n)
{
	char p[512];

	stage_path(p, sizeof(p), dir, n);
	return access(p, F_OK) == 0;
}

static void stage_set(const char *dir, int n)
{
	char p[512];
	int fd;

	stage_path(p, sizeof(p), dir, n);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		die("create %s: %s", p, strerror(errno));
	close(fd);
}

/* Wait up to 60 s for a stage file; spin (the AUX writer needs a runner). */
static void stage_wait(const char *dir, int n, int spin)
{
	uint64_t end = now_ns() + 60ull * 1000000000ull;

	while (!stage_exists(dir, n)) {
		if (now_ns() > end)
			die("timed out waiting for %s/stage%d", dir, n);
		if (!spin)
			usleep(1000);
	}
}

static void spin_for(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static int work(const char *dir, int cpu, int nchild, int ms)
{
	struct sched_param sp = { .sched_priority = 1 };
	int i, st, rc = 0;

	/*
	 * The parent stays off CPU: only inherited events trace there. Were
	 * the parent on CPU too, perf could swap its context with a child's
	 * at a context switch (the contexts are clones), and P itself, which
	 * SET_OUTPUT does stop, would be the event writing for the child.
	 */
	pin(cpu ? 0 : 1);
	stage_wait(dir, 1, 0);
	for (i = 0; i < nchild; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			/*
			 * Round-robin at the lowest RT priority: the children
			 * take turns on CPU in 100 ms slices, so the one
			 * running at the redirect keeps its AUX transaction
			 * open well after the ioctl returns, instead of being
			 * switched out at a moment nobody chose. Set before
			 * moving to CPU, where an RR child may already spin.
			 */
			if (sched_setscheduler(0, SCHED_RR, &sp))
				die("sched_setscheduler(SCHED_RR): %s", strerror(errno));
			pin(cpu);
			stage_wait(dir, 3, 1);
			spin_for((uint64_t)ms * 1000000ull);
			_exit(0);
		}
	}
	/* Let the children start tracing into A */
	usleep(100000);
	stage_set(dir, 2);
	stage_wait(dir, 3, 0);
	spin_for((uint64_t)ms * 1000000ull);
	for (i = 0; i < nchild; i++) {
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	return rc;
}

struct swev {
	uint64_t id;
	int cpu, pid, mmapped, state;
	uint64_t parent;
};

static int read_events(struct swev *ev, int max)
{
	FILE *f = fopen("/sys/kernel/debug/swaux/events", "r");
	int n = 0;

	if (!f)
		die("/sys/kernel/debug/swaux/events: %s (module loaded, debugfs mounted?)",
		    strerror(errno));
	while (n < max && fscanf(f, "%lu %d %d %lu %d %d", &ev[n].id, &ev[n].cpu,
				 &ev[n].pid, &ev[n].parent, &ev[n].mmapped,
				 &ev[n].state) == 6)
		n++;
	fclose(f);
	return n;
}

static struct swev *find_event(struct swev *ev, int n, uint64_t id)
{
	for (int i = 0; i < n; i++)
		if (ev[i].id == id)
			return &ev[i];
	return NULL;
}

/* Print debugfs swaux/events and the module's counters, one line each */
static void dump_state(const char *tag)
{
	static const char * const stats[] = {
		"records", "overflows", "begin_fail", "busy", "mismatch", "dead_writes",
	};
	struct swev ev[MAX_EVENTS];
	int i, n = read_events(ev, MAX_EVENTS);

	for (i = 0; i < n; i++)
		printf("ctl: %s: event id=%lu cpu=%d pid=%d parent=%lu mmapped=%d state=%d\n",
		       tag, (unsigned long)ev[i].id, ev[i].cpu, ev[i].pid,
		       (unsigned long)ev[i].parent, ev[i].mmapped, ev[i].state);
	printf("ctl: %s: module", tag);
	for (i = 0; i < (int)(sizeof(stats) / sizeof(stats[0])); i++) {
		char path[128];
		long v = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/kernel/debug/swaux/%s", stats[i]);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &v) != 1)
				v = -1;
			fclose(f);
		}
		printf(" %s=%ld", stats[i], v);
	}
	printf("\n");
	fflush(stdout);
}

/* perf's P (not mmapped, per task) and B owner (mmapped) on cpu */
static void grab_perf_fds(int perf_pid, int cpu, int *p_fd, int *b_fd)
{
	struct swev ev[MAX_EVENTS];
	char path[64], link[128];
	struct dirent *de;
	int pidfd, n;
	DIR *d;

	*p_fd = *b_fd = -1;
	n = read_events(ev, MAX_EVENTS);
	pidfd = syscall(SYS_pidfd_open, perf_pid, 0);
	if (pidfd < 0)
		die("pidfd_open(%d): %s", perf_pid, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/fd", perf_pid);
	d = opendir(path);
	if (!d)
		die("%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		char fdpath[320];
		struct swev *e;
		uint64_t id;
		ssize_t len;
		int fd;

		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		len = readlink(fdpath, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = 0;
		if (strcmp(link, "anon_inode:[perf_event]"))
			continue;
		fd = syscall(SYS_pidfd_getfd, pidfd, atoi(de->d_name), 0);
		if (fd < 0)
			die("pidfd_getfd(%s): %s", de->d_name, strerror(errno));
		if (ioctl(fd, PERF_EVENT_IOC_ID, &id) || !(e = find_event(ev, n, id)) ||
		    e->cpu != cpu) {
			close(fd);
			continue;
		}
		if (e->mmapped && *b_fd < 0) {
			*b_fd = fd;
			printf("ctl: B = perf fd %s, event id=%lu\n", de->d_name, (unsigned long)id);
		} else if (!e->mmapped && e->pid > 0 && !e->parent && *p_fd < 0) {
			*p_fd = fd;
			printf("ctl: P = perf fd %s, event id=%lu pid=%d\n", de->d_name,
			       (unsigned long)id, e->pid);
		} else {
			close(fd);
		}
	}
	closedir(d);
	close(pidfd);
	if (*p_fd < 0 || *b_fd < 0)
		die("perf (pid %d) has no %s swaux event on cpu %d", perf_pid,
		    *p_fd < 0 ? "per-task, redirectable" : "mmapped", cpu);
}

static int pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/" SWAUX_PMU_NAME "/type", "r");
	int type;

	if (!f || fscanf(f, "%d", &type) != 1)
		die("no %s PMU: load %s.ko", SWAUX_PMU_NAME, SWAUX_MODULE_NAME);
	fclose(f);
	return type;
}

struct auxbuf {
	int fd;
	struct perf_event_mmap_page *up;
	unsigned char *aux;
};

/* A disabled swaux event on cpu that only owns an AUX buffer */
static void auxbuf_open(struct auxbuf *b, int cpu, const char *name)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = pmu_type(),
		.disabled = 1,
	};
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t id;

	b->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (b->fd < 0)
		die("perf_event_open(swaux, cpu %d): %s", cpu, strerror(errno));
	b->up = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->up == MAP_FAILED)
		die("mmap %s: %s", name, strerror(errno));
	b->up->aux_offset = 2 * pg;
	b->up->aux_size = AUX_PAGES * pg;
	b->aux = mmap(NULL, b->up->aux_size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
		      b->up->aux_offset);
	if (b->aux == MAP_FAILED)
		die("mmap %s's AUX area: %s", name, strerror(errno));
	if (!ioctl(b->fd, PERF_EVENT_IOC_ID, &id))
		printf("ctl: %s = own event id=%lu cpu=%d\n", name, (unsigned long)id, cpu);
}

struct scan {
	uint64_t bytes;
	unsigned long records, invalid, gaps, mism, after;
	uint32_t buf_id;
};

/*
 * Scan [0, aux_head) of a buffer that did not wrap: records, slots without
 * a record (invalid), seq gaps, mismatches, and inherited records written
 * after t_redirect (if non-zero). Records are appended to fo if non-NULL.
 */
static void auxbuf_scan(struct auxbuf *b, uint64_t t_redirect, FILE *fo,
			struct scan *s)
{
	uint64_t off, seq = 0;

	memset(s, 0, sizeof(*s));
	s->bytes = __atomic_load_n(&b->up->aux_head, __ATOMIC_ACQUIRE);
	if (s->bytes > b->up->aux_size)
		die("AUX buffer wrapped (%lu bytes): make it bigger", (unsigned long)s->bytes);
	for (off = 0; off + sizeof(struct swaux_record) <= s->bytes;
	     off += sizeof(struct swaux_record)) {
		struct swaux_record *r = (void *)(b->aux + off);

		if (r->magic != SWAUX_MAGIC) {
			s->invalid++;
			continue;
		}
		s->records++;
		s->buf_id = r->buf_id;
		if (seq && r->seq != seq + 1)
			s->gaps++;
		seq = r->seq;
		if (r->flags & SWAUX_F_MISMATCH)
			s->mism++;
		if (t_redirect && r->time > t_redirect && (r->flags & SWAUX_F_INHERITED))
			s->after++;
		if (fo)
			fwrite(r, sizeof(*r), 1, fo);
	}
}

static uint64_t redirect(int p_fd, int to_fd, const char *what)
{
	if (ioctl(p_fd, PERF_EVENT_IOC_SET_OUTPUT, to_fd))
		die("SET_OUTPUT P -> %s: %s", what, strerror(errno));
	printf("ctl: P -> %s\n", what);
	fflush(stdout);
	return now_ns();
}

/* The scenario on P: -> A, fork, -> B while the children run */
static uint64_t scenario(const char *dir, int p_fd, int a_fd, int b_fd, const char *b_name)
{
	uint64_t t;

	dump_state("start");
	redirect(p_fd, a_fd, "A");
	stage_set(dir, 1);
	stage_wait(dir, 2, 0);
	usleep(300000);
	dump_state("forked");
	t = redirect(p_fd, b_fd, b_name);
	stage_set(dir, 3);
	return t;
}

static void report_a(struct auxbuf *a, uint64_t t_redirect, const char *out)
{
	struct scan s;
	FILE *fo = fopen(out, "w");

	if (!fo)
		die("%s: %s", out, strerror(errno));
	auxbuf_scan(a, t_redirect, fo, &s);
	fclose(fo);
	printf("ctl: A buf_id=%u bytes=%lu records=%lu after_redirect=%lu mismatch=%lu\n",
	       s.buf_id, (unsigned long)s.bytes, s.records, s.after, s.mism);
}

static int ctl(const char *dir, int cpu, int perf_pid, const char *out)
{
	struct auxbuf a;
	uint64_t t;
	int p_fd, b_fd;

	/* Off the workload's CPU, where RR tasks spin */
	pin(cpu ? 0 : 1);
	auxbuf_open(&a, cpu, "A");
	grab_perf_fds(perf_pid, cpu, &p_fd, &b_fd);
	t = scenario(dir, p_fd, a.fd, b_fd, "B (perf's buffer)");
	/* Let the children run on after the redirect, then read A. */
	usleep(800000);
	dump_state("end");
	report_a(&a, t, out);
	return 0;
}

static int solo(const char *dir, int cpu, int nchild, int ms, const char *out)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = pmu_type(),
		.inherit = 1,
	};
	struct auxbuf a, b;
	struct scan sa, sb;
	int p_fd, st;
	uint64_t t;
	pid_t w;

	w = fork();
	if (w < 0)
		die("fork: %s", strerror(errno));
	if (!w)
		_exit(work(dir, cpu, nchild, ms));
	/* Off the workload's CPU, where RR tasks spin */
	pin(cpu ? 0 : 1);
	auxbuf_open(&b, cpu, "B");
	auxbuf_open(&a, cpu, "A");
	p_fd = syscall(SYS_perf_event_open, &attr, w, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (p_fd < 0)
		die("perf_event_open(swaux, pid %d, cpu %d, inherit): %s", w, cpu, strerror(errno));
	redirect(p_fd, b.fd, "B");
	t = scenario(dir, p_fd, a.fd, b.fd, "B");
	if (waitpid(w, &st, 0) != w || !WIFEXITED(st) || WEXITSTATUS(st))
		die("workload failed");
	/* Stop every writer before reading: the children have exited. */
	close(p_fd);
	report_a(&a, t, out);
	auxbuf_scan(&b, 0, NULL, &sb);
	auxbuf_scan(&a, t, NULL, &sa);
	printf("ctl: B buf_id=%u bytes=%lu records=%lu invalid=%lu gaps=%lu mismatch=%lu\n",
	       sb.buf_id, (unsigned long)sb.bytes, sb.records, sb.invalid, sb.gaps, sb.mism);
	return sa.after || sa.mism || sb.invalid || sb.gaps || sb.mism ? 3 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "work"))
		return work(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "ctl"))
		return ctl(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
	if (argc == 7 && !strcmp(argv[1], "solo"))
		return solo(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argv[6]);
	fprintf(stderr,
		"usage: swaux-flow work DIR CPU NCHILD MS\n"
		"       swaux-flow ctl DIR CPU PERF_PID OUT\n"
		"       swaux-flow solo DIR CPU NCHILD MS OUT\n");
	return 2;
}
