/* The running case's state behind the opaque struct pecs_t. Private to the framework. */
#ifndef PECS_CASE_CONTEXT_H
#define PECS_CASE_CONTEXT_H

#include <setjmp.h>

#include "pecs/case.h"
#include "tally.h"

/* Enough for the group-size case, which opens members until the kernel refuses. */
#define PECS_MAX_TRACKED_FDS 4096
#define PECS_MAX_TRACKED_MAPS 64
#define PECS_MAX_DEFERRED 16

struct pecs_t {
	const struct pecs_impl *impl;
	void *ctx;
	const struct pecs_host_facts *facts;
	const struct pecs_case *c;
	enum pecs_status status;
	char message[1024];
	/* Where the verdict was given (__FILE__ as compiled, its line): the report links it. */
	const char *file;
	int line;
	int fds[PECS_MAX_TRACKED_FDS];
	size_t nfds;
	struct {
		void *addr;
		size_t len;
	} maps[PECS_MAX_TRACKED_MAPS];
	size_t nmaps;
	/* Where a verdict macro leaves the case to; armed while the case body runs. */
	jmp_buf leave;
	int armed;
	struct {
		void (*fn)(void *arg);
		void *arg;
	} deferred[PECS_MAX_DEFERRED];
	size_t ndeferred;
	/* The case checks the policy refusal itself (pecs_checks_policy_refusal). */
	int checks_refusal;
	/* What each entry point answered this case, for the run's root cause. */
	struct pecs_call_tally calls[PECS_ENTRY_COUNT];
	/* The case's last call into the implementation, which a failed check on a value the
	 * case kept in a variable names (call_name.c). */
	struct {
		enum pecs_entry entry;
		long ret;
		unsigned long request; /* ioctl's */
		int made;
	} last;
};

/* Counts one answer of an entry point and keeps it as the case's last call. */
void pecs_note_call(struct pecs_t *t, enum pecs_entry entry, long ret, unsigned long request);

/* Runs the case's body (or its table row), then its pecs_defer() cleanups, whichever
 * way it left. */
void pecs_case_body(struct pecs_t *t);

/* Closes every fd and mapping the case left behind. */
void pecs_case_release(struct pecs_t *t);

#endif /* PECS_CASE_CONTEXT_H */
