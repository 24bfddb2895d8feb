/* Unit tests of what makes runs comparable and failures explained: the entry points'
 * tallies and the root cause they give (in process and across --isolate's child), the
 * TAP writer, the version and root cause in the JSON, and output paths checked early. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "runner.h"

static int open_err; /* what the fake's open answers: 0 for a new fd */
static int next_fd = 100;

static int f_setup(void **ctx) { *ctx = NULL; return 0; }
static void f_teardown(void *ctx) { (void)ctx; }
static int f_open(void *c, struct pecs_attr *a, pid_t p, int cpu, int g, unsigned long fl)
{
	(void)c; (void)a; (void)p; (void)cpu; (void)g; (void)fl;
	return open_err ? -open_err : next_fd++;
}
static int f_close(void *c, int fd) { (void)c; (void)fd; return 0; }
static ssize_t f_read(void *c, int fd, void *b, size_t n) { (void)c; (void)fd; (void)b; (void)n; return -EINVAL; }
static int f_ioctl(void *c, int fd, unsigned long r, unsigned long a) { (void)c; (void)fd; (void)r; (void)a; return -ENOTTY; }
static int f_mmap(void *c, int fd, size_t l, int p, int f, off_t o, void **addr)
{ (void)c; (void)fd; (void)l; (void)p; (void)f; (void)o; (void)addr; return -ENODEV; }
static int f_munmap(void *c, void *a, size_t l) { (void)c; (void)a; (void)l; return 0; }
static int f_poll(void *c, int fd, short e, int t) { (void)c; (void)fd; (void)e; (void)t; return 0; }

static const char *const fake_features[] = {"counting", NULL};
static struct pecs_impl fake = {
	.size = sizeof(struct pecs_impl), .name = "fake", .features = fake_features,
	.setup = f_setup, .teardown = f_teardown, .open = f_open, .close = f_close,
	.read = f_read, .ioctl = f_ioctl, .mmap = f_mmap, .munmap = f_munmap, .poll = f_poll,
};

/* Each tries three opens before its verdict: four cases, twelve opens. */
static void open_three(struct pecs_t *t)
{
	struct pecs_attr a;
	pecs_attr_counting(t, &a, 1);
	int failed = 0;
	for (int i = 0; i < 3; i++)
		failed += pecs_open(t, &a, 0, -1, -1, 0) < 0;
	if (failed)
		PECS_FAIL(t, "%d of 3 opens failed", failed);
}
static const int open_three_verdict_line = __LINE__ - 2;
PECS_CASE("Flow.Open.A", "counting", "F-1") { open_three(t); }
PECS_CASE("Flow.Open.B", "counting", "F-1") { open_three(t); }
PECS_CASE("Flow.Open.C", "counting", "F-1") { open_three(t); }
PECS_CASE("Flow.Open.D", "counting", "F-1") { open_three(t); }
PECS_CASE("Flow.Skip", "engine.inject", "F-2") { (void)t; }

static void run_all(struct pecs_session *s, struct pecs_result *res, int isolate)
{
	struct pecs_run_opts o = {.size = sizeof(o), .isolate = isolate, .timeout_s = 30};
	for (size_t i = 0; i < s->nselected; i++) {
		pecs_run_case(&fake, &s->facts, s->selected[i], &o, &res[i]);
		pecs_expect_apply(&s->expect, &res[i]);
	}
}

static void test_tally_rules(void **st)
{
	(void)st;
	struct pecs_call_tally one[PECS_ENTRY_COUNT], run[PECS_ENTRY_COUNT];
	memset(run, 0, sizeof(run));
	char line[640];
	for (int c = 0; c < 4; c++) {
		memset(one, 0, sizeof(one));
		for (int i = 0; i < 3; i++)
			pecs_tally_add(&one[PECS_ENTRY_IOCTL], -ENOTTY);
		pecs_tally_sum(run, one);
	}
	assert_int_equal(pecs_root_cause(run, line, sizeof(line)), 1);
	assert_string_equal(line, "ioctl answered every call (12 in 4 cases) with -ENOTTY");
	/* One other errno: the entry point does answer, just not as Linux does. */
	memset(one, 0, sizeof(one));
	pecs_tally_add(&one[PECS_ENTRY_IOCTL], -EINVAL);
	pecs_tally_sum(run, one);
	assert_int_equal(pecs_root_cause(run, line, sizeof(line)), 0);
	assert_string_equal(line, "");
	/* One success ends it too; so does too little evidence. */
	memset(run, 0, sizeof(run));
	memset(one, 0, sizeof(one));
	for (int i = 0; i < 20; i++)
		pecs_tally_add(&one[PECS_ENTRY_OPEN], i ? -EACCES : 3);
	one[PECS_ENTRY_READ].calls = 0;
	pecs_tally_sum(run, one);
	assert_int_equal(pecs_root_cause(run, line, sizeof(line)), 0);
}

static void root_cause_of_a_run(int isolate)
{
	struct pecs_session s;
	assert_int_equal(pecs_session_init(&s, &fake, NULL, "Flow.*"), 0);
	struct pecs_result res[8];
	assert_true(s.nselected <= 8);
	open_err = ENOSYS;
	run_all(&s, res, isolate);
	assert_int_equal(res[0].raw, PECS_FAIL);
	assert_int_equal(res[0].calls[PECS_ENTRY_OPEN].calls, 3);
	assert_int_equal(pecs_session_root_cause(&s, res, s.nselected), 1);
	assert_string_equal(s.root_cause, "open answered every call (12 in 4 cases) with -ENOSYS");
	open_err = 0;
	run_all(&s, res, isolate);
	assert_int_equal(res[0].raw, PECS_PASS);
	assert_int_equal(pecs_session_root_cause(&s, res, s.nselected), 0);
	pecs_session_free(&s);
}

static void test_root_cause_in_process(void **st) { (void)st; root_cause_of_a_run(0); }
static void test_root_cause_through_isolation(void **st) { (void)st; root_cause_of_a_run(1); }

static char *slurp(const char *path)
{
	static char text[16384];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return text;
}

/* TAP and JSON of a run whose opens all fail, with Flow.Open.A listed as known. */
static void test_outputs_carry_version_and_root_cause(void **st)
{
	(void)st;
	char exp[] = "/tmp/pecs-flow-exp-XXXXXX", tap[] = "/tmp/pecs-flow-tap-XXXXXX";
	char json[] = "/tmp/pecs-flow-json-XXXXXX";
	int fds[] = {mkstemp(exp), mkstemp(tap), mkstemp(json)};
	for (int i = 0; i < 3; i++) {
		assert_true(fds[i] >= 0);
		close(fds[i]);
	}
	FILE *f = fopen(exp, "w");
	fputs("Flow.Open.A # no perf_event_open here\n", f);
	fclose(f);
	struct pecs_session s;
	assert_int_equal(pecs_session_init(&s, &fake, exp, "Flow.*"), 0);
	s.version = "0123abcd";
	struct pecs_result res[8];
	open_err = ENOSYS;
	run_all(&s, res, 0);
	open_err = 0;
	struct pecs_outputs out = {.json = json, .tap = tap};
	assert_int_equal(pecs_session_finish(&s, res, s.nselected, &out), 1);
	const char *t = slurp(tap);
	assert_non_null(strstr(t, "TAP version 13\n1..5\n# pecs suite 0123abcd against fake\n"));
	assert_non_null(strstr(t, "\n# root cause: open answered every call (12 in 4 cases) "
				  "with -ENOSYS\n"));
	assert_non_null(strstr(t, "\nok 1 Flow.Open.A # XFAIL XFAIL: no perf_event_open here\n"));
	assert_non_null(strstr(t, "\nnot ok 2 Flow.Open.B\n# FAIL: "));
	assert_non_null(strstr(t, "\nok 5 Flow.Skip # SKIP UNSUPPORTED: fake does not claim"));
	const char *j = slurp(json);
	assert_non_null(strstr(j, "\"suite_version\": \"0123abcd\""));
	assert_non_null(strstr(j, "\"root_cause\": \"open answered every call"));
	assert_non_null(strstr(j, "\"open\": {\"calls\": 12, \"ok\": 0, \"cases\": 4, "
				  "\"errno\": \"ENOSYS\", \"mixed\": false}"));
	/* Where each failure was found, from the top of the tree, for the report's links. */
	char where[128];
	snprintf(where, sizeof(where), "\"file\": \"conformance/tests/flow_test.c\", "
		 "\"line\": %d", open_three_verdict_line);
	assert_non_null(strstr(j, where));
	assert_null(strstr(j, "\"incomplete\""));
	pecs_session_free(&s);
	unlink(exp);
	unlink(tap);
	unlink(json);
}

static char *write_tmp(const char *text);

/* What a run that dies after its second case leaves: TAP with the version line, the plan
 * and two cases in order, and a complete JSON file of those two that says it is short. */
static void test_a_run_cut_short_leaves_what_it_did(void **st)
{
	(void)st;
	char tap[] = "/tmp/pecs-flow-tap-XXXXXX", json[] = "/tmp/pecs-flow-json-XXXXXX";
	int fds[] = {mkstemp(tap), mkstemp(json)};
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	close(fds[0]);
	close(fds[1]);
	struct pecs_session s;
	char *p = write_tmp("@floor 5 # all\n");
	assert_int_equal(pecs_session_init(&s, &fake, p, NULL), 0);
	s.version = "0123abcd";
	struct pecs_outputs out = {.json = json, .tap = tap};
	assert_int_equal(pecs_session_stream(&s, &out), 0);
	/* The head is out before any case has run. */
	assert_string_equal(slurp(tap), "TAP version 13\n1..6\n# pecs suite 0123abcd against fake\n");
	struct pecs_result res[8];
	struct pecs_run_opts o = {.size = sizeof(o)};
	open_err = ENOSYS;
	for (size_t i = 0; i < 2; i++) {
		pecs_run_case(&fake, &s.facts, s.selected[i], &o, &res[i]);
		pecs_expect_apply(&s.expect, &res[i]);
		pecs_session_case_done(&s, res, i + 1);
	}
	open_err = 0;
	const char *t = slurp(tap);
	assert_non_null(strstr(t, "\nnot ok 1 Flow.Open.A\n# FAIL: flow_test.c:"));
	assert_non_null(strstr(t, "\nnot ok 2 Flow.Open.B\n"));
	assert_null(strstr(t, "ok 3"));
	const char *j = slurp(json);
	assert_non_null(strstr(j, "\"incomplete\": {\"done\": 2, \"selected\": 5}"));
	assert_non_null(strstr(j, "\"id\": \"Flow.Open.B\""));
	assert_null(strstr(j, "Flow.Open.C"));
	assert_non_null(strstr(j, "\"failed\": 2,"));
	assert_non_null(strstr(j, "\n}\n")); /* whole: the closing brace is there */
	/* Part of the run cannot judge the floor. */
	assert_null(strstr(j, "below the floor"));
	/* Had it gone on: the closing test the plan counted, after the cases. */
	for (size_t i = 2; i < s.nselected; i++) {
		pecs_run_case(&fake, &s.facts, s.selected[i], &o, &res[i]);
		pecs_expect_apply(&s.expect, &res[i]);
		pecs_session_case_done(&s, res, i + 1);
	}
	assert_int_equal(pecs_session_finish(&s, res, s.nselected, &out), 1);
	t = slurp(tap);
	assert_non_null(strstr(t, "\nok 5 Flow.Skip # SKIP UNSUPPORTED"));
	assert_non_null(strstr(t, "\nnot ok 6 Gate.RunAsAWhole\n# 2 passed, below the floor"));
	assert_null(strstr(slurp(json), "\"incomplete\""));
	pecs_session_free(&s);
	unlink(p);
	unlink(tap);
	unlink(json);
}

/* The startup probe names a missing call in one line, and only that. */
static void test_the_probe_names_a_missing_call(void **st)
{
	(void)st;
	struct pecs_host_facts facts;
	pecs_host_defaults(&facts);
	char line[300] = "";
	open_err = ENOSYS;
	assert_int_equal(pecs_probe_missing(&fake, &facts, line, sizeof(line)), 1);
	assert_string_equal(line, "perf_event_open is missing: fake answered the startup probe "
				  "(a user-only task clock) with ENOSYS, so every case that opens "
				  "an event fails with it");
	open_err = EACCES;
	assert_int_equal(pecs_probe_missing(&fake, &facts, line, sizeof(line)), 0);
	open_err = 0;
	assert_int_equal(pecs_probe_missing(&fake, &facts, line, sizeof(line)), 0);
}

static void test_output_paths_are_checked_without_leaving_files(void **st)
{
	(void)st;
	assert_int_equal(pecs_output_check("/nonexistent-dir/x.json"), -ENOENT);
	assert_int_equal(pecs_output_check(NULL), 0);
	assert_int_equal(pecs_output_check("-"), 0);
	char dir[] = "/tmp/pecs-flow-dir-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/new.json", dir);
	assert_int_equal(pecs_output_check(path), 0);
	struct stat sb;
	assert_int_not_equal(stat(path, &sb), 0); /* checked, not left behind */
	FILE *f = fopen(path, "w");
	fputs("kept", f);
	fclose(f);
	assert_int_equal(pecs_output_check(path), 0);
	assert_string_equal(slurp(path), "kept");
	unlink(path);
	rmdir(dir);
}

static char *write_tmp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/pecs-flow-exp-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* The gate of a passing run of Flow.Open.* with the file text; returns the exit status and
 * leaves the first problem in first. */
static int gate_with(const char *text, int refuse, char *first, size_t len)
{
	char *p = write_tmp(text);
	struct pecs_session s;
	assert_int_equal(pecs_session_init(&s, &fake, p, NULL), 0);
	if (refuse) {
		/* What the syscall adapter's probe says under a seccomp filter, while the facts
		 * (privileged) allow the call: the run's refusal is the implementation's. */
		snprintf(s.facts.unavailable, sizeof(s.facts.unavailable), "perf_event_open refused");
		s.facts.privileged = 1;
		snprintf(s.refusal, sizeof(s.refusal), "%s", s.facts.unavailable);
	}
	struct pecs_result res[8];
	run_all(&s, res, 0);
	int rc = pecs_session_finish(&s, res, s.nselected, NULL);
	snprintf(first, len, "%s", s.nproblems ? s.problems[0] : "");
	pecs_session_free(&s);
	unlink(p);
	return rc;
}

static void test_directives_gate_the_run_as_a_whole(void **st)
{
	(void)st;
	char why[512];
	/* Four passes (Flow.Open.*), Flow.Skip unsupported. */
	assert_int_equal(gate_with("@floor 4 # all four pass\n@features counting # mine\n", 0,
				   why, sizeof(why)), 0);
	assert_int_equal(gate_with("@floor 5 # one more\n", 0, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "4 passed, below the floor of 5 in "));
	assert_int_equal(gate_with("@features counting, mmap # it claimed mmap\n", 0, why,
				   sizeof(why)), 1);
	assert_non_null(strstr(why, "fake claims the features 'counting' but "));
	assert_non_null(strstr(why, "records 'counting,mmap': if the change is meant, write "
				    "'@features counting # why' there"));
	assert_int_equal(gate_with("", 1, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "perf_event_open refused; the host facts allow the call"));
	assert_int_equal(gate_with("@accept-refusal # our sandbox blocks it on purpose\n", 1,
				   why, sizeof(why)), 0);
}

static void test_directive_lines_are_checked(void **st)
{
	(void)st;
	struct pecs_host_facts facts;
	pecs_host_defaults(&facts);
	struct pecs_expectations e;
	char err[512];
	char *p = write_tmp("@floor 3 # a\n@floor 4 # b\n@features # none\n@bogus # c\n"
			    "@floor # d\n@accept-refusal\n");
	assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), -EINVAL);
	assert_int_equal(e.nerrors, 4);
	assert_non_null(strstr(e.errors[0], ":2: duplicate of "));
	assert_non_null(strstr(e.errors[1], ":4: unknown line '@bogus'"));
	assert_non_null(strstr(e.errors[2], ":5: '@floor N'"));
	assert_non_null(strstr(e.errors[3], ":6: every line needs a reason"));
	assert_int_equal(e.floor, 3);
	assert_string_equal(e.features, "");
	pecs_expect_free(&e);
	unlink(p);
}

/* One '@root-cause' line explains every failure whose own tally has its entry point
 * answering its errno; a line that explains nothing fails the gate, as a stale one. */
static void test_a_root_cause_line_explains_its_cases(void **st)
{
	(void)st;
	char why[512];
	open_err = ENOSYS;
	assert_int_equal(gate_with("@root-cause open -ENOSYS # no perf_event_open here\n", 0, why,
				   sizeof(why)), 0);
	assert_int_equal(gate_with("@root-cause mmap ENOSYS # the wrong entry point\n", 0, why,
				   sizeof(why)), 1);
	assert_non_null(strstr(why, "'@root-cause mmap ENOSYS' explains no failing case"));
	open_err = EINVAL;
	assert_int_equal(gate_with("@root-cause open ENOSYS # another errno\n", 0, why,
				   sizeof(why)), 1);
	open_err = 0;
	struct pecs_host_facts facts;
	pecs_host_defaults(&facts);
	struct pecs_expectations e;
	char err[512];
	char *p = write_tmp("@root-cause open ENOSYS # a\n@root-cause open EINVAL # b\n"
			    "@root-cause fork ENOSYS # c\n@root-cause open ENOWHAT # d\n");
	assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), -EINVAL);
	assert_int_equal(e.nerrors, 3);
	assert_non_null(strstr(e.errors[0], ":2: duplicate of "));
	assert_non_null(strstr(e.errors[1], ":3: '@root-cause ENTRY ERRNO'"));
	assert_non_null(strstr(e.errors[2], ":4: '@root-cause ENTRY ERRNO'"));
	assert_int_equal(e.ncauses, 1);
	pecs_expect_free(&e);
	unlink(p);
}

/* A '[' in the pattern is a glob's class; the conditions are the [..] after a space. */
static void test_glob_classes_are_not_conditions(void **st)
{
	(void)st;
	struct pecs_host_facts facts;
	pecs_host_defaults(&facts);
	facts.privileged = 1;
	struct pecs_expectations e;
	char err[512];
	char *p = write_tmp("Flow.Open.[AB] # class\nFlow.Open.[CD] [unprivileged] # both\n");
	assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), 0);
	assert_int_equal(e.count, 2);
	assert_non_null(pecs_expect_match(&e, "Flow.Open.B"));
	assert_null(pecs_expect_match(&e, "Flow.Open.C")); /* its line is inactive here */
	assert_string_equal(e.lines[1].pattern, "Flow.Open.[CD]");
	assert_string_equal(e.lines[1].conds, "unprivileged");
	assert_int_equal(e.lines[1].known, 1);
	pecs_expect_free(&e);
	unlink(p);
}

/* An implementation without host_facts has no kernel version of its own: the host's uname
 * is not its answer, so it is "unknown" and no kernel condition holds; --kernel states it. */
static void test_the_kernel_version_is_never_silently_the_hosts(void **st)
{
	(void)st;
	char *p = write_tmp("Flow.Open.A [kernel>=1.0] # needs a new kernel\n"
			    "Flow.Open.B [kernel<999.0] # needs an old one\n");
	unsetenv("PECS_KERNEL_RELEASE");
	struct pecs_session s;
	assert_int_equal(pecs_session_init(&s, &fake, p, NULL), 0);
	assert_string_equal(s.facts.kernel_release, "unknown");
	assert_non_null(strstr(s.sources.of[PECS_FACT_KERNEL_RELEASE], "unknown: fake has no "
							"host_facts"));
	assert_int_equal(s.expect.lines[0].active, 0);
	assert_int_equal(s.expect.lines[1].active, 0);
	pecs_session_free(&s);
	setenv("PECS_KERNEL_RELEASE", "6.1.0", 1);
	assert_int_equal(pecs_session_init(&s, &fake, p, NULL), 0);
	unsetenv("PECS_KERNEL_RELEASE");
	assert_string_equal(s.facts.kernel_release, "6.1.0");
	assert_non_null(strstr(s.sources.of[PECS_FACT_KERNEL_RELEASE], "--kernel"));
	assert_int_equal(s.expect.lines[0].active, 1);
	assert_int_equal(s.expect.lines[1].active, 1);
	/* Every fact names where it came from. */
	for (int i = 0; i < PECS_FACT_COUNT; i++)
		assert_true(s.sources.of[i][0] != 0);
	pecs_session_free(&s);
	unlink(p);
}

/* Debian's uname -r names the ABI, its -v the stable release: the point release is taken
 * from -v only when it is Debian's and of the same X.Y. Real strings. */
static void test_point_release_from_uname_version(void **st)
{
	(void)st;
	static const struct {
		const char *release, *version, *want; /* want NULL: no point release */
	} rows[] = {
		{"6.1.0-50-cloud-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2026-07-02)",
		 "6.1.176"},
		{"6.1.0-57-rt-amd64", "#1 SMP PREEMPT_RT Debian 6.1.192-3 (2026-11-26)", "6.1.192"},
		{"6.12.118+deb13-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.12.118-1 (2026-11-20)",
		 "6.12.118"},
		{"6.18.44-fc-v1252", "#1 SMP PREEMPT_DYNAMIC @0", NULL},
		{"6.9.0", "#1 SMP PREEMPT_DYNAMIC Mon May 13 10:00:00 UTC 2024", NULL},
		{"6.8.0-45-generic", "#45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024",
		 NULL},
		{"6.1.0-50-cloud-amd64", "#1 SMP Debian 6.12.118-1 (2026-11-20)", NULL},
		{"6.1.0-50-cloud-amd64", "#1 SMP Debian 6.10.2-1 (2024-08-01)", NULL},
		{"6.10.0-1-amd64", "#1 SMP Debian 6.1.176-1 (2026-07-02)", NULL},
		{"6.1.0-50-cloud-amd64", "#1 SMP Debian 6.1 (2025-10-12)", NULL},
		{"6.1.0-50-cloud-amd64", "#1 SMP Debian", NULL},
		{"", "", NULL},
		{"garbage", "Debian Debian 1.2.3", NULL},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char out[64] = "untouched";
		int got = pecs_release_point(rows[i].release, rows[i].version, out, sizeof(out));
		assert_int_equal(got, rows[i].want != NULL);
		assert_string_equal(out, rows[i].want ? rows[i].want : "untouched");
	}
}

/* Conditions name point releases; X.Y alone compares as before. */
static void test_kernel_conditions_take_point_releases(void **st)
{
	(void)st;
	char *p = write_tmp("Flow.Open.A [kernel<6.1.192] # fixed in 6.1.192\n"
			    "Flow.Open.B [kernel>=6.1] # 6.1 and later\n"
			    "Flow.Open.C [kernel<6.12] # before 6.12\n");
	static const struct {
		const char *release;
		int a, b, c;
	} rows[] = {
		{"6.1.176", 1, 1, 1}, {"6.1.192", 0, 1, 1}, {"6.1.0-50-cloud-amd64", 1, 1, 1},
		{"6.12.118", 0, 1, 0}, {"6.18.44-fc-v1252", 0, 1, 0}, {"5.15.0", 1, 0, 1},
		{"unknown", 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pecs_host_facts f = {.size = sizeof(f)};
		struct pecs_expectations e;
		char err[256];
		snprintf(f.kernel_release, sizeof(f.kernel_release), "%s", rows[i].release);
		assert_int_equal(pecs_expect_load(&e, p, &f, err, sizeof(err)), 0);
		assert_int_equal(e.lines[0].active, rows[i].a);
		assert_int_equal(e.lines[1].active, rows[i].b);
		assert_int_equal(e.lines[2].active, rows[i].c);
		pecs_expect_free(&e);
	}
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tally_rules),
		cmocka_unit_test(test_root_cause_in_process),
		cmocka_unit_test(test_root_cause_through_isolation),
		cmocka_unit_test(test_outputs_carry_version_and_root_cause),
		cmocka_unit_test(test_output_paths_are_checked_without_leaving_files),
		cmocka_unit_test(test_a_run_cut_short_leaves_what_it_did),
		cmocka_unit_test(test_the_probe_names_a_missing_call),
		cmocka_unit_test(test_directives_gate_the_run_as_a_whole),
		cmocka_unit_test(test_directive_lines_are_checked),
		cmocka_unit_test(test_a_root_cause_line_explains_its_cases),
		cmocka_unit_test(test_glob_classes_are_not_conditions),
		cmocka_unit_test(test_the_kernel_version_is_never_silently_the_hosts),
		cmocka_unit_test(test_point_release_from_uname_version),
		cmocka_unit_test(test_kernel_conditions_take_point_releases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
