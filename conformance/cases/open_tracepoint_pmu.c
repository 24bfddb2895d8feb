/* The tracepoint PMU's own refusals, made before it looks the id up
 * (kernel/events/core.c perf_tp_event_init). Found by the mutation score. */
#include "pecs/case.h"

#define BRANCH_USER (1ull << 0)
#define BRANCH_ANY (1ull << 3)

/* No branch stack for a tracepoint: EOPNOTSUPP whatever the id, known or not (an unknown
 * id alone is EINVAL, OPEN-TRACEPOINT-BREAKPOINT-EINVAL). The mask asks for user
 * branches only, which an unprivileged caller may. */
PECS_CASE("Required.Open.Tracepoint.BranchStackEopnotsupp", "", "OPEN-TP-BRANCH-EOPNOTSUPP")
{
	static const uint64_t ids[] = {0, 0x7fffffff, ~0ull};

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct pecs_attr a;

		pecs_attr_sampling(t, &a, ids[i], 1, PECS_SAMPLE_BRANCH_STACK);
		a.type = PECS_TYPE_TRACEPOINT;
		a.branch_sample_type = BRANCH_ANY | BRANCH_USER;
		PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EOPNOTSUPP, "id %#llx",
			       (unsigned long long)ids[i]);
		/* the same event without the branch stack reaches the id */
		a.sample_type = 0;
		PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL, "id %#llx alone",
			       (unsigned long long)ids[i]);
	}
}
