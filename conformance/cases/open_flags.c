/* perf_event_open(2) flags argument. */
#include "pecs/toolkit/counting.h"

PECS_CASE("Required.Open.Flags.UnknownBitEinval", "", "OPEN-FLAGS-UNKNOWN-EINVAL")
{
	static const unsigned long bad[] = {1ul << 4, 1ul << 5, 1ul << 31, 1ul << 63};
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = pecs_open(t, &attr, 0, -1, -1, bad[i]);

		PECS_CHECK_ERR(t, ret, EINVAL, "flags 0x%lx", bad[i]);
	}
}

/* With PID_CGROUP, pid is a cgroup directory fd and cpu a real cpu: -1 in either is an
 * error before the fd is even looked at. */
PECS_CASE("Required.Open.Flags.PidCgroupNeedsPidAndCpu", "", "OPEN-FLAGS-CGROUP-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, 0, -1, PECS_FLAG_PID_CGROUP), EINVAL);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, -1, -1, PECS_FLAG_PID_CGROUP), EINVAL);
}

PECS_CASE("Required.Open.Flags.NoGroupWithoutGroupFdIgnored", "", "OPEN-FLAGS-GROUP-FLAGS-IGNORED")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, PECS_FLAG_FD_NO_GROUP));
}

PECS_CASE("Required.Open.Flags.FdOutputWithoutGroupFdIgnored", "", "OPEN-FLAGS-GROUP-FLAGS-IGNORED")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, PECS_FLAG_FD_OUTPUT));
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1,
				   PECS_FLAG_FD_OUTPUT | PECS_FLAG_FD_NO_GROUP));
}

/* Only acceptance is checked: whether the fd is close-on-exec is the adapter's business. */
PECS_CASE("Required.Open.Flags.CloexecAccepted", "", "OPEN-FLAGS-CLOEXEC-OK")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, PECS_FLAG_FD_CLOEXEC));
}
