/* Facts that differ by host, as an implementation reports them: a case reads them instead
 * of hard-coding values, and the reference engine fills them from its own policy.
 */
#ifndef PECS_HOST_FACTS_H
#define PECS_HOST_FACTS_H

#include <stddef.h>
#include <stdint.h>

struct pecs_host_facts {
	size_t size;
	int ncpus;
	long page_size;
	int max_stack;           /* kernel.perf_event_max_stack */
	int max_sample_rate;     /* kernel.perf_event_max_sample_rate */
	int mlock_kb;            /* kernel.perf_event_mlock_kb */
	int paranoid;            /* kernel.perf_event_paranoid */
	int privileged;          /* CAP_PERFMON or CAP_SYS_ADMIN in effect */
	uint32_t attr_size;      /* the largest attr the implementation knows (VER8: 136) */
	char kernel_release[65]; /* uname -r, or the implementation's own version */
	/* Why this host refuses perf_event_open as a whole (perf_event_paranoid=3, a seccomp
	 * filter), or "": every case that needs a feature is then ENV_SKIP with this reason. */
	char unavailable[160];
};

#endif /* PECS_HOST_FACTS_H */
