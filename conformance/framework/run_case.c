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
int pecs_case_missing_feature(const struct pecs_impl *impl, const struct pecs_case *c, char *buf,
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
	pecs_source_path(t->file, r->file, sizeof(r->file));
	r->line = t->line;
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
	char file[160];
	int line;
	struct pecs_call_tally calls[PECS_ENTRY_COUNT];
};

/* How long a child may take to go once SIGKILLed. A killed task still tears down what it
 * holds (each perf event's release), in the kernel and unkillably: thousands of events
 * took Debian's RT 6.1 under emulation tens of seconds. The runner does not wait that
 * out; it names the child it left behind and goes on. */
#define PECS_KILL_GRACE_MS 5000.0

int pecs_child_reap(pid_t pid, int *status, double within_ms)
{
	double deadline_ms = case_deadline_now_ms() + within_ms, pause_ms = 1;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		double left = deadline_ms - case_deadline_now_ms();
		if (left <= 0)
			return 0;
		/* Polled, not blocked on: a SIGCHLD handler or pidfd would need state the
		 * runner does not own. Backing off keeps a quick exit cheap and a slow one idle. */
		if (pause_ms > left)
			pause_ms = left;
		struct timespec ts = {(time_t)(pause_ms / 1000),
				      (long)((pause_ms - (double)(time_t)(pause_ms / 1000) * 1000) * 1e6)};
		nanosleep(&ts, NULL);
		if (pause_ms < 50)
			pause_ms *= 2;
	}
}

/* Reads the child's verdict until EOF or the deadline; the number of bytes got. */
static size_t read_verdict(int fd, struct wire_result *w, struct case_deadline *d)
{
	size_t got = 0;
	while (got < sizeof(*w) && !case_deadline_expired(d)) {
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

/* The verdict of a child that overran its deadline: it was killed, and either went or
 * is still going (its pid named, for whoever looks at the host). */
static void timed_out(struct pecs_result *r, const struct case_deadline *d, const char *stage,
		      pid_t pid, int gone)
{
	int n = snprintf(r->message, sizeof(r->message), "TIMEOUT: the case took over %.0f s "
			 "(%s) and was killed", d->limit_ms / 1000, stage);
	if (d->extended && n > 0 && (size_t)n < sizeof(r->message))
		n += snprintf(r->message + n, sizeof(r->message) - (size_t)n, ", the limit given "
			      "%d more time(s) while the CPUs were saturated", d->extended);
	if (!gone && n > 0 && (size_t)n < sizeof(r->message))
		snprintf(r->message + n, sizeof(r->message) - (size_t)n, "; pid %d had not "
			 "exited %.0f s after SIGKILL (stuck in the kernel, tearing down what it "
			 "held) and was left behind", (int)pid, PECS_KILL_GRACE_MS / 1000);
	r->raw = PECS_CRASH;
}

/* The child runs the case, its deferred cleanups and the implementation's teardown, writes
 * its verdict and exits: all of it within the deadline, or the child is killed. */
static void run_isolated(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
			 const struct pecs_case *c, unsigned timeout_s, struct pecs_result *r)
{
	int p[2];
	if (pipe(p) != 0) {
		r->raw = PECS_BROKEN;
		snprintf(r->message, sizeof(r->message), "pipe: %s", strerror(errno));
		return;
	}
	struct case_deadline deadline;
	case_deadline_start(&deadline, timeout_s, NULL);
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
		memcpy(w.file, mine.file, sizeof(w.file));
		w.line = mine.line;
		memcpy(w.calls, mine.calls, sizeof(w.calls));
		ssize_t ignored = write(p[1], &w, sizeof(w));
		(void)ignored;
		_exit(0);
	}
	close(p[1]);
	struct wire_result w;
	size_t got = read_verdict(p[0], &w, &deadline);
	close(p[0]);
	int ws = 0, reaped;
	/* Its exit counts too: what the case left open is closed there. */
	while ((reaped = pecs_child_reap(pid, &ws, case_deadline_left_ms(&deadline))) == 0 &&
	       !case_deadline_expired(&deadline))
		;
	if (reaped == 0) {
		kill(pid, SIGKILL);
		reaped = pecs_child_reap(pid, &ws, PECS_KILL_GRACE_MS);
		timed_out(r, &deadline, got == sizeof(w) ? "it gave a verdict but did not exit" :
			  "setup, body, deferred cleanups and teardown", pid, reaped != 0);
		return;
	}
	if (got == sizeof(w)) {
		r->raw = (enum pecs_status)w.status;
		w.message[sizeof(w.message) - 1] = 0;
		snprintf(r->message, sizeof(r->message), "%s", w.message);
		w.file[sizeof(w.file) - 1] = 0;
		snprintf(r->file, sizeof(r->file), "%s", w.file);
		r->line = w.line;
		memcpy(r->calls, w.calls, sizeof(r->calls));
	} else {
		r->raw = PECS_CRASH;
		if (reaped < 0)
			snprintf(r->message, sizeof(r->message), "gave no verdict, and waiting for "
				 "it failed: %s", strerror(-reaped));
		else if (WIFSIGNALED(ws))
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
	if (pecs_case_missing_feature(impl, c, missing, sizeof(missing))) {
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
