/* A run: n seeded sequences on both sides, each difference counted under its raw key,
 * the first ones of each raw key (and a sample of the rest) minimized into classes.
 * Everything is in sequence order, so a seed gives the same classes and reproducers. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance/differential/diff.h"

static struct diff_raw *raw_slot(struct diff_result *r, const char *raw)
{
	for (int i = 0; i < r->nraws; i++)
		if (strcmp(r->raws[i].raw, raw) == 0)
			return &r->raws[i];
	struct diff_raw *n = realloc(r->raws, sizeof(*n) * (size_t)(r->nraws + 1));
	if (!n)
		return NULL;
	r->raws = n;
	n = &r->raws[r->nraws++];
	memset(n, 0, sizeof(*n));
	snprintf(n->raw, sizeof(n->raw), "%s", raw);
	return n;
}

static int add_class(struct diff_result *r, const struct diff_options *o, uint64_t index,
		     const struct diff_seq *s, const struct diff_found *f)
{
	for (int i = 0; i < r->nclasses; i++) {
		if (strcmp(r->classes[i].key, f->key) == 0) {
			r->classes[i].count++;
			return 0;
		}
	}
	struct diff_class *n = realloc(r->classes, sizeof(*n) * (size_t)(r->nclasses + 1));
	if (!n)
		return -ENOMEM;
	r->classes = n;
	n = &r->classes[r->nclasses++];
	memset(n, 0, sizeof(*n));
	snprintf(n->key, sizeof(n->key), "%s", f->key);
	snprintf(n->raw, sizeof(n->raw), "%s", f->raw);
	n->count = 1;
	n->first = index;
	n->repro = *s;
	n->at = f->at;
	n->known = diff_known_match(o->known, o->nknown, f->key);
	return 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct diff_class *)a)->key, ((const struct diff_class *)b)->key);
}

static int by_raw(const void *a, const void *b)
{
	return strcmp(((const struct diff_raw *)a)->raw, ((const struct diff_raw *)b)->raw);
}

/* A side that never answers (an implementation stuck in a loop) cannot be cut off from
 * inside the process: the run ends, naming the sequence so it can be replayed alone. The
 * message is written before the alarm is armed, since the handler may only write(2). */
static char hang_msg[200];

static void on_alarm(int sig)
{
	(void)sig;
	ssize_t n = write(STDERR_FILENO, hang_msg, strlen(hang_msg));
	(void)n;
	_exit(3);
}

static void watch(const struct diff_options *o, uint64_t index, uint64_t seed, unsigned s,
		  const char *what)
{
	if (!o->timeout_s)
		return;
	snprintf(hang_msg, sizeof(hang_msg), "pecs-diff: sequence %" PRIu64 " (seed %#" PRIx64
		 ") %s gave no answer in %u s; replay it with --first %" PRIu64
		 " --sequences 1\n", index, seed, what, s, index);
	signal(SIGALRM, on_alarm);
	alarm(s);
}

int diff_session(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		 const struct diff_options *o, struct diff_result *r)
{
	memset(r, 0, sizeof(*r));
	for (uint64_t i = o->first; i < o->first + o->sequences; i++) {
		struct diff_seq s;
		struct diff_found f;
		diff_gen(&s, diff_seq_seed(o->seed, i));
		watch(o, i, s.seed, o->timeout_s, "run");
		int d = diff_check(oracle, impl, &s, &f);
		alarm(0);
		if (d < 0)
			return d;
		r->sequences++;
		r->calls += (uint64_t)s.n;
		if (d == 0) {
			r->agreeing++;
			r->agreeing_calls += (uint64_t)s.n;
			continue;
		}
		r->agreeing_calls += (uint64_t)f.at;
		struct diff_raw *raw = raw_slot(r, f.raw);
		if (!raw)
			return -ENOMEM;
		raw->count++;
		if (raw->count > o->minimize &&
		    (o->sample_every == 0 || raw->count % o->sample_every != 0))
			continue;
		raw->minimized++;
		watch(o, i, s.seed, 4 * o->timeout_s, "minimizing");
		diff_minimize(oracle, impl, &s, &f);
		alarm(0);
		if (add_class(r, o, i, &s, &f) < 0)
			return -ENOMEM;
	}
	qsort(r->classes, (size_t)r->nclasses, sizeof(r->classes[0]), by_key);
	qsort(r->raws, (size_t)r->nraws, sizeof(r->raws[0]), by_raw);
	return 0;
}

int diff_result_new_classes(const struct diff_result *r)
{
	int n = 0;
	for (int i = 0; i < r->nclasses; i++)
		n += r->classes[i].known == NULL;
	return n;
}

void diff_result_free(struct diff_result *r)
{
	free(r->classes);
	free(r->raws);
	memset(r, 0, sizeof(*r));
}
