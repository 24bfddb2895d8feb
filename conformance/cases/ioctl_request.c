/* How the ioctl request is matched, and PERF_EVENT_IOC_PERIOD on a frequency event.
 * The kernel's ioctl path takes the request as an unsigned int, so on 64-bit hosts the
 * upper half of the caller's unsigned long never reaches perf (_perf_ioctl); a frequency
 * event's new "period" is a frequency, bounded like the attr's (_perf_event_period).
 * Measured on Linux 6.18. */
#include <limits.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/wait.h"

#define HIGH_BITS 0xffffffff00000000ul

PECS_CASE("Required.Ioctl.Encoding.UpperHalfOfRequestIgnored", "counting", "IOC-CMD-U32")
{
#if ULONG_MAX > 0xffffffffu
	struct pecs_attr a;
	uint64_t v1, v2;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE | (1ul << 32), 0), 0);
	pecs_burn_user(2000000);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE | HIGH_BITS, 0), 0);
	PECS_CHECK_EQ(t, pecs_read(t, fd, &v1, sizeof(v1)), sizeof(v1));
	PECS_CHECK(t, v1 > 0, "ENABLE with high request bits: counted %llu ns in 2 ms of CPU",
		   (unsigned long long)v1);
	pecs_burn_user(1000000);
	PECS_CHECK_EQ(t, pecs_read(t, fd, &v2, sizeof(v2)), sizeof(v2));
	PECS_CHECK(t, v2 == v1, "DISABLE with high request bits did not stop the count: "
		   "%llu then %llu", (unsigned long long)v1, (unsigned long long)v2);
	/* the lower half is still matched exactly */
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, 0x2420ul | HIGH_BITS, 0), ENOTTY);
#else
	PECS_ENV_SKIP(t, "unsigned long has no upper half on this host");
#endif
}

PECS_CASE("Required.Ioctl.Period.FrequencyEventBoundedByMaxRate", "sampling", "IOC-PERIOD-FREQ-MAX")
{
	struct pecs_attr a;
	uint64_t v;
	int fd;

	/* page faults: not a clock, so it stays a frequency event */
	pecs_attr_sampling(t, &a, PECS_SW_PAGE_FAULTS, 100, PECS_SAMPLE_IP);
	a.flags |= PECS_ATTR_FREQ;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	v = (uint64_t)pecs_host(t)->max_sample_rate + 1;
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)&v), EINVAL);
	v = (uint64_t)pecs_host(t)->max_sample_rate;
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)&v), 0);
	v = 1;
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)&v), 0);
}
