/* perf_event_open(2) pid and cpu arguments: which combinations exist, which need
 * privilege. Each case opens a user-only CPU_CLOCK counter so that only the argument under
 * test can be the reason for an error. */
#include <limits.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/safe.h"

PECS_CASE("Required.Open.PidCpu.AnyPidAnyCpuEinval", "", "OPEN-PID-CPU-BOTH-ANY-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, -1, -1, 0), EINVAL);
}

PECS_CASE("Required.Open.PidCpu.CpuOutOfRangeEinval", "", "OPEN-CPU-RANGE-EINVAL")
{
	struct pecs_attr attr;
	int ncpus = pecs_host(t)->ncpus;

	if (ncpus <= 0)
		PECS_BROKEN(t, "the host reports %d cpus", ncpus);
	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, ncpus, -1, 0), EINVAL);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, INT_MAX, -1, 0), EINVAL);
	/* the last cpu is the highest that exists */
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, ncpus - 1, -1, 0));
}

PECS_CASE("Required.Open.PidCpu.NegativeCpuEinval", "", "OPEN-CPU-RANGE-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -2, -1, 0), EINVAL);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, INT_MIN, -1, 0), EINVAL);
}

PECS_CASE("Required.Open.PidCpu.NegativePidEsrch", "", "OPEN-PID-NONE-ESRCH")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, -2, -1, -1, 0), ESRCH);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, INT_MIN, -1, -1, 0), ESRCH);
}

PECS_CASE("Required.Open.PidCpu.ExitedPidEsrch", "pid.other", "OPEN-PID-NONE-ESRCH")
{
	struct pecs_attr attr;
	pid_t gone = PECS_SAFE_HOST(t, pecs_cnt_dead_pid());

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, gone, -1, -1, 0), ESRCH);
}

PECS_CASE("Required.Open.PidCpu.ThisThreadOnCpu0", "", "OPEN-PID-SELF-CPU-OK")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, 0, -1, 0));
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

PECS_CASE("Required.Open.PidCpu.ThisThreadByTid", "pid.other", "OPEN-PID-OWN-TID-OK")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, pecs_gettid(), -1, -1, 0));
}

/* A cpu-wide event watches every task on the cpu: perf_event_paranoid > 0 keeps it from
 * callers without CAP_PERFMON. */
PECS_CASE("Required.Open.PidCpu.CpuWideNeedsPrivilege", "policy", "OPEN-CPU-WIDE-PRIV")
{
	const struct pecs_host_facts *h = pecs_host(t);
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int ret = pecs_open(t, &attr, -1, 0, -1, 0);

	if (h->privileged || h->paranoid <= 0)
		PECS_CHECK_OK(t, ret);
	else
		PECS_CHECK_ERR(t, ret, EACCES);
}

/* Watching a task of another user needs ptrace-level access to it; pid 1 runs as root. */
PECS_CASE("Required.Open.PidCpu.OtherUsersTaskNeedsPrivilege",
	  "pid.other,policy", "OPEN-PID-OTHER-PRIV")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int ret = pecs_open(t, &attr, 1, -1, -1, 0);

	if (pecs_host(t)->privileged)
		PECS_CHECK_OK(t, ret);
	else
		PECS_CHECK_ERR(t, ret, EACCES);
}
