// SPDX-License-Identifier: LGPL-2.1
/*
 * Reproducers for four libtraceevent format-parser bugs.
 *
 *   ./repro <case>
 *
 * Bad cases (crash/sanitizer report on unfixed libtraceevent):
 *   flag-field   __print_flags()/__print_symbolic() on a missing REC-> field
 *   array-eof    field declaration ending right after '['
 *   op-eof       print fmt ending inside an operator chain ("[" or "?"
 *                followed by an operator unknown to get_op_prio())
 *   div-zero     constant folding of 'n / 0' and 'n % 0'
 * Good cases (legit formats that must still parse and print):
 *   good         flags/symbolic on existing fields, arrays, folded ops
 *   all          every case above in sequence
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <trace-seq.h>

#define HDR \
	"name: test\n" \
	"ID: 42\n" \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\n" \
	"\tfield:int a;\toffset:4;\tsize:4;\tsigned:1;\n" \
	"\tfield:unsigned long flags;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:char comm[16];\toffset:16;\tsize:16;\tsigned:1;\n" \
	"\n"

struct fmt_case {
	const char *name;
	const char *fmt;
	int good;		/* legit format: must parse with rc == 0 */
	const char *expect;	/* expected print output for the record, if any */
};

static const struct fmt_case cases[] = {
	/* 1. flag-field */
	{ "flag-field/flags", HDR
	  "print fmt: \"%s\", __print_flags(REC->nosuch, \"|\", { 1, \"A\" }, { 2, \"B\" })\n" },
	{ "flag-field/symbolic", HDR
	  "print fmt: \"%s\", __print_symbolic(REC->nosuch, { 1, \"A\" }, { 2, \"B\" })\n" },
	/* 2. array-eof: format text ends right after '[' (no newline) */
	{ "array-eof", "name: test\nID: 42\nformat:\n"
	  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	  "\tfield:char name[" },
	/*
	 * 3. op-eof: print fmt ends inside an operator chain. The NULL
	 * dereference in process_op() needs a "[" (array index) or "?"
	 * op followed by an op that get_op_prio() does not know.
	 */
	{ "op-eof/index", HDR "print fmt: \"%d\", REC->comm[0] =" },
	{ "op-eof/cond", HDR "print fmt: \"%d\", REC->a ? 1 : 2 =" },
	{ "op-eof/index2", HDR "print fmt: \"%d\", REC->comm[0][1]\n" },
	/* ending after a binary op was already handled (parse error) */
	{ "op-eof/plus", HDR "print fmt: \"%d\", REC->a + " },
	/* 4. div-zero */
	{ "div-zero/div", HDR "print fmt: \"%d\", 10 / 0\n" },
	{ "div-zero/mod", HDR "print fmt: \"%d\", 10 % 0\n" },
	/* legit formats */
	{ "good/flags", HDR
	  "print fmt: \"%s\", __print_flags(REC->flags, \"|\", { 1, \"A\" }, { 2, \"B\" })\n",
	  1, "A|B" },
	{ "good/symbolic", HDR
	  "print fmt: \"%s\", __print_symbolic(REC->a, { 1, \"ONE\" }, { 7, \"SEVEN\" })\n",
	  1, "SEVEN" },
	{ "good/array", HDR "print fmt: \"%s a=%d\", REC->comm, REC->a\n",
	  1, "hello a=7" },
	{ "good/ops", HDR "print fmt: \"%d %d %d %d\", REC->a + 1, 10 / 3, 10 % 3, 6 * 7\n",
	  1, "8 3 1 42" },
	{ "good/cond-index", HDR
	  "print fmt: \"%d %d %d\", REC->a ? 1 : 2, REC->comm[1] + 1, "
	  "(REC->flags & ((((0x0000 | 0x0001 | 0x0002) + 1) << 1) - 1))\n",
	  1, "1 102 3" },
};

static int run_case(const struct fmt_case *c)
{
	struct tep_handle *tep;
	struct tep_event *event;
	enum tep_errno ret;
	char err[128];
	int fail = 0;

	tep = tep_alloc();
	if (!tep) {
		perror("tep_alloc");
		return 1;
	}
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);

	ret = tep_parse_event(tep, c->fmt, strlen(c->fmt), "sys");
	tep_strerror(tep, ret, err, sizeof(err));
	printf("[%s] tep_parse_event() = %d (%s)\n", c->name, ret, err);

	if (c->good && ret != 0)
		fail = 1;

	event = tep_find_event(tep, 42);
	if (event)
		printf("[%s]   event %s, print fmt %s\n", c->name,
		       event->name,
		       event->flags & TEP_EVENT_FL_FAILED ? "FAILED" : "ok");
	if (c->good && event && (event->flags & TEP_EVENT_FL_FAILED))
		fail = 1;

	/* print a record with every event that was added */
	if (event) {
		unsigned char data[32] = { 0 };
		struct tep_record rec = { 0 };
		struct trace_seq s;

		data[0] = 42;			/* common_type */
		data[4] = 7;			/* a = 7 */
		data[8] = 3;			/* flags = A|B */
		memcpy(data + 16, "hello", 6);	/* comm */
		rec.data = data;
		rec.size = sizeof(data);

		trace_seq_init(&s);
		tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&s);
		printf("[%s]   printed: \"%s\"\n", c->name, s.buffer);
		if (c->good && c->expect && strcmp(s.buffer, c->expect) != 0) {
			printf("[%s]   MISMATCH, expected \"%s\"\n", c->name, c->expect);
			fail = 1;
		}
		trace_seq_destroy(&s);
	} else if (c->good) {
		fail = 1;
	}

	tep_free(tep);
	if (fail)
		printf("[%s] FAIL\n", c->name);
	return fail;
}

int main(int argc, char **argv)
{
	const char *sel = argc > 1 ? argv[1] : "all";
	size_t len = strlen(sel);
	int fails = 0, ran = 0;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* match "all" or a case-name prefix up to '/' */
		if (strcmp(sel, "all") != 0 &&
		    !(strncmp(cases[i].name, sel, len) == 0 &&
		      (cases[i].name[len] == '\0' || cases[i].name[len] == '/')))
			continue;
		ran++;
		fails += run_case(&cases[i]);
		fflush(stdout);
	}
	if (!ran) {
		fprintf(stderr, "unknown case %s\n", sel);
		return 2;
	}
	return fails ? 1 : 0;
}
