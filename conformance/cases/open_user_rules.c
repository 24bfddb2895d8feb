/* What any caller may open at any perf_event_paranoid: user-only software counters of
 * every config, user-only callchains, and events that leave exclude_hv clear. The kernel's
 * paranoid checks in perf_event_open() look at exclude_kernel (and PHYS_ADDR, namespaces,
 * cpu-wide), never at exclude_hv, and at the callchain only in the releases that took the
 * stable change below (measured here as root and uid 65534, and in the VM). */
#include "pecs/case.h"
#include "pecs/toolkit/version.h"

/* Nonzero where perf_event_open asks perf_allow_kernel() for a callchain that may hold
 * kernel frames (exclude_callchain_kernel clear), exclude_kernel or not: the stable change
 * "perf/core: Check kernel access when kernel callchains are requested" (perf_callchain
 * takes kernel frames by exclude_callchain_kernel alone, whatever exclude_kernel says), in
 * 6.12 since 6.12.113 (Debian's changelog of 6.12.113-1 lists it under ChangeLog-6.12.113;
 * 6.12.111 opens, 6.12.118 refuses, measured in the VM). Not in 6.1.192 nor in 6.18.44
 * (both open, measured); which mainline release brought it is not pinned here. */
static int kernel_callchain_is_checked(struct pecs_t *t)
{
	const char *release = pecs_host(t)->kernel_release;

	return pecs_linux_version_of(release) == 6012 && pecs_linux_point_of(release) >= 113;
}

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
	const struct pecs_host_facts *h = pecs_host(t);
	struct pecs_attr attr;

	pecs_attr_sampling(t, &attr, PECS_SW_TASK_CLOCK, 1000000,
			   PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN);
	/* exclude_kernel alone: the kernel part of the chain is no separate privilege, but
	 * where the kernel checks it, it is perf_allow_kernel's (paranoid > 1 without
	 * CAP_PERFMON: EACCES) */
	if (kernel_callchain_is_checked(t) && !h->privileged && h->paranoid > 1)
		PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EACCES,
			       "a user-only callchain with kernel frames, Linux %s unprivileged "
			       "at paranoid %d", h->kernel_release, h->paranoid);
	else
		PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	/* without kernel frames the chain asks nothing more, in every release */
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
