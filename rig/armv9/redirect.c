// SPDX-License-Identifier: GPL-2.0
/*
 * redirect: the workload rig/armv9/run.sh records with `perf record -e
 * cs_etm//u` on an Armv9 machine or Arm FVP (ETE + TRBE) while the
 * aux_set_output kselftest (tools/testing/selftests/perf_events) runs the
 * PERF_EVENT_IOC_SET_OUTPUT redirect scenario on the same CPU, so that both
 * sessions share its TRBE. run.sh builds and runs it on the target.
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
 * an event of the kselftest into perf's buffer would put records with ids
 * perf does not know into perf.data, which perf report refuses to parse.
 * So the kselftest redirects its own events, and perf records this
 * workload on the same CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* A child of the workload dies with it. */
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
	if (argc == 5 && !strcmp(argv[1], "spin"))
		return spin(argv[2], num(argv[3], "CPU"), num(argv[4], "NCHILD"));
	fprintf(stderr, "usage: redirect spin DIR CPU NCHILD\n");
	return 2;
}
