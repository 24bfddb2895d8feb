/* What any caller may open at any perf_event_paranoid: user-only software counters of
 * every config, user-only callchains, and events that leave exclude_hv clear. The kernel's
 * paranoid checks in perf_event_open() look at exclude_kernel (and PHYS_ADDR, namespaces,
 * cpu-wide), never at exclude_hv or the callchain (measured here as root and uid 65534). */
#include "pecs/case.h"

PECS_CASE("Required.Open.Type.EverySoftwareConfigOpens", "counting", "OPEN-SW-EVERY-CONFIG-OK")
{
	struct pecs_attr attr;

	for (uint64_t c = 0; c < PECS_SW_MAX; c++) {
		int r;

		pecs_attr_counting(t, &attr, c);
		r = pecs_open(t, &attr, 0, -1, -1, 0);
		PECS_CHECK_OK(t, r, "software config %llu", (unsigned long long)c);
		pecs_close(t, r);
	}
}

PECS_CASE("Required.Open.Policy.UserCallchainOpensForAnyone", "sampling",
	  "OPEN-POLICY-USER-CALLCHAIN")
{
	struct pecs_attr attr;

	pecs_attr_sampling(t, &attr, PECS_SW_TASK_CLOCK, 1000000,
			   PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN);
	/* exclude_kernel alone: the kernel part of the chain is not a separate privilege */
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	attr.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

PECS_CASE("Required.Open.Policy.ExcludeHvNeedsNoPrivilege", "counting",
	  "OPEN-POLICY-EXCLUDE-HV-FREE")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	attr.flags &= ~PECS_ATTR_EXCLUDE_HV;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}
