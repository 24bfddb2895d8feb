/* time_enabled and time_running: whose clock they follow. A task event's context is
 * only active while its task runs, so its times stop when the task blocks or exits; a
 * cpu-wide event's CPU is always there. A group is scheduled as a unit under its leader.
 * Measured on Linux 6.18 (kernel/events/core.c: perf_event_update_time, group_sched_in,
 * perf_read_group). */
#include <time.h>

#include "support_counting.h"
#include "support_thread.h"

#define MS 1000000ull
#define RF_TIMES (PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING)

struct times {
	uint64_t value, enabled, running;
};

static int read_times(struct pecs_t *t, int fd, struct times *v)
{
	return pecs_read(t, fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -EIO;
}

PECS_CASE(read_times_task, "Required.Read.Times.TaskEventTimesFollowTheTask", "counting",
	  "READ-TIMES-TASK")
{
	uint64_t wall, cpu;
	struct pecs_attr a;
	struct times v;
	int fd;

	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	wall = pecs_clock_ns(CLOCK_MONOTONIC);
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_cpu(3 * MS);
	/* off the CPU for 5 ms: the event's context is scheduled out with the task */
	nanosleep(&(struct timespec){0, 5 * MS}, NULL);
	pecs_burn_cpu(3 * MS);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	wall = pecs_clock_ns(CLOCK_MONOTONIC) - wall;
	PECS_CHECK_OK(t, read_times(t, fd, &v));
	/* At least the CPU time burned; not bounded by the thread's CPU clock from above,
	 * since on a virtual machine that clock leaves out stolen time and perf's does not. */
	PECS_CHECK(t, v.enabled >= 5 * MS, "time_enabled %llu ns for %llu ns of this thread's "
		   "CPU time (wall %llu ns)", (unsigned long long)v.enabled,
		   (unsigned long long)cpu, (unsigned long long)wall);
	PECS_CHECK(t, v.running <= v.enabled && v.running >= 5 * MS,
		   "time_running %llu ns, time_enabled %llu ns", (unsigned long long)v.running,
		   (unsigned long long)v.enabled);
	PECS_CHECK(t, v.enabled + 4 * MS <= wall, "time_enabled %llu ns counted the sleep "
		   "(wall %llu ns)", (unsigned long long)v.enabled, (unsigned long long)wall);
}

PECS_CASE(read_times_cpu_wide, "Required.Read.Times.CpuWideTimesFollowTheWallClock",
	  "counting", "READ-TIMES-TASK")
{
	uint64_t wall;
	struct pecs_attr a;
	struct times v;
	int fd;

	if (!pecs_host(t)->privileged && pecs_host(t)->paranoid > 0)
		PECS_ENV_SKIP(t, "cpu-wide events need CAP_PERFMON or perf_event_paranoid <= 0 "
			      "(it is %d)", pecs_host(t)->paranoid);
	pecs_cnt_attr(t, &a, PECS_SW_CPU_CLOCK, RF_TIMES);
	fd = PECS_OPEN(t, &a, -1, 0, -1, 0);
	wall = pecs_clock_ns(CLOCK_MONOTONIC);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	/* this thread sleeps; cpu 0 goes on existing */
	nanosleep(&(struct timespec){0, 5 * MS}, NULL);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	wall = pecs_clock_ns(CLOCK_MONOTONIC) - wall;
	PECS_CHECK_OK(t, read_times(t, fd, &v));
	PECS_CHECK(t, v.enabled >= 4 * MS && v.enabled <= wall,
		   "time_enabled %llu ns over %llu ns of wall time", (unsigned long long)v.enabled,
		   (unsigned long long)wall);
	PECS_CHECK(t, v.running <= v.enabled, "time_running %llu > time_enabled %llu",
		   (unsigned long long)v.running, (unsigned long long)v.enabled);
}

/* An event on a thread that has exited keeps the count and times it had at the exit. */
PECS_CASE(read_finished_thread, "Required.Read.Times.FinishedThreadFrozen",
	  "counting,pid.other", "READ-FINISHED-THREAD")
{
	struct pecs_spinner s;
	struct times v = {0, 0, 0}, w;
	struct pecs_attr a;
	uint64_t end;
	int fd, err;

	PECS_CHECK_OK(t, pecs_spinner_start(&s));
	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES);
	a.flags &= ~PECS_ATTR_DISABLED;
	fd = pecs_open(t, &a, s.tid, -1, -1, 0);
	if (fd < 0) {
		pecs_spinner_finish(&s);
		PECS_CHECK_OK(t, fd);
	}
	/* let it count a little, bounded by wall time */
	end = pecs_clock_ns(CLOCK_MONOTONIC) + 2000 * MS;
	while (v.value < 2 * MS && pecs_clock_ns(CLOCK_MONOTONIC) < end) {
		nanosleep(&(struct timespec){0, MS / 2}, NULL);
		if (read_times(t, fd, &v) < 0)
			break;
	}
	err = pecs_spinner_finish(&s);
	PECS_CHECK(t, err == 0, "the thread did not finish: %s", pecs_retname(err));
	PECS_CHECK(t, v.value >= 2 * MS, "the spinning thread counted %llu ns in 2 s",
		   (unsigned long long)v.value);
	PECS_CHECK_OK(t, read_times(t, fd, &v));
	pecs_burn_cpu(2 * MS);
	nanosleep(&(struct timespec){0, MS}, NULL);
	PECS_CHECK_OK(t, read_times(t, fd, &w));
	PECS_CHECK_EQ(t, w.value, v.value);
	PECS_CHECK_EQ(t, w.enabled, v.enabled);
	PECS_CHECK_EQ(t, w.running, v.running);
}

/* A group read carries one time_enabled/time_running pair: the leader's. A member
 * enabled later has less time of its own, which a read of it alone shows. */
PECS_CASE(read_group_times_leader, "Required.Read.Group.TimesAreTheLeaders",
	  "counting,read.group", "READ-GROUP-TIMES-LEADER")
{
	struct {
		uint64_t nr, enabled, running, v[2];
	} g;
	struct pecs_attr a;
	struct times m;
	int leader, member;

	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, PECS_FORMAT_GROUP | RF_TIMES);
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES); /* reads only itself */
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	pecs_burn_cpu(5 * MS);
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_ENABLE, 0));
	pecs_burn_cpu(5 * MS);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, PECS_IOC_FLAG_GROUP));
	PECS_CHECK_EQ(t, pecs_read(t, leader, &g, sizeof(g)), sizeof(g));
	PECS_CHECK_OK(t, read_times(t, member, &m));
	PECS_CHECK_EQ(t, g.nr, 2);
	PECS_CHECK(t, m.enabled >= 3 * MS && g.enabled >= m.enabled + 3 * MS,
		   "group time_enabled %llu ns, the member's own %llu ns (enabled 5 ms later)",
		   (unsigned long long)g.enabled, (unsigned long long)m.enabled);
	/* the leader's task clock counted all along: its times are the group's (the count and
	 * the times are sampled apart, so they may differ by a little either way) */
	PECS_CHECK(t, g.enabled + 2 * MS > g.v[0] && g.v[0] + 2 * MS > g.enabled,
		   "group time_enabled %llu ns, leader count %llu ns", (unsigned long long)g.enabled,
		   (unsigned long long)g.v[0]);
	PECS_CHECK(t, g.running <= g.enabled, "group time_running %llu > time_enabled %llu",
		   (unsigned long long)g.running, (unsigned long long)g.enabled);
}

/* A member is scheduled only with its group: while its leader is disabled an enabled
 * member neither counts nor accrues time, enabled or running (measured: all three stay
 * 0, and stand still again once the leader is disabled). */
PECS_CASE(event_group_running, "Required.Group.Schedule.MemberRunsOnlyWithItsLeader",
	  "counting", "EVENT-GROUP-RUNNING")
{
	struct pecs_attr a;
	struct times m, m2;
	int leader, member;

	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES);
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	a.flags &= ~PECS_ATTR_DISABLED;
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	pecs_burn_cpu(3 * MS);
	PECS_CHECK_OK(t, read_times(t, member, &m));
	PECS_CHECK(t, m.value == 0 && m.enabled == 0 && m.running == 0,
		   "the member of a disabled leader: value %llu, time_enabled %llu, "
		   "time_running %llu after 3 ms", (unsigned long long)m.value,
		   (unsigned long long)m.enabled, (unsigned long long)m.running);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	pecs_burn_cpu(3 * MS);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, 0));
	PECS_CHECK_OK(t, read_times(t, member, &m));
	PECS_CHECK(t, m.value >= 2 * MS && m.enabled >= 2 * MS && m.running >= 2 * MS,
		   "with its leader enabled for 3 ms the member counted %llu ns, enabled %llu ns, "
		   "ran %llu ns", (unsigned long long)m.value, (unsigned long long)m.enabled,
		   (unsigned long long)m.running);
	/* the member is still enabled, its leader no longer */
	pecs_burn_cpu(3 * MS);
	PECS_CHECK_OK(t, read_times(t, member, &m2));
	PECS_CHECK_EQ(t, m2.value, m.value);
	PECS_CHECK_EQ(t, m2.enabled, m.enabled);
	PECS_CHECK_EQ(t, m2.running, m.running);
}
