/* Shared set-up for the engine's unit tests. */
#ifndef REF_TESTS_HELPERS_H
#define REF_TESTS_HELPERS_H

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pecs/ref.h"
#include "ref/event/profiler_seam.h"

/* A privileged caller (CAP_PERFMON, CAP_SYS_ADMIN, CAP_IPC_LOCK) at paranoid 2. */
static inline struct ref_policy policy_root(void)
{
	struct ref_policy p = {
		.size = sizeof(p),
		.paranoid = 2,
		.caps = REF_CAP_MASK(REF_CAP_PERFMON) | REF_CAP_MASK(REF_CAP_SYS_ADMIN) |
			REF_CAP_MASK(REF_CAP_IPC_LOCK),
		.uid = 0,
	};
	return p;
}

/* uid 65534 without capabilities, as the suite's unprivileged runs (run_unprivileged.sh). */
static inline struct ref_policy policy_nobody(int paranoid)
{
	struct ref_policy p = {.size = sizeof(p), .paranoid = paranoid, .uid = 65534};
	return p;
}

static inline struct ref_engine *engine_with(const struct ref_policy *p)
{
	struct ref_config c = {.size = sizeof(c), .policy = p, .ncpus = 2, .page_size = 4096,
			       .max_stack = 127, .max_sample_rate = 100000, .mlock_kb = 516};
	return ref_engine_new(&c);
}

/* The engine a test file's cases share (cmocka group fixtures below). Unused in files
 * that build their own engines. */
static struct ref_engine *E __attribute__((unused));

static inline int engine_setup_as(const struct ref_policy *p)
{
	E = engine_with(p);
	return E ? 0 : -1;
}

/* Group fixture: a privileged caller. */
static inline int setup_root(void **state)
{
	struct ref_policy p = policy_root();

	(void)state;
	return engine_setup_as(&p);
}

static inline int teardown_engine(void **state)
{
	(void)state;
	ref_engine_free(E);
	E = NULL;
	return 0;
}

/* A user-only counting event, as an unprivileged caller at paranoid 2 may open. */
static inline struct pecs_attr attr_counting(uint64_t config)
{
	struct pecs_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PECS_TYPE_SOFTWARE;
	a.config = config;
	a.flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	return a;
}

static inline struct pecs_attr attr_sampling(uint64_t config, uint64_t period, uint64_t st)
{
	struct pecs_attr a = attr_counting(config);

	a.sample_period = period;
	a.sample_type = st;
	return a;
}

/* Spends ms of this thread's CPU time. */
static inline void burn_cpu_ms(long ms)
{
	struct timespec s, n;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &s);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &n);
	while ((n.tv_sec - s.tv_sec) * 1000000000L + (n.tv_nsec - s.tv_nsec) < ms * 1000000L);
}

static inline uint64_t event_id(struct ref_engine *e, int fd)
{
	uint64_t id = 0;

	ref_engine_ioctl(e, fd, PECS_IOC_ID, (unsigned long)&id);
	return id;
}

#endif /* REF_TESTS_HELPERS_H */
