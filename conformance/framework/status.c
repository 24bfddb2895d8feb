/* Status names and the tally that decides whether a run passes. */
#include <stdio.h>
#include <string.h>

#include "runner.h"

static const char *const names[PECS_STATUS_COUNT] = {
	[PECS_PASS] = "PASS",		  [PECS_FAIL] = "FAIL",
	[PECS_XFAIL] = "XFAIL",		  [PECS_XPASS] = "XPASS",
	[PECS_UNSUPPORTED] = "UNSUPPORTED", [PECS_ENV_SKIP] = "ENV_SKIP",
	[PECS_BROKEN] = "BROKEN",	  [PECS_CRASH] = "CRASH",
};

const char *pecs_status_name(enum pecs_status s)
{
	return (unsigned)s < PECS_STATUS_COUNT ? names[s] : "?";
}

int pecs_status_parse(const char *name, enum pecs_status *out)
{
	for (int i = 0; i < PECS_STATUS_COUNT; i++) {
		if (strcmp(names[i], name) == 0) {
			*out = (enum pecs_status)i;
			return 0;
		}
	}
	return -1;
}

void pecs_counts_add(struct pecs_counts *c, const struct pecs_result *r)
{
	if ((unsigned)r->status < PECS_STATUS_COUNT)
		c->n[r->status]++;
}

int pecs_counts_ok(const struct pecs_counts *c)
{
	return c->n[PECS_FAIL] == 0 && c->n[PECS_XPASS] == 0 && c->n[PECS_BROKEN] == 0 &&
	       c->n[PECS_CRASH] == 0 && c->stale == 0 && c->bad_lines == 0 &&
	       c->gate_problems == 0;
}

void pecs_counts_line(const struct pecs_counts *c, char *buf, size_t len)
{
	snprintf(buf, len,
		 "%zu passed, %zu failed, %zu xfail, %zu xpass, %zu unsupported, %zu env-skipped, "
		 "%zu broken, %zu crashed",
		 c->n[PECS_PASS], c->n[PECS_FAIL], c->n[PECS_XFAIL], c->n[PECS_XPASS],
		 c->n[PECS_UNSUPPORTED], c->n[PECS_ENV_SKIP], c->n[PECS_BROKEN], c->n[PECS_CRASH]);
	if (c->stale) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, ", %zu stale expectation line%s", c->stale,
			 c->stale == 1 ? "" : "s");
	}
	if (c->gate_problems) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, ", %zu gate problem%s", c->gate_problems,
			 c->gate_problems == 1 ? "" : "s");
	}
	if (c->bad_lines) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, ", %zu bad expectation line%s", c->bad_lines,
			 c->bad_lines == 1 ? "" : "s");
	}
}
