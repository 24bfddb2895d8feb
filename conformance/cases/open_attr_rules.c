/* Open-time rules for clocks, inherited SAMPLE_READ and cgroup events, and what a
 * frequency becomes on the clock events. Measured on Linux 6.18 as root and as uid 65534;
 * the sources are perf_event_set_clock, perf_event_alloc, perf_cgroup_connect and
 * perf_swevent_init_hrtimer in kernel/events/core.c. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/version.h"

/* Only the clocks a timestamp may come from in NMI context: MONOTONIC (1),
 * MONOTONIC_RAW (4), REALTIME (0), BOOTTIME (7) and TAI (11). The CPU-time clocks, the
 * coarse clocks and the alarms are refused, as is any number that is no clock. */
PECS_CASE("Required.Open.Clockid.OnlyNmiSafeClocks", "", "OPEN-CLOCKID-EINVAL")
{
	static const int32_t ok[] = {0, 1, 4, 7, 11};
	static const int32_t bad[] = {-1, 2, 3, 5, 6, 8, 9, 10, 12, 99};
	struct pecs_attr a;
	int r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
		a.flags |= PECS_ATTR_USE_CLOCKID;
		a.clockid = bad[i];
		r = pecs_open(t, &a, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, r, EINVAL, "clockid %d", bad[i]);
	}
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
		a.flags |= PECS_ATTR_USE_CLOCKID;
		a.clockid = ok[i];
		r = pecs_open(t, &a, 0, -1, -1, 0);
		PECS_CHECK(t, r >= 0, "clockid %d: %s, expected it to open", ok[i], pecs_retname(r));
	}
	/* without use_clockid the field is not looked at */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.clockid = 99;
	PECS_CHECK_OK(t, pecs_open(t, &a, 0, -1, -1, 0));
}

/* An inherited event's SAMPLE_READ values would mix the counts of several threads; the
 * kernel allows it only when each sample says whose it is (SAMPLE_TID). */
PECS_CASE("Required.Open.Flags.InheritSampleReadNeedsTidEinval", "",
	  "OPEN-INHERIT-SAMPLE-READ-EINVAL")
{
	struct pecs_attr a;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP | PECS_SAMPLE_READ);
	a.flags |= PECS_ATTR_INHERIT;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL);
	/* also on a counting event: the sample_type is checked whatever the period */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.sample_type = PECS_SAMPLE_READ;
	a.flags |= PECS_ATTR_INHERIT;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL);
	/* with TID, or without inherit, the same attr opens; before Linux 6.12 inherit
	 * refused SAMPLE_READ whatever else was asked (6.1.192's perf_event_alloc) */
	a.sample_type |= PECS_SAMPLE_TID;
	if (pecs_linux_before(t, 6, 12))
		PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL);
	else
		PECS_CHECK_OK(t, pecs_open(t, &a, 0, -1, -1, 0));
	a.sample_type = PECS_SAMPLE_READ;
	a.flags &= ~PECS_ATTR_INHERIT;
	PECS_CHECK_OK(t, pecs_open(t, &a, 0, -1, -1, 0));
}

/* With PERF_FLAG_PID_CGROUP, pid is an fd that must name a perf_event cgroup directory;
 * anything else is a bad fd, checked before any permission (so also unprivileged). */
PECS_CASE("Required.Open.Flags.PidCgroupNotACgroupEbadf", "", "OPEN-FLAGS-CGROUP-EBADF")
{
	struct pecs_attr a;
	int devnull = PECS_SAFE_SYS(t, open("/dev/null", O_RDONLY | O_CLOEXEC)), r;
	int closed = PECS_SAFE_SYS(t, dup(devnull));

	PECS_SAFE_SYS(t, close(closed));
	pecs_attr_counting(t, &a, PECS_SW_CPU_CLOCK);
	r = pecs_open(t, &a, devnull, 0, -1, PECS_FLAG_PID_CGROUP);
	close(devnull);
	PECS_CHECK_ERR(t, r, EBADF, "an fd of /dev/null as the cgroup");
	r = pecs_open(t, &a, closed, 0, -1, PECS_FLAG_PID_CGROUP);
	PECS_CHECK_ERR(t, r, EBADF, "a closed fd as the cgroup");
}

/* The clock events sample from an hrtimer, so a frequency is turned into the period that
 * gives it, once, at open: period = 1e9 / freq ns, and the event is a period event from
 * then on. PERF_EVENT_IOC_PERIOD therefore takes a period, not a frequency bounded by
 * perf_event_max_sample_rate. */
PECS_CASE("Required.Open.Freq.ClockFreqBecomesPeriodForIocPeriod",
	  "sampling", "OPEN-FREQ-CLOCK-TO-PERIOD")
{
	struct pecs_attr a;
	uint64_t v = (uint64_t)pecs_host(t)->max_sample_rate + 1;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000, PECS_SAMPLE_IP);
	a.flags |= PECS_ATTR_FREQ;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	/* above the rate limit: refused for a frequency, a fine period */
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)&v), 0);
}

PECS_CASE("Required.Open.Freq.ClockFreqSamplePeriodField",
	  "sampling,mmap", "OPEN-FREQ-CLOCK-TO-PERIOD")
{
	static struct pecs_ring r;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_attr a;
	uint64_t freq = 4000, want;
	int fd, n;

	if ((uint64_t)pecs_host(t)->max_sample_rate < freq)
		freq = (uint64_t)pecs_host(t)->max_sample_rate;
	want = 1000000000ull / freq;
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, freq, PECS_SAMPLE_IP | PECS_SAMPLE_PERIOD);
	a.flags |= PECS_ATTR_FREQ;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 3, 2000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, n >= 3, "%d samples in 2 s at %llu Hz", n, (unsigned long long)freq);
	/* every sample carries the fixed period, not an adaptive frequency estimate */
	for (n = 0; (pecs_ring_next(&r, &rec)) > 0;) {
		/* a LOST record (the reader fell behind) has no sample to check: skipped;
		 * the count of samples below still has to be reached */
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, a.sample_type, 0, &s));
		PECS_CHECK(t, s.period == want, "sample %d: period %llu, expected 1e9/%llu = %llu",
			   n, (unsigned long long)s.period, (unsigned long long)freq,
			   (unsigned long long)want);
		n++;
	}
	PECS_CHECK(t, n >= 3, "%d samples parsed", n);
}
