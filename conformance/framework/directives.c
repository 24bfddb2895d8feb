/* The lines of an expectations file that gate the run as a whole rather than one case:
 *
 *   @floor 92                      # fewer passes than this fail the gate
 *   @features counting,mmap,poll   # the feature set the implementation claims
 *   @accept-refusal                # EACCES/EPERM from a sandbox we run in on purpose
 *   @root-cause mmap ENOSYS        # every failure that follows from mmap's ENOSYS
 *
 * A green gate must mean something: a run that passes nothing, that silently claims fewer
 * features, or whose own refusals turned every case into ENV_SKIP is not green. The harness
 * (harness/pecs_harness/expectations.py) reads the same lines. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *pecs_features_canonical(const char *const *list, const char *csv)
{
	char *items[128], *copy = strdup(csv ? csv : "");
	size_t n = 0;
	if (!copy)
		return NULL;
	for (size_t i = 0; list && list[i] && n < 128; i++)
		items[n++] = (char *)list[i];
	char *save = NULL;
	for (char *t = strtok_r(copy, ", \t", &save); t && n < 128; t = strtok_r(NULL, ", \t", &save))
		items[n++] = t;
	qsort(items, n, sizeof(*items), cmp_str);
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(items[i]) + 1;
	char *out = malloc(len);
	if (out) {
		out[0] = 0;
		for (size_t i = 0; i < n; i++) {
			if (i && strcmp(items[i], items[i - 1]) == 0)
				continue;
			if (out[0])
				strcat(out, ",");
			strcat(out, items[i]);
		}
	}
	free(copy);
	return out;
}

static int once(int *line, int lineno, const char *name, const char *path, char *err,
		size_t errlen)
{
	if (*line) {
		snprintf(err, errlen, "%s:%d: duplicate of %s:%d ('@%s'): delete one of the two "
			 "lines", path, lineno, path, *line, name);
		return -EINVAL;
	}
	*line = lineno;
	return 0;
}

/* The errno whose name pecs_errname prints as name ("ENOSYS"), or 0. */
static int errno_named(const char *name)
{
	for (int e = 1; e < 4096; e++)
		if (strcmp(pecs_errname(e), name) == 0)
			return e;
	return 0;
}

/* "@root-cause ENTRY ERRNO": the entry point as pecs_entry_name names it, the errno as the
 * root-cause line prints it (a leading '-' allowed). */
static int root_cause(struct pecs_expectations *e, char *arg, const char *reason, int lineno,
		      char *err, size_t errlen)
{
	char *save = NULL, *entry = strtok_r(arg, " \t", &save), *name = strtok_r(NULL, " \t", &save);
	int which = -1, code = 0;
	for (int i = 0; entry && i < PECS_ENTRY_COUNT; i++)
		if (strcmp(entry, pecs_entry_name(i)) == 0)
			which = i;
	if (name && *name == '-')
		name++;
	if (name)
		code = errno_named(name);
	if (which < 0 || !code || strtok_r(NULL, " \t", &save)) {
		snprintf(err, errlen, "%s:%d: '@root-cause ENTRY ERRNO', ENTRY one of open, close, "
			 "read, write, ioctl, mmap, munmap, poll and ERRNO a name such as ENOSYS",
			 e->path, lineno);
		return -EINVAL;
	}
	for (size_t i = 0; i < e->ncauses; i++) {
		if (e->causes[i].entry == which) {
			snprintf(err, errlen, "%s:%d: duplicate of %s:%d ('@root-cause %s'): delete "
				 "one of the two lines", e->path, lineno, e->path, e->causes[i].lineno,
				 entry);
			return -EINVAL;
		}
	}
	char *why = strdup(reason);
	if (!why)
		return -ENOMEM;
	e->causes[e->ncauses++] = (struct pecs_expect_cause){
		.entry = which, .err = code, .lineno = lineno, .reason = why};
	return 0;
}

int pecs_directive_parse(struct pecs_expectations *e, char *text, int lineno, char *err,
			 size_t errlen)
{
	char *hash = strchr(text, '#');
	const char *reason = hash ? hash + 1 : "";
	while (isspace((unsigned char)*reason))
		reason++;
	if (!*reason) {
		snprintf(err, errlen, "%s:%d: every line needs a reason: append '# why'", e->path,
			 lineno);
		return -EINVAL;
	}
	*hash = 0;
	char *name = text + 1, *arg = name + strcspn(name, " \t");
	if (*arg)
		*arg++ = 0;
	arg += strspn(arg, " \t");
	for (char *end = arg + strlen(arg); end > arg && isspace((unsigned char)end[-1]);)
		*--end = 0;
	if (strcmp(name, "floor") == 0) {
		char *end;
		long v = strtol(arg, &end, 10);
		if (!*arg || *end || v < 0) {
			snprintf(err, errlen, "%s:%d: '@floor N': N is the least number of passes",
				 e->path, lineno);
			return -EINVAL;
		}
		int rc = once(&e->floor_line, lineno, name, e->path, err, errlen);
		if (rc == 0)
			e->floor = v;
		return rc;
	}
	if (strcmp(name, "features") == 0) {
		int rc = once(&e->features_line, lineno, name, e->path, err, errlen);
		if (rc < 0)
			return rc;
		e->features = pecs_features_canonical(NULL, strcmp(arg, "-") ? arg : "");
		return e->features ? 0 : -ENOMEM;
	}
	if (strcmp(name, "accept-refusal") == 0 && !*arg)
		return once(&e->accept_refusal_line, lineno, name, e->path, err, errlen);
	if (strcmp(name, "root-cause") == 0)
		return root_cause(e, arg, reason, lineno, err, errlen);
	snprintf(err, errlen, "%s:%d: unknown line '@%s' (known: @floor N, @features LIST, "
		 "@accept-refusal, @root-cause ENTRY ERRNO)", e->path, lineno, name);
	return -EINVAL;
}

/* Appends one gate problem to the session's list. */
static void problem(struct pecs_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct pecs_session *s, const char *fmt, ...)
{
	if (s->nproblems == PECS_MAX_GATE_PROBLEMS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->problems[s->nproblems++], sizeof(s->problems[0]), fmt, ap);
	va_end(ap);
}

/* Whether the @root-cause line at lineno made any result XFAIL. */
static int explained_any(const struct pecs_result *results, size_t n, int lineno)
{
	for (size_t i = 0; i < n; i++)
		if (results[i].expect_file && results[i].expect_line == lineno)
			return 1;
	return 0;
}

void pecs_gate_directives(struct pecs_session *s, const struct pecs_counts *c,
			  const struct pecs_result *results, size_t n)
{
	const struct pecs_expectations *e = &s->expect;
	s->nproblems = 0;
	/* A floor counts the whole suite: a shard or a filtered run holds only part of it. */
	if (e->floor_line && s->shard_total == 1 && !s->filtered &&
	    c->n[PECS_PASS] < (size_t)e->floor)
		problem(s, "%zu passed, below the floor of %ld in %s:%d: a regression, or lower "
			"the floor there with the reason", c->n[PECS_PASS], e->floor, e->path,
			e->floor_line);
	if (e->features_line) {
		char *mine = pecs_features_canonical(s->impl->features, NULL);
		if (mine && strcmp(mine, e->features) != 0)
			problem(s, "%s claims the features '%s' but %s:%d records '%s': if the "
				"change is meant, write '@features %s # why' there", s->impl->name,
				mine, e->path, e->features_line, e->features, *mine ? mine : "-");
		free(mine);
	}
	/* Like a stale line, judged on the whole suite only. */
	for (size_t i = 0; s->shard_total == 1 && !s->filtered && i < e->ncauses; i++)
		if (!explained_any(results, n, e->causes[i].lineno))
			problem(s, "%s:%d: '@root-cause %s %s' explains no failing case of this run: "
				"delete the line", e->path, e->causes[i].lineno,
				pecs_entry_name(e->causes[i].entry), pecs_errname(e->causes[i].err));
	if (s->refusal[0] && !e->accept_refusal_line)
		problem(s, "%s; the host facts allow the call (privileged %s, perf_event_paranoid "
			"%d), so the implementation refused it and its ENV_SKIPs are not the "
			"host's: fix it, or accept it with '@accept-refusal # why' in %s",
			s->refusal, s->facts.privileged ? "yes" : "no", s->facts.paranoid,
			e->path ? e->path : "its expectations file");
}
