/* The suite's own runner: the static binary someone copies into another system, and the
 * binary the harness drives. Bazel's test targets use main_cmocka.c; both share the
 * verdict and gating code in this folder. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static void usage(FILE *out, const char *argv0)
{
	fprintf(out,
		"usage: %s [options]\n"
		"Runs the pecs conformance cases against the implementation linked into this binary.\n"
		"\n"
		"  --list               print the selected case ids with their features and behaviours\n"
		"  --filter GLOBS       comma-separated case-id globs; a leading '-' excludes\n"
		"                       (also read from TESTBRIDGE_TEST_ONLY)\n"
		"  --expectations FILE  the implementation's expectations file (known failures)\n"
		"  --json FILE          write results as JSON (default: $TEST_UNDECLARED_OUTPUTS_DIR/\n"
		"                       pecs-<impl>.json when that is set)\n"
		"  --junit FILE         write JUnit XML (default: $XML_OUTPUT_FILE when set)\n"
		"  --isolate            run each case in a child process: a crash or hang fails\n"
		"                       only that case (CRASH); the default for plugins\n"
		"  --no-isolate         run every case in this process\n"
		"  --timeout SECONDS    per-case limit with --isolate (default 60)\n"
		"  --quiet              print only failures and the summary\n"
		"  --plugin PATH        the shared object a plugin-adapter runner loads\n"
		"                       (same as PECS_PLUGIN=PATH)\n"
		"  --help\n"
		"\n"
		"Exit status: 0 when no case is FAIL, XPASS, BROKEN or CRASH and no expectations\n"
		"line is stale; 1 otherwise; 2 for a usage or setup error (an unknown option, a\n"
		"filter that selects no case, a results file that cannot be written).\n",
		argv0);
}

static void print_result(const struct pecs_result *r, int quiet)
{
	int bad = r->status == PECS_FAIL || r->status == PECS_XPASS ||
		  r->status == PECS_BROKEN || r->status == PECS_CRASH;
	if (quiet && !bad)
		return;
	printf("%-11s %s (%.1f ms)\n", pecs_status_name(r->status), r->c->id, r->ms);
	if (r->status != PECS_PASS && r->message[0])
		printf("            %s\n", r->message);
	if (r->status == PECS_XFAIL)
		printf("            expected: %s:%d: %s\n", r->expect_file, r->expect_line,
		       r->expect_reason);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"list", no_argument, 0, 'l'},		{"filter", required_argument, 0, 'f'},
		{"expectations", required_argument, 0, 'e'}, {"json", required_argument, 0, 'j'},
		{"junit", required_argument, 0, 'x'},	{"isolate", no_argument, 0, 'i'},
		{"no-isolate", no_argument, 0, 'n'},
		{"timeout", required_argument, 0, 't'}, {"quiet", no_argument, 0, 'q'},
		{"plugin", required_argument, 0, 'p'},	{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	const char *filter = getenv("TESTBRIDGE_TEST_ONLY"), *expectations = NULL;
	const char *json = NULL, *junit = getenv("XML_OUTPUT_FILE");
	int list = 0, quiet = 0;
	struct pecs_run_opts run = {.size = sizeof(run), .timeout_s = 60};
	int c;
	if (pecs_adapter_isolates && pecs_adapter_isolates())
		run.isolate = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': list = 1; break;
		case 'f': filter = optarg; break;
		case 'e': expectations = optarg; break;
		case 'j': json = optarg; break;
		case 'x': junit = optarg; break;
		case 'i': run.isolate = 1; break;
		case 'n': run.isolate = 0; break;
		case 't': run.timeout_s = (unsigned)atoi(optarg); break;
		case 'q': quiet = 1; break;
		case 'p': setenv("PECS_PLUGIN", optarg, 1); break;
		case 'h': usage(stdout, argv[0]); return 0;
		default: usage(stderr, argv[0]); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	struct pecs_session s;
	if (pecs_session_init(&s, pecs_adapter(), expectations, filter) < 0)
		return 2;
	if (list) {
		for (size_t i = 0; i < s.nselected; i++)
			printf("%s\tfeatures=%s\tbehaviours=%s\n", s.selected[i]->id,
			       s.selected[i]->features, s.selected[i]->behaviours);
		pecs_session_free(&s);
		return 0;
	}
	char default_json[4096];
	const char *outdir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
	if (!json && outdir && *outdir) {
		snprintf(default_json, sizeof(default_json), "%s/pecs-%s.json", outdir, s.impl->name);
		json = default_json;
	}
	printf("pecs: %zu case(s) against %s (kernel %s, %s)\n", s.nselected, s.impl->name,
	       s.facts.kernel_release, s.facts.privileged ? "privileged" : "unprivileged");
	struct pecs_result *results = calloc(s.nselected ? s.nselected : 1, sizeof(*results));
	if (!results)
		return 2;
	for (size_t i = 0; i < s.nselected; i++) {
		pecs_run_case(s.impl, &s.facts, s.selected[i], &run, &results[i]);
		pecs_expect_apply(&s.expect, &results[i]);
		print_result(&results[i], quiet);
	}
	int rc = pecs_session_finish(&s, results, s.nselected, json, junit);
	free(results);
	pecs_session_free(&s);
	return rc;
}
