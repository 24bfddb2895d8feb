/* PERF_EVENT_IOC_REFRESH: allow n more overflows, enable, and disable after the n-th. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS 100000ull

PECS_CASE("Required.Ioctl.Refresh.CountingEventEinval", "counting", "IOC-REFRESH-EINVAL-COUNTING")
{
	struct pecs_attr a;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, 1), EINVAL);
}

PECS_CASE("Required.Ioctl.Refresh.InheritEventEinval", "ioctl.refresh",
	  "IOC-REFRESH-EINVAL-INHERIT")
{
	struct pecs_attr a;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP);
	a.flags |= PECS_ATTR_INHERIT;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, 1), EINVAL);
}

PECS_CASE("Required.Ioctl.Refresh.DisablesAfterN",
	  "ioctl.refresh,mmap,sampling", "IOC-REFRESH-N-OVERFLOWS")
{
	const int n = 3;
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t v[2]; /* value, time_enabled */
	uint64_t te;
	int fd, got;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	a.read_format = PECS_FORMAT_TOTAL_TIME_ENABLED;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, n), 0);
	/* Wait for n samples, then keep running long enough for ~30 more periods. */
	got = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, n, 1000);
	PECS_CHECK(t, got >= n, "only %d of %d samples arrived", got, n);
	pecs_burn_user(30 * PERIOD_NS);
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), n);
	/* It disabled itself: enabled time no longer moves. */
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	te = v[1];
	pecs_burn_user(2 * 1000 * 1000);
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[1], te);
}

PECS_CASE("Required.Ioctl.Refresh.RefreshAgainResumes",
	  "ioctl.refresh,mmap,sampling", "IOC-REFRESH-N-OVERFLOWS")
{
	struct pecs_attr a;
	struct pecs_ring r;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, 1), 0);
	PECS_CHECK(t, pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 1, 1000) >= 1, "no sample");
	pecs_burn_user(20 * PERIOD_NS);
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), 1);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, 2), 0);
	PECS_CHECK(t, pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 3, 1000) >= 3,
		   "no samples after refresh");
	pecs_burn_user(20 * PERIOD_NS);
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), 3);
}
