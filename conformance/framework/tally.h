/* What each entry point of the implementation answered over a run: the evidence for a
 * root cause ("open answered every call with ENOSYS") printed above the cases it explains.
 * Private to the framework. */
#ifndef PECS_TALLY_H
#define PECS_TALLY_H

#include <stddef.h>

enum pecs_entry {
	PECS_ENTRY_OPEN,
	PECS_ENTRY_CLOSE,
	PECS_ENTRY_READ,
	PECS_ENTRY_WRITE,
	PECS_ENTRY_IOCTL,
	PECS_ENTRY_MMAP,
	PECS_ENTRY_MUNMAP,
	PECS_ENTRY_POLL,
	PECS_ENTRY_COUNT
};

struct pecs_call_tally {
	unsigned calls;
	unsigned ok;    /* calls that returned >= 0 */
	unsigned cases; /* cases that made at least one call (set when tallies are summed) */
	int err;        /* the errno of the failed calls, when they all agree */
	int mixed;      /* failed calls gave different errnos */
};

/* Counts one answer of an entry point. */
void pecs_tally_add(struct pecs_call_tally *t, long ret);
/* The errno of t's failed calls when they all failed with one, else 0: a case's own
 * answer to "did this entry point fail with ERRNO" ('@root-cause', failed_calls). */
int pecs_call_failed_with(const struct pecs_call_tally *t);
/* Adds one case's tallies into a run's. */
void pecs_tally_sum(struct pecs_call_tally *run, const struct pecs_call_tally *one);

/* Fewer calls than this say nothing about an entry point as a whole. */
#define PECS_ROOT_CAUSE_MIN_CALLS 10
#define PECS_ROOT_CAUSE_MIN_CASES 3

/* One line naming every entry point that answered every call of the run (at least the
 * minimums above) with one errno, or "" when none did. Returns how many it named. */
int pecs_root_cause(const struct pecs_call_tally run[PECS_ENTRY_COUNT], char *buf, size_t len);
/* The entry point's name as a caller knows it ("open" is perf_event_open). */
const char *pecs_entry_name(enum pecs_entry e);

#endif /* PECS_TALLY_H */
