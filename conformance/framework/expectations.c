/* Expectations files: the cases an implementation is known to fail, one id or glob a line.
 *
 *   Required.Read.Group.*            # FORMAT_GROUP not implemented (bug 123)
 *   Required.Open.Pid.Other [unprivileged]   # EACCES without CAP_PERFMON
 *
 * Conditions, in brackets after the pattern and separated by commas: privileged,
 * unprivileged, kernel>=X.Y[.Z], kernel<X.Y[.Z], paranoid>=N, paranoid<N. A line whose
 * conditions do not hold is inactive on this host but must still name existing cases. Two lines with the
 * same pattern and conditions are a mistake (harness/pecs_harness/expectations.py applies
 * the same rules).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Compares X.Y[.Z] prefixes: a point release left out is 0, so "6.1" is 6.1.0 and
 * [kernel<6.1.192] names the stable release that fixed something. */
static int kernel_cmp(const char *release, const char *want)
{
	int a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
	sscanf(release, "%d.%d.%d", &a[0], &a[1], &a[2]);
	sscanf(want, "%d.%d.%d", &b[0], &b[1], &b[2]);
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* 1 if cond holds, 0 if not, -1 if it is not a known condition. */
static int eval_condition(const char *cond, const struct pecs_host_facts *f)
{
	if (strcmp(cond, "privileged") == 0)
		return f->privileged != 0;
	if (strcmp(cond, "unprivileged") == 0)
		return f->privileged == 0;
	/* An unknown kernel version satisfies neither side: the line stays inactive. */
	int known = isdigit((unsigned char)f->kernel_release[0]);
	if (strncmp(cond, "kernel>=", 8) == 0 && isdigit((unsigned char)cond[8]))
		return known && kernel_cmp(f->kernel_release, cond + 8) >= 0;
	if (strncmp(cond, "kernel<", 7) == 0 && isdigit((unsigned char)cond[7]))
		return known && kernel_cmp(f->kernel_release, cond + 7) < 0;
	if (strncmp(cond, "paranoid>=", 10) == 0)
		return f->paranoid >= atoi(cond + 10);
	if (strncmp(cond, "paranoid<", 9) == 0)
		return f->paranoid < atoi(cond + 9);
	return -1;
}

static int pattern_known(const char *pattern)
{
	size_t n;
	const struct pecs_case *const *all = pecs_registry(&n);
	for (size_t i = 0; i < n; i++)
		if (fnmatch(pattern, all[i]->id, 0) == 0)
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The conditions as one canonical string, so "[a, b]" and "[b,a]" compare equal. */
static char *canonical_conds(char **conds, size_t n)
{
	qsort(conds, n, sizeof(*conds), cmp_str);
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(conds[i]) + 2;
	char *out = malloc(len);
	if (!out)
		return NULL;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, conds[i]);
	}
	return out;
}

static int parse_line(struct pecs_expect_line *l, char *text, int lineno, const char *path,
		      const struct pecs_host_facts *facts, char *err, size_t errlen)
{
	char *conds[32];
	size_t nconds = 0;
	char *hash = strchr(text, '#');
	if (!hash) {
		snprintf(err, errlen, "%s:%d: every line needs a reason: append '# why it fails'",
			 path, lineno);
		return -EINVAL;
	}
	*hash = 0;
	char *reason = trim(hash + 1);
	if (!*reason) {
		snprintf(err, errlen, "%s:%d: the reason after '#' is empty: say why it fails",
			 path, lineno);
		return -EINVAL;
	}
	char *spec = trim(text);
	/* The conditions are the [..] after whitespace; a '[' inside the pattern is a glob's
	 * character class (Required.Read.[AB]*). */
	char *bracket = spec + strcspn(spec, " \t");
	bracket = *bracket ? strchr(bracket, '[') : NULL;
	l->active = 1;
	if (bracket) {
		char *close = strchr(bracket, ']');
		if (!close || *trim(close + 1)) {
			snprintf(err, errlen, "%s:%d: conditions go in one [..] after the case id, "
				 "e.g. 'Required.X [unprivileged] # reason'", path, lineno);
			return -EINVAL;
		}
		*close = 0;
		*bracket = 0;
		char *save = NULL;
		for (char *c = strtok_r(bracket + 1, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			int v = eval_condition(trim(c), facts);
			if (v < 0) {
				snprintf(err, errlen, "%s:%d: unknown condition '%s' (known: privileged, "
					 "unprivileged, kernel>=X.Y[.Z], kernel<X.Y[.Z], paranoid>=N, "
					 "paranoid<N)",
					 path, lineno, trim(c));
				return -EINVAL;
			}
			l->active = l->active && v;
			if (nconds == sizeof(conds) / sizeof(conds[0])) {
				snprintf(err, errlen, "%s:%d: more than %zu conditions", path,
					 lineno, nconds);
				return -EINVAL;
			}
			conds[nconds++] = trim(c);
		}
		spec = trim(spec);
	}
	if (!*spec || strpbrk(spec, " \t")) {
		snprintf(err, errlen, "%s:%d: expected one case id or glob before the conditions",
			 path, lineno);
		return -EINVAL;
	}
	l->pattern = strdup(spec);
	l->reason = strdup(reason);
	l->conds = canonical_conds(conds, nconds);
	l->lineno = lineno;
	l->known = pattern_known(spec);
	return l->pattern && l->reason && l->conds ? 0 : -ENOMEM;
}

static void free_line(struct pecs_expect_line *l)
{
	free(l->pattern);
	free(l->reason);
	free(l->conds);
}

/* Only the first of two equal lines could ever match, so the second's reason would be
 * ignored without a word: refuse it, naming both. */
static int check_duplicate(const struct pecs_expectations *e, const struct pecs_expect_line *l,
			   char *err, size_t errlen)
{
	for (size_t i = 0; i < e->count; i++) {
		const struct pecs_expect_line *o = &e->lines[i];
		if (strcmp(o->pattern, l->pattern) || strcmp(o->conds, l->conds))
			continue;
		snprintf(err, errlen, "%s:%d: duplicate of %s:%d ('%s'%s%s%s): delete one of the "
			 "two lines", e->path, l->lineno, e->path, o->lineno, l->pattern,
			 *l->conds ? " [" : "", l->conds, *l->conds ? "]" : "");
		return -EINVAL;
	}
	return 0;
}

static int add_error(struct pecs_expectations *e, const char *msg)
{
	char **grown = realloc(e->errors, (e->nerrors + 1) * sizeof(*e->errors));
	if (!grown)
		return -ENOMEM;
	e->errors = grown;
	e->errors[e->nerrors] = strdup(msg);
	if (!e->errors[e->nerrors])
		return -ENOMEM;
	e->nerrors++;
	return 0;
}

int pecs_expect_load(struct pecs_expectations *e, const char *path,
		     const struct pecs_host_facts *facts, char *err, size_t errlen)
{
	memset(e, 0, sizeof(*e));
	if (!path || !*path)
		return 0;
	e->path = strdup(path);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open expectations file: %s", path, strerror(errno));
		return -errno;
	}
	char *buf = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	/* A bad line is recorded and left out, and the rest still load: the run then gates its
	 * cases with every good line and fails only for the bad ones. */
	while (getline(&buf, &cap, f) >= 0) {
		lineno++;
		char *s = trim(buf);
		if (!*s || *s == '#')
			continue;
		struct pecs_expect_line *grown =
			realloc(e->lines, (e->count + 1) * sizeof(*e->lines));
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		e->lines = grown;
		struct pecs_expect_line *l = &e->lines[e->count];
		memset(l, 0, sizeof(*l));
		char msg[512];
		if (*s == '@')
			rc = pecs_directive_parse(e, s, lineno, msg, sizeof(msg));
		else
			rc = parse_line(l, s, lineno, path, facts, msg, sizeof(msg));
		if (rc == 0 && *s == '@')
			continue;
		if (rc == 0)
			rc = check_duplicate(e, l, msg, sizeof(msg));
		if (rc == 0) {
			e->count++;
			continue;
		}
		free_line(l);
		if (rc != -EINVAL)
			break;
		if (e->nerrors == 0)
			snprintf(err, errlen, "%s", msg);
		rc = add_error(e, msg);
		if (rc < 0)
			break;
	}
	free(buf);
	fclose(f);
	if (rc == 0 && e->nerrors)
		rc = -EINVAL;
	return rc;
}

void pecs_expect_free(struct pecs_expectations *e)
{
	for (size_t i = 0; i < e->count; i++)
		free_line(&e->lines[i]);
	for (size_t i = 0; i < e->nerrors; i++)
		free(e->errors[i]);
	free(e->errors);
	for (size_t i = 0; i < e->ncauses; i++)
		free(e->causes[i].reason);
	free(e->features);
	free(e->lines);
	free(e->path);
	memset(e, 0, sizeof(*e));
}

const struct pecs_expect_line *pecs_expect_match(const struct pecs_expectations *e,
						  const char *id)
{
	for (size_t i = 0; i < e->count; i++)
		if (e->lines[i].active && fnmatch(e->lines[i].pattern, id, 0) == 0)
			return &e->lines[i];
	return NULL;
}

/* The @root-cause line explaining a failure no line lists: the case's own tally has its
 * entry point failing with the line's errno. */
static const struct pecs_expect_cause *explaining(const struct pecs_expectations *e,
						   const struct pecs_result *r)
{
	if (r->raw != PECS_FAIL && r->raw != PECS_BROKEN && r->raw != PECS_CRASH)
		return NULL;
	for (size_t i = 0; i < e->ncauses; i++)
		if (pecs_call_failed_with(&r->calls[e->causes[i].entry]) == e->causes[i].err)
			return &e->causes[i];
	return NULL;
}

void pecs_expect_apply(const struct pecs_expectations *e, struct pecs_result *r)
{
	const struct pecs_expect_line *l = pecs_expect_match(e, r->c->id);
	r->status = r->raw;
	const struct pecs_expect_cause *cause = l ? NULL : explaining(e, r);
	if (cause) {
		r->expect_file = e->path;
		r->expect_line = cause->lineno;
		r->expect_reason = cause->reason;
		r->status = PECS_XFAIL;
		return;
	}
	if (!l)
		return;
	r->expect_file = e->path;
	r->expect_line = l->lineno;
	r->expect_reason = l->reason;
	switch (r->raw) {
	case PECS_PASS: {
		char m[sizeof(r->message)];
		snprintf(m, sizeof(m),
			 "listed as failing in %s:%d ('%s') but it passed: delete that line%s",
			 e->path, l->lineno, l->pattern,
			 strpbrk(l->pattern, "*?[") ? " or narrow the glob" : "");
		snprintf(r->message, sizeof(r->message), "%s", m);
		r->status = PECS_XPASS;
		break;
	}
	case PECS_FAIL:
	case PECS_BROKEN:
	case PECS_CRASH:
		r->status = PECS_XFAIL;
		break;
	default:
		break; /* not run here: the line still documents the gap elsewhere */
	}
}

size_t pecs_expect_stale(const struct pecs_expectations *e, FILE *out)
{
	size_t n = 0;
	for (size_t i = 0; i < e->count; i++) {
		if (e->lines[i].known)
			continue;
		n++;
		if (out)
			fprintf(out, "%s:%d: '%s' matches no case in this suite: delete the line or "
				"correct the case id (list them with --list)\n",
				e->path, e->lines[i].lineno, e->lines[i].pattern);
	}
	return n;
}
