/* What read() reports across the life of a counting event: never enabled, stopped,
 * reset, running. */
#include <string.h>
#include <time.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define RF_TIMES_ID \
	(PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID)

/* value, time_enabled, time_running, id: the single layout of RF_TIMES_ID */
struct counts {
	uint64_t value, enabled, running, id;
};

static ssize_t read_counts(struct pecs_t *t, int fd, struct counts *c)
{
	memset(c, 0, sizeof(*c));
	return pecs_read(t, fd, c, sizeof(*c));
}

PECS_CASE("Required.Read.Disabled.ValuesZero", "counting", "READ-DISABLED-ZERO,READ-ID-IS-IOC-ID")
{
	struct pecs_attr attr;
	struct counts c;
	uint64_t id;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_TIMES_ID);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	pecs_burn_user(2000000);
	PECS_CHECK_EQ(t, read_counts(t, fd, &c), sizeof(c));
	PECS_CHECK_EQ(t, c.value, 0);
	PECS_CHECK_EQ(t, c.enabled, 0);
	PECS_CHECK_EQ(t, c.running, 0);
	PECS_CHECK_EQ(t, c.id, id);
	PECS_CHECK(t, id != 0, "IOC_ID gave 0");
}

PECS_CASE("Required.Read.Disable.ValuesFrozen", "counting", "READ-DISABLE-FREEZES")
{
	struct counts a, b;
	struct pecs_attr attr;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_TIMES_ID);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_cnt_run(t, fd, 0, 2000000));
	PECS_CHECK_EQ(t, read_counts(t, fd, &a), sizeof(a));
	PECS_CHECK(t, a.value > 0, "nothing counted while enabled");
	pecs_burn_user(5000000);
	PECS_CHECK_EQ(t, read_counts(t, fd, &b), sizeof(b));
	PECS_CHECK_EQ(t, b.value, a.value);
	PECS_CHECK_EQ(t, b.enabled, a.enabled);
	PECS_CHECK_EQ(t, b.running, a.running);
	/* DISABLE is idempotent: a second one changes nothing either */
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	pecs_burn_user(1000000);
	PECS_CHECK_EQ(t, read_counts(t, fd, &b), sizeof(b));
	PECS_CHECK_EQ(t, b.value, a.value);
	PECS_CHECK_EQ(t, b.enabled, a.enabled);
}

PECS_CASE("Required.Read.Reset.ZeroesCountKeepsTimes", "counting", "READ-RESET-COUNT-ONLY")
{
	struct counts a, b;
	struct pecs_attr attr;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_TIMES_ID);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_cnt_run(t, fd, 0, 2000000));
	PECS_CHECK_EQ(t, read_counts(t, fd, &a), sizeof(a));
	PECS_CHECK(t, a.value > 0 && a.enabled > 0 && a.running > 0,
		   "after a run: value %llu enabled %llu running %llu",
		   (unsigned long long)a.value, (unsigned long long)a.enabled,
		   (unsigned long long)a.running);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_RESET, 0));
	PECS_CHECK_EQ(t, read_counts(t, fd, &b), sizeof(b));
	PECS_CHECK_EQ(t, b.value, 0);
	PECS_CHECK_EQ(t, b.enabled, a.enabled);
	PECS_CHECK_EQ(t, b.running, a.running);
	PECS_CHECK_EQ(t, b.id, a.id);
}

PECS_CASE("Required.Read.Reset.WhileEnabledRestarts", "counting", "READ-RESET-RESTARTS")
{
	struct counts a, b, c;
	struct pecs_attr attr;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_TIMES_ID);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(20000000);
	PECS_CHECK_EQ(t, read_counts(t, fd, &a), sizeof(a));
	PECS_CHECK(t, a.value >= 10000000, "only %llu ns counted in 20 ms of CPU",
		   (unsigned long long)a.value);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_RESET, 0));
	pecs_burn_user(1000000);
	PECS_CHECK_EQ(t, read_counts(t, fd, &b), sizeof(b));
	PECS_CHECK_EQ(t, read_counts(t, fd, &c), sizeof(c));
	/* Counting restarted from 0 after the first read: the value is at most the time
	 * enabled from that read to the one after it, while a value that kept counting
	 * holds the 20 ms before as well. Measured on the event's own clock, as the 1 ms of
	 * CPU may take any time (an emulated guest charged 27 ms to it on a loaded host). */
	PECS_CHECK(t, b.value > 0 && b.value <= c.enabled - a.enabled,
		   "value %llu after RESET, %llu before, with %llu ns enabled since then",
		   (unsigned long long)b.value, (unsigned long long)a.value,
		   (unsigned long long)(c.enabled - a.enabled));
	/* the times are not reset and keep running */
	PECS_CHECK(t, b.enabled > a.enabled, "time_enabled %llu after RESET, %llu before",
		   (unsigned long long)b.enabled, (unsigned long long)a.enabled);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
}

/* The clock events count this thread's CPU time: 10 ms of it come within ten times that
 * of the thread's CPU (under ptrace the thread's CPU clock runs well ahead of its task
 * clock, so no tighter ratio holds), and never more than the wall-clock time the event
 * was enabled for. */
static void check_counts_cpu(struct pecs_t *t, uint64_t config)
{
	struct pecs_attr attr;
	struct counts c;

	pecs_cnt_attr(t, &attr, config, RF_TIMES_ID);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	uint64_t start = pecs_clock_ns(CLOCK_MONOTONIC);
	uint64_t cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	int err = pecs_burn_event(t, fd, 10000000, 100);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	uint64_t wall = pecs_clock_ns(CLOCK_MONOTONIC) - start;
	PECS_CHECK_EQ(t, read_counts(t, fd, &c), sizeof(c));
	PECS_CHECK(t, err == 0 && c.value >= 10000000, "%llu ns counted while the thread ran "
		   "%llu ns (%s)", (unsigned long long)c.value, (unsigned long long)cpu,
		   pecs_retname(err));
	PECS_CHECK(t, c.value <= wall, "%llu ns counted in %llu ns of wall-clock time",
		   (unsigned long long)c.value, (unsigned long long)wall);
	PECS_CHECK(t, c.running <= c.enabled && c.enabled <= wall,
		   "time_running %llu, time_enabled %llu, wall %llu",
		   (unsigned long long)c.running, (unsigned long long)c.enabled,
		   (unsigned long long)wall);
	PECS_CHECK(t, c.running > 0, "time_running 0 after counting %llu ns",
		   (unsigned long long)c.value);
}

PECS_CASE("Required.Read.Count.TaskClockFollowsCpu", "counting",
	  "READ-COUNT-CLOCK,READ-TIMES-ORDER")
{
	check_counts_cpu(t, PECS_SW_TASK_CLOCK);
}

PECS_CASE("Required.Read.Count.CpuClockFollowsCpu", "counting", "READ-COUNT-CLOCK,READ-TIMES-ORDER")
{
	check_counts_cpu(t, PECS_SW_CPU_CLOCK);
}
