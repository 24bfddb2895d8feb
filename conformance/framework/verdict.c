/* Verdicts, and leaving the case from any depth: a verdict macro longjmps back to
 * pecs_case_body(), which then runs the case's deferred cleanups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_context.h"
#include "runner.h"

static void vverdict(struct pecs_t *t, enum pecs_status status, const char *file, int line,
		     const char *fmt, va_list ap)
{
	if (t->status != PECS_PASS)
		return; /* the first verdict explains the case; later ones are consequences */
	t->status = status;
	t->file = file;
	t->line = line;
	const char *base = strrchr(file, '/');
	int n = snprintf(t->message, sizeof(t->message), "%s:%d: ", base ? base + 1 : file, line);
	if (n < 0 || (size_t)n >= sizeof(t->message))
		return;
	vsnprintf(t->message + n, sizeof(t->message) - (size_t)n, fmt, ap);
	/* A skip is only honest with its reason; without one it hides the case. */
	if (status == PECS_ENV_SKIP && !t->message[n]) {
		t->status = PECS_BROKEN;
		snprintf(t->message + n, sizeof(t->message) - (size_t)n,
			 "ENV_SKIP without a reason: say why the host cannot run the case");
	}
}

void pecs_source_path(const char *file, char *out, size_t len)
{
	if (!file)
		file = "";
	if (strncmp(file, "external/", 9) == 0) {
		const char *repo_end = strchr(file + 9, '/');
		if (repo_end)
			file = repo_end + 1;
	}
	while (strncmp(file, "./", 2) == 0)
		file += 2;
	snprintf(out, len, "%s", file);
}

void pecs_verdict(struct pecs_t *t, enum pecs_status status, const char *file, int line,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vverdict(t, status, file, line, fmt, ap);
	va_end(ap);
}

int pecs_failed(const struct pecs_t *t)
{
	return t->status != PECS_PASS;
}

__attribute__((noreturn)) static void leave(struct pecs_t *t)
{
	if (!t->armed) {
		/* A verdict macro outside a case body: nothing to go back to. */
		fprintf(stderr, "pecs: verdict outside a running case: %s\n", t->message);
		abort();
	}
	longjmp(t->leave, 1);
}

void pecs_end(struct pecs_t *t, enum pecs_status status, const char *file, int line,
	      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vverdict(t, status, file, line, fmt, ap);
	va_end(ap);
	leave(t);
}

void pecs_end_detail(struct pecs_t *t, const char *file, int line, const char *detail,
		     const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (msg[0])
		pecs_verdict(t, PECS_FAIL, file, line, "%s: %s", msg, detail);
	else
		pecs_verdict(t, PECS_FAIL, file, line, "%s", detail);
	leave(t);
}

void pecs_end_check(struct pecs_t *t, const char *file, int line, const char *cond_text,
		    const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (msg[0])
		pecs_verdict(t, PECS_FAIL, file, line, "%s", msg);
	else
		pecs_verdict(t, PECS_FAIL, file, line, "(%s) is false", cond_text);
	leave(t);
}

const char *pecs_fmt(const char *fmt, ...)
{
	static __thread char buf[4][512];
	static __thread unsigned slot;
	char *b = buf[slot++ % 4];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(buf[0]), fmt, ap);
	va_end(ap);
	return b;
}

void pecs_defer(struct pecs_t *t, void (*fn)(void *arg), void *arg)
{
	if (t->ndeferred == PECS_MAX_DEFERRED) {
		/* Run it now rather than leak it: the case is broken either way. */
		fn(arg);
		pecs_end(t, PECS_BROKEN, __FILE__, __LINE__, "more than %d deferred cleanups",
			 PECS_MAX_DEFERRED);
	}
	t->deferred[t->ndeferred].fn = fn;
	t->deferred[t->ndeferred].arg = arg;
	t->ndeferred++;
}

void pecs_case_body(struct pecs_t *t)
{
	const struct pecs_case *c = t->c;
	t->armed = 1;
	if (setjmp(t->leave) == 0) {
		if (c->fn)
			c->fn(t);
		else
			c->row_fn(t, c->row);
	}
	/* A cleanup may give a verdict too; it leaves only itself. */
	while (t->ndeferred > 0) {
		t->ndeferred--;
		if (setjmp(t->leave) == 0)
			t->deferred[t->ndeferred].fn(t->deferred[t->ndeferred].arg);
	}
	t->armed = 0;
}
