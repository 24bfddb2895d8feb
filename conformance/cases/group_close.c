/* Closing events of a group. */
#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/wait.h"

#define RF_GID (PECS_FORMAT_GROUP | PECS_FORMAT_ID)

/* Without its leader a member is a group of its own. */
PECS_CASE("Required.Group.Close.LeaderGoneMemberReadsItself",
	  "counting,read.group", "GROUP-CLOSE-LEADER-SINGLETON")
{
	uint64_t buf[8], ids[3];
	int fds[3];

	PECS_CHECK_OK(t, pecs_cnt_open_group(t, RF_GID, 3, fds, ids));
	PECS_CHECK_OK(t, pecs_close(t, fds[0]));
	for (int i = 1; i < 3; i++) {
		PECS_CHECK_EQ(t, pecs_read(t, fds[i], buf, sizeof(buf)), 24);
		PECS_CHECK_EQ(t, buf[0], 1);
		PECS_CHECK_EQ(t, buf[2], ids[i]);
	}
}

/* The same with a sampling leader that ran: once closed it heads nothing, whatever
 * its sampling held on to while it ran. */
PECS_CASE("Required.Group.Close.SampledLeaderGoneMemberReadsItself",
	  "counting,read.group,sampling", "GROUP-CLOSE-SAMPLED-LEADER")
{
	struct pecs_attr attr;
	uint64_t buf[8], id = 0;
	int leader, member;

	pecs_attr_sampling(t, &attr, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	attr.read_format = RF_GID;
	leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_GID);
	attr.flags &= ~PECS_ATTR_DISABLED; /* counts whenever its leader runs */
	member = PECS_OPEN(t, &attr, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, member, &id));
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	pecs_burn_user(2000000);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, 0));
	PECS_CHECK_OK(t, pecs_close(t, leader));
	PECS_CHECK_EQ(t, pecs_read(t, member, buf, sizeof(buf)), 24);
	PECS_CHECK_EQ(t, buf[0], 1);
	PECS_CHECK_EQ(t, buf[2], id);
}

PECS_CASE("Required.Group.Close.MemberGoneLeaderReadsRest",
	  "counting,read.group", "GROUP-CLOSE-MEMBER")
{
	uint64_t buf[8], ids[3];
	int fds[3];

	PECS_CHECK_OK(t, pecs_cnt_open_group(t, RF_GID, 3, fds, ids));
	PECS_CHECK_OK(t, pecs_close(t, fds[1]));
	PECS_CHECK_EQ(t, pecs_read(t, fds[0], buf, sizeof(buf)), 40);
	PECS_CHECK_EQ(t, buf[0], 2);
	PECS_CHECK_EQ(t, buf[2], ids[0]);
	PECS_CHECK_EQ(t, buf[4], ids[2]);
	PECS_CHECK_EQ(t, pecs_read(t, fds[2], buf, sizeof(buf)), 40);
	PECS_CHECK_EQ(t, buf[4], ids[2]);
}

/* A closed leader's fd is just a closed fd. Nothing is opened in between, so the number
 * is still unused when the member tries to join. */
PECS_CASE("Required.Group.Close.JoinClosedLeaderEbadf", "read.group", "GROUP-CLOSE-LEADER-EBADF")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	int leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_close(t, leader));
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), EBADF);
}
