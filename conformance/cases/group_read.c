/* Group reads seen from each fd, when members and leader ask for different formats. */
#include <string.h>

#include "pecs/toolkit/counting.h"

#define RF_GID (PECS_FORMAT_GROUP | PECS_FORMAT_ID)

/* A leader and one member of TASK_CLOCK with the given formats, run for 2 ms. */
static int open_pair(struct pecs_t *t, uint64_t rf_leader, uint64_t rf_member, int *fds,
		     uint64_t *ids)
{
	struct pecs_attr attr;
	int err;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, rf_leader);
	fds[0] = pecs_open(t, &attr, 0, -1, -1, 0);
	if (fds[0] < 0)
		return fds[0];
	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, rf_member);
	attr.flags &= ~PECS_ATTR_DISABLED;
	fds[1] = pecs_open(t, &attr, 0, -1, fds[0], 0);
	if (fds[1] < 0)
		return fds[1];
	for (int i = 0; i < 2; i++)
		if ((err = pecs_event_id(t, fds[i], &ids[i])) < 0)
			return err;
	return pecs_cnt_run(t, fds[0], PECS_IOC_FLAG_GROUP, 2000000);
}

PECS_CASE("Required.Group.Read.MemberFdReadsWholeGroup",
	  "counting,read.group", "READ-GROUP-ANY-FD,READ-GROUP-LEADER-FIRST,GROUP-ID-OWN")
{
	uint64_t buf[8], ids[2];
	int fds[2];

	PECS_CHECK_OK(t, open_pair(t, RF_GID, RF_GID, fds, ids));
	PECS_CHECK_EQ(t, pecs_read(t, fds[1], buf, sizeof(buf)), 40);
	PECS_CHECK_EQ(t, buf[0], 2);
	PECS_CHECK(t, buf[1] > 0 && buf[3] > 0, "values %llu, %llu after a run",
		   (unsigned long long)buf[1], (unsigned long long)buf[3]);
	PECS_CHECK_EQ(t, buf[2], ids[0]);
	PECS_CHECK_EQ(t, buf[4], ids[1]);
}

/* The format is the fd's own: a member without GROUP reads itself alone. */
PECS_CASE("Required.Group.Read.MemberWithoutGroupReadsItself",
	  "counting,read.group", "READ-GROUP-FORMAT-PER-EVENT")
{
	uint64_t buf[8], ids[2];
	int fds[2];

	PECS_CHECK_OK(t, open_pair(t, RF_GID, PECS_FORMAT_ID, fds, ids));
	PECS_CHECK_EQ(t, pecs_read(t, fds[1], buf, sizeof(buf)), 16);
	PECS_CHECK(t, buf[0] > 0, "member value 0 after a run");
	PECS_CHECK_EQ(t, buf[1], ids[1]);
	/* the leader still reads both */
	PECS_CHECK_EQ(t, pecs_read(t, fds[0], buf, sizeof(buf)), 40);
	PECS_CHECK_EQ(t, buf[0], 2);
	PECS_CHECK_EQ(t, buf[4], ids[1]);
}

PECS_CASE("Required.Group.Read.LeaderWithoutGroupReadsItself",
	  "counting,read.group", "READ-GROUP-FORMAT-PER-EVENT,READ-GROUP-LEADER-FIRST")
{
	uint64_t buf[8], ids[2];
	int fds[2];

	PECS_CHECK_OK(t, open_pair(t, PECS_FORMAT_ID, RF_GID, fds, ids));
	PECS_CHECK_EQ(t, pecs_read(t, fds[0], buf, sizeof(buf)), 16);
	PECS_CHECK_EQ(t, buf[1], ids[0]);
	/* the member's GROUP read still starts with the leader */
	PECS_CHECK_EQ(t, pecs_read(t, fds[1], buf, sizeof(buf)), 40);
	PECS_CHECK_EQ(t, buf[0], 2);
	PECS_CHECK_EQ(t, buf[2], ids[0]);
	PECS_CHECK_EQ(t, buf[4], ids[1]);
}

/* FD_NO_GROUP: group_fd names an event but the new one stands alone. */
PECS_CASE("Required.Group.Flags.NoGroupStandsAlone",
	  "counting,read.group", "OPEN-FLAGS-NO-GROUP-ALONE")
{
	uint64_t buf[8], ids[2];
	struct pecs_attr attr;
	int fds[2];

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_GID);
	fds[0] = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	fds[1] = PECS_OPEN(t, &attr, 0, -1, fds[0], PECS_FLAG_FD_NO_GROUP);
	PECS_CHECK_OK(t, pecs_event_id(t, fds[0], &ids[0]));
	PECS_CHECK_OK(t, pecs_event_id(t, fds[1], &ids[1]));
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_EQ(t, pecs_read(t, fds[i], buf, sizeof(buf)), 24);
		PECS_CHECK_EQ(t, buf[0], 1);
		PECS_CHECK_EQ(t, buf[2], ids[i]);
	}
}

/* Members come after the leader in the order they were opened. */
PECS_CASE("Required.Group.Read.SiblingsInCreationOrder",
	  "counting,read.group", "READ-GROUP-LEADER-FIRST")
{
	uint64_t buf[16], ids[5];
	int fds[5];

	PECS_CHECK_OK(t, pecs_cnt_open_group(t, RF_GID, 5, fds, ids));
	PECS_CHECK_EQ(t, pecs_read(t, fds[3], buf, sizeof(buf)), 8 + 5 * 16);
	PECS_CHECK_EQ(t, buf[0], 5);
	for (int i = 0; i < 5; i++)
		PECS_CHECK(t, buf[2 + 2 * i] == ids[i], "entry %d id %llu, member %d has %llu", i,
			   (unsigned long long)buf[2 + 2 * i], i, (unsigned long long)ids[i]);
}
