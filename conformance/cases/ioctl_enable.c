/* PERF_EVENT_IOC_ENABLE, DISABLE and RESET, alone and with PERF_IOC_FLAG_GROUP.
 *
 * Whether an event counts is observed through read(): a TASK_CLOCK counter that is
 * enabled grows while this thread burns CPU, a disabled one does not move.
 */
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define BURN_NS (2 * 1000 * 1000ull)

/* 1 when the event's value grows across a CPU burn, 0 when it stays put. */
static int counts_while_burning(struct pecs_t *t, int fd, int *err)
{
	uint64_t before, after;

	*err = pecs_event_value(t, fd, &before);
	if (*err)
		return 0;
	pecs_burn_user(BURN_NS);
	*err = pecs_event_value(t, fd, &after);
	return after != before;
}

/* A disabled leader and one disabled TASK_CLOCK sibling. */
static int open_pair(struct pecs_t *t, int *leader, int *member)
{
	struct pecs_attr a;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	*leader = pecs_open(t, &a, 0, -1, -1, 0);
	if (*leader < 0)
		return *leader;
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	*member = pecs_open(t, &a, 0, -1, *leader, 0);
	return *member < 0 ? *member : 0;
}

#define CHECK_COUNTING(t, fd, want)                                                     \
	do {                                                                           \
		int err_;                                                              \
		int got_ = counts_while_burning((t), (fd), &err_);                     \
		PECS_CHECK_OK((t), err_);                                              \
		PECS_CHECK((t), got_ == (want), "%s %s while the thread ran", #fd,     \
			   got_ ? "counted" : "did not count");                        \
	} while (0)

PECS_CASE("Required.Ioctl.Enable.StartsAndDisableFreezes",
	  "counting", "IOC-ENABLE-STARTS,IOC-DISABLE-FREEZES")
{
	struct pecs_attr a;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	CHECK_COUNTING(t, fd, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	CHECK_COUNTING(t, fd, 1);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	CHECK_COUNTING(t, fd, 0);
}

PECS_CASE("Required.Ioctl.Enable.Idempotent", "counting", "IOC-ENABLE-IDEMPOTENT")
{
	struct pecs_attr a;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0), 0);
	CHECK_COUNTING(t, fd, 1);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0), 0);
	CHECK_COUNTING(t, fd, 0);
}

PECS_CASE("Required.Ioctl.Reset.ZeroesCountKeepsTimes", "counting", "IOC-RESET-COUNT-ONLY")
{
	struct pecs_attr a;
	uint64_t v[3]; /* value, time_enabled, time_running */
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(BURN_NS);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK(t, v[0] > 0 && v[1] > 0, "no count before the reset: %llu/%llu",
		   (unsigned long long)v[0], (unsigned long long)v[1]);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_RESET, 0), 0);
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[0], 0);
	PECS_CHECK(t, v[1] > 0 && v[2] > 0, "RESET cleared the times (enabled %llu running %llu)",
		   (unsigned long long)v[1], (unsigned long long)v[2]);
}

PECS_CASE("Required.Ioctl.Reset.WhileEnabledRestartsAtZero", "counting", "IOC-RESET-RUNNING")
{
	struct pecs_attr a;
	uint64_t before, after;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(4 * BURN_NS);
	PECS_CHECK_OK(t, pecs_event_value(t, fd, &before));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_RESET, 0), 0);
	PECS_CHECK_OK(t, pecs_event_value(t, fd, &after));
	/* Still counting, from zero: far less than the 8 ms already accumulated. */
	PECS_CHECK(t, after < before, "value %llu after RESET, %llu before",
		   (unsigned long long)after, (unsigned long long)before);
	CHECK_COUNTING(t, fd, 1);
}

PECS_CASE("Required.Ioctl.Group.EnableOnLeaderEnablesSiblings",
	  "counting,read.group",
	  "IOC-FLAG-GROUP-LEADER")
{
	int leader, member;

	PECS_CHECK_OK(t, open_pair(t, &leader, &member));
	PECS_CHECK_EQ(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, PECS_IOC_FLAG_GROUP), 0);
	CHECK_COUNTING(t, leader, 1);
	CHECK_COUNTING(t, member, 1);
}

PECS_CASE("Required.Ioctl.Group.EnableOnMemberEnablesGroup",
	  "counting,read.group",
	  "IOC-FLAG-GROUP-MEMBER")
{
	int leader, member;

	PECS_CHECK_OK(t, open_pair(t, &leader, &member));
	PECS_CHECK_EQ(t, pecs_ioctl(t, member, PECS_IOC_ENABLE, PECS_IOC_FLAG_GROUP), 0);
	CHECK_COUNTING(t, leader, 1);
	CHECK_COUNTING(t, member, 1);
}

PECS_CASE("Required.Ioctl.Group.NoFlagTouchesOnlyThatEvent",
	  "counting,read.group", "IOC-NO-FLAG-SINGLE")
{
	int leader, member;

	PECS_CHECK_OK(t, open_pair(t, &leader, &member));
	PECS_CHECK_EQ(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0), 0);
	CHECK_COUNTING(t, leader, 1);
	CHECK_COUNTING(t, member, 0);
}

PECS_CASE("Required.Ioctl.Group.DisableGroupThenEnableLeaderLeavesSiblings",
	  "counting,read.group",
	  "IOC-FLAG-GROUP-DISABLE,IOC-NO-FLAG-SINGLE")
{
	int leader, member;

	PECS_CHECK_OK(t, open_pair(t, &leader, &member));
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, PECS_IOC_FLAG_GROUP));
	CHECK_COUNTING(t, member, 1);
	PECS_CHECK_EQ(t, pecs_ioctl(t, member, PECS_IOC_DISABLE, PECS_IOC_FLAG_GROUP), 0);
	CHECK_COUNTING(t, leader, 0);
	CHECK_COUNTING(t, member, 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0), 0);
	CHECK_COUNTING(t, leader, 1);
	CHECK_COUNTING(t, member, 0);
}

PECS_CASE("Required.Ioctl.Group.ResetOnMemberResetsGroup",
	  "counting,read.group",
	  "IOC-FLAG-GROUP-MEMBER,IOC-RESET-COUNT-ONLY")
{
	int leader, member;
	uint64_t v;

	PECS_CHECK_OK(t, open_pair(t, &leader, &member));
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, PECS_IOC_FLAG_GROUP));
	pecs_burn_user(BURN_NS);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, PECS_IOC_FLAG_GROUP));
	PECS_CHECK_OK(t, pecs_event_value(t, leader, &v));
	PECS_CHECK(t, v > 0, "the leader did not count");
	PECS_CHECK_EQ(t, pecs_ioctl(t, member, PECS_IOC_RESET, PECS_IOC_FLAG_GROUP), 0);
	PECS_CHECK_OK(t, pecs_event_value(t, leader, &v));
	PECS_CHECK_EQ(t, v, 0);
	PECS_CHECK_OK(t, pecs_event_value(t, member, &v));
	PECS_CHECK_EQ(t, v, 0);
}

PECS_CASE("Required.Ioctl.Enable.ArgIsU32Bit0Only", "counting,read.group", "IOC-ARG-U32-BIT0")
{
	int leader, member;

	PECS_CHECK_OK(t, open_pair(t, &leader, &member));
	/* Bit 32 is cut off by the u32 conversion and the other low bits are not read:
	 * neither value is FLAG_GROUP. */
	PECS_CHECK_EQ(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 1ul << 32), 0);
	CHECK_COUNTING(t, member, 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0xfffffffeul), 0);
	CHECK_COUNTING(t, member, 0);
	/* ...while bit 0 under high garbage still is. */
	PECS_CHECK_EQ(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0xff00000001ul), 0);
	CHECK_COUNTING(t, member, 1);
	PECS_CHECK_EQ(t, pecs_ioctl(t, member, PECS_IOC_DISABLE, 0x80000003ul), 0);
	CHECK_COUNTING(t, leader, 0);
}
