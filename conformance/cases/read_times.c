/* time_enabled and time_running: whose clock they follow. A task event's context is
 * only active while its task runs, so its times stop when the task blocks or exits; a
 * cpu-wide event's CPU is always there. A group is scheduled as a unit under its leader.
 * Measured on Linux 6.18 (kernel/events/core.c: perf_event_update_time, group_sched_in,
 * perf_read_group). */
#include <time.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/thread.h"
#include "pecs/toolkit/wait.h"

#define MS 1000000ull
#define RF_TIMES (PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING)

struct times {
	uint64_t value, enabled, running;
};

static int read_times(struct pecs_t *t, int fd, struct times *v)
{
	return pecs_read(t, fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -EIO;
}

/* The sleep is measured around nanosleep itself and the window around ENABLE..DISABLE:
 * a task event's time_enabled then fits in the window's wall time less the sleep (the
 * task was off the CPU for all of it but the two clock reads), however long the burns
 * took, while an event that follows the wall clock shows the whole window, the sleep
 * included. Neither verdict depends on how the host scheduled the thread: not even in an
 * emulated guest, whose thread CPU clock runs on while the host has its vCPU preempted
 * (2 ms burns measured 70 ms of CPU in a window, under TCG on a loaded host). */
PECS_CASE("Required.Read.Times.TaskEventTimesFollowTheTask", "counting", "READ-TIMES-TASK")
{
	const uint64_t sleep_ns = 100 * MS, burn_ns = 2 * MS;
	uint64_t slept, cpu, window;
	struct pecs_attr a;
	struct times v;
	int fd;

	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	window = pecs_clock_ns(CLOCK_MONOTONIC);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	pecs_burn_user(burn_ns);
	/* off the CPU: the event's context is scheduled out with the task */
	slept = pecs_clock_ns(CLOCK_MONOTONIC);
	nanosleep(&(struct timespec){0, (long)sleep_ns}, NULL);
	slept = pecs_clock_ns(CLOCK_MONOTONIC) - slept;
	pecs_burn_user(burn_ns);
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	window = pecs_clock_ns(CLOCK_MONOTONIC) - window;
	PECS_CHECK_OK(t, read_times(t, fd, &v));
	/* The task ran: some time was enabled and running. Not compared with the thread's
	 * CPU clock from either side: on a virtual machine or under ptrace the two differ by
	 * far more than a margin could cover (measured: half of it under strace -f). */
	PECS_CHECK(t, v.enabled > 0 && v.running > 0 && v.running <= v.enabled,
		   "time_enabled %llu ns, time_running %llu ns after %llu ns of this thread's "
		   "CPU time", (unsigned long long)v.enabled, (unsigned long long)v.running,
		   (unsigned long long)cpu);
	/* slept >= sleep_ns, and the task was asleep for all of it but the two clock reads:
	 * half the sleep is the margin both ways */
	PECS_CHECK(t, v.enabled + slept / 2 < window,
		   "time_enabled %llu ns counted the %llu ns sleep in a %llu ns window (%llu ns "
		   "of this thread's CPU time in it)", (unsigned long long)v.enabled,
		   (unsigned long long)slept, (unsigned long long)window,
		   (unsigned long long)cpu);
}

PECS_CASE("Required.Read.Times.CpuWideTimesFollowTheWallClock", "counting", "READ-TIMES-TASK")
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
	/* the count is the same clock: cpu 0's time while the event ran */
	PECS_CHECK(t, v.value >= 4 * MS && v.value <= wall,
		   "counted %llu ns over %llu ns of wall time", (unsigned long long)v.value,
		   (unsigned long long)wall);
}

/* An event on a thread that has exited keeps the count and times it had at the exit. */
PECS_CASE("Required.Read.Times.FinishedThreadFrozen", "counting,pid.other", "READ-FINISHED-THREAD")
{
	struct pecs_spinner s;
	struct times v = {0, 0, 0}, w;
	struct pecs_attr a;
	uint64_t end;
	int fd, err;

	PECS_SAFE_HOST(t, pecs_spinner_start(&s));
	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES);
	a.flags &= ~PECS_ATTR_DISABLED;
	fd = pecs_open(t, &a, s.tid, -1, -1, 0);
	if (fd < 0) {
		pecs_spinner_finish(&s);
		PECS_CHECK_OK(t, fd);
	}
	/* let it count a little, bounded by wall time */
	/* the thread stops by itself after 5 s of wall time (pecs/toolkit/thread.h) */
	end = pecs_clock_ns(CLOCK_MONOTONIC) + 4000 * MS;
	while (v.value < 2 * MS && pecs_clock_ns(CLOCK_MONOTONIC) < end) {
		nanosleep(&(struct timespec){0, MS / 2}, NULL);
		if (read_times(t, fd, &v) < 0)
			break;
	}
	err = pecs_spinner_finish(&s);
	PECS_CHECK_OK(t, err, "the thread did not finish");
	/* nonzero is what the freeze below needs; 2 ms is only how long we let it run */
	PECS_CHECK(t, v.value > 0, "the spinning thread counted nothing in 4 s");
	PECS_CHECK_OK(t, read_times(t, fd, &v));
	pecs_burn_user(2 * MS);
	nanosleep(&(struct timespec){0, MS}, NULL);
	PECS_CHECK_OK(t, read_times(t, fd, &w));
	PECS_CHECK_EQ(t, w.value, v.value);
	PECS_CHECK_EQ(t, w.enabled, v.enabled);
	PECS_CHECK_EQ(t, w.running, v.running);
}

/* A group read carries one time_enabled/time_running pair: the leader's. A member
 * enabled later has less time of its own, which a read of it alone shows. */
PECS_CASE("Required.Read.Group.TimesAreTheLeaders",
	  "counting,read.group", "READ-GROUP-TIMES-LEADER")
{
	struct {
		uint64_t nr, enabled, running, v[2];
	} g;
	struct pecs_attr a;
	struct times m;
	uint64_t lead;
	int leader, member;

	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, PECS_FORMAT_GROUP | RF_TIMES);
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES); /* reads only itself */
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	pecs_burn_user(5 * MS);
	/* the lead as the leader's own clock saw it, read before the member starts */
	PECS_CHECK_EQ(t, pecs_read(t, leader, &g, sizeof(g)), sizeof(g));
	lead = g.enabled;
	PECS_CHECK(t, lead > 0, "the leader shows no time_enabled after 5 ms of burning");
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_ENABLE, 0));
	pecs_burn_user(5 * MS);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, PECS_IOC_FLAG_GROUP));
	PECS_CHECK_EQ(t, pecs_read(t, leader, &g, sizeof(g)), sizeof(g));
	PECS_CHECK_OK(t, read_times(t, member, &m));
	PECS_CHECK_EQ(t, g.nr, 2);
	/* The member started after the leader had `lead`, so the group's time (the leader's)
	 * is ahead of the member's own by about that much. Not by exactly that much: each
	 * event's times are read from the task's clock at its own moment, and on a virtual
	 * machine that clock can have stolen time taken off in steps, so a few microseconds
	 * between two reads can outweigh all the time between two others (seen on ref under
	 * load: 2.2 us over). Half the lead still tells the leader's time from the member's. */
	PECS_CHECK(t, m.enabled > 0 && m.enabled + lead / 2 <= g.enabled,
		   "group time_enabled %llu ns, the member's own %llu ns (enabled when the leader "
		   "had %llu ns)", (unsigned long long)g.enabled, (unsigned long long)m.enabled,
		   (unsigned long long)lead);
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
PECS_CASE("Required.Group.Schedule.MemberRunsOnlyWithItsLeader", "counting", "EVENT-GROUP-RUNNING")
{
	struct pecs_attr a;
	struct times m, m2;
	int leader, member;

	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, RF_TIMES);
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	a.flags &= ~PECS_ATTR_DISABLED;
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	pecs_burn_user(3 * MS);
	PECS_CHECK_OK(t, read_times(t, member, &m));
	PECS_CHECK(t, m.value == 0 && m.enabled == 0 && m.running == 0,
		   "the member of a disabled leader: value %llu, time_enabled %llu, "
		   "time_running %llu after 3 ms", (unsigned long long)m.value,
		   (unsigned long long)m.enabled, (unsigned long long)m.running);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	pecs_burn_user(3 * MS);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, 0));
	PECS_CHECK_OK(t, read_times(t, member, &m));
	/* Nonzero and consistent: how much depends on how the task clock compares with the
	 * CPU clock the burn used, which is the host's business (ptrace halves it). */
	PECS_CHECK(t, m.value > 0 && m.enabled > 0 && m.running > 0 && m.running <= m.enabled,
		   "with its leader enabled for 3 ms the member counted %llu ns, enabled %llu ns, "
		   "ran %llu ns", (unsigned long long)m.value, (unsigned long long)m.enabled,
		   (unsigned long long)m.running);
	/* the member is still enabled, its leader no longer */
	pecs_burn_user(3 * MS);
	PECS_CHECK_OK(t, read_times(t, member, &m2));
	PECS_CHECK_EQ(t, m2.value, m.value);
	PECS_CHECK_EQ(t, m2.enabled, m.enabled);
	PECS_CHECK_EQ(t, m2.running, m.running);
}
