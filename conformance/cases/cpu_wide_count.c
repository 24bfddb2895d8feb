#define _GNU_SOURCE
/* Counting on a CPU (pid -1, cpu N): a cpu-wide event lives in the CPU's own context,
 * which is scheduled in for as long as the event is enabled, whatever task runs there
 * (kernel/events/core.c find_get_context(), perf_cpu_context). So cpu-clock and
 * task-clock count the elapsed time the event is enabled, even while the caller sleeps
 * on another CPU (cpu_clock_event_update() reads local_clock(), task_clock_event_read()
 * the context's time), and the software counters count every task that runs on N:
 * another process's faults and switches, the caller's moves onto N. The scheduler
 * raises switches and migrations with its own (kernel) registers
 * (perf_sw_event_sched() -> perf_exclude_event()), so a user-only one counts none.
 * Each case watches the last CPU and keeps the caller on CPU 0 where it can. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pecs/toolkit/cpu.h"
#include "pecs/toolkit/event.h"
#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/safe.h"

/* perf_allow_cpu(): without CAP_PERFMON a cpu-wide event needs paranoid <= 0. */
static void needs_cpu_events(struct pecs_t *t)
{
	if (!pecs_host(t)->privileged && pecs_host(t)->paranoid > 0)
		PECS_ENV_SKIP(t, "cpu-wide events need CAP_PERFMON at perf_event_paranoid %d "
			      "(perf_allow_cpu(), Open.PidCpu.CpuWideNeedsPrivilege)",
			      pecs_host(t)->paranoid);
}

/* The watched CPU: the last one. The caller's mask is given back after the case, and
 * the caller moves to CPU 0 when there are two. */
static int watched_cpu(struct pecs_t *t)
{
	int cpu = pecs_host(t)->ncpus - 1, err;

	pecs_keep_affinity(t, NULL);
	if (cpu > 0 && (err = pecs_pin_self(0)))
		PECS_ENV_SKIP(t, "cannot pin this thread to CPU 0: %s", strerror(err));
	return cpu;
}

/* A disabled counter of config on cpu, the kernel counted unless user_only. */
static int open_on_cpu(struct pecs_t *t, uint64_t config, int cpu, int user_only)
{
	struct pecs_attr a;

	pecs_attr_counting(t, &a, config);
	if (!user_only)
		a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	return pecs_open(t, &a, -1, cpu, -1, 0);
}

static uint64_t value_of(struct pecs_t *t, int fd, const char *what)
{
	uint64_t v = 0;

	PECS_CHECK_OK(t, pecs_event_value(t, fd, &v), "read of %s", what);
	return v;
}

/* Both clocks count the time they were enabled, while the caller sleeps elsewhere:
 * at least the time between the enable's return and the disable's call, at most the
 * time from the enable's call to the disable's return (2% either side for the two
 * clocks' rates, and 200 us). */
PECS_CASE("Required.CpuWide.Count.ClocksCountEnabledTime", "counting,policy",
	  "CPU-WIDE-COUNT-CLOCKS")
{
	static const uint64_t configs[] = { PECS_SW_CPU_CLOCK, PECS_SW_TASK_CLOCK };
	struct timespec nap = { 0, 30000000 };
	int cpu, fd[2];
	uint64_t t0, t1, t2, t3;

	needs_cpu_events(t);
	cpu = watched_cpu(t);
	for (int i = 0; i < 2; i++) {
		fd[i] = open_on_cpu(t, configs[i], cpu, 1);
		PECS_CHECK_OK(t, fd[i], "software config %llu on cpu %d",
			      (unsigned long long)configs[i], cpu);
	}
	for (int i = 0; i < 2; i++) {
		t0 = pecs_clock_ns(CLOCK_MONOTONIC);
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
		t1 = pecs_clock_ns(CLOCK_MONOTONIC);
		nanosleep(&nap, NULL);
		t2 = pecs_clock_ns(CLOCK_MONOTONIC);
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
		t3 = pecs_clock_ns(CLOCK_MONOTONIC);
		uint64_t v = value_of(t, fd[i], "the clock");

		PECS_CHECK(t, v >= (t2 - t1) / 100 * 98 && v <= (t3 - t0) / 100 * 102 + 200000,
			   "config %llu on cpu %d counted %llu ns, enabled for %llu-%llu ns "
			   "while the caller slept", (unsigned long long)configs[i], cpu,
			   (unsigned long long)v, (unsigned long long)(t2 - t1),
			   (unsigned long long)(t3 - t0));
	}
}

/* Another process on the watched CPU touches fresh pages and sleeps: its faults and its
 * switches (at least one out and one in per sleep; at least one each is asked) count. */
PECS_CASE("Required.CpuWide.Count.AnotherProcessFaultsAndSwitches", "counting,policy",
	  "CPU-WIDE-COUNT-EVERY-TASK")
{
	static const uint64_t configs[] = { PECS_SW_PAGE_FAULTS, PECS_SW_PAGE_FAULTS_MIN,
					    PECS_SW_CONTEXT_SWITCHES };
	static const char *names[] = { "page-faults", "minor-faults", "context-switches" };
	struct pecs_kid_opts o = { .flags = PECS_KID_ON_CPU, .pages = 256, .sleeps = 20 };
	const uint64_t want[] = { o.pages, o.pages, o.sleeps };
	struct pecs_kid *k;
	int fd[3], err;

	needs_cpu_events(t);
	o.cpu = watched_cpu(t);
	err = pecs_kid_start(t, &o, &k);
	if (err)
		PECS_ENV_SKIP(t, "no child bound to CPU %d: %s", o.cpu, strerror(-err));
	for (int i = 0; i < 3; i++) {
		fd[i] = open_on_cpu(t, configs[i], o.cpu, 0);
		PECS_CHECK_OK(t, fd[i], "%s on cpu %d", names[i], o.cpu);
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	}
	pid_t pid = pecs_kid_do(t, k, PECS_KID_FORK);

	for (int i = 0; i < 3; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
	for (int i = 0; i < 3; i++) {
		uint64_t v = value_of(t, fd[i], names[i]);

		PECS_CHECK(t, v >= want[i], "%s on cpu %d: %llu while process %d ran there "
			   "(%u fresh pages, %u sleeps): at least %llu", names[i], o.cpu,
			   (unsigned long long)v, (int)pid, o.pages, o.sleeps,
			   (unsigned long long)want[i]);
	}
}

/* The caller moves onto the watched CPU 20 times: each move counts there once the
 * caller runs on it (perf_event_task_migrate(), then perf_event_task_sched_in()). */
PECS_CASE("Required.CpuWide.Count.MovesOntoTheCpu", "counting,policy",
	  "CPU-WIDE-COUNT-EVERY-TASK")
{
	enum { MOVES = 20 };
	int cpu, fd, err;

	needs_cpu_events(t);
	if (pecs_host(t)->ncpus < 2)
		PECS_ENV_SKIP(t, "one CPU: nothing to move from");
	cpu = watched_cpu(t);
	fd = open_on_cpu(t, PECS_SW_CPU_MIGRATIONS, cpu, 0);
	PECS_CHECK_OK(t, fd, "cpu-migrations on cpu %d", cpu);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	for (int i = 0; i < MOVES; i++) {
		err = pecs_pin_self(cpu);
		if (!err)
			err = pecs_pin_self(0);
		if (err)
			PECS_ENV_SKIP(t, "cannot move this thread between CPUs 0 and %d: %s", cpu,
				      strerror(err));
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	uint64_t v = value_of(t, fd, "cpu-migrations");

	PECS_CHECK(t, v >= MOVES, "cpu-migrations on cpu %d: %llu after this thread moved "
		   "onto it %d times", cpu, (unsigned long long)v, MOVES);
}

/* With the kernel excluded the scheduler's counters see nothing: the caller sleeps on
 * the watched CPU (its own rusage shows the switches) and moves onto it. */
PECS_CASE("Required.CpuWide.Count.UserOnlySchedulerCountersNone", "counting,policy",
	  "CPU-WIDE-COUNT-USER-ONLY-SCHED")
{
	static const uint64_t configs[] = { PECS_SW_CONTEXT_SWITCHES, PECS_SW_CPU_MIGRATIONS,
					    PECS_SW_CGROUP_SWITCHES };
	struct timespec ms = { 0, 1000000 };
	struct rusage before, after;
	int cpu, fd[3], err;

	needs_cpu_events(t);
	cpu = watched_cpu(t);
	for (int i = 0; i < 3; i++) {
		fd[i] = open_on_cpu(t, configs[i], cpu, 1);
		PECS_CHECK_OK(t, fd[i], "user-only config %llu on cpu %d",
			      (unsigned long long)configs[i], cpu);
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	}
	PECS_SAFE_SYS(t, getrusage(RUSAGE_THREAD, &before));
	for (int i = 0; i < 20; i++) {
		err = pecs_pin_self(cpu);
		if (err)
			PECS_ENV_SKIP(t, "cannot pin this thread to CPU %d: %s", cpu, strerror(err));
		nanosleep(&ms, NULL);
		if (cpu > 0 && (err = pecs_pin_self(0)))
			PECS_ENV_SKIP(t, "cannot pin this thread to CPU 0: %s", strerror(err));
	}
	PECS_SAFE_SYS(t, getrusage(RUSAGE_THREAD, &after));
	for (int i = 0; i < 3; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, after.ru_nvcsw - before.ru_nvcsw >= 20, "this thread's sleeps made %ld "
		   "voluntary switches", after.ru_nvcsw - before.ru_nvcsw);
	for (int i = 0; i < 3; i++) {
		uint64_t v = value_of(t, fd[i], "a user-only scheduler counter");

		PECS_CHECK_EQ(t, v, 0, "user-only config %llu on cpu %d",
			      (unsigned long long)configs[i], cpu);
	}
}
