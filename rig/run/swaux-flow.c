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
 *	The redirect itself is timed by the module, not by sleeping: the
 *	controller redirects P -> B only while an inherited writer has a
 *	transaction open on A (debugfs swaux/writers), and reads from
 *	debugfs swaux/log how that transaction ended after the ioctl. A try
 *	counts if the writer wrote into A after the ioctl returned (the bug)
 *	or perf stopped it (S in the log: the fix); if the task was switched
 *	out first (D), nothing could show either way, so P goes back to A
 *	and it tries again.
 *	"ctl: try N: ..." lines say what happened. Exit 2: the scenario
 *	could not be set up (no child wrote into A, no try conclusive), and
 *	rig/run/guest.sh runs it again.
 *
 * The scenario without perf is the kselftest
 * tools/testing/selftests/perf_events/aux_set_output.c.
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
#include "flow.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define AUX_PAGES	256
#define DATA_PAGES	64
#define MAX_EVENTS	256

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
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

/*
 * Wait up to 60 s for a stage file; spin (the AUX writer needs a runner)
 * or poll every 10 ms: the workload's sched_switch events are recorded,
 * and a 1 ms poll would flood perf's ring with them.
 */
static void stage_wait(const char *dir, int n, int spin)
{
	uint64_t end = now_ns() + 60ull * 1000000000ull;

	while (!stage_exists(dir, n)) {
		if (now_ns() > end)
			die("timed out waiting for %s/stage%d", dir, n);
		if (!spin)
			usleep(10000);
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
	flow_fork_begin();
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
		flow_forked();
	}
	flow_fork_end();
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
	/*
	 * A real data ring, drained while we wait (auxbuf_drain()): the
	 * PERF_RECORD_AUX and ITRACE_START records of P's children go here
	 * while P is redirected to A, and every record that does not fit
	 * is counted as lost on P, which perf record reports as its own
	 * loss at the end.
	 */
	b->up = mmap(NULL, (1 + DATA_PAGES) * pg, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->up == MAP_FAILED)
		die("mmap %s: %s", name, strerror(errno));
	b->up->aux_offset = (1 + DATA_PAGES) * pg;
	b->up->aux_size = AUX_PAGES * pg;
	b->aux = mmap(NULL, b->up->aux_size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
		      b->up->aux_offset);
	if (b->aux == MAP_FAILED)
		die("mmap %s's AUX area: %s", name, strerror(errno));
	if (!ioctl(b->fd, PERF_EVENT_IOC_ID, &id))
		printf("ctl: %s = own event id=%lu cpu=%d\n", name, (unsigned long)id, cpu);
}

/* Consume A's data ring (its records are not checked here) */
static void auxbuf_drain(struct auxbuf *b)
{
	uint64_t head = __atomic_load_n(&b->up->data_head, __ATOMIC_ACQUIRE);

	__atomic_store_n(&b->up->data_tail, head, __ATOMIC_RELEASE);
}

/* Sleep @ms milliseconds, draining @b's data ring every 10 ms */
static void drain_for(struct auxbuf *b, long ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;

	do {
		auxbuf_drain(b);
		usleep(10000);
	} while (now_ns() < end);
	auxbuf_drain(b);
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
	/*
	 * The whole buffer, not [0, aux_head): a writer left programmed with
	 * this buffer while its handle moved on writes at the other buffer's
	 * offsets, possibly past aux_head. Never-written slots are zero.
	 */
	for (off = 0; off + sizeof(struct swaux_record) <= b->up->aux_size;
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

/* buf_id of the records in @b, once there is one (0: none within 60 s) */
static uint32_t auxbuf_wait_id(struct auxbuf *b)
{
	uint64_t end = now_ns() + 60ull * 1000000000ull;
	struct scan s;

	do {
		auxbuf_scan(b, 0, NULL, &s);
		if (s.records)
			return s.buf_id;
		auxbuf_drain(b);
		usleep(1000);
	} while (now_ns() < end);
	return 0;
}

/*
 * Wait until the writer on @cpu is a child of @p_id programmed with buffer
 * @buf_id (debugfs swaux/writers: cpu event-id parent-id buf-id log-n).
 * Returns its log-n (entries logged on @cpu so far), 0 on timeout.
 */
static unsigned long long wait_writer(struct auxbuf *a, int cpu, uint64_t p_id,
				      uint32_t buf_id)
{
	uint64_t end = now_ns() + 20ull * 1000000000ull;

	do {
		FILE *f = fopen("/sys/kernel/debug/swaux/writers", "r");
		unsigned long long id, parent, n;
		unsigned int bid;
		int c;

		if (!f)
			die("/sys/kernel/debug/swaux/writers: %s", strerror(errno));
		while (fscanf(f, "%d %llu %llu %u %llu", &c, &id, &parent, &bid, &n) == 5) {
			if (c == cpu && id && parent == p_id && bid == buf_id && n) {
				fclose(f);
				return n;
			}
		}
		fclose(f);
		auxbuf_drain(a);
		usleep(500);
	} while (now_ns() < end);
	return 0;
}

static void write_log_since(unsigned long long n)
{
	FILE *f = fopen("/sys/kernel/debug/swaux/log_since", "w");

	if (!f || fprintf(f, "%llu\n", n) < 0 || fclose(f))
		die("/sys/kernel/debug/swaux/log_since: %s", strerror(errno));
}

struct logent {
	unsigned long long n;
	uint64_t time;
	char kind;
	uint32_t buf_id;
};

/*
 * The writer log of @cpu from entry @since on (debugfs swaux/log: cpu n
 * time kind event-id buf-id; log_since = @since). Returns the number of
 * entries read into @e, at most @max.
 */
static int read_log(int cpu, struct logent *e, int max)
{
	FILE *f = fopen("/sys/kernel/debug/swaux/log", "r");
	unsigned long long n, t, id;
	unsigned int bid;
	int c, nr = 0;
	char k;

	if (!f)
		die("/sys/kernel/debug/swaux/log: %s", strerror(errno));
	while (nr < max && fscanf(f, "%d %llu %llu %c %llu %u", &c, &n, &t, &k, &id, &bid) == 6) {
		if (c != cpu)
			continue;
		e[nr].n = n;
		e[nr].time = t;
		e[nr].kind = k;
		e[nr].buf_id = bid;
		nr++;
	}
	fclose(f);
	return nr;
}

enum try_result { TRY_AGAIN, TRY_BUG, TRY_STOPPED };

#define LOG_MAX	64

/*
 * How the transaction that writer-log entry @since opened on A (a B or an
 * O with buf_id A) went on, given the ioctl ran from @t0 to @t1: stopped
 * by perf during the ioctl (S, maybe after overflows: what the fix does),
 * or the child went on with A after t1 (an overflow with A programmed, or
 * a write into A: the bug). If it ended otherwise first (switched out: D,
 * begin failed: E), nothing could show either way: try again.
 */
static enum try_result judge_try(int cpu, unsigned long long since, uint64_t t0, uint64_t t1,
				 struct auxbuf *a, uint32_t a_id, char *what, size_t len)
{
	uint64_t end = now_ns() + 5ull * 1000000000ull;
	struct logent e[LOG_MAX];
	struct scan s;
	int i, n;

	do {
		n = read_log(cpu, e, LOG_MAX);
		if (!n || e[0].n != since) {
			snprintf(what, len, "lost from the writer log (overrun): try again");
			return TRY_AGAIN;
		}
		if ((e[0].kind != 'B' && e[0].kind != 'O') || e[0].buf_id != a_id) {
			snprintf(what, len, "was not open (log entry %llu is %c buf %u)",
				 e[0].n, e[0].kind, e[0].buf_id);
			return TRY_AGAIN;
		}
		for (i = 1; i < n; i++) {
			if (e[i].time > t0)
				break;
			if (e[i].kind != 'O') {
				snprintf(what, len, "ended by %c before the ioctl", e[i].kind);
				return TRY_AGAIN;
			}
		}
		/*
		 * Overflows during the ioctl are fine; once it has returned,
		 * an overflow that keeps A programmed is the bug (the fixed
		 * kernel stops the writer inside the ioctl, the base never
		 * does), and so is a write into A.
		 */
		for (; i < n && e[i].kind == 'O'; i++) {
			if (e[i].time > t1 && e[i].buf_id == a_id) {
				snprintf(what, len, "went on: overflowed with A programmed after the ioctl");
				return TRY_BUG;
			}
		}
		if (i < n && e[i].kind == 'S' && e[i].time <= t1) {
			snprintf(what, len, "was stopped by SET_OUTPUT (S)");
			return TRY_STOPPED;
		}
		/* After the log: a write before a logged end is in A by now */
		auxbuf_scan(a, t1, NULL, &s);
		if (s.after) {
			snprintf(what, len, "went on: %lu records written into A after the ioctl",
				 s.after);
			return TRY_BUG;
		}
		if (i < n) {
			snprintf(what, len, "ended by %c (after the ioctl: %s), no late write",
				 e[i].kind, e[i].time > t1 ? "yes" : "no");
			return TRY_AGAIN;
		}
		auxbuf_drain(a);
		usleep(1000);
	} while (now_ns() < end);
	snprintf(what, len, "neither ended nor wrote into A for 5 s");
	return TRY_AGAIN;
}

#define MAX_TRIES	20

/*
 * The scenario could not be set up this time (no child wrote into A, or
 * each try was inconclusive): exit 2, and rig/run/guest.sh runs it again.
 */
static void unsettled(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("swaux-flow: not settled: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* The scenario on P: -> A, fork, -> B while a child's transaction is open on A */
static uint64_t scenario(const char *dir, int cpu, int p_fd, struct auxbuf *a, int b_fd,
			 const char *b_name)
{
	enum try_result r;
	uint64_t p_id, t0, t;
	uint32_t a_id;
	char what[128];
	int try;

	if (ioctl(p_fd, PERF_EVENT_IOC_ID, &p_id))
		die("PERF_EVENT_IOC_ID: %s", strerror(errno));
	dump_state("start");
	redirect(p_fd, a->fd, "A");
	stage_set(dir, 1);
	stage_wait(dir, 2, 0);
	a_id = auxbuf_wait_id(a);
	if (!a_id)
		unsettled("no record reached A within 60 s: the children do not trace");
	dump_state("forked");
	for (try = 1; ; try++) {
		unsigned long long n = wait_writer(a, cpu, p_id, a_id);

		if (!n)
			unsettled("no inherited writer of P on cpu %d programmed with A (buf_id %u) within 20 s",
				  cpu, a_id);
		/* The entry that opened the transaction, and what follows */
		write_log_since(n - 1);
		t0 = now_ns();
		t = redirect(p_fd, b_fd, b_name);
		r = judge_try(cpu, n - 1, t0, t, a, a_id, what, sizeof(what));
		printf("ctl: try %d: the transaction open on A %s\n", try, what);
		if (r != TRY_AGAIN)
			break;
		if (try == MAX_TRIES)
			unsettled("%d tries, none conclusive", try);
		redirect(p_fd, a->fd, "A (again)");
	}
	printf("ctl: redirect %s after %d tries\n",
	       r == TRY_BUG ? "MISSED by the kernel: the child went on with A" :
	       "honoured: the child's transaction on A was stopped", try);
	fflush(stdout);
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
	t = scenario(dir, cpu, p_fd, &a, b_fd, "B (perf's buffer)");
	/* Let the children run on after the redirect, then read A. */
	drain_for(&a, 800);
	dump_state("end");
	report_a(&a, t, out);
	return 0;
}

int main(int argc, char **argv)
{
	flow_name = "swaux-flow";
	if (argc == 6 && !strcmp(argv[1], "work"))
		return work(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "ctl"))
		return ctl(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
	fprintf(stderr,
		"usage: swaux-flow work DIR CPU NCHILD MS\n"
		"       swaux-flow ctl DIR CPU PERF_PID OUT\n");
	return 2;
}
