/* Group rules beside open_group_fd.c's: what may join a group, what FD_NO_GROUP does with
 * a member's fd, and where the 16 KiB read-size limit sits among the checks
 * (kernel/events/core.c perf_event_open: the clock and the group rules come before
 * perf_event_validate_size). Measured here. */
#include "pecs/toolkit/counting.h"

PECS_CASE("Required.Open.GroupFd.AnySoftwareEventJoins", "read.group", "OPEN-GROUP-SW-MIX")
{
	static const uint64_t others[] = {PECS_SW_PAGE_FAULTS, PECS_SW_CPU_CLOCK, PECS_SW_DUMMY,
					  PECS_SW_CONTEXT_SWITCHES};
	struct pecs_attr attr;
	uint64_t buf[8];
	int leader;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, PECS_FORMAT_GROUP);
	leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		int r;

		pecs_cnt_attr(t, &attr, others[i], PECS_FORMAT_GROUP);
		r = pecs_open(t, &attr, 0, -1, leader, 0);
		PECS_CHECK_OK(t, r, "software config %llu joining a TASK_CLOCK leader",
			      (unsigned long long)others[i]);
	}
	PECS_CHECK_EQ(t, pecs_read(t, leader, buf, sizeof(buf)), 8 + 5 * 8);
	PECS_CHECK_EQ(t, buf[0], 5);
}

/* FD_NO_GROUP does not look at the group fd's place in a group: a member's fd, which
 * cannot lead (EINVAL without the flag), is accepted. */
PECS_CASE("Required.Group.Flags.NoGroupAcceptsMemberFd", "read.group",
	  "OPEN-FLAGS-NO-GROUP-ALONE")
{
	struct pecs_attr attr;
	uint64_t buf[4];
	int leader, member, alone;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, PECS_FORMAT_GROUP);
	leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	member = PECS_OPEN(t, &attr, 0, -1, leader, 0);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, member, 0), EINVAL);
	alone = PECS_OPEN(t, &attr, 0, -1, member, PECS_FLAG_FD_NO_GROUP);
	PECS_CHECK_EQ(t, pecs_read(t, alone, buf, sizeof(buf)), 16);
	PECS_CHECK_EQ(t, buf[0], 1);
	PECS_CHECK_EQ(t, pecs_read(t, leader, buf, sizeof(buf)), 24);
	PECS_CHECK_EQ(t, buf[0], 2);
}

PECS_CASE("Required.Open.Order.ReadSizeAfterClockAndGroupRules", "read.group",
	  "OPEN-ORDER,OPEN-GROUP-READ-SIZE-E2BIG")
{
	struct pecs_attr attr;
	uint32_t fit;
	int leader = pecs_cnt_full_group(t, &attr, &fit);
	uint64_t rf = attr.read_format;

	/* A member that adds less to its own read is still refused for the group's. */
	pecs_cnt_attr(t, &attr, PECS_SW_CPU_CLOCK, 0);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), E2BIG);
	/* A bad clock is found before the size (the group's format: its own read is over). */
	pecs_cnt_attr(t, &attr, PECS_SW_CPU_CLOCK, rf);
	attr.flags |= PECS_ATTR_USE_CLOCKID;
	attr.clockid = 99;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), EINVAL);
	/* So is a group rule: a pinned member. */
	pecs_cnt_attr(t, &attr, PECS_SW_CPU_CLOCK, rf);
	attr.flags |= PECS_ATTR_PINNED;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), EINVAL);
	/* leader first, as Open.GroupFd.ReadSizeOver16KiBE2big: the teardown stays cheap */
	PECS_CHECK_OK(t, pecs_close(t, leader));
}
