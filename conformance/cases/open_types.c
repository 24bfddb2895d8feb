/* Event types beyond the software clocks: the hardware types on a host without a PMU,
 * configs the tracepoint and breakpoint PMUs cannot know, and the newest software
 * counter. Measured on Linux 6.18 (perf_init_event, perf_tp_event_init,
 * hw_breakpoint_event_init, perf_swevent_init), the same as root and as uid 65534. */
#include <time.h>

#include "pecs/toolkit/counting.h"

/* The tracepoint PMU numbers its events from 1 up; this id names none on any kernel. */
#define NO_SUCH_TRACEPOINT 0x7fffffffull

/* Without a hardware PMU nothing claims HARDWARE, HW_CACHE or RAW: "no such event",
 * like an unknown type. A host that has a PMU opens them, so there is nothing to check. */
PECS_CASE("Required.Open.Type.HardwareWithoutPmuEnoent", "", "OPEN-HW-ENOENT")
{
	static const struct {
		uint32_t type;
		uint64_t config;
	} evs[] = {
		{PECS_TYPE_HW_CACHE, 0},
		{PECS_TYPE_RAW, 0},
		{PECS_TYPE_RAW, 0x3c},
		{PECS_TYPE_HARDWARE, 1}, /* instructions */
	};
	struct pecs_attr a;
	int r;

	pecs_attr_counting(t, &a, 0);
	a.type = PECS_TYPE_HARDWARE; /* config 0: cycles */
	r = pecs_open(t, &a, 0, -1, -1, 0);
	if (r >= 0)
		PECS_ENV_SKIP(t, "this host has a hardware PMU: PERF_TYPE_HARDWARE cycles opened");
	PECS_CHECK_ERR(t, r, ENOENT);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		pecs_attr_counting(t, &a, evs[i].config);
		a.type = evs[i].type;
		r = pecs_open(t, &a, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, r, ENOENT, "type %u config %#llx",
			       evs[i].type, (unsigned long long)evs[i].config);
	}
}

/* These PMUs exist but refuse what they cannot be: an unknown tracepoint id, and a
 * breakpoint of type HW_BREAKPOINT_EMPTY (bp_type 0). */
PECS_CASE("Required.Open.Type.UnknownTracepointEmptyBreakpointEinval", "",
	  "OPEN-TRACEPOINT-BREAKPOINT-EINVAL")
{
	static const uint64_t tps[] = {0, NO_SUCH_TRACEPOINT, ~0ull};
	struct pecs_attr a;
	int r;

	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		pecs_attr_counting(t, &a, tps[i]);
		a.type = PECS_TYPE_TRACEPOINT;
		r = pecs_open(t, &a, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, r, EINVAL, "tracepoint id %#llx",
			       (unsigned long long)tps[i]);
	}
	for (uint64_t config = 0; config < 2; config++) {
		pecs_attr_counting(t, &a, config);
		a.type = PECS_TYPE_BREAKPOINT;
		a.bp_type = 0;
		r = pecs_open(t, &a, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, r, EINVAL, "empty breakpoint, config %llu",
			       (unsigned long long)config);
	}
}

/* PERF_COUNT_SW_CGROUP_SWITCHES (config 11) is below PERF_COUNT_SW_MAX, so it opens
 * like the other software counters. The scheduler raises it with kernel registers, so a
 * user-only counter stays at 0 however often the thread is switched out. */
PECS_CASE("Required.Open.Type.CgroupSwitchesOpens", "counting", "OPEN-SW-CGROUP-SWITCHES")
{
	struct pecs_attr a;
	uint64_t v = ~0ull;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_CGROUP_SWITCHES);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	/* Blocking switches this thread out; three short waits suffice. */
	for (int i = 0; i < 3; i++)
		nanosleep(&(struct timespec){0, 200000}, NULL);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_read(t, fd, &v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v, 0);
}
