/* The order of perf_event_open()'s checks for a cpu-wide event (pid -1, cpu N), as
 * kernel/events/core.c (6.12) makes them: the attr's own checks (perf_allow_kernel()
 * for a kernel-inclusive event), then perf_event_alloc() (the cpu range, the PMU lookup:
 * ENOENT for a config no PMU takes), then perf_event_set_clock(), then find_get_context()
 * whose perf_allow_cpu() refuses a caller without CAP_PERFMON at paranoid > 0 with
 * EACCES, and only then the group rules. Every software config below
 * PERF_COUNT_SW_MAX is one the software PMUs take on a CPU, so the refusal an
 * unprivileged caller gets for any of them is the permission's, not the lookup's. */
#include "pecs/case.h"

/* An unprivileged caller with perf_event_paranoid above 0: perf_allow_cpu() refuses. */
static int cpu_refused(struct pecs_t *t)
{
	return !pecs_host(t)->privileged && pecs_host(t)->paranoid > 0;
}

/* A cpu-wide event whose group leader is a task event: Linux's group rules refuse the
 * pair (another cpu, another context) with EINVAL, after the permission. */
PECS_CASE("Required.CpuWide.Policy.PermissionAfterPmuBeforeGroup", "policy",
	  "CPU-WIDE-POLICY-ORDER")
{
	struct pecs_attr leader, attr;
	int lfd;

	pecs_attr_counting(t, &leader, PECS_SW_TASK_CLOCK);
	lfd = PECS_OPEN(t, &leader, 0, -1, -1, 0);
	for (uint64_t config = 0; config < PECS_SW_MAX; config++) {
		pecs_attr_counting(t, &attr, config);
		int ret = pecs_open(t, &attr, -1, 0, lfd, 0);

		if (cpu_refused(t))
			PECS_CHECK_ERR(t, ret, EACCES, "software config %llu on cpu 0, "
				       "unprivileged at paranoid %d", (unsigned long long)config,
				       pecs_host(t)->paranoid);
		else
			PECS_CHECK_ERR(t, ret, EINVAL, "software config %llu on cpu 0 in a task "
				       "event's group", (unsigned long long)config);
	}
}

/* A config no PMU takes is ENOENT at the lookup, which comes before the permission;
 * with the kernel counted, perf_allow_kernel() comes before the lookup. */
PECS_CASE("Required.CpuWide.Policy.UnknownConfigEnoentBeforePermission", "policy",
	  "CPU-WIDE-POLICY-ORDER")
{
	static const uint64_t configs[] = { PECS_SW_MAX, 1000 };
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		pecs_attr_counting(t, &attr, configs[i]);
		PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, 0, -1, 0), ENOENT,
			       "user-only software config %llu on cpu 0",
			       (unsigned long long)configs[i]);
		attr.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
		int ret = pecs_open(t, &attr, -1, 0, -1, 0);

		if (!pecs_host(t)->privileged && pecs_host(t)->paranoid > 1)
			PECS_CHECK_ERR(t, ret, EACCES, "kernel-inclusive config %llu on cpu 0, "
				       "unprivileged at paranoid %d",
				       (unsigned long long)configs[i], pecs_host(t)->paranoid);
		else
			PECS_CHECK_ERR(t, ret, ENOENT, "kernel-inclusive config %llu on cpu 0",
				       (unsigned long long)configs[i]);
	}
	pecs_attr_counting(t, &attr, PECS_SW_PAGE_FAULTS);
	attr.type = 1000;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, 0, -1, 0), ENOENT, "type 1000 on cpu 0");
}

/* A cpu past the last and a clock perf cannot read are perf_event_alloc()'s and
 * perf_event_set_clock()'s EINVAL, both before find_get_context(). */
PECS_CASE("Required.CpuWide.Policy.BadCpuAndClockBeforePermission", "policy",
	  "CPU-WIDE-POLICY-ORDER")
{
	static const uint64_t configs[] = { PECS_SW_CPU_CLOCK, PECS_SW_PAGE_FAULTS,
					    PECS_SW_CONTEXT_SWITCHES, PECS_SW_CPU_MIGRATIONS };
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		pecs_attr_counting(t, &attr, configs[i]);
		PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, pecs_host(t)->ncpus, -1, 0), EINVAL,
			       "config %llu on cpu %d, one past the last",
			       (unsigned long long)configs[i], pecs_host(t)->ncpus);
		attr.flags |= PECS_ATTR_USE_CLOCKID;
		attr.clockid = 99;
		PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, 0, -1, 0), EINVAL,
			       "config %llu on cpu 0 with clockid 99",
			       (unsigned long long)configs[i]);
	}
}

/* At Debian's paranoid 3 (perf_paranoid_any(), a distribution patch; mainline treats 3
 * as 2) an unprivileged caller is refused at the syscall's entry, before the PMU lookup
 * and perf_allow_cpu(): an unknown config is EACCES too. No feature: the host reports
 * perf unavailable to this caller, which would skip a case that names one. */
PECS_CASE("Required.CpuWide.Policy.Paranoid3RefusesBeforeLookup", "", "CPU-WIDE-POLICY-ORDER")
{
	static const uint64_t configs[] = { PECS_SW_PAGE_FAULTS, PECS_SW_MAX, 1000 };
	struct pecs_attr attr;

	pecs_checks_policy_refusal(t);
	if (pecs_host(t)->paranoid < 3)
		PECS_ENV_SKIP(t, "needs perf_event_paranoid 3 (it is %d), Debian's level",
			      pecs_host(t)->paranoid);
	PECS_NEEDS_NO_PRIVILEGE(t);
	if (!pecs_host(t)->unavailable[0])
		PECS_ENV_SKIP(t, "perf_event_paranoid=%d refuses nothing here: a mainline "
			      "kernel, where 3 acts as 2", pecs_host(t)->paranoid);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		pecs_attr_counting(t, &attr, configs[i]);
		PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, 0, -1, 0), EACCES,
			       "software config %llu on cpu 0 at paranoid 3",
			       (unsigned long long)configs[i]);
	}
}
