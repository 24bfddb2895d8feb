/* perf_event_paranoid 3: a distribution's level (Debian's and Android's kernels, a patch
 * that adds perf_paranoid_any()), not mainline's, where 3 acts as 2. At it perf_event_open
 * refuses any caller without CAP_SYS_ADMIN with EACCES, but only after perf_copy_attr has
 * read and checked the attr: a malformed attr still gets its own errno (Debian's
 * linux-source-6.1 6.1.192 and linux-source-6.12 6.12.118, kernel/events/core.c
 * perf_event_open; measured in the VM on Debian's 6.1 cloud kernel). Both cases need
 * paranoid 3, which the VM runner's -paranoid3 passes set. */
#include "pecs/case.h"

/* A user-only task-clock counter: what paranoid 2 grants to anyone. */
static void user_counter(struct pecs_t *t, struct pecs_attr *a)
{
	pecs_attr_counting(t, a, PECS_SW_TASK_CLOCK);
}

static void needs_paranoid3(struct pecs_t *t)
{
	if (pecs_host(t)->paranoid < 3)
		PECS_ENV_SKIP(t, "needs perf_event_paranoid 3 (it is %d), Debian's level",
			      pecs_host(t)->paranoid);
}

PECS_CASE("Required.Open.Policy.Paranoid3RefusesAfterValidation", "",
	  "OPEN-POLICY-PARANOID-3")
{
	struct pecs_attr attr;

	pecs_checks_policy_refusal(t);
	needs_paranoid3(t);
	PECS_NEEDS_NO_PRIVILEGE(t);
	/* The runner's probe opened a user-only counter at startup: it opened, so this
	 * implementation has no level 3 (mainline Linux treats 3 as 2). */
	if (!pecs_host(t)->unavailable[0])
		PECS_ENV_SKIP(t, "perf_event_paranoid=%d refuses nothing here: a mainline "
			      "kernel, where 3 acts as 2", pecs_host(t)->paranoid);
	user_counter(t, &attr);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EACCES,
		       "a user-only counter at paranoid 3");
	/* An unknown flags argument is refused before the attr is read. */
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 1ul << 40), EINVAL, "flags bit 40");
	/* The attr is copied and checked before the policy: a reserved bit is EINVAL. */
	user_counter(t, &attr);
	attr.flags |= 1ull << 63;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL, "attr flags bit 63");
	/* and a size below the first version is E2BIG, the kernel's size written back */
	user_counter(t, &attr);
	attr.size = 8;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), E2BIG, "attr size 8");
	PECS_CHECK_EQ(t, attr.size, pecs_host(t)->attr_size);
}

PECS_CASE("Required.Open.Policy.Paranoid3LeavesRootAlone", "", "OPEN-POLICY-PARANOID-3")
{
	struct pecs_attr attr;

	needs_paranoid3(t);
	PECS_NEEDS_PRIVILEGE(t);
	user_counter(t, &attr);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0), "a user-only counter");
	/* what paranoid 2 already keeps from unprivileged callers: the kernel too */
	user_counter(t, &attr);
	attr.flags &= ~(PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0), "a counter of the kernel too");
}
