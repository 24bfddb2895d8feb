/* The suite's own runner: the static binary someone copies into another system, and the
 * binary the harness drives. Bazel's test targets use main_cmocka.c; both share the
 * verdict and gating code in this folder. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* Only the plugin runner loads a shared object; the others would ignore --plugin. */
static int plugin_runner(void)
{
	return pecs_adapter_isolates && pecs_adapter_isolates();
}

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
		"  --tap FILE           write TAP version 13 (kselftest's format); '-' prints it\n"
		"                       on stdout instead of the usual lines\n"
		"  --isolate            run each case in a child process: a crash or hang fails\n"
		"                       only that case (CRASH); the default for plugins\n"
		"  --no-isolate         run every case in this process\n"
		"  --timeout SECONDS    per-case limit with --isolate (default 60)\n"
		"  --quiet              print only failures and the summary\n"
		"%s"
		"  --features LIST      what the system under test lacks: '-mmap,-poll' drops\n"
		"                       those claims, 'counting,read.group' keeps only those;\n"
		"                       their cases are then UNSUPPORTED\n"
		"  --kernel RELEASE     the kernel version the system under test implements, for\n"
		"                       kernel>= conditions (default: the implementation's, else\n"
		"                       uname for the syscall runner, else unknown)\n"
		"  --version            print the suite version (the git commit it was built from)\n"
		"  --help\n"
		"\n"
		"Exit status: 0 when no case is FAIL, XPASS, BROKEN or CRASH and no expectations\n"
		"line is stale; 1 otherwise; 2 for a usage or setup error (an unknown option, a\n"
		"filter that selects no case, a results file that cannot be written).\n",
		argv0, plugin_runner() ?
		"  --plugin PATH        the shared object this runner loads (same as\n"
		"                       PECS_PLUGIN=PATH)\n" : "");
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

struct run_args {
	const char *filter, *expectations, *features;
	int list, quiet;
	struct pecs_run_opts run;
	struct pecs_outputs out;
	struct pecs_outputs given; /* the ones named on the command line */
};

/* Every path named on the command line, before the first case: a typo must not cost a
 * whole run. The defaults from Bazel's environment are Bazel's to get right (and a run
 * dropped to uid 65534 may inherit one it cannot write: it still runs, and says so). */
static int outputs_writable(const struct pecs_outputs *out)
{
	const char *paths[] = {out->json, out->junit, out->tap};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int err = pecs_output_check(paths[i]);
		if (err < 0) {
			fprintf(stderr, "pecs: cannot write %s: %s (nothing was run)\n", paths[i],
				strerror(-err));
			return 0;
		}
	}
	return 1;
}

/* As soon as the cases so far share one root cause, say so above their failures; the
 * closing lines say it again for the whole run. */
static void early_root_cause(struct pecs_session *s, const struct pecs_result *results,
			     size_t done, int *said, int tap_stdout)
{
	if (*said || done < PECS_ROOT_CAUSE_MIN_CASES)
		return;
	if (pecs_session_root_cause(s, results, done) > 0) {
		printf("%specs: so far %s: the failures below may all follow from it\n",
		       tap_stdout ? "# " : "", s->root_cause);
		*said = 1;
	}
}

/* The cases that need a feature the implementation does not claim are not run: on the
 * console they are one line, not a line each (--json and --tap still list them). */
#define MAX_UNCLAIMED 32
struct unclaimed {
	char name[MAX_UNCLAIMED][48];
	size_t count[MAX_UNCLAIMED], nr, cases;
};

static int note_unclaimed(struct unclaimed *u, const struct pecs_impl *impl,
			  const struct pecs_case *c)
{
	char f[48];
	size_t i;

	if (!pecs_case_missing_feature(impl, c, f, sizeof(f)))
		return 0;
	u->cases++;
	for (i = 0; i < u->nr && strcmp(u->name[i], f) != 0; i++)
		;
	if (i == u->nr && u->nr < MAX_UNCLAIMED)
		snprintf(u->name[u->nr++], sizeof(u->name[0]), "%s", f);
	if (i < u->nr)
		u->count[i]++;
	return 1;
}

static void print_unclaimed(const struct unclaimed *u, const char *impl, const char *hash)
{
	if (!u->cases)
		return;
	printf("%specs: %zu case(s) need a feature %s does not claim, not run:", hash, u->cases,
	       impl);
	for (size_t i = 0; i < u->nr; i++)
		printf("%s %s (%zu)", i ? "," : "", u->name[i], u->count[i]);
	printf("\n");
}

/* --features: what the system under test lacks ("-mmap,-poll"), or the whole set it has
 * ("counting,read.group"). The adapter's claims are what the runner can drive; the system
 * under test may implement less, and its missing features must be UNSUPPORTED, not FAIL. */
static const struct pecs_impl *narrow_features(const struct pecs_impl *impl, const char *spec)
{
	static struct pecs_impl narrowed;
	static const char *kept[64];
	size_t n = 0;
	int replace = spec[0] != '-';
	for (const char *const *f = impl->features; f && *f; f++) {
		int named = 0;
		for (const char *p = spec; *p;) {
			size_t len = strcspn(p, ",");
			const char *item = *p == '-' ? p + 1 : p;
			size_t ilen = *p == '-' ? len - 1 : len;
			if (strlen(*f) == ilen && strncmp(*f, item, ilen) == 0)
				named = 1;
			p += len + (p[len] == ',');
		}
		if (named == replace && n < 63)
			kept[n++] = *f;
	}
	kept[n] = NULL;
	/* Every name given must be one the runner claims, or the typo would hide nothing. */
	for (const char *p = spec; *p;) {
		size_t len = strcspn(p, ",");
		const char *item = *p == '-' ? p + 1 : p;
		size_t ilen = *p == '-' ? len - 1 : len;
		int claimed = 0;
		for (const char *const *f = impl->features; f && *f; f++)
			claimed |= strlen(*f) == ilen && strncmp(*f, item, ilen) == 0;
		if (!claimed || (*p == '-') == replace) {
			fprintf(stderr, "pecs: --features: '%.*s' %s (%s claims:", (int)len, p,
				!claimed ? "is not a feature this runner claims" :
				"mixes the two forms: all '-name' or none", impl->name);
			for (const char *const *f = impl->features; f && *f; f++)
				fprintf(stderr, " %s", *f);
			fprintf(stderr, ")\n");
			return NULL;
		}
		p += len + (p[len] == ',');
	}
	size_t size = impl->size < sizeof(narrowed) ? impl->size : sizeof(narrowed);
	memset(&narrowed, 0, sizeof(narrowed));
	memcpy(&narrowed, impl, size);
	narrowed.features = kept;
	return &narrowed;
}

static void startup_timed_out(int sig)
{
	(void)sig;
	static const char msg[] = "pecs: the implementation did not answer the startup probes "
				  "(setup, host_facts) within --timeout; nothing was run\n";
	ssize_t ignored = write(2, msg, sizeof(msg) - 1);
	(void)ignored;
	_exit(2);
}

static int run_suite(const struct run_args *a)
{
	struct pecs_session s;
	/* The startup probes (the host facts, the plugin's load) call the implementation
	 * outside any case: --timeout covers them too, so a blocking open cannot hang here. */
	signal(SIGALRM, startup_timed_out);
	alarm(a->run.timeout_s ? a->run.timeout_s : 60);
	const struct pecs_impl *impl = pecs_adapter();
	if (a->features && *a->features && !(impl = narrow_features(impl, a->features))) {
		alarm(0);
		return 2;
	}
	int rc = pecs_session_init(&s, impl, a->expectations, a->filter);
	char missing[300] = "";
	if (rc == 0 && !a->list)
		pecs_probe_missing(s.impl, &s.facts, missing, sizeof(missing));
	alarm(0);
	if (rc < 0)
		return 2;
	s.version = pecs_suite_version;
	if (a->list) {
		for (size_t i = 0; i < s.nselected; i++)
			printf("%s\tfeatures=%s\tbehaviours=%s\n", s.selected[i]->id,
			       s.selected[i]->features, s.selected[i]->behaviours);
		pecs_session_free(&s);
		return 0;
	}
	struct pecs_outputs out = a->out;
	char default_json[4096];
	const char *outdir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
	if (!out.json && outdir && *outdir) {
		snprintf(default_json, sizeof(default_json), "%s/pecs-%s.json", outdir, s.impl->name);
		out.json = default_json;
	}
	struct pecs_result *results = calloc(s.nselected ? s.nselected : 1, sizeof(*results));
	if (!results || !outputs_writable(&a->given)) {
		free(results);
		pecs_session_free(&s);
		return 2;
	}
	int tap_stdout = out.tap && strcmp(out.tap, "-") == 0, said = 0;
	struct unclaimed unclaimed = {0};
	if ((rc = pecs_session_stream(&s, &out)) < 0) {
		fprintf(stderr, "pecs: cannot write %s: %s (nothing was run)\n", out.tap,
			strerror(-rc));
		free(results);
		pecs_session_free(&s);
		return 2;
	}
	const char *hash = tap_stdout ? "# " : "";
	if (missing[0])
		printf("%specs: %s\n", hash, missing);
	printf("%specs: suite %s: %zu case(s) against %s (kernel %s, %s)\n", hash,
	       pecs_suite_version, s.nselected, s.impl->name, s.facts.kernel_release,
	       s.facts.privileged ? "privileged" : "unprivileged");
	for (int i = 0; i < PECS_FACT_COUNT; i++) {
		const char *src = s.sources.of[i];
		if (strncmp(src, "assumed", 7) == 0 || strncmp(src, "unknown", 7) == 0)
			printf("%specs: host fact %s: %s\n", hash, pecs_fact_names[i], src);
	}
	for (size_t i = 0; i < s.nselected; i++) {
		int quiet = note_unclaimed(&unclaimed, s.impl, s.selected[i]);

		/* In process, a case that crashes takes the runner down before its verdict line:
		 * name it first. */
		if (!a->run.isolate && !quiet)
			printf("%sRUN         %s\n", hash, s.selected[i]->id);
		pecs_run_case(s.impl, &s.facts, s.selected[i], &a->run, &results[i]);
		pecs_expect_apply(&s.expect, &results[i]);
		if (!tap_stdout && !(quiet && results[i].status == PECS_UNSUPPORTED))
			print_result(&results[i], a->quiet);
		pecs_session_case_done(&s, results, i + 1);
		early_root_cause(&s, results, i + 1, &said, tap_stdout);
	}
	print_unclaimed(&unclaimed, s.impl->name, hash);
	rc = pecs_session_finish(&s, results, s.nselected, &out);
	free(results);
	pecs_session_free(&s);
	return rc;
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
		{"tap", required_argument, 0, 'T'},	{"version", no_argument, 0, 'V'},
		{"kernel", required_argument, 0, 'K'},	{"features", required_argument, 0, 'F'},
		{0, 0, 0, 0},
	};
	const char *filter = getenv("TESTBRIDGE_TEST_ONLY"), *expectations = NULL;
	const char *json = NULL, *junit = getenv("XML_OUTPUT_FILE"), *tap = NULL;
	const char *junit_given = NULL, *features = NULL;
	int list = 0, quiet = 0;
	struct pecs_run_opts run = {.size = sizeof(run), .timeout_s = 60};
	int c;
	/* Line by line even into a pipe or file: when a case takes the process down, the
	 * last line out names it. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (plugin_runner())
		run.isolate = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': list = 1; break;
		case 'f': filter = optarg; break;
		case 'e': expectations = optarg; break;
		case 'j': json = optarg; break;
		case 'x': junit = junit_given = optarg; break;
		case 'i': run.isolate = 1; break;
		case 'n': run.isolate = 0; break;
		case 't': run.timeout_s = (unsigned)atoi(optarg); break;
		case 'q': quiet = 1; break;
		case 'p':
			if (!plugin_runner()) {
				fprintf(stderr, "%s: --plugin: this runner has no plugin adapter "
					"(use pecs-plugin)\n", argv[0]);
				return 2;
			}
			setenv("PECS_PLUGIN", optarg, 1);
			break;
		case 'T': tap = optarg; break;
		case 'K': setenv("PECS_KERNEL_RELEASE", optarg, 1); break;
		case 'F': features = optarg; break;
		case 'V':
			printf("pecs suite %s\n", pecs_suite_version);
			return 0;
		case 'h': usage(stdout, argv[0]); return 0;
		default: usage(stderr, argv[0]); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	return run_suite(&(struct run_args){.filter = filter, .expectations = expectations,
				     .features = features,
				     .list = list, .quiet = quiet, .run = run,
				     .out = {.json = json, .junit = junit, .tap = tap},
				     .given = {.json = json, .junit = junit_given, .tap = tap}});
}
