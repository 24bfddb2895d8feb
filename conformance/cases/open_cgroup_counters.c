/* A cgroup event (PERF_FLAG_PID_CGROUP) of every software counter reaches the cgroup fd
 * check: Linux's software PMU takes each counter on a CPU, so the cgroup fd's EBADF
 * answers, where an implementation without a per-CPU source for a counter might refuse
 * it at the PMU lookup (kernel/events/core.c perf_event_alloc: perf_init_event, then
 * perf_cgroup_connect). Found by the differential tool. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "pecs/case.h"

PECS_CASE("Required.Open.Flags.PidCgroupEveryCounterEbadf", "", "OPEN-FLAGS-CGROUP-EBADF")
{
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (devnull < 0)
		PECS_BROKEN(t, "open /dev/null: %s", pecs_errname(errno));
	for (uint64_t config = 0; config < PECS_SW_MAX; config++) {
		struct pecs_attr a;

		/* exclude_kernel: unprivileged, a kernel-inclusive event is EACCES first */
		pecs_attr_counting(t, &a, config);
		PECS_CHECK_ERR(t, pecs_open(t, &a, devnull, 0, -1, PECS_FLAG_PID_CGROUP), EBADF,
			       "software config %llu", (unsigned long long)config);
	}
	close(devnull);
}
