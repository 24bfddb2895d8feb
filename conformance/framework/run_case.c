/* Running one case: the feature rules, fresh implementation state, cleanup, and (when
 * asked) a child process so that a crashing implementation costs one case, not the run. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "case_context.h"
#include "case_deadline.h"
#include "runner.h"

/* The first feature of c the implementation does not claim, copied into buf; 0 if all are. */
static int missing_feature(const struct pecs_impl *impl, const struct pecs_case *c, char *buf,
			   size_t len)
{
	const char *p = c->features;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int claimed = 0;
		for (const char *const *f = impl->features; f && *f; f++)
			if (strlen(*f) == n && strncmp(*f, p, n) == 0)
				claimed = 1;
		if (!claimed && n > 0) {
			snprintf(buf, len, "%.*s", (int)n, p);
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static void run_here(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
		     const struct pecs_case *c, struct pecs_result *r)
{
	struct pecs_t *t = calloc(1, sizeof(*t));
	if (!t) {
		r->raw = PECS_BROKEN;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	t->impl = impl;
	t->facts = facts;
	t->c = c;
	t->status = PECS_PASS;
	int err = impl->setup(&t->ctx);
	if (err < 0) {
		r->raw = PECS_BROKEN;
		snprintf(r->message, sizeof(r->message), "%s setup failed: %s", impl->name,
			 pecs_retname(err));
		free(t);
		return;
	}
	pecs_case_body(t);
	pecs_case_release(t);
	impl->teardown(t->ctx);
	r->raw = t->status;
	memcpy(r->calls, t->calls, sizeof(r->calls));
	snprintf(r->message, sizeof(r->message), "%s", t->message);
	if (r->raw == PECS_UNSUPPORTED) {
		/* Every feature the case needs is claimed, so skipping it hides a gap. */
		char m[sizeof(r->message)];
		snprintf(m, sizeof(m), "%s claims every feature this case needs (%s) yet it was "
			 "unsupported: %.800s", impl->name, *c->features ? c->features : "none",
			 t->message);
		snprintf(r->message, sizeof(r->message), "%s", m);
		r->raw = PECS_FAIL;
	}
	free(t);
}

struct wire_result {
	int status;
	char message[1024];
	struct pecs_call_tally calls[PECS_ENTRY_COUNT];
};

/* The child's verdict as far as it came before EOF or the limit (*timed_out then 1). */
static size_t read_verdict(int fd, struct wire_result *w, struct case_deadline *d,
			   int *timed_out)
{
	size_t got = 0;
	while (got < sizeof(*w)) {
		if (case_deadline_expired(d)) {
			*timed_out = 1;
			break;
		}
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, case_deadline_left_ms(d));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (pr == 0)
			continue;
		ssize_t n = read(fd, (char *)w + got, sizeof(*w) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static void run_isolated(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
			 const struct pecs_case *c, unsigned timeout_s, struct pecs_result *r)
{
	int p[2];
	if (pipe(p) != 0) {
		r->raw = PECS_BROKEN;
		snprintf(r->message, sizeof(r->message), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		r->raw = PECS_BROKEN;
		snprintf(r->message, sizeof(r->message), "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		struct pecs_result mine = {.c = c};
		run_here(impl, facts, c, &mine);
		struct wire_result w = {.status = (int)mine.raw};
		memcpy(w.message, mine.message, sizeof(w.message));
		memcpy(w.calls, mine.calls, sizeof(w.calls));
		ssize_t ignored = write(p[1], &w, sizeof(w));
		(void)ignored;
		_exit(0);
	}
	close(p[1]);
	struct wire_result w;
	int timed_out = 0;
	struct case_deadline deadline;
	case_deadline_start(&deadline, timeout_s, NULL);
	size_t got = read_verdict(p[0], &w, &deadline, &timed_out);
	close(p[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (got == sizeof(w)) {
		r->raw = (enum pecs_status)w.status;
		w.message[sizeof(w.message) - 1] = 0;
		snprintf(r->message, sizeof(r->message), "%s", w.message);
		memcpy(r->calls, w.calls, sizeof(r->calls));
	} else if (timed_out) {
		r->raw = PECS_CRASH;
		snprintf(r->message, sizeof(r->message), "timed out after %u s and was killed",
			 timeout_s ? timeout_s : 60);
		if (deadline.extended)
			snprintf(r->message + strlen(r->message),
				 sizeof(r->message) - strlen(r->message),
				 ", after %d more limit(s) given while the CPUs were saturated",
				 deadline.extended);
	} else {
		r->raw = PECS_CRASH;
		if (WIFSIGNALED(ws))
			snprintf(r->message, sizeof(r->message), "killed by signal %d (%s)",
				 WTERMSIG(ws), strsignal(WTERMSIG(ws)));
		else
			snprintf(r->message, sizeof(r->message),
				 "exited with status %d before giving a verdict", WEXITSTATUS(ws));
	}
}

void pecs_run_case(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
		   const struct pecs_case *c, const struct pecs_run_opts *opts,
		   struct pecs_result *r)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	double start = case_deadline_now_ms();
	char missing[64];
	if (missing_feature(impl, c, missing, sizeof(missing))) {
		r->raw = PECS_UNSUPPORTED;
		snprintf(r->message, sizeof(r->message), "%s does not claim feature %s", impl->name,
			 missing);
	} else if (facts->unavailable[0] && *c->features) {
		r->raw = PECS_ENV_SKIP;
		snprintf(r->message, sizeof(r->message), "%s", facts->unavailable);
	} else if (opts && opts->isolate) {
		run_isolated(impl, facts, c, opts->timeout_s, r);
	} else {
		run_here(impl, facts, c, r);
	}
	r->status = r->raw;
	r->ms = case_deadline_now_ms() - start;
}
