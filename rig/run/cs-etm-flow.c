// SPDX-License-Identifier: GPL-2.0
/*
 * cs-etm-flow: the two user-space halves of `make run ARCH=arm64`: a
 * `perf record -e cs_etm//u` session whose inherited writer is redirected
 * (PERF_EVENT_IOC_SET_OUTPUT) away from perf's buffer and back while its
 * children trace, on the emulated Armv9 CPU (rig/qemu: the TRBE and ETE
 * drivers, QEMU's ETE model).
 *
 *   cs-etm-flow work DIR CPU NCHILD
 *	The process perf records (perf record -e cs_etm//u -p PID). Two
 *	threads, both kept off CPU: perf opens one cs_etm event per thread
 *	and CPU, mmaps the main thread's on each CPU (its AUX buffer is B)
 *	and points the second thread's at it (SET_OUTPUT): that one, on CPU,
 *	is P. The second thread waits for DIR/stage1, forks NCHILD children
 *	that spin on CPU (SCHED_FIFO, they take turns once, then one keeps
 *	CPU), writes their pids to DIR/children and DIR/stage2, waits for
 *	DIR/stop and reaps them.
 *
 *   cs-etm-flow ctl DIR CPU PERF_PID OUT
 *	The controller, on another CPU. Takes perf's cs_etm event fds with
 *	pidfd_getfd() (/proc/PERF_PID/fdinfo: pmu_type), opens a cs_etm
 *	event of its own on CPU in a sleeping holder process, with its own
 *	AUX buffer A, and:
 *	  P -> A: the one of perf's events that SET_OUTPUT accepts (the not
 *	  mmapped one on CPU); DIR/stage1, the children fork and trace in A;
 *	  P -> B: the one of perf's events P's SET_OUTPUT accepts (perf's
 *	  mmapped event on CPU), while a child traces; 300 ms later A must be
 *	  as it was when the ioctl returned.
 *	A redirect during which a child was switched out proves nothing (on
 *	any kernel the child ends its transaction and begins the next in
 *	P's current buffer): P goes back to A and it is tried again.
 *	Then DIR/stop, A's AUX area is copied to OUT and what its data ring
 *	held (the children's PERF_RECORD_AUX records) to OUT.ring, and one line:
 *	  "ctl: A records=N last_seq=N after_redirect=N tries=N conclusive=0|1"
 *	after_redirect counts the model records of A written after P -> B
 *	returned: misplaced trace (the bug this project fixes). last_seq is
 *	the highest sequence number in A: every record of CPU in perf's
 *	buffer from the children after the redirect has a higher one.
 *
 * A record of the ETE model is 64 bytes: [Overflow] A-Sync, TraceInfo,
 * Trace On, a Timestamp of (cpu << 48 | sequence number), a Context packet
 * with CONTEXTIDR_EL1 (the pid), an Address, Ignore packets (the format
 * tools/perf/util/swaux.c and the aux_set_output kselftest parse).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
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

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#include "flow.h"

#define REC_SIZE	64
#define AUX_PAGES	256
#define DATA_PAGES	16
#define MAX_FDS		64
#define MAX_CHILD	16
#define TRIES		10

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const char *dir;

static int stage_exists(const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void stage_write(const char *name, const char *text)
{
	char p[512], tmp[520];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, p))
		die("write %s: %s", p, strerror(errno));
}

/* Wait up to @s seconds for DIR/@name, polling every 10 ms */
static void stage_wait(const char *name, int s)
{
	uint64_t end = now_ms() + s * 1000ull;

	while (!stage_exists(name)) {
		if (now_ms() > end)
			die("timed out after %d s waiting for %s/%s", s, dir, name);
		sleep_ms(10);
	}
}

/* The work half */

struct shared {
	volatile int running, rotate, stop;
};

static int work_cpu, work_nchild;

static void child_loop(struct shared *sh)
{
	struct sched_param sp = { .sched_priority = 1 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(3);
	pin(work_cpu);
	__atomic_add_fetch(&sh->running, 1, __ATOMIC_SEQ_CST);
	/*
	 * A system call every 100 us: the ETE model traces each EL0 exit and
	 * entry, so the TRBE fills in a fraction of a second.
	 */
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		uint64_t t = now_us();

		if (__atomic_load_n(&sh->rotate, __ATOMIC_ACQUIRE))
			sched_yield();
		else
			syscall(SYS_getppid);
		while (now_us() - t < 100)
			;
	}
	_exit(0);
}

static void *forker(void *arg)
{
	struct shared *sh = arg;
	pid_t child[MAX_CHILD];
	char pids[MAX_CHILD * 12] = "";
	int i, st;
	long rc = 0;

	stage_wait("stage1", 120);
	sh->rotate = 1;
	flow_fork_begin();
	for (i = 0; i < work_nchild; i++) {
		child[i] = fork();
		if (child[i] < 0)
			die("fork: %s", strerror(errno));
		if (!child[i])
			child_loop(sh);
		flow_forked();
		snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids), "%d\n", child[i]);
	}
	flow_fork_end();
	/* Each child has run and traced; from now on one keeps CPU */
	while (__atomic_load_n(&sh->running, __ATOMIC_ACQUIRE) < work_nchild) {
		if (waitpid(-1, &st, WNOHANG) > 0)
			die("a child exited before it ran (status %#x)", st);
		sleep_ms(1);
	}
	sleep_ms(20);
	__atomic_store_n(&sh->rotate, 0, __ATOMIC_RELEASE);
	stage_write("children", pids);
	stage_write("stage2", "");
	stage_wait("stop", 300);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < work_nchild; i++)
		if (waitpid(child[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	return (void *)rc;
}

static int work(int cpu, int nchild)
{
	struct shared *sh;
	pthread_t t;
	void *rc;

	if (nchild < 1 || nchild > MAX_CHILD)
		die("NCHILD must be 1..%d", MAX_CHILD);
	work_cpu = cpu;
	work_nchild = nchild;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	/* Both threads off CPU: only the children trace there */
	pin(cpu ? 0 : 1);
	if (pthread_create(&t, NULL, forker, sh))
		die("pthread_create failed");
	stage_write("ready", "");
	pthread_join(t, &rc);
	return rc ? 1 : 0;
}

/* The controller half */

struct auxbuf {
	int fd;
	struct perf_event_mmap_page *up;
	unsigned char *aux, *copy;
	size_t len;
	/* what the data ring held: the children's PERF_RECORD_AUX in A */
	unsigned char *ring;
	size_t ring_len, ring_cap;
};

static long page;

static int cs_etm_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/cs_etm/type", "r");
	int type;

	if (!f || fscanf(f, "%d", &type) != 1)
		die("no cs_etm PMU: the ETE driver did not probe");
	fclose(f);
	return type;
}

/* A perf_event fdinfo field, or -1 */
static long long fdinfo(int pid, const char *fd, const char *key)
{
	char path[96], line[160];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 0);
	fclose(f);
	return v;
}

/*
 * perf's cs_etm event fds, taken into this process; waits up to 120 s for
 * at least @want of them (perf opens one per thread and CPU).
 */
static int grab_perf_fds(int perf_pid, int want, int *fds, long long *config2)
{
	uint64_t end = now_ms() + 120000;
	int type = cs_etm_type(), n, pidfd;
	char path[64];

	pidfd = syscall(SYS_pidfd_open, perf_pid, 0);
	if (pidfd < 0)
		die("pidfd_open(%d): %s", perf_pid, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/fd", perf_pid);
	for (;;) {
		struct dirent *de;
		DIR *d = opendir(path);

		if (!d)
			die("%s: %s (perf record exited?)", path, strerror(errno));
		n = 0;
		while ((de = readdir(d)) && n < MAX_FDS) {
			char fdpath[320], link[64];
			ssize_t len;
			int fd;

			snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
			len = readlink(fdpath, link, sizeof(link) - 1);
			if (len < 0)
				continue;
			link[len] = 0;
			if (strcmp(link, "anon_inode:[perf_event]") ||
			    fdinfo(perf_pid, de->d_name, "pmu_type") != type)
				continue;
			fd = syscall(SYS_pidfd_getfd, pidfd, atoi(de->d_name), 0);
			if (fd < 0)
				die("pidfd_getfd(%s): %s", de->d_name, strerror(errno));
			*config2 = fdinfo(perf_pid, de->d_name, "perf_event_attr.config2");
			fds[n++] = fd;
		}
		closedir(d);
		if (n >= want)
			break;
		while (n)
			close(fds[--n]);
		if (now_ms() > end)
			die("perf (pid %d) has fewer than %d cs_etm events after 120 s", perf_pid, want);
		sleep_ms(100);
	}
	close(pidfd);
	return n;
}

/* A sleeping process: the task context of A's event (cs_etm is exclusive) */
static pid_t holder_spawn(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (;;)
		pause();
}

static void auxbuf_open(struct auxbuf *b, pid_t owner, int cpu, long long config2)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= cs_etm_type(),
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
		.config2	= config2 < 0 ? 0 : config2,
		/* an overflow interrupt every 1/16 of the buffer */
		.aux_watermark	= AUX_PAGES * page / 16,
	};

	*b = (struct auxbuf){ 0 };
	b->fd = syscall(SYS_perf_event_open, &attr, owner, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (b->fd < 0)
		die("perf_event_open(cs_etm, pid %d, cpu %d): %s", owner, cpu, strerror(errno));
	b->up = mmap(NULL, (1 + DATA_PAGES) * page, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->up == MAP_FAILED)
		die("mmap A: %s", strerror(errno));
	b->len = AUX_PAGES * page;
	b->up->aux_offset = (1 + DATA_PAGES) * page;
	b->up->aux_size = b->len;
	b->aux = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, b->up->aux_offset);
	if (b->aux == MAP_FAILED)
		die("mmap A's AUX area: %s", strerror(errno));
	b->copy = calloc(1, b->len);
	if (!b->copy)
		die("out of memory");
}

/*
 * Consume A's data ring (P's children's PERF_RECORD_AUX while in A),
 * keeping its bytes: they go to the host with A's AUX area, where they
 * become A's rows on the KernelShark timeline.
 */
static void auxbuf_drain(struct auxbuf *b)
{
	uint64_t head = __atomic_load_n(&b->up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = b->up->data_tail, size = b->up->data_size;
	const unsigned char *data = (unsigned char *)b->up + b->up->data_offset;

	if (head - tail > size)
		die("A's data ring: head %llu, tail %llu", (unsigned long long)head,
		    (unsigned long long)tail);
	while (tail < head) {
		size_t off = tail % size, n = head - tail;

		if (n > size - off)
			n = size - off;
		if (b->ring_len + n > b->ring_cap) {
			b->ring_cap = 2 * (b->ring_len + n);
			b->ring = realloc(b->ring, b->ring_cap);
			if (!b->ring)
				die("out of memory");
		}
		memcpy(b->ring + b->ring_len, data + off, n);
		b->ring_len += n;
		tail += n;
	}
	__atomic_store_n(&b->up->data_tail, head, __ATOMIC_RELEASE);
}

static void drain_for(struct auxbuf *b, long ms)
{
	uint64_t end = now_ms() + ms;

	do {
		auxbuf_drain(b);
		sleep_ms(10);
	} while (now_ms() < end);
}

/* One ETE model record: 1 with cpu, seq and pid, 0 padding or zeroes, -1 */
static int ete_parse(const unsigned char *p, unsigned int *cpu, uint64_t *seq,
		     unsigned int *pid)
{
	static const unsigned char head[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00, 0x04, 0x02,
	};
	const unsigned char *end = p + REC_SIZE, *q = p;
	uint64_t ts = 0;
	int i;

	for (i = 0; i < REC_SIZE && (p[i] == 0x70 || p[i] == 0); i++)
		;
	if (i == REC_SIZE)
		return 0;
	if (q[0] == 0x00 && q[1] == 0x05)	/* Overflow */
		q += 2;
	if (memcmp(q, head, sizeof(head)))
		return -1;
	q += sizeof(head);
	for (i = 0; i < 9; i++, q++) {
		ts |= (uint64_t)(i < 8 ? *q & 0x7f : *q) << (7 * i);
		if (i == 8 || !(*q & 0x80)) {
			q++;
			break;
		}
	}
	if (q + 15 > end || q[0] != 0x81 || (q[1] & 0xc0) != 0x80 || q[6] != 0x9d)
		return -1;
	*pid = q[2] | q[3] << 8 | q[4] << 16 | (unsigned int)q[5] << 24;
	*seq = ts & ((1ull << 48) - 1);
	*cpu = ts >> 48;
	return 1;
}

struct scan {
	unsigned long records, changed, invalid, other_cpu;
	uint64_t last_seq;
};

static void auxbuf_scan(struct auxbuf *b, int cpu, int against_copy, struct scan *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t off = 0; off + REC_SIZE <= b->len; off += REC_SIZE) {
		unsigned int c, pid;
		uint64_t seq;
		int ret = ete_parse(b->aux + off, &c, &seq, &pid);

		if (ret < 0)
			s->invalid++;
		if (ret <= 0)
			continue;
		s->records++;
		if ((int)c != cpu)
			s->other_cpu++;
		if (seq > s->last_seq)
			s->last_seq = seq;
		if (against_copy && memcmp(b->aux + off, b->copy + off, REC_SIZE))
			s->changed++;
	}
}

/* Until A has records it did not have in its copy, up to 10 s */
static int wait_new_records(struct auxbuf *a, int cpu)
{
	uint64_t end = now_ms() + 10000;
	struct scan s;

	do {
		auxbuf_drain(a);
		auxbuf_scan(a, cpu, 1, &s);
		if (s.changed)
			return 1;
		sleep_ms(10);
	} while (now_ms() < end);
	return 0;
}

/* TRBE interrupts on @cpu so far (/proc/interrupts, arm_trbe) */
static long trbe_irqs(int cpu)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[512];
	long v = -1;

	if (!f)
		die("/proc/interrupts: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;
		int i = 0;

		if (!strstr(line, "arm_trbe"))
			continue;
		for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			if (i++ == cpu + 1)
				v = atol(tok);
	}
	fclose(f);
	if (v < 0)
		die("no arm_trbe interrupt count for cpu %d in /proc/interrupts", cpu);
	return v;
}

/* Context switches of the children so far (/proc/PID/status) */
static long switches(void)
{
	char path[512], line[128];
	long sum = 0, v;
	FILE *f, *c;
	int pid;

	snprintf(path, sizeof(path), "%s/children", dir);
	c = fopen(path, "r");
	if (!c)
		die("%s: %s", path, strerror(errno));
	while (fscanf(c, "%d", &pid) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		f = fopen(path, "r");
		if (!f)
			die("%s: %s", path, strerror(errno));
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
				sum += v;
		fclose(f);
	}
	fclose(c);
	return sum;
}

static int ctl(int cpu, int perf_pid, const char *out)
{
	int fds[MAX_FDS], n, i, p = -1, b = -1, tries, conclusive = 0, ncpus;
	struct auxbuf a;
	long long config2 = -1;
	struct scan s;
	char ring[4096];
	FILE *f;

	page = sysconf(_SC_PAGESIZE);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	pin(cpu ? 0 : 1);
	/* perf: two threads x the CPUs */
	n = grab_perf_fds(perf_pid, 2 * ncpus, fds, &config2);
	printf("ctl: perf (pid %d) has %d cs_etm events, config2 %#llx\n", perf_pid, n, config2);
	auxbuf_open(&a, holder_spawn(), cpu, config2);

	/* P: the one SET_OUTPUT takes (not mmapped, on CPU) */
	for (i = 0; i < n && p < 0; i++)
		if (!ioctl(fds[i], PERF_EVENT_IOC_SET_OUTPUT, a.fd))
			p = i;
	if (p < 0)
		die("none of perf's cs_etm events on cpu %d takes SET_OUTPUT", cpu);
	printf("ctl: P -> A (perf's cs_etm event #%d)\n", p);
	stage_write("stage1", "");
	stage_wait("stage2", 120);
	if (!wait_new_records(&a, cpu))
		die("no child record in A within 10 s");

	for (tries = 1; tries <= TRIES; tries++) {
		long sw = switches(), irq = trbe_irqs(cpu), nsw;
		uint64_t end, t0;

		/* B: the event P's SET_OUTPUT takes (perf's mmapped one on CPU) */
		for (i = 0; i < n && b < 0; i++)
			if (i != p && !ioctl(fds[p], PERF_EVENT_IOC_SET_OUTPUT, fds[i]))
				b = i;
		if (b < 0)
			die("P takes none of perf's other cs_etm events as output");
		if (tries > 1 && ioctl(fds[p], PERF_EVENT_IOC_SET_OUTPUT, fds[b]))
			die("SET_OUTPUT P -> B: %s", strerror(errno));
		/* From here on nothing may be written into A */
		memcpy(a.copy, a.aux, a.len);
		/*
		 * The child tracing on CPU goes through a TRBE interrupt: the
		 * handler ends its transaction and begins the next one, on the
		 * buffer the handle has then. Were the child switched out
		 * before it, its sched-in would begin on P's new buffer on any
		 * kernel: the try counts if no child was switched out until the
		 * first interrupt after the redirect.
		 */
		t0 = now_ms();
		end = t0 + 30000;
		while (trbe_irqs(cpu) == irq) {
			if (now_ms() > end)
				die("no TRBE interrupt on cpu %d within 30 s of the redirect", cpu);
			auxbuf_drain(&a);
			sleep_ms(1);
		}
		nsw = switches() - sw;
		conclusive = !nsw;
		t0 = now_ms() - t0;
		drain_for(&a, 200);
		auxbuf_scan(&a, cpu, 1, &s);
		printf("ctl: try %d: P -> B (perf's event #%d): %lu records of A written after it; children %s (TRBE interrupt after %llu ms, %ld switches)\n",
		       tries, b, s.changed, conclusive ?
		       "on CPU until the next TRBE interrupt" :
		       "switched out before the next TRBE interrupt (inconclusive)",
		       (unsigned long long)t0, nsw);
		if (conclusive || s.changed || tries == TRIES)
			break;
		/* Back to A until a child writes there again */
		if (ioctl(fds[p], PERF_EVENT_IOC_SET_OUTPUT, a.fd))
			die("SET_OUTPUT P -> A: %s", strerror(errno));
		memcpy(a.copy, a.aux, a.len);
		if (!wait_new_records(&a, cpu))
			die("no child record in A within 10 s of P -> A");
	}
	stage_write("stop", "");
	f = fopen(out, "w");
	if (!f || fwrite(a.aux, 1, a.len, f) != a.len || fclose(f))
		die("write %s: %s", out, strerror(errno));
	auxbuf_drain(&a);
	snprintf(ring, sizeof(ring), "%s.ring", out);
	f = fopen(ring, "w");
	if (!f || fwrite(a.ring, 1, a.ring_len, f) != a.ring_len || fclose(f))
		die("write %s: %s", ring, strerror(errno));
	/* Since the last P -> B: every record, and those changed */
	auxbuf_scan(&a, cpu, 1, &s);
	printf("ctl: A records=%lu last_seq=%llu after_redirect=%lu invalid=%lu other_cpu=%lu tries=%d conclusive=%d\n",
	       s.records, (unsigned long long)s.last_seq, s.changed, s.invalid,
	       s.other_cpu, tries > TRIES ? TRIES : tries, conclusive);
	return 0;
}

int main(int argc, char **argv)
{
	flow_name = "cs-etm-flow";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "work")) {
		dir = argv[2];
		return work(atoi(argv[3]), atoi(argv[4]));
	}
	if (argc == 6 && !strcmp(argv[1], "ctl")) {
		dir = argv[2];
		return ctl(atoi(argv[3]), atoi(argv[4]), argv[5]);
	}
	fprintf(stderr, "usage: cs-etm-flow work DIR CPU NCHILD\n"
			"       cs-etm-flow ctl DIR CPU PERF_PID OUT\n");
	return 2;
}
