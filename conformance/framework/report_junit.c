/* JUnit XML: one <testsuites> root, so Bazel and CI systems parse it. XFAIL counts as a
 * pass with its reason in system-out; UNSUPPORTED and ENV_SKIP are <skipped>. */
#include <errno.h>
#include <stdio.h>

#include "runner.h"

static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (c < 0x20 && c != '\n' && c != '\t')
				fputc('?', f); /* XML 1.0 cannot carry other control characters */
			else
				fputc(c, f);
		}
	}
}

/* The gate's problems that are no case's own, one test each. */
static void junit_run_cases(FILE *f, const struct pecs_report *rep)
{
	const struct pecs_counts *c = rep->counts;
	if (c->stale) {
		fprintf(f, "    <testcase classname=\"pecs.");
		xml_text(f, rep->impl->name);
		fprintf(f, "\" name=\"Expectations.NoStaleLines\"><failure message=\"%zu line(s) "
			   "of ", c->stale);
		xml_text(f, rep->expectations->path);
		fprintf(f, " match no case\"/></testcase>\n");
	}
	if (c->bad_lines) {
		fprintf(f, "    <testcase classname=\"pecs.");
		xml_text(f, rep->impl->name);
		fprintf(f, "\" name=\"Expectations.FileIsValid\"><failure message=\"");
		for (size_t i = 0; i < rep->expectations->nerrors; i++) {
			fputs(i ? "; " : "", f);
			xml_text(f, rep->expectations->errors[i]);
		}
		fprintf(f, "\"/></testcase>\n");
	}
	if (rep->nproblems) {
		fprintf(f, "    <testcase classname=\"pecs.");
		xml_text(f, rep->impl->name);
		fprintf(f, "\" name=\"Gate.RunAsAWhole\"><failure message=\"");
		for (size_t i = 0; i < rep->nproblems; i++) {
			fputs(i ? "; " : "", f);
			xml_text(f, rep->problems[i]);
		}
		fprintf(f, "\"/></testcase>\n");
	}
}

int pecs_write_junit(const struct pecs_report *rep, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	const struct pecs_counts *c = rep->counts;
	size_t failures = c->n[PECS_FAIL] + c->n[PECS_XPASS] + (c->stale ? 1 : 0) +
			  (c->bad_lines ? 1 : 0) + (rep->nproblems ? 1 : 0);
	size_t errors = c->n[PECS_BROKEN] + c->n[PECS_CRASH];
	size_t skipped = c->n[PECS_UNSUPPORTED] + c->n[PECS_ENV_SKIP];
	size_t tests = rep->count + (c->stale ? 1 : 0) + (c->bad_lines ? 1 : 0) +
		       (rep->nproblems ? 1 : 0);
	double total = 0;
	for (size_t i = 0; i < rep->count; i++)
		total += rep->results[i].ms;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n",
		tests, failures, errors, skipped);
	fprintf(f, "  <testsuite name=\"pecs.");
	xml_text(f, rep->impl->name);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		   "time=\"%.3f\">\n", tests, failures, errors, skipped, total / 1000.0);
	for (size_t i = 0; i < rep->count; i++) {
		const struct pecs_result *r = &rep->results[i];
		fprintf(f, "    <testcase classname=\"pecs.");
		xml_text(f, rep->impl->name);
		fprintf(f, "\" name=\"");
		xml_text(f, r->c->id);
		fprintf(f, "\" time=\"%.3f\">", r->ms / 1000.0);
		const char *tag = NULL;
		switch (r->status) {
		case PECS_FAIL:
		case PECS_XPASS: tag = "failure"; break;
		case PECS_BROKEN:
		case PECS_CRASH: tag = "error"; break;
		case PECS_UNSUPPORTED:
		case PECS_ENV_SKIP: tag = "skipped"; break;
		default: break;
		}
		if (tag) {
			fprintf(f, "<%s message=\"%s: ", tag, pecs_status_name(r->status));
			xml_text(f, r->message);
			fprintf(f, "\"/>");
		} else if (r->status == PECS_XFAIL) {
			fprintf(f, "<system-out>XFAIL (%s:%d: ", r->expect_file, r->expect_line);
			xml_text(f, r->expect_reason);
			fprintf(f, "): ");
			xml_text(f, r->message);
			fprintf(f, "</system-out>");
		}
		fprintf(f, "</testcase>\n");
	}
	junit_run_cases(f, rep);
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	return fclose(f) == 0 ? 0 : -errno;
}
