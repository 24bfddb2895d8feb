/* What perf_event_paranoid and CAP_PERFMON decide at open. An unprivileged caller at
 * paranoid >= 2 may only watch user space; privileged callers may watch the kernel. */
#include "pecs/toolkit/counting.h"

/* Whether an unprivileged caller may see kernel addresses on this host. */
static int kernel_allowed(struct pecs_t *t)
{
	return pecs_host(t)->privileged || pecs_host(t)->paranoid < 2;
}

PECS_CASE("Required.Open.Policy.CountingKernelNeedsPrivilege", "policy",
	  "OPEN-POLICY-EXCLUDE-KERNEL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	int ret = pecs_open(t, &attr, 0, -1, -1, 0);

	if (kernel_allowed(t))
		PECS_CHECK_OK(t, ret);
	else
		PECS_CHECK_ERR(t, ret, EACCES);
}

PECS_CASE("Required.Open.Policy.PhysAddrNeedsPrivilege", "policy", "OPEN-POLICY-PHYS-ADDR")
{
	struct pecs_attr attr;

	pecs_attr_sampling(t, &attr, PECS_SW_CPU_CLOCK, 1000000,
			   PECS_SAMPLE_IP | PECS_SAMPLE_PHYS_ADDR);
	int ret = pecs_open(t, &attr, 0, -1, -1, 0);

	if (kernel_allowed(t))
		PECS_CHECK_OK(t, ret);
	else
		PECS_CHECK_ERR(t, ret, EACCES);
}

/* Namespace records need CAP_PERFMON whatever the paranoid level. */
PECS_CASE("Required.Open.Policy.NamespacesNeedsPrivilege", "policy", "OPEN-POLICY-NAMESPACES")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.flags |= PECS_ATTR_NAMESPACES;
	int ret = pecs_open(t, &attr, 0, -1, -1, 0);

	if (pecs_host(t)->privileged)
		PECS_CHECK_OK(t, ret);
	else
		PECS_CHECK_ERR(t, ret, EACCES);
}
