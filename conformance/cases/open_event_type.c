/* perf_event_attr.type and config: which events exist. Hardware types are left out on
 * purpose: whether they open depends on the host's PMU, not on the ABI. */
#include "pecs/toolkit/counting.h"

PECS_CASE("Required.Open.Type.UnknownTypeEnoent", "", "OPEN-TYPE-UNKNOWN-ENOENT")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.type = 1000;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), ENOENT);
	attr.type = 0x7fffffff;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), ENOENT);
}

PECS_CASE("Required.Open.Type.SoftwareConfigOutOfRangeEnoent", "", "OPEN-SW-CONFIG-ENOENT")
{
	static const uint64_t configs[] = {PECS_SW_MAX, PECS_SW_MAX + 1, 1000, 1ull << 32,
					   ~0ull};
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		pecs_attr_counting(t, &attr, configs[i]);
		int ret = pecs_open(t, &attr, 0, -1, -1, 0);

		PECS_CHECK_ERR(t, ret, ENOENT, "software config 0x%llx",
			       (unsigned long long)configs[i]);
	}
}

PECS_CASE("Required.Open.Type.SoftwareClocksOpen", "", "OPEN-SW-CLOCKS-OK")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}
