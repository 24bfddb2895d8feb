/* TAP version 13 as kselftest writes it: the version line, the plan, then one "ok"/"not ok"
 * line a case, directives for what passed the gate without passing (XFAIL, SKIP), the
 * message as "#" diagnostics. A TAP consumer then gates exactly as the runner does: "not ok"
 * is what fails the run. The pieces are separate so that a run can stream them as its
 * cases end (session.c). */
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

void pecs_tap_case(FILE *f, size_t n, const struct pecs_result *r)
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

void pecs_tap_head(FILE *f, const char *version, const char *impl, size_t plan)
{
	fprintf(f, "TAP version 13\n1..%zu\n# pecs suite %s against %s\n", plan,
		version ? version : "unknown", impl);
}

unsigned pecs_tap_closing_failed(const struct pecs_report *rep)
{
	return (rep->counts->stale ? PECS_TAP_STALE : 0u) |
	       (rep->counts->bad_lines ? PECS_TAP_BAD_LINES : 0u) |
	       (rep->nproblems ? PECS_TAP_GATE : 0u);
}

size_t pecs_tap_closing_count(unsigned closing)
{
	return !!(closing & PECS_TAP_STALE) + !!(closing & PECS_TAP_BAD_LINES) +
	       !!(closing & PECS_TAP_GATE);
}

void pecs_tap_tail(FILE *f, size_t n, unsigned closing, const struct pecs_report *rep)
{
	const struct pecs_counts *c = rep->counts;
	/* The file's own problems are one test each, as in the JUnit file. */
	if (closing & PECS_TAP_STALE)
		fprintf(f, "%sok %zu Expectations.NoStaleLines\n# %zu line(s) match no case\n",
			c->stale ? "not " : "", ++n, c->stale);
	if (closing & PECS_TAP_BAD_LINES)
		fprintf(f, "%sok %zu Expectations.FileIsValid\n# %zu bad line(s)\n",
			c->bad_lines ? "not " : "", ++n, c->bad_lines);
	if (closing & PECS_TAP_GATE) {
		fprintf(f, "%sok %zu Gate.RunAsAWhole\n", rep->nproblems ? "not " : "", ++n);
		for (size_t i = 0; i < rep->nproblems; i++) {
			fputs("# ", f);
			tap_text(f, rep->problems[i]);
			fputc('\n', f);
		}
	}
	if (rep->root_cause && rep->root_cause[0]) {
		fputs("# root cause: ", f);
		tap_text(f, rep->root_cause);
		fputc('\n', f);
	}
	char line[256];
	pecs_counts_line(c, line, sizeof(line));
	fprintf(f, "# %s\n", line);
}

int pecs_write_tap_to(const struct pecs_report *rep, FILE *f)
{
	unsigned closing = pecs_tap_closing_failed(rep);
	pecs_tap_head(f, rep->version, rep->impl->name,
		      rep->count + pecs_tap_closing_count(closing));
	for (size_t i = 0; i < rep->count; i++)
		pecs_tap_case(f, i + 1, &rep->results[i]);
	pecs_tap_tail(f, rep->count, closing, rep);
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
