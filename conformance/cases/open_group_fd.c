/* perf_event_open(2) group_fd: what may lead a group and what may join one. */
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/version.h"

PECS_CASE("Required.Open.GroupFd.NotAnFdEbadf", "", "OPEN-GROUP-FD-EBADF")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, 9999, 0), EBADF);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -2, 0), EBADF);
	/* the group flags do not turn a bad group_fd into no group */
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, 9999, PECS_FLAG_FD_NO_GROUP), EBADF);
}

/* An fd of this process that is no event of the implementation's. */
PECS_CASE("Required.Open.GroupFd.NotAnEventEbadf", "", "OPEN-GROUP-FD-EBADF")
{
	struct pecs_attr attr;
	int null_fd = PECS_SAFE_SYS(t, open("/dev/null", O_RDONLY | O_CLOEXEC));

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int ret = pecs_open(t, &attr, 0, -1, null_fd, 0);

	close(null_fd);
	PECS_CHECK_ERR(t, ret, EBADF);
}

/* Groups are one level deep: a member cannot lead. */
PECS_CASE("Required.Open.GroupFd.MemberAsLeaderEinval", "read.group", "OPEN-GROUP-NESTED-EINVAL")
{
	struct pecs_attr attr;
	int fds[2];

	PECS_CHECK_OK(t, pecs_cnt_open_group(t, 0, 2, fds, NULL));
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, fds[1], 0), EINVAL);
	/* the leader still takes members */
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, fds[0], 0));
}

PECS_CASE("Required.Open.GroupFd.LeaderOnOtherCpuEinval", "read.group", "OPEN-GROUP-CPU-EINVAL")
{
	struct pecs_attr attr;

	if (pecs_host(t)->ncpus < 2)
		PECS_ENV_SKIP(t, "needs two cpus, the host has %d", pecs_host(t)->ncpus);
	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int leader = PECS_OPEN(t, &attr, 0, 0, -1, 0);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, 1, leader, 0), EINVAL);
	/* any cpu is not the same cpu either */
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), EINVAL);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, 0, leader, 0));

	int any = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, 0, any, 0), EINVAL);
}

/* Only the leader decides how the group is scheduled. */
PECS_CASE("Required.Open.GroupFd.MemberPinnedEinval", "read.group",
	  "OPEN-GROUP-MEMBER-SCHED-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	attr.flags |= PECS_ATTR_PINNED;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), EINVAL);
	/* a pinned leader is fine */
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

PECS_CASE("Required.Open.GroupFd.MemberExclusiveEinval",
	  "read.group", "OPEN-GROUP-MEMBER-SCHED-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	attr.flags |= PECS_ATTR_EXCLUSIVE;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), EINVAL);
}

PECS_CASE("Required.Open.GroupFd.InheritDiffersEinval", "read.group", "OPEN-GROUP-INHERIT-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int plain = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	attr.flags |= PECS_ATTR_INHERIT;
	int inheriting = PECS_OPEN(t, &attr, 0, -1, -1, 0);

	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, plain, 0), EINVAL);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, inheriting, 0));
	attr.flags &= ~PECS_ATTR_INHERIT;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, inheriting, 0), EINVAL);
}

/* Members share the leader's clock, so that their times can be compared. */
PECS_CASE("Required.Open.GroupFd.ClockDiffersEinval", "read.group", "OPEN-GROUP-CLOCK-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int plain = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	attr.flags |= PECS_ATTR_USE_CLOCKID;
	attr.clockid = CLOCK_MONOTONIC_RAW;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, plain, 0), EINVAL);
	int raw = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, raw, 0));
	attr.clockid = CLOCK_MONOTONIC;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, raw, 0), EINVAL);
}

/* A group read must fit 16 KiB: the open that would make the group's read larger fails.
 * The read format that reaches 16 KiB exactly with the fewest events (16 bytes, then 24
 * per event with ID and LOST: 682 events, pecs_cnt_format_16k) puts the boundary where
 * the read is exactly 16384 bytes: those fit and one more is refused. */
PECS_CASE("Required.Open.GroupFd.ReadSizeOver16KiBE2big", "read.group",
	  "OPEN-GROUP-READ-SIZE-E2BIG")
{
	struct pecs_attr attr;
	static uint64_t buf[PECS_READ_SIZE_MAX / 8 + 8];
	uint32_t fit;
	int leader = pecs_cnt_full_group(t, &attr, &fit);

	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0), E2BIG);
	/* E2BIG here is about the group, not the attr: the size field is left alone */
	PECS_CHECK_EQ(t, attr.size, pecs_host(t)->attr_size);
	/* the group that stays reads exactly 16 KiB */
	PECS_CHECK_EQ(t, pecs_read(t, leader, buf, sizeof(buf)), PECS_READ_SIZE_MAX);
	PECS_CHECK_EQ(t, buf[0], fit);
	/* Leader first: its close makes every member a singleton at once, and each member's
	 * close is then cheap. Members first, each close walks the whole group again (Linux
	 * recomputes every sibling's read size). */
	PECS_CHECK_OK(t, pecs_close(t, leader));
}

/* A group lives in one task's context: a member on another task is refused, for lack of
 * permission first when the caller may not watch that task. */
PECS_CASE("Required.Open.GroupFd.LeaderOnOtherTask",
	  "read.group,pid.other,policy", "OPEN-GROUP-TASK-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int leader = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	int ret = pecs_open(t, &attr, 1, -1, leader, 0);

	/* Before Linux 6.12 the group checks ran before the permission check (6.1.192's
	 * perf_event_open), so the caller learnt EINVAL either way. */
	if (pecs_host(t)->privileged || pecs_linux_before(t, 6, 12))
		PECS_CHECK_ERR(t, ret, EINVAL);
	else
		PECS_CHECK_ERR(t, ret, EACCES);
}

/* Once the leader's task has exited the group takes no one. */
PECS_CASE("Required.Open.GroupFd.LeaderTaskExitedEnodev",
	  "read.group,pid.other", "OPEN-GROUP-LEADER-EXITED-ENODEV")
{
	struct pecs_attr attr;
	int go[2], status;
	char byte = 0;

	PECS_SAFE_SYS(t, pipe(go));
	/* Not PECS_SAFE_SYS: a failed fork closes the pipe before the case ends. */
	pid_t child = fork();
	if (child < 0) {
		close(go[0]);
		close(go[1]);
		PECS_BROKEN(t, "fork: %s", pecs_errname(errno));
	}
	if (child == 0) {
		/* wait for the parent's word (or its death), then exit */
		close(go[1]);
		if (read(go[0], &byte, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	int leader = pecs_open(t, &attr, child, -1, -1, 0);
	if (write(go[1], &byte, 1) != 1 || waitpid(child, &status, 0) != child) {
		close(go[1]);
		PECS_BROKEN(t, "could not end the child %d", (int)child);
	}
	close(go[1]);
	PECS_CHECK_OK(t, leader, "event on child %d", (int)child);
	/* Before Linux 6.12 nothing looked at the leader's state: the exited task's context
	 * is not the caller's, EINVAL (6.1.192's perf_event_open). */
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0),
		       pecs_linux_before(t, 6, 12) ? EINVAL : ENODEV);
}
