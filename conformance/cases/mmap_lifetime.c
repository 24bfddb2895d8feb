/* How long a mapping and its event live, and what may be mapped: mm rounds a length up
 * to pages before perf_mmap() sees it; a counting event has a ring too (perf_mmap() does
 * not ask for a sampling event); and a mapping holds its event's file, so close(fd) of a
 * mapped group member keeps it in the group until munmap (perf_release runs at the last
 * reference). Measured here. */
#include <poll.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

PECS_CASE("Required.Mmap.Length.RoundedUpToPages", "mmap", "MMAP-LEN-ROUNDED-UP")
{
	size_t pg = (size_t)pecs_host(t)->page_size;
	struct pecs_attr a;
	void *addr;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	/* 2 pages less 100 bytes is 2 pages: metadata and one data page */
	PECS_CHECK_OK(t, pecs_mmap(t, fd, 2 * pg - 100, PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				   &addr));
	PECS_CHECK_EQ(t, ((struct pecs_mmap_page *)addr)->data_size, pg);
	PECS_CHECK_OK(t, pecs_munmap(t, addr, 2 * pg));
}

PECS_CASE("Required.Mmap.Counting.CountingEventMaps", "mmap,poll", "MMAP-COUNTING-MAPS")
{
	struct pecs_attr a;
	struct pecs_ring r;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 2, PROT_READ, &r));
	/* A ring nothing writes into: nothing to poll for, and no hang-up either. */
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), 0);
}

PECS_CASE("Required.Group.Close.MappedMemberStaysUntilMunmap", "read.group,mmap",
	  "GROUP-CLOSE-MAPPED-MEMBER")
{
	size_t pg = (size_t)pecs_host(t)->page_size;
	struct pecs_attr a;
	uint64_t buf[4];
	void *addr;
	int leader, member;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = PECS_FORMAT_GROUP;
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_mmap(t, member, 3 * pg, PROT_READ, MAP_SHARED, 0, &addr));
	PECS_CHECK_OK(t, pecs_close(t, member));
	PECS_CHECK_EQ(t, pecs_read(t, leader, buf, sizeof(buf)), 24);
	PECS_CHECK(t, buf[0] == 2, "closed but mapped member: the group reads nr %llu, expected 2",
		   (unsigned long long)buf[0]);
	PECS_CHECK_EQ(t, ((struct pecs_mmap_page *)addr)->data_offset, pg);
	PECS_CHECK_OK(t, pecs_munmap(t, addr, 3 * pg));
	PECS_CHECK_EQ(t, pecs_read(t, leader, buf, sizeof(buf)), 16);
	PECS_CHECK(t, buf[0] == 1, "after munmap the group reads nr %llu, expected 1",
		   (unsigned long long)buf[0]);
}

/* mm refuses PROT_EXEC on the event's file (its mount is noexec) before perf_mmap sees
 * MAP_PRIVATE, and refuses an offset that is no page multiple before perf_mmap's own
 * offset check. */
PECS_CASE("Required.Mmap.Flags.MmChecksComeFirst", "mmap", "MMAP-MM-CHECKS-FIRST")
{
	size_t pg = (size_t)pecs_host(t)->page_size;
	struct pecs_attr a;
	void *addr;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	/* Before Linux 6.15 the mount allows exec, so perf_mmap sees MAP_PRIVATE: EINVAL
	 * (fs/anon_inodes.c, as in Required.Mmap.Prot.ExecEperm). */
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, 3 * pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, 0, &addr),
		       pecs_linux_before(t, 6, 15) ? EINVAL : EPERM);
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, 3 * pg, PROT_READ, MAP_SHARED, 100, &addr), EINVAL);
	/* Neither left a mapping behind: the ring maps. */
	PECS_CHECK_OK(t, pecs_mmap(t, fd, 3 * pg, PROT_READ, MAP_SHARED, 0, &addr));
}
