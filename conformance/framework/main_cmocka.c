/* Bazel's test driver: the same cases and gating as the standalone runner, reported
 * through cmocka so each case is one cmocka test on the console. */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

static struct pecs_session session;
static struct pecs_result *results;
static struct pecs_run_opts run_opts = {.size = sizeof(run_opts), .timeout_s = 60};

static void run_one(void **state)
{
	size_t i = (size_t)(uintptr_t)*state;
	struct pecs_result *r = &results[i];
	pecs_run_case(session.impl, &session.facts, session.selected[i], &run_opts, r);
	pecs_expect_apply(&session.expect, r);
	switch (r->status) {
	case PECS_PASS:
		break;
	case PECS_XFAIL:
		print_message("XFAIL %s (%s:%d: %s): %s\n", r->c->id, r->expect_file,
			      r->expect_line, r->expect_reason, r->message);
		break;
	case PECS_UNSUPPORTED:
	case PECS_ENV_SKIP:
		print_message("%s %s: %s\n", pecs_status_name(r->status), r->c->id, r->message);
		skip();
		break;
	default:
		fail_msg("%s %s: %s", pecs_status_name(r->status), r->c->id, r->message);
	}
}

static void no_stale_lines(void **state)
{
	(void)state;
	size_t stale = pecs_expect_stale(&session.expect, stdout);
	if (stale)
		fail_msg("%zu line(s) of %s match no case", stale, session.expect.path);
}

static void valid_file(void **state)
{
	(void)state;
	for (size_t i = 0; i < session.expect.nerrors; i++)
		print_message("%s\n", session.expect.errors[i]);
	if (session.expect.nerrors)
		fail_msg("%zu bad line(s) in %s", session.expect.nerrors, session.expect.path);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"expectations", required_argument, 0, 'e'},
		{"isolate", no_argument, 0, 'i'},
		{"tap", required_argument, 0, 'T'},
		{0, 0, 0, 0},
	};
	const char *expectations = NULL, *tap = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'e')
			expectations = optarg;
		else if (c == 'i')
			run_opts.isolate = 1;
		else if (c == 'T')
			tap = optarg;
		else
			return 2;
	}
	if (pecs_session_init(&session, pecs_adapter(), expectations,
			      getenv("TESTBRIDGE_TEST_ONLY")) < 0)
		return 2;
	session.version = pecs_suite_version;
	size_t n = session.nselected;
	results = calloc(n + 1, sizeof(*results));
	struct CMUnitTest *tests = calloc(n + 2, sizeof(*tests));
	if (!results || !tests)
		return 2;
	for (size_t i = 0; i < n; i++) {
		tests[i].name = session.selected[i]->id;
		tests[i].test_func = run_one;
		tests[i].initial_state = (void *)(uintptr_t)i;
	}
	size_t ntests = n;
	if (session.shard_index == 0 && session.expect.count) {
		tests[ntests].name = "Expectations.NoStaleLines";
		tests[ntests].test_func = no_stale_lines;
		ntests++;
	}
	if (session.expect.nerrors) {
		tests[ntests].name = "Expectations.FileIsValid";
		tests[ntests].test_func = valid_file;
		ntests++;
	}
	/* Our own JUnit writer fills XML_OUTPUT_FILE; cmocka reports on the console. */
	cmocka_set_message_output(CM_OUTPUT_STDOUT);
	char group[128];
	snprintf(group, sizeof(group), "pecs.%s", session.impl->name);
	int failed = _cmocka_run_group_tests(group, tests, ntests, NULL, NULL);
	char json[4096] = "";
	const char *outdir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
	char tap_default[4096];
	if (outdir && *outdir) {
		snprintf(json, sizeof(json), "%s/pecs-%s.json", outdir, session.impl->name);
		/* Bazel keeps the outputs: TAP beside the JSON unless --tap said where. */
		snprintf(tap_default, sizeof(tap_default), "%s/pecs-%s.tap", outdir,
			 session.impl->name);
		if (!tap)
			tap = tap_default;
	}
	struct pecs_outputs out = {.json = json, .junit = getenv("XML_OUTPUT_FILE"), .tap = tap};
	int rc = pecs_session_finish(&session, results, n, &out);
	free(tests);
	free(results);
	pecs_session_free(&session);
	return failed || rc ? 1 : 0;
}
