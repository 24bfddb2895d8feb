/* Event ids: unique and handed out in increasing order. Other processes open events too,
 * so consecutive ids are not promised here, only order. */
#include "pecs/toolkit/counting.h"

#define N_EVENTS 6

PECS_CASE("Required.Group.Id.StrictlyIncreasing", "counting", "GROUP-ID-INCREASING")
{
	uint64_t ids[N_EVENTS];
	struct pecs_attr attr;
	int fd;

	for (int i = 0; i < N_EVENTS; i++) {
		/* alternate the kinds: ids come from one sequence whatever the event */
		pecs_attr_counting(t, &attr, i % 2 ? PECS_SW_TASK_CLOCK : PECS_SW_CPU_CLOCK);
		fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
		PECS_CHECK_OK(t, pecs_event_id(t, fd, &ids[i]));
		PECS_CHECK(t, ids[i] != 0, "event %d has id 0", i);
		if (i > 0)
			PECS_CHECK(t, ids[i] > ids[i - 1], "event %d id %llu not above %llu", i,
				   (unsigned long long)ids[i], (unsigned long long)ids[i - 1]);
	}
}

/* Closing an event does not free its id for the next one. */
PECS_CASE("Required.Group.Id.NotReusedAfterClose", "counting", "GROUP-ID-INCREASING")
{
	uint64_t first, again;
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &first));
	PECS_CHECK_OK(t, pecs_close(t, fd));
	fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &again));
	PECS_CHECK(t, again > first, "id %llu after closing id %llu", (unsigned long long)again,
		   (unsigned long long)first);
}

/* Each member has its own id, not the leader's, and they follow creation order. */
PECS_CASE("Required.Group.Id.MembersHaveOwnIds", "counting,read.group",
	  "GROUP-ID-OWN,GROUP-ID-INCREASING")
{
	uint64_t ids[4];
	int fds[4];

	PECS_CHECK_OK(t, pecs_cnt_open_group(t, 0, 4, fds, ids));
	for (int i = 1; i < 4; i++)
		PECS_CHECK(t, ids[i] > ids[i - 1], "member %d id %llu not above %llu", i,
			   (unsigned long long)ids[i], (unsigned long long)ids[i - 1]);
}
