/* Sampling parameters checked at open: rate, period, callchain depth, user stack and
 * register masks. The refusals apply to every implementation; the acceptances need a
 * sampling implementation. Limits come from the host, never from constants here. */
#include "pecs/toolkit/counting.h"

/* A user-only CPU_CLOCK sampler whose callchains leave the kernel out, so that opening
 * it needs no privilege. */
static void sampler(struct pecs_t *t, struct pecs_attr *attr, uint64_t sample_type)
{
	pecs_attr_sampling(t, attr, PECS_SW_CPU_CLOCK, 1000000, sample_type);
	attr->flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
}

PECS_CASE("Required.Open.Freq.AtMaxSampleRateOk", "sampling", "OPEN-FREQ-MAX-OK")
{
	struct pecs_attr attr;

	sampler(t, &attr, PECS_SAMPLE_IP);
	attr.flags |= PECS_ATTR_FREQ;
	attr.sample_period = (uint64_t)pecs_host(t)->max_sample_rate;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

PECS_CASE("Required.Open.Freq.AboveMaxSampleRateEinval", "", "OPEN-FREQ-ABOVE-MAX-EINVAL")
{
	struct pecs_attr attr;

	sampler(t, &attr, PECS_SAMPLE_IP);
	attr.flags |= PECS_ATTR_FREQ;
	attr.sample_period = (uint64_t)pecs_host(t)->max_sample_rate + 1;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
	attr.sample_period = ~0ull;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}

/* The period is signed inside the kernel; a set bit 63 would be a negative period. */
PECS_CASE("Required.Open.Period.Bit63Einval", "", "OPEN-PERIOD-BIT63-EINVAL")
{
	struct pecs_attr attr;

	sampler(t, &attr, PECS_SAMPLE_IP);
	attr.sample_period = 1ull << 63;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
	attr.sample_period = ~0ull;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}

PECS_CASE("Required.Open.Callchain.MaxStackAboveSysctlEoverflow", "", "OPEN-MAX-STACK-EOVERFLOW")
{
	struct pecs_attr attr;
	int max_stack = pecs_host(t)->max_stack;

	if (max_stack <= 0 || max_stack >= 0xffff)
		PECS_BROKEN(t, "the host reports perf_event_max_stack %d", max_stack);
	sampler(t, &attr, PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN);
	attr.sample_max_stack = (uint16_t)(max_stack + 1);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EOVERFLOW);
	attr.sample_max_stack = 0xffff;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EOVERFLOW);
}

PECS_CASE("Required.Open.Callchain.MaxStackAtSysctlOk", "sampling", "OPEN-MAX-STACK-OK")
{
	struct pecs_attr attr;
	int max_stack = pecs_host(t)->max_stack;

	if (max_stack <= 0 || max_stack > 0xffff)
		PECS_BROKEN(t, "the host reports perf_event_max_stack %d", max_stack);
	sampler(t, &attr, PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN);
	attr.sample_max_stack = (uint16_t)max_stack;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	/* 0 means the sysctl's value */
	attr.sample_max_stack = 0;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

/* The dump size must be 8-aligned and, with the header, fit the u16 record size. */
PECS_CASE("Required.Open.StackUser.BadSizeEinval", "", "OPEN-STACK-USER-EINVAL")
{
	static const uint32_t sizes[] = {1, 100, 65527, 65535, 65536, 1u << 20};
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		sampler(t, &attr, PECS_SAMPLE_IP | PECS_SAMPLE_STACK_USER);
		attr.sample_stack_user = sizes[i];
		int ret = pecs_open(t, &attr, 0, -1, -1, 0);

		PECS_CHECK_ERR(t, ret, EINVAL, "sample_stack_user %u",
			       sizes[i]);
	}
}

PECS_CASE("Required.Open.StackUser.LargestAlignedOk", "sampling", "OPEN-STACK-USER-OK")
{
	struct pecs_attr attr;

	sampler(t, &attr, PECS_SAMPLE_IP | PECS_SAMPLE_STACK_USER);
	attr.sample_stack_user = 65528;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	attr.sample_stack_user = 8;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

/* No architecture has 64 user registers to dump. */
PECS_CASE("Required.Open.RegsUser.AllOnesMaskEinval", "", "OPEN-REGS-USER-EINVAL")
{
	struct pecs_attr attr;

	sampler(t, &attr, PECS_SAMPLE_IP | PECS_SAMPLE_REGS_USER);
	attr.sample_regs_user = ~0ull;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}
