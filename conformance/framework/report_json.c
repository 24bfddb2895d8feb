/* The JSON results file: what the harness merges across implementations. The format is
 * "pecs-results-1", described in docs/implementing.md. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A comma-separated list as a JSON array of strings. */
static void json_list(FILE *f, const char *csv)
{
	fputc('[', f);
	const char *p = csv;
	int first = 1;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		while (n && *p == ' ') {
			p++;
			n--;
		}
		if (n) {
			char item[256];
			snprintf(item, sizeof(item), "%.*s", (int)n, p);
			if (!first)
				fputs(", ", f);
			json_str(f, item);
			first = 0;
		}
		p = end ? end + 1 : NULL;
	}
	fputc(']', f);
}

/* What each entry point answered over the run, so the harness can find the root cause of
 * shards merged. */
static void json_calls(FILE *f, const struct pecs_call_tally *calls)
{
	fprintf(f, ",\n  \"calls\": {");
	for (int i = 0; calls && i < PECS_ENTRY_COUNT; i++) {
		const struct pecs_call_tally *t = &calls[i];
		fprintf(f, "%s\"%s\": {\"calls\": %u, \"ok\": %u, \"cases\": %u, \"errno\": ",
			i ? ", " : "", pecs_entry_name(i), t->calls, t->ok, t->cases);
		if (t->err && !t->mixed)
			json_str(f, pecs_errname(t->err));
		else
			fputs("null", f);
		fprintf(f, ", \"mixed\": %s}", t->mixed ? "true" : "false");
	}
	fputc('}', f);
}

/* What failed in one case, by entry point: the harness applies '@root-cause ENTRY ERRNO'
 * with it as the runner does (pecs_call_failed_with). */
static void json_failed_calls(FILE *f, const struct pecs_call_tally *calls)
{
	fprintf(f, ", \"failed_calls\": {");
	int first = 1;
	for (int i = 0; i < PECS_ENTRY_COUNT; i++) {
		int err = pecs_call_failed_with(&calls[i]);
		if (!err)
			continue;
		fprintf(f, "%s\"%s\": ", first ? "" : ", ", pecs_entry_name(i));
		json_str(f, pecs_errname(err));
		first = 0;
	}
	fputc('}', f);
}

/* Everything before the shard and the results: what ran, on what, and what explains it. */
static void json_head(FILE *f, const struct pecs_report *rep)
{
	const struct pecs_host_facts *h = rep->facts;
	fprintf(f, "{\n  \"format\": \"pecs-results-1\",\n  \"suite_version\": ");
	json_str(f, rep->version ? rep->version : "unknown");
	fprintf(f, ",\n  \"impl\": ");
	json_str(f, rep->impl->name);
	fprintf(f, ",\n  \"features\": [");
	for (const char *const *p = rep->impl->features; p && *p; p++)
		fprintf(f, "%s\"%s\"", p == rep->impl->features ? "" : ", ", *p);
	fprintf(f, "],\n  \"host\": {\"ncpus\": %d, \"page_size\": %ld, \"max_stack\": %d, "
		   "\"max_sample_rate\": %d, \"mlock_kb\": %d, \"paranoid\": %d, "
		   "\"privileged\": %s, \"attr_size\": %u, \"kernel_release\": ",
		h->ncpus, h->page_size, h->max_stack, h->max_sample_rate, h->mlock_kb, h->paranoid,
		h->privileged ? "true" : "false", h->attr_size);
	json_str(f, h->kernel_release);
	fprintf(f, ", \"unavailable\": ");
	json_str(f, h->unavailable);
	fprintf(f, "},\n  \"host_sources\": {");
	for (int i = 0; rep->sources && i < PECS_FACT_COUNT; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "", pecs_fact_names[i]);
		json_str(f, rep->sources->of[i]);
	}
	fprintf(f, "},\n  \"expectations\": ");
	if (rep->expectations && rep->expectations->path)
		json_str(f, rep->expectations->path);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"root_cause\": ");
	if (rep->root_cause && rep->root_cause[0])
		json_str(f, rep->root_cause);
	else
		fputs("null", f);
	json_calls(f, rep->calls);
	fprintf(f, ",\n  \"refusal\": ");
	if (rep->refusal && rep->refusal[0])
		json_str(f, rep->refusal);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"gate_problems\": [");
	for (size_t i = 0; i < rep->nproblems; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, rep->problems[i]);
	}
	fputc(']', f);
}

int pecs_write_json(const struct pecs_report *rep, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	json_head(f, rep);
	fprintf(f, ",\n  \"shard\": {\"index\": %d, \"total\": %d},",
		rep->shard_index, rep->shard_total);
	/* Written while the run goes on: what a reader of a run that died must know. */
	if (rep->count < rep->planned)
		fprintf(f, "\n  \"incomplete\": {\"done\": %zu, \"selected\": %zu},",
			rep->count, rep->planned);
	fprintf(f, "\n  \"results\": [");
	for (size_t i = 0; i < rep->count; i++) {
		const struct pecs_result *r = &rep->results[i];
		fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
		json_str(f, r->c->id);
		fprintf(f, ", \"status\": \"%s\", \"raw_status\": \"%s\", \"message\": ",
			pecs_status_name(r->status), pecs_status_name(r->raw));
		json_str(f, r->message);
		if (r->file[0]) {
			fprintf(f, ", \"file\": ");
			json_str(f, r->file);
			fprintf(f, ", \"line\": %d", r->line);
		}
		fprintf(f, ", \"features\": ");
		json_list(f, r->c->features);
		fprintf(f, ", \"behaviours\": ");
		json_list(f, r->c->behaviours);
		fprintf(f, ", \"expectation\": ");
		if (r->expect_file) {
			fprintf(f, "{\"file\": ");
			json_str(f, r->expect_file);
			fprintf(f, ", \"line\": %d, \"reason\": ", r->expect_line);
			json_str(f, r->expect_reason);
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		fprintf(f, ", \"duration_ms\": %.3f", r->ms);
		json_failed_calls(f, r->calls);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"stale\": [");
	int first = 1;
	for (size_t i = 0; rep->expectations && i < rep->expectations->count; i++) {
		const struct pecs_expect_line *l = &rep->expectations->lines[i];
		if (l->known)
			continue;
		fprintf(f, "%s{\"line\": %d, \"pattern\": ", first ? "" : ", ", l->lineno);
		json_str(f, l->pattern);
		fputc('}', f);
		first = 0;
	}
	fprintf(f, "],\n  \"expectation_errors\": [");
	for (size_t i = 0; rep->expectations && i < rep->expectations->nerrors; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, rep->expectations->errors[i]);
	}
	const struct pecs_counts *c = rep->counts;
	fprintf(f, "],\n  \"counts\": {\"passed\": %zu, \"failed\": %zu, \"xfail\": %zu, "
		   "\"xpass\": %zu, \"unsupported\": %zu, \"env_skipped\": %zu, \"broken\": %zu, "
		   "\"crashed\": %zu, \"stale\": %zu},\n  \"ok\": %s\n}\n",
		c->n[PECS_PASS], c->n[PECS_FAIL], c->n[PECS_XFAIL], c->n[PECS_XPASS],
		c->n[PECS_UNSUPPORTED], c->n[PECS_ENV_SKIP], c->n[PECS_BROKEN], c->n[PECS_CRASH],
		c->stale, pecs_counts_ok(c) ? "true" : "false");
	return fclose(f) == 0 ? 0 : -errno;
}
