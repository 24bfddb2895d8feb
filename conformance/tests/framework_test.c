/* Unit tests of the runner core: feature rules, expectations gating, selection, sharding,
 * vtable checks and crash isolation, against a fake implementation and fake cases. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "pecs/toolkit/coverage.h"
#include "runner.h"

static int fake_open_calls, fake_close_calls;

static int f_setup(void **ctx) { *ctx = NULL; return 0; }
static int f_setup_fails(void **ctx) { *ctx = NULL; return -ENOMEM; }
static void f_teardown(void *ctx) { (void)ctx; }
static int f_open(void *c, struct pecs_attr *a, pid_t p, int cpu, int g, unsigned long fl)
{
	(void)c; (void)a; (void)p; (void)cpu; (void)g; (void)fl;
	return 100 + fake_open_calls++;
}
static int f_close(void *c, int fd) { (void)c; (void)fd; fake_close_calls++; return 0; }
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

PECS_CASE("Test.Pass", "counting", "T-1")
{
	struct pecs_attr a;
	pecs_attr_counting(t, &a, 1);
	PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_OPEN(t, &a, 0, -1, -1, 0);
}
PECS_CASE("Test.Fail", "", "T-2") { PECS_CHECK_ERR(t, pecs_read(t, 1, NULL, 0), ENOSPC); }
PECS_CASE("Test.NeedsInject", "engine.inject", "T-3") { (void)t; }
PECS_CASE("Test.SaysUnsupported", "counting", "T-4") { PECS_UNSUPPORTED(t, "no"); }
PECS_CASE("Test.Crash", "", "T-5") { (void)t; if (getenv("PECS_TEST_CRASH")) abort(); }
PECS_CASE("Test.Sub.A", "", "T-6") { (void)t; }
/* Its body passes at once; its deferred cleanup outlasts any per-case timeout. */
static void sleep_long(void *arg) { (void)arg; sleep(300); }
PECS_CASE("Test.SlowTeardown", "", "T-5")
{
	if (getenv("PECS_TEST_SLOW_TEARDOWN"))
		pecs_defer(t, sleep_long, NULL);
}
PECS_CASE("Test.SkipsWithoutReason", "", "T-7") { PECS_ENV_SKIP(t, "%s", ""); }

/* The second API: leaving from any depth, optional messages, cleanups, tables. */
static int deferred_ran, after_fail_ran;
static void deep_check(struct pecs_t *t, int depth)
{
	if (depth > 0)
		deep_check(t, depth - 1);
	else
		PECS_CHECK_ERR(t, pecs_read(t, 1, NULL, 0), EAGAIN, "read at depth %d", depth);
	after_fail_ran = 1;
}
static void note_deferred(void *arg) { *(int *)arg += 1; }
PECS_CASE("Test.Api.FailsDeep", "", "T-8")
{
	pecs_defer(t, note_deferred, &deferred_ran);
	deep_check(t, 3);
	after_fail_ran = 1;
}
PECS_CASE("Test.Api.CheckNoMessage", "", "T-8") { PECS_CHECK(t, pecs_host(t)->privileged); }
PECS_CASE("Test.Api.FailEnds", "", "T-8")
{
	PECS_FAIL(t, "first %d", 1);
	after_fail_ran = 1;
}

struct api_row {
	struct pecs_row head;
	long value, want;
};
static const struct api_row api_rows[] = {
	{{"Test.Api.Table.Equal", "", "T-8"}, 3, 3},
	{{"Test.Api.Table.Differ", "counting", "T-8"}, 3, 4},
};
static void api_row_case(struct pecs_t *t, const struct api_row *r)
{
	PECS_CHECK_EQ(t, r->value, r->want, "row %s", r->head.id);
}
PECS_CASE_TABLE(api_rows, api_row_case);

/* A table that misses a combination, and a mask that misses a bit, are BROKEN. */
struct cov_row {
	uint64_t rf;
};
static const struct cov_row cov_rows[] = {{0}, {1}, {2}, {4}, {5}, {6}};
PECS_CASE("Test.Api.CoverageMissingRow", "", "T-8")
{
	/* every mask below 8 once: 3 is the first without a row */
	pecs_cover_combinations(t, "cov_rows", cov_rows, 6, sizeof(cov_rows[0]), 0, 8, 0);
}
PECS_CASE("Test.Api.CoverageFixedBits", "", "T-8")
{
	static const struct cov_row even[] = {{0}, {1}, {4}, {5}};
	pecs_cover_combinations(t, "even", even, 4, sizeof(even[0]), 0, 8, 2);
	pecs_cover_bits(t, "mask", 0x5, 8);
}

/* A check on a value the case kept names the call that answered it. */
static int kept_mmap(struct pecs_t *t)
{
	void *addr;
	return pecs_mmap(t, 3, 4096, 0, 0, 0, &addr);
}
PECS_CASE("Test.Api.NamesKeptCall", "", "T-8")
{
	long r = pecs_ioctl(t, 3, PECS_IOC_ID | 0xff00000000ul, 0);
	PECS_CHECK_OK(t, r);
}
PECS_CASE("Test.Api.NamesHelperCall", "", "T-8") { PECS_CHECK_ERR(t, kept_mmap(t), EINVAL); }
PECS_CASE("Test.Api.NamesErrnoValue", "", "T-8")
{
	long r = pecs_ioctl(t, 3, PECS_IOC_ENABLE, 0);
	PECS_CHECK_EQ(t, r, 0);
}
PECS_CASE("Test.Api.OtherValueUnnamed", "", "T-8")
{
	long v = -EINVAL;
	pecs_ioctl(t, 3, PECS_IOC_ENABLE, 0);
	PECS_CHECK_OK(t, v);
}

static const struct pecs_host_facts facts = {.size = sizeof(facts), .privileged = 0,
					     .kernel_release = "6.12.0"};

static struct pecs_result run(const char *id)
{
	struct pecs_result r;
	pecs_run_case(&fake, &facts, pecs_registry_find(id), NULL, &r);
	return r;
}

static void test_statuses(void **s)
{
	(void)s;
	fake_close_calls = 0;
	assert_int_equal(run("Test.Pass").raw, PECS_PASS);
	assert_int_equal(fake_close_calls, 2); /* the framework released both fds */
	struct pecs_result r = run("Test.Fail");
	assert_int_equal(r.raw, PECS_FAIL);
	assert_non_null(strstr(r.message, "-EINVAL"));
	assert_non_null(strstr(r.message, "ENOSPC"));
	assert_int_equal(run("Test.NeedsInject").raw, PECS_UNSUPPORTED);
	/* Skipping a claimed feature is a failure. */
	assert_int_equal(run("Test.SaysUnsupported").raw, PECS_FAIL);
	fake.setup = f_setup_fails;
	assert_int_equal(run("Test.Pass").raw, PECS_BROKEN);
	fake.setup = f_setup;
}

static void test_case_api_v2(void **s)
{
	(void)s;
	deferred_ran = after_fail_ran = 0;
	struct pecs_result r = run("Test.Api.FailsDeep");
	assert_int_equal(r.raw, PECS_FAIL);
	assert_int_equal(after_fail_ran, 0); /* no caller went on after the failed check */
	assert_int_equal(deferred_ran, 1);
	assert_non_null(strstr(r.message, "read at depth 0: "));
	assert_non_null(strstr(r.message, "returned -EINVAL, expected -EAGAIN"));
	r = run("Test.Api.CheckNoMessage");
	assert_int_equal(r.raw, PECS_FAIL);
	assert_non_null(strstr(r.message, "(pecs_host(t)->privileged) is false"));
	r = run("Test.Api.FailEnds");
	assert_int_equal(r.raw, PECS_FAIL);
	assert_non_null(strstr(r.message, "first 1"));
	assert_int_equal(after_fail_ran, 0);
	const struct pecs_case *row = pecs_registry_find("Test.Api.Table.Differ");
	assert_non_null(row);
	assert_string_equal(row->features, "counting");
	assert_int_equal(run("Test.Api.Table.Equal").raw, PECS_PASS);
	r = run("Test.Api.Table.Differ");
	assert_int_equal(r.raw, PECS_FAIL);
	assert_non_null(strstr(r.message, "row Test.Api.Table.Differ: r->value = 3"));
	r = run("Test.Api.CoverageMissingRow");
	assert_int_equal(r.raw, PECS_BROKEN);
	assert_non_null(strstr(r.message, "0 rows for 0x3"));
	r = run("Test.Api.CoverageFixedBits");
	assert_int_equal(r.raw, PECS_BROKEN);
	assert_non_null(strstr(r.message, "does not cover bit 0x2"));
}

static void test_call_names(void **s)
{
	(void)s;
	struct pecs_result r = run("Test.Api.NamesKeptCall");
	assert_non_null(strstr(r.message, "ioctl PERF_EVENT_IOC_ID (r) failed: -ENOTTY"));
	r = run("Test.Api.NamesHelperCall");
	assert_non_null(strstr(r.message,
			       "kept_mmap(t) via mmap returned -ENODEV, expected -EINVAL"));
	r = run("Test.Api.NamesErrnoValue");
	assert_non_null(strstr(r.message, "r = -ENOTTY (-25), expected 0 = 0"));
	/* -EINVAL is not what the last call answered: the variable alone, as written. */
	r = run("Test.Api.OtherValueUnnamed");
	assert_non_null(strstr(r.message, ": v failed: -EINVAL"));
}

static char *write_file(const char *text)
{
	static char path[] = "/tmp/pecs-expect-XXXXXX";
	strcpy(path, "/tmp/pecs-expect-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_expectations_gate(void **s)
{
	(void)s;
	char err[256] = "";
	struct pecs_expectations e;
	char *p = write_file("# header\nTest.Fail # known bug\nTest.Pass # stale claim\n"
			     "Test.Nothing.* # gone\nTest.Sub.A [privileged] # only as root\n");
	assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), 0);
	struct pecs_result r = run("Test.Fail");
	pecs_expect_apply(&e, &r);
	assert_int_equal(r.status, PECS_XFAIL);
	assert_int_equal(r.expect_line, 2);
	r = run("Test.Pass");
	pecs_expect_apply(&e, &r);
	assert_int_equal(r.status, PECS_XPASS);
	assert_non_null(strstr(r.message, "delete that line"));
	/* The condition does not hold (unprivileged), so the passing case stays PASS. */
	r = run("Test.Sub.A");
	pecs_expect_apply(&e, &r);
	assert_int_equal(r.status, PECS_PASS);
	assert_int_equal(pecs_expect_stale(&e, NULL), 1);
	struct pecs_counts c = {0};
	c.n[PECS_PASS] = 3;
	c.n[PECS_XFAIL] = 1;
	assert_true(pecs_counts_ok(&c));
	c.stale = 1;
	assert_false(pecs_counts_ok(&c));
	pecs_expect_free(&e);
	unlink(p);
}

static void test_expectations_errors(void **s)
{
	(void)s;
	static const char *const bad[] = {
		"Test.Fail\n",                        /* no reason */
		"Test.Fail #   \n",                   /* empty reason */
		"Test.Fail [rooted] # x\n",            /* unknown condition */
		"Test.Fail Test.Pass # x\n",           /* two patterns */
		"Test.Fail [privileged # x\n",         /* unclosed */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		struct pecs_expectations e;
		char *p = write_file(bad[i]);
		assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, ":1:"));
		pecs_expect_free(&e);
		unlink(p);
	}
}

static void test_expectations_duplicates(void **s)
{
	(void)s;
	char err[512] = "";
	struct pecs_expectations e;
	char *p = write_file("Test.Fail # known bug\n"
			     "Test.Sub.A [privileged] # root only\n"
			     "Test.Sub.A [unprivileged] # and without root: not a duplicate\n"
			     "\n"
			     "Test.Fail # said twice\n"
			     "Test.Sub.A [unprivileged ,privileged] # mixed\n"
			     "Test.Sub.A [privileged, unprivileged] # the same conditions again\n");
	char want[512];
	assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:5: duplicate of %s:1 ('Test.Fail'): delete one of the "
		 "two lines", p, p);
	assert_string_equal(err, want);
	assert_int_equal(e.nerrors, 2);
	assert_string_equal(e.errors[0], want);
	snprintf(want, sizeof(want), "%s:7: duplicate of %s:6 ('Test.Sub.A' [privileged, "
		 "unprivileged]): delete one of the two lines", p, p);
	assert_string_equal(e.errors[1], want);
	/* The first of the two lines is the one kept and applied. */
	assert_int_equal(e.count, 4);
	struct pecs_result r = run("Test.Fail");
	pecs_expect_apply(&e, &r);
	assert_int_equal(r.status, PECS_XFAIL);
	assert_int_equal(r.expect_line, 1);
	pecs_expect_free(&e);
	unlink(p);
}

/* A bad line is reported and left out; every other line still loads and gates. */
static void test_expectations_bad_line_keeps_the_rest(void **s)
{
	(void)s;
	char err[512] = "";
	struct pecs_expectations e;
	char *p = write_file("Test.Pass [rooted] # unknown condition\n"
			     "Test.Fail # known bug\n"
			     "Test.Crash\n");
	assert_int_equal(pecs_expect_load(&e, p, &facts, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1: unknown condition 'rooted'"));
	assert_int_equal(e.nerrors, 2);
	assert_non_null(strstr(e.errors[1], ":3: every line needs a reason"));
	assert_int_equal(e.count, 1);
	struct pecs_result r = run("Test.Fail");
	pecs_expect_apply(&e, &r);
	assert_int_equal(r.status, PECS_XFAIL);
	/* Test.Pass's line was the bad one, so it is not XPASS: it was never applied. */
	r = run("Test.Pass");
	pecs_expect_apply(&e, &r);
	assert_int_equal(r.status, PECS_PASS);
	pecs_expect_free(&e);
	unlink(p);

	/* The session runs anyway, writes its results, and its gate fails. */
	p = write_file("Test.Fail # known bug\nTest.Fail # again\n");
	struct pecs_session ss;
	assert_int_equal(pecs_session_init(&ss, &fake, p, "Test.Fail,Test.Sub.A"), 0);
	assert_int_equal(ss.nselected, 2);
	struct pecs_result res[2];
	for (size_t i = 0; i < 2; i++) {
		pecs_run_case(&fake, &ss.facts, ss.selected[i], NULL, &res[i]);
		pecs_expect_apply(&ss.expect, &res[i]);
	}
	char json[] = "/tmp/pecs-json-XXXXXX";
	int fd = mkstemp(json);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pecs_session_finish(&ss, res, 2, &(struct pecs_outputs){.json = json}), 1);
	FILE *f = fopen(json, "r");
	assert_non_null(f);
	char text[8192];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	assert_non_null(strstr(text, "\"id\": \"Test.Fail\", \"status\": \"XFAIL\""));
	assert_non_null(strstr(text, "\"expectation_errors\": [\""));
	assert_non_null(strstr(text, ":2: duplicate of "));
	assert_non_null(strstr(text, "\"ok\": false"));
	pecs_session_free(&ss);
	unlink(json);
	unlink(p);

	struct pecs_counts c = {0};
	c.n[PECS_PASS] = 1;
	assert_true(pecs_counts_ok(&c));
	c.bad_lines = 1;
	assert_false(pecs_counts_ok(&c));
}

static void test_filter(void **s)
{
	(void)s;
	assert_true(pecs_filter_match(NULL, "Test.Pass"));
	assert_true(pecs_filter_match("Test.*", "Test.Pass"));
	assert_false(pecs_filter_match("Other.*", "Test.Pass"));
	assert_true(pecs_filter_match("Test.Sub", "Test.Sub.A")); /* a prefix selects its subtree */
	assert_false(pecs_filter_match("Test.Su", "Test.Sub.A"));
	assert_false(pecs_filter_match("Test.*,-Test.Sub.*", "Test.Sub.A"));
	assert_true(pecs_filter_match("-Test.Sub.*", "Test.Pass"));
}

static void test_shards_partition(void **s)
{
	(void)s;
	size_t total;
	pecs_registry(&total);
	size_t seen = 0;
	char ids[64][64];
	for (int k = 0; k < 4; k++) {
		char idx[8];
		snprintf(idx, sizeof(idx), "%d", k);
		setenv("TEST_TOTAL_SHARDS", "4", 1);
		setenv("TEST_SHARD_INDEX", idx, 1);
		struct pecs_session ss;
		assert_int_equal(pecs_session_init(&ss, &fake, NULL, NULL), 0);
		for (size_t i = 0; i < ss.nselected; i++) {
			for (size_t j = 0; j < seen; j++)
				assert_string_not_equal(ids[j], ss.selected[i]->id);
			snprintf(ids[seen++], sizeof(ids[0]), "%s", ss.selected[i]->id);
		}
		pecs_session_free(&ss);
	}
	unsetenv("TEST_TOTAL_SHARDS");
	unsetenv("TEST_SHARD_INDEX");
	assert_int_equal(seen, total);
}

static void test_impl_check(void **s)
{
	(void)s;
	char msg[256];
	assert_int_equal(pecs_impl_check(&fake, msg, sizeof(msg)), 0);
	struct {
		struct pecs_impl impl;
		uint64_t future[2];
	} bigger = {fake, {0, 0}};
	bigger.impl.size = sizeof(bigger);
	assert_int_equal(pecs_impl_check(&bigger.impl, msg, sizeof(msg)), 0);
	bigger.future[1] = 1;
	assert_int_equal(pecs_impl_check(&bigger.impl, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "not zero"));
	struct pecs_impl small = fake;
	small.size = 16;
	assert_int_equal(pecs_impl_check(&small, msg, sizeof(msg)), -EINVAL);
	small.size = sizeof(struct pecs_impl) + 1; /* no version of the struct has this size */
	assert_int_equal(pecs_impl_check(&small, msg, sizeof(msg)), -EINVAL);
	struct pecs_impl noopen = fake;
	noopen.open = NULL;
	assert_int_equal(pecs_impl_check(&noopen, msg, sizeof(msg)), -EINVAL);
}

static void test_skip_rules(void **s)
{
	(void)s;
	struct pecs_host_facts blocked = facts;
	struct pecs_result r = run("Test.SkipsWithoutReason");

	assert_int_equal(r.raw, PECS_BROKEN);
	assert_non_null(strstr(r.message, "without a reason"));
	/* A host that refuses perf_event_open skips every case needing a feature, saying why;
	 * the rest still run. */
	snprintf(blocked.unavailable, sizeof(blocked.unavailable), "perf_event_paranoid=3: no");
	pecs_run_case(&fake, &blocked, pecs_registry_find("Test.Pass"), NULL, &r);
	assert_int_equal(r.raw, PECS_ENV_SKIP);
	assert_string_equal(r.message, "perf_event_paranoid=3: no");
	pecs_run_case(&fake, &blocked, pecs_registry_find("Test.Fail"), NULL, &r);
	assert_int_equal(r.raw, PECS_FAIL);
}

static void test_closed_lists(void **s)
{
	(void)s;
	char msg[256];
	const char *const typo[] = {"counting", "cuonting", NULL};
	struct pecs_impl claims = fake;
	struct pecs_case bad = {.id = "Test.Bad", .features = "counting,mmap.overwrit",
				.behaviours = "T-9", .file = __FILE__};
	struct pecs_case mute = {.id = "Test.Mute", .features = "counting", .behaviours = "",
				 .file = __FILE__};
	struct pecs_session ss;

	claims.features = typo;
	assert_int_equal(pecs_impl_check(&claims, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "'cuonting'"));
	assert_int_equal(pecs_case_features_check(&bad, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "'mmap.overwrit'"));
	assert_int_equal(pecs_case_features_check(&mute, msg, sizeof(msg)), -EINVAL);
	assert_true(pecs_feature_known("profiler.replay", strlen("profiler.replay")));
	/* A filter that selects nothing is an error, not an empty green run. */
	assert_int_equal(pecs_session_init(&ss, &fake, NULL, "Nothing.Here.*"), -ENOENT);
	pecs_session_free(&ss);
}

static void test_isolation(void **s)
{
	(void)s;
	struct pecs_run_opts o = {.size = sizeof(o), .isolate = 1, .timeout_s = 10};
	struct pecs_result r;
	setenv("PECS_TEST_CRASH", "1", 1);
	pecs_run_case(&fake, &facts, pecs_registry_find("Test.Crash"), &o, &r);
	unsetenv("PECS_TEST_CRASH");
	assert_int_equal(r.raw, PECS_CRASH);
	assert_non_null(strstr(r.message, "signal"));
	pecs_run_case(&fake, &facts, pecs_registry_find("Test.Fail"), &o, &r);
	assert_int_equal(r.raw, PECS_FAIL); /* a verdict crosses the process boundary intact */
	assert_non_null(strstr(r.message, "ENOSPC"));
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The timeout covers the case's deferred cleanups, and the runner comes back: bounds far
 * above what the work takes, so that they hold on a loaded host. */
static void test_timeout_covers_teardown(void **s)
{
	(void)s;
	struct pecs_run_opts o = {.size = sizeof(o), .isolate = 1, .timeout_s = 1};
	struct pecs_result r;
	pecs_run_case(&fake, &facts, pecs_registry_find("Test.SlowTeardown"), &o, &r);
	assert_int_equal(r.raw, PECS_PASS); /* without its slow cleanup it passes */
	setenv("PECS_TEST_SLOW_TEARDOWN", "1", 1);
	double start = seconds();
	pecs_run_case(&fake, &facts, pecs_registry_find("Test.SlowTeardown"), &o, &r);
	double took = seconds() - start;
	unsetenv("PECS_TEST_SLOW_TEARDOWN");
	assert_int_equal(r.raw, PECS_CRASH);
	assert_non_null(strstr(r.message, "TIMEOUT: the case took over 1 s"));
	assert_non_null(strstr(r.message, "deferred cleanups"));
	assert_null(strstr(r.message, "left behind")); /* a sleeping child dies at SIGKILL */
	assert_true(took < 50); /* the cleanup sleeps 300 s */
}

/* Waiting for a child is bounded: one that does not exit is reported as still there. */
static void test_child_wait_is_bounded(void **s)
{
	(void)s;
	int ws = 0;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sleep(300);
		_exit(0);
	}
	double start = seconds();
	assert_int_equal(pecs_child_reap(pid, &ws, 200), 0);
	assert_true(seconds() - start < 50);
	assert_int_equal(kill(pid, 0), 0); /* still there, not reaped */
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(pecs_child_reap(pid, &ws, 120 * 1000.0), 1);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	assert_int_equal(pecs_child_reap(pid, &ws, 0), -ECHILD); /* already reaped */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statuses),
		cmocka_unit_test(test_case_api_v2),
		cmocka_unit_test(test_call_names),
		cmocka_unit_test(test_expectations_gate),
		cmocka_unit_test(test_expectations_errors),
		cmocka_unit_test(test_expectations_duplicates),
		cmocka_unit_test(test_expectations_bad_line_keeps_the_rest),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_shards_partition),
		cmocka_unit_test(test_impl_check),
		cmocka_unit_test(test_skip_rules),
		cmocka_unit_test(test_closed_lists),
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_timeout_covers_teardown),
		cmocka_unit_test(test_child_wait_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
