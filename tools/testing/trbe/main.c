// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace harness of drivers/hwtracing/coresight/coresight-trbe.c.
 *
 * The driver is included as a whole, so the tests reach its static
 * functions, and runs unmodified against a TRBE hardware model
 * (model/hw.c), a perf AUX ring buffer model (model/perf.c) and an
 * etm-perf model (model/etm.c). Every test runs in a forked child: a
 * crash, a sanitizer report or a timeout fails that test only.
 *
 *   trbe_test [CORE=base|fixed] [SEED=<n>] [STEPS=<n>] [test_name...]
 *
 * CORE selects the perf core model (model/perf.c): the 7.3 core, or the
 * core with the series' SET_OUTPUT fix. SEED and STEPS set the seed and
 * length of the random tests. SEED and STEPS may also come from the
 * environment, CORE as TRBE_CORE; arguments win.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trbe_shim.h"

#include "../../../drivers/hwtracing/coresight/coresight-trbe.c"

#include "model/hw.c"
#include "model/perf.c"
#include "model/etm.c"
#include "harness.h"

#include "tests/basic.c"
#include "tests/errata.c"
#include "tests/redirect.c"
#include "tests/lifetime.c"
#include "tests/random.c"

/* Leaks of a test child do not matter: the test process exits. */
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

#define TEST(name)		{ #name, name, false }
#define RANDOM_TEST(name)	{ #name, name, true }

static const struct harness_test {
	const char *name;
	bool (*fn)(void);
	bool seeded;
} tests[] = {
	TEST(test_probe_reads_trbidr),
	TEST(test_probe_rejects_unusable_trbe),
	TEST(test_normal_fill_and_wrap),
	TEST(test_buffer_full_truncates),
	TEST(test_misaligned_head_is_padded),
	TEST(test_snapshot_mode),
	TEST(test_spurious_irq),
	TEST(test_fatal_external_abort),
	TEST(test_fatal_stage1_abort),
	TEST(test_fatal_stage2_abort),
	TEST(test_fatal_trigger),
	TEST(test_begin_failure),
	TEST(test_erratum_overwrite_fill_mode),
	TEST(test_erratum_write_out_of_range),
	TEST(test_set_output_redirect_overflow),
	TEST(test_set_output_redirect_snapshot),
	TEST(test_set_output_redirect_etf),
	TEST(test_set_output_redirect_etf_pause),
	TEST(test_munmap_frees_aux),
	TEST(test_munmap_stops_active_event),
	TEST(test_failed_begin_use_after_free),
	TEST(test_set_output_overflow_frees_old),
	RANDOM_TEST(test_random_sequence),
	RANDOM_TEST(test_random_sequence_redirect),
};

/* Sanitizer reports and other stderr output of a child, as diagnostics. */
static void relay_stderr(int fd)
{
	FILE *f = fdopen(fd, "r");
	char line[1024];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

static bool run_in_child(const struct harness_test *t)
{
	int status, pipefd[2];
	pid_t pid;

	fflush(stdout);
	if (pipe(pipefd)) {
		printf("# %s: pipe: %s\n", t->name, strerror(errno));
		return false;
	}
	pid = fork();
	if (pid < 0) {
		printf("# %s: fork: %s\n", t->name, strerror(errno));
		return false;
	}
	if (!pid) {
		bool ok;

		close(pipefd[0]);
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[1]);
		alarm(60);
		ok = t->fn();
		if (harness_warnings || harness_violations) {
			printf("# %s: %d WARN(s), %d model violation(s)\n",
			       t->name, harness_warnings, harness_violations);
			ok = false;
		}
		fflush(stdout);
		exit(ok ? 0 : 1);
	}
	close(pipefd[1]);
	relay_stderr(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0) {
		printf("# %s: waitpid: %s\n", t->name, strerror(errno));
		return false;
	}
	if (WIFSIGNALED(status)) {
		printf("# %s: killed by signal %d (%s)\n", t->name,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		return false;
	}
	if (WEXITSTATUS(status)) {
		if (WEXITSTATUS(status) != 1)
			printf("# %s: exit status %d\n", t->name,
			       WEXITSTATUS(status));
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	int run = 0, passed = 0, failed = 0, a, nr_names = 0;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!harness_settings_from_env())
		return 2;
	for (a = 1; a < argc; a++) {
		char *eq = strchr(argv[a], '=');

		if (!eq) {
			nr_names++;
			continue;
		}
		*eq = '\0';
		if (!harness_parse_setting(argv[a], eq + 1)) {
			printf("# bad argument %s=%s\n", argv[a], eq + 1);
			return 2;
		}
		argv[a] = NULL;
	}
	printf("# perf core model: %s\n", harness_core_names[harness_core]);
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		const struct harness_test *t = &tests[i];
		int selected = !nr_names;

		for (a = 1; a < argc; a++)
			if (argv[a] && !strcmp(argv[a], t->name))
				selected = 1;
		if (!selected)
			continue;
		run++;
		if (run_in_child(t)) {
			passed++;
			printf("ok %d - %s\n", run, t->name);
		} else {
			failed++;
			if (t->seeded)
				printf("# %s failed with SEED=0x%llx STEPS=%lu CORE=%s\n",
				       t->name, harness_seed, harness_random_steps,
				       harness_core_names[harness_core]);
			printf("not ok %d - %s\n", run, t->name);
		}
	}
	printf("%d tests run, %d passed, %d failed.\n", run, passed, failed);
	return failed ? 1 : 0;
}
