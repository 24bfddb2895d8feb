/* TAP version 13 as kselftest writes it: one "ok"/"not ok" line a case, directives for
 * what passed the gate without passing (XFAIL, SKIP), the message as "#" diagnostics. A
 * TAP consumer then gates exactly as the runner does: "not ok" is what fails the run. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

/* A message as one diagnostic line: TAP has no escaping, so a newline must not end it. */
static void tap_text(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void tap_case(FILE *f, size_t n, const struct pecs_result *r)
{
	const char *directive = NULL;
	int ok = 1;
	switch (r->status) {
	case PECS_PASS: break;
	case PECS_XFAIL: directive = "XFAIL"; break;
	case PECS_UNSUPPORTED:
	case PECS_ENV_SKIP: directive = "SKIP"; break;
	default: ok = 0; break;
	}
	fprintf(f, "%sok %zu %s", ok ? "" : "not ", n, r->c->id);
	if (directive) {
		fprintf(f, " # %s %s: ", directive, pecs_status_name(r->status));
		tap_text(f, r->status == PECS_XFAIL ? r->expect_reason : r->message);
	}
	fputc('\n', f);
	if (!ok || r->status == PECS_XFAIL) {
		fprintf(f, "# %s: ", pecs_status_name(r->status));
		tap_text(f, r->message);
		fputc('\n', f);
	}
}

int pecs_write_tap_to(const struct pecs_report *rep, FILE *f)
{
	const struct pecs_counts *c = rep->counts;
	/* The file's own problems are one test each, as in the JUnit file. */
	size_t extra = (c->stale ? 1 : 0) + (c->bad_lines ? 1 : 0) + (rep->nproblems ? 1 : 0);
	fprintf(f, "TAP version 13\n");
	fprintf(f, "# pecs suite %s against %s\n", rep->version ? rep->version : "unknown",
		rep->impl->name);
	if (rep->root_cause && rep->root_cause[0]) {
		fputs("# root cause: ", f);
		tap_text(f, rep->root_cause);
		fputc('\n', f);
	}
	fprintf(f, "1..%zu\n", rep->count + extra);
	size_t n = 0;
	for (size_t i = 0; i < rep->count; i++)
		tap_case(f, ++n, &rep->results[i]);
	if (c->stale)
		fprintf(f, "not ok %zu Expectations.NoStaleLines\n# %zu line(s) match no case\n",
			++n, c->stale);
	if (c->bad_lines)
		fprintf(f, "not ok %zu Expectations.FileIsValid\n# %zu bad line(s)\n", ++n,
			c->bad_lines);
	if (rep->nproblems) {
		fprintf(f, "not ok %zu Gate.RunAsAWhole\n", ++n);
		for (size_t i = 0; i < rep->nproblems; i++) {
			fputs("# ", f);
			tap_text(f, rep->problems[i]);
			fputc('\n', f);
		}
	}
	char line[256];
	pecs_counts_line(c, line, sizeof(line));
	fprintf(f, "# %s\n", line);
	return ferror(f) ? -EIO : 0;
}

int pecs_write_tap(const struct pecs_report *rep, const char *path)
{
	if (strcmp(path, "-") == 0) {
		int rc = pecs_write_tap_to(rep, stdout);
		fflush(stdout);
		return rc;
	}
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	int rc = pecs_write_tap_to(rep, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
