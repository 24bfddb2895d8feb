/* PERF_EVENT_IOC_ID: the event's u64 id, the same one read() reports with FORMAT_ID. */
#include "pecs/toolkit/ring.h"

PECS_CASE("Required.Ioctl.Id.MatchesReadFormatId", "counting",
	  "IOC-ID-WRITES-U64,IOC-ID-EQ-READ-ID")
{
	struct pecs_attr a;
	uint64_t v[2], id = ~0ull;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_CPU_CLOCK);
	a.read_format = PECS_FORMAT_ID;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ID, (unsigned long)&id), 0);
	PECS_CHECK(t, id != ~0ull, "IOC_ID did not write its argument");
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[1], id);
}

PECS_CASE("Required.Ioctl.Id.WritesEightBytesOnly", "counting", "IOC-ID-WRITES-U64")
{
	struct pecs_attr a;
	uint64_t buf[3] = {~0ull, ~0ull, ~0ull};
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ID, (unsigned long)&buf[1]), 0);
	PECS_CHECK_EQ(t, buf[0], ~0ull);
	PECS_CHECK_EQ(t, buf[2], ~0ull);
	PECS_CHECK(t, buf[1] != ~0ull, "no id written");
}

PECS_CASE("Required.Ioctl.Id.DistinctPerEventInGroup", "counting,read.group",
	  "IOC-ID-DISTINCT,IOC-ID-EQ-READ-ID")
{
	struct pecs_attr a;
	uint64_t id_l = 0, id_m = 0, v[5];
	int leader, member;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = PECS_FORMAT_GROUP | PECS_FORMAT_ID;
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, leader, &id_l));
	PECS_CHECK_OK(t, pecs_event_id(t, member, &id_m));
	PECS_CHECK(t, id_l != id_m, "leader and member share id %llu", (unsigned long long)id_l);
	/* {nr, value, id, value, id}: leader first, each with its own id, read from the member. */
	PECS_CHECK_EQ(t, pecs_read(t, member, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[0], 2);
	PECS_CHECK_EQ(t, v[2], id_l);
	PECS_CHECK_EQ(t, v[4], id_m);
}

PECS_CASE("Required.Ioctl.Id.NullPointerEfault", "counting", "IOC-ID-EFAULT")
{
	struct pecs_attr a;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_ID, 0), EFAULT);
}
