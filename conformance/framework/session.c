/* One run of the suite against one implementation: selection, sharding, expectations and
 * the outputs Bazel and the harness read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "runner.h"

/* The kernel version the kernel>= conditions judge: the implementation's, or stated with
 * --kernel, or "unknown"; never silently the host's for an implementation that is not
 * the host. */
static void kernel_source(const struct pecs_impl *impl, struct pecs_host_facts *facts,
			  const char *defaults_release, struct pecs_fact_sources *src)
{
	char *of = src->of[PECS_FACT_KERNEL_RELEASE];
	const char *stated = getenv("PECS_KERNEL_RELEASE");
	if (stated && *stated) {
		snprintf(facts->kernel_release, sizeof(facts->kernel_release), "%s", stated);
		snprintf(of, sizeof(src->of[0]), "--kernel (PECS_KERNEL_RELEASE)");
	} else if (strcmp(facts->kernel_release, defaults_release) != 0) {
		snprintf(of, sizeof(src->of[0]), "implementation (host_facts)");
	} else if (PECS_IMPL_HAS(impl, host_facts)) {
		char read_from[sizeof(src->of[0])];
		snprintf(read_from, sizeof(read_from), "%s", of);
		snprintf(of, sizeof(src->of[0]), "%.56s, kept by the implementation's host_facts "
			 "(under an emulator it may be the host's: --kernel states it)", read_from);
	} else {
		snprintf(facts->kernel_release, sizeof(facts->kernel_release), "unknown");
		snprintf(of, sizeof(src->of[0]), "unknown: %s has no host_facts and this host's "
			 "uname is not its answer (--kernel states it)", impl->name);
	}
}

static void read_facts(const struct pecs_impl *impl, struct pecs_host_facts *facts,
		       struct pecs_fact_sources *src)
{
	pecs_host_defaults_sourced(facts, src);
	struct pecs_host_facts defaults = *facts;
	if (PECS_IMPL_HAS(impl, host_facts)) {
		void *ctx = NULL;
		if (impl->setup(&ctx) == 0) {
			struct pecs_host_facts mine = *facts;
			if (impl->host_facts(ctx, &mine) == 0) {
				mine.size = sizeof(mine);
				*facts = mine;
			}
			impl->teardown(ctx);
		}
	}
	const long was[] = {defaults.ncpus, defaults.page_size, defaults.max_stack,
			    defaults.max_sample_rate, defaults.mlock_kb, defaults.paranoid,
			    defaults.privileged, defaults.attr_size};
	const long is[] = {facts->ncpus, facts->page_size, facts->max_stack,
			   facts->max_sample_rate, facts->mlock_kb, facts->paranoid,
			   facts->privileged, facts->attr_size};
	for (int i = 0; i < PECS_FACT_KERNEL_RELEASE; i++)
		if (was[i] != is[i])
			snprintf(src->of[i], sizeof(src->of[i]), "implementation (host_facts)");
	/* The implementation's host_facts saw the suite's guess and kept it: its answer now. */
	if (PECS_IMPL_HAS(impl, host_facts) && was[PECS_FACT_ATTR_SIZE] == is[PECS_FACT_ATTR_SIZE])
		snprintf(src->of[PECS_FACT_ATTR_SIZE], sizeof(src->of[0]),
			 "implementation (host_facts kept the suite's latest, %u)", facts->attr_size);
	kernel_source(impl, facts, defaults.kernel_release, src);
}

static int env_int(const char *name, int fallback)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : fallback;
}

int pecs_session_init(struct pecs_session *s, const struct pecs_impl *impl,
		      const char *expectations_path, const char *filter)
{
	memset(s, 0, sizeof(*s));
	char msg[512];
	if (pecs_impl_check(impl, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pecs: refusing the implementation: %s\n", msg);
		return -EINVAL;
	}
	s->impl = impl;
	read_facts(impl, &s->facts, &s->sources);
	s->filtered = filter && *filter;
	/* perf_event_paranoid 3 refuses unprivileged callers on purpose: a host fact. Below it,
	 * or with privilege, a refusal of the whole call is the implementation's own. */
	if (s->facts.unavailable[0] && (s->facts.privileged || s->facts.paranoid < 3))
		snprintf(s->refusal, sizeof(s->refusal), "%s", s->facts.unavailable);
	int rc = pecs_expect_load(&s->expect, expectations_path, &s->facts, msg, sizeof(msg));
	/* Bad lines cost the gate, not the run: the cases still run and their results are
	 * written, gated by the good lines; pecs_session_finish reports the bad ones beside
	 * the verdict they cause. */
	if (rc < 0 && !s->expect.nerrors) {
		fprintf(stderr, "pecs: %s\n", msg);
		return rc;
	}
	s->shard_total = env_int("TEST_TOTAL_SHARDS", 1);
	s->shard_index = env_int("TEST_SHARD_INDEX", 0);
	if (s->shard_total < 1 || s->shard_index < 0 || s->shard_index >= s->shard_total) {
		fprintf(stderr, "pecs: bad shard %d of %d\n", s->shard_index, s->shard_total);
		return -EINVAL;
	}
	size_t n;
	const struct pecs_case *const *all = pecs_registry(&n);
	for (size_t i = 0; i < n; i++) {
		if (pecs_case_features_check(all[i], msg, sizeof(msg)) < 0) {
			fprintf(stderr, "pecs: %s\n", msg);
			return -EINVAL;
		}
	}
	s->selected = calloc(n ? n : 1, sizeof(*s->selected));
	if (!s->selected)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pecs_filter_match(filter, all[i]->id))
			continue;
		/* Round-robin over the filtered list, so shards stay balanced whatever the filter. */
		if ((int)(k++ % (size_t)s->shard_total) == s->shard_index)
			s->selected[s->nselected++] = all[i];
	}
	/* A mistyped --test_filter must not come back green having run nothing. */
	if (k == 0) {
		fprintf(stderr, "pecs: no case matches the filter '%s' (--list shows the ids)\n",
			filter ? filter : "");
		return -ENOENT;
	}
	return 0;
}

void pecs_session_free(struct pecs_session *s)
{
	if (s->tap && s->tap_owned)
		fclose(s->tap);
	pecs_expect_free(&s->expect);
	free(s->selected);
	memset(s, 0, sizeof(*s));
}

int pecs_output_check(const char *path)
{
	if (!path || !*path || strcmp(path, "-") == 0)
		return 0;
	struct stat st;
	int existed = stat(path, &st) == 0;
	FILE *f = fopen(path, "a");
	if (!f)
		return -errno;
	fclose(f);
	if (!existed)
		unlink(path);
	return 0;
}

int pecs_session_root_cause(struct pecs_session *s, const struct pecs_result *results,
			    size_t n)
{
	memset(s->calls, 0, sizeof(s->calls));
	for (size_t i = 0; i < n; i++)
		pecs_tally_sum(s->calls, results[i].calls);
	return pecs_root_cause(s->calls, s->root_cause, sizeof(s->root_cause));
}

void pecs_session_report(struct pecs_session *s, const struct pecs_result *results, size_t n,
			 size_t planned, struct pecs_counts *counts, struct pecs_report *rep)
{
	pecs_session_root_cause(s, results, n);
	memset(counts, 0, sizeof(*counts));
	for (size_t i = 0; i < n; i++)
		pecs_counts_add(counts, &results[i]);
	/* Stale lines are a property of the file, so one shard reports them; on stderr once,
	 * at the end. */
	if (s->shard_index == 0)
		counts->stale = pecs_expect_stale(&s->expect, n < planned ? NULL : stderr);
	/* Every shard fails for them: each shard's gate applied the file without those lines. */
	counts->bad_lines = s->expect.nerrors;
	/* Part of the cases cannot judge the floor, as a filtered run cannot. */
	int filtered = s->filtered;
	s->filtered |= n < planned;
	pecs_gate_directives(s, counts, results, n);
	s->filtered = filtered;
	counts->gate_problems = s->nproblems;
	*rep = (struct pecs_report){
		.impl = s->impl, .facts = &s->facts, .expectations = &s->expect,
		.results = results, .count = n, .planned = planned, .counts = counts,
		.shard_index = s->shard_index, .shard_total = s->shard_total,
		.version = s->version ? s->version : "unknown", .root_cause = s->root_cause,
		.calls = s->calls, .sources = &s->sources,
		.refusal = s->refusal, .problems = (const char (*)[512])s->problems,
		.nproblems = s->nproblems,
	};
}

int pecs_session_finish(struct pecs_session *s, struct pecs_result *results, size_t n,
			const struct pecs_outputs *out)
{
	const char *json_path = out ? out->json : NULL, *junit_path = out ? out->junit : NULL;
	const char *tap_path = out ? out->tap : NULL;
	int tap_stdout = tap_path && strcmp(tap_path, "-") == 0;
	struct pecs_counts counts;
	struct pecs_report rep;
	pecs_session_report(s, results, n, n, &counts, &rep);
	int lost_output = 0;
	if (json_path && *json_path && pecs_write_json(&rep, json_path) < 0) {
		fprintf(stderr, "pecs: cannot write %s\n", json_path);
		lost_output = 1;
	}
	if (junit_path && *junit_path && pecs_write_junit(&rep, junit_path) < 0) {
		fprintf(stderr, "pecs: cannot write %s\n", junit_path);
		lost_output = 1;
	}
	if (s->tap) {
		if (pecs_session_stream_end(s, &rep) < 0) {
			fprintf(stderr, "pecs: cannot write %s\n", tap_path ? tap_path : "TAP");
			lost_output = 1;
		}
	} else if (tap_path && *tap_path && pecs_write_tap(&rep, tap_path) < 0) {
		fprintf(stderr, "pecs: cannot write %s\n", tap_path);
		lost_output = 1;
	}
	const char *status_file = getenv("TEST_SHARD_STATUS_FILE");
	if (status_file && *status_file) {
		FILE *f = fopen(status_file, "a");
		if (f)
			fclose(f);
	}
	for (size_t i = 0; i < n; i++) {
		if (results[i].status == PECS_XPASS)
			fprintf(stderr, "pecs: XPASS %s: %s\n", results[i].c->id, results[i].message);
	}
	for (size_t i = 0; i < s->expect.nerrors; i++)
		fprintf(stderr, "pecs: %s\n", s->expect.errors[i]);
	for (size_t i = 0; i < s->nproblems; i++)
		fprintf(stderr, "pecs: gate: %s\n", s->problems[i]);
	char line[256];
	pecs_counts_line(&counts, line, sizeof(line));
	if (s->root_cause[0])
		printf("%specs %s: root cause: %s\n", tap_stdout ? "# " : "", s->impl->name,
		       s->root_cause);
	printf("%specs %s: %s\n", tap_stdout ? "# " : "", s->impl->name, line);
	fflush(stdout);
	/* A results file asked for and not written is a setup error, whatever the verdicts. */
	if (lost_output)
		return 2;
	return pecs_counts_ok(&counts) ? 0 : 1;
}
