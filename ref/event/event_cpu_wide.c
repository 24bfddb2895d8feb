/* Which cpu-wide (pid -1) counters ref can count honestly. Linux's software PMU takes
 * every config on a CPU; ref takes the same ones at the PMU lookup, so the checks Linux
 * makes after it (clockid, perf_allow_cpu()'s EACCES, the group rules) answer as on
 * Linux, and refuses here, last, the ones no user-space interface counts per CPU. */
#include <errno.h>

#include "ref/event/event.h"

/* The elapsed time a CPU's context is enabled (cpu-clock and task-clock of a cpu
 * context both advance with it, measured) is CLOCK_MONOTONIC's. Switches and
 * migrations are raised by the scheduler with kernel registers, so an event that
 * excludes the kernel counts none (measured: 0 on CPU 1 where the kernel-inclusive
 * count was 442 switches and 5 migrations), as does a user-only cgroup-switches. What is left has no source per CPU on Linux:
 * - page faults: /proc/vmstat's pgfault sums every CPU; no file splits it by CPU;
 * - context switches: /proc/stat's ctxt sums every CPU; /proc/schedstat's per-CPU
 *   sched_count counts calls of __schedule() (schedule_debug()), also those that keep
 *   the same task, where perf counts only a switch (prepare_task_switch()); it is
 *   absent without CONFIG_SCHEDSTATS (this host's kernel has none). Each CPU's
 *   nr_switches, counted where perf counts, is printed only in debugfs's
 *   sched/debug, which is not mounted here and which ref does not mount;
 * - migrations: Linux counts a task's move when it first runs on the new CPU; /proc
 *   gives a task's own se.nr_migrations, not the moves onto a CPU;
 * - cgroup switches with the kernel counted: no file counts them at all.
 * tracefs does see them per CPU, as root with tracefs mounted (it is not, here): an
 * ftrace instance's per_cpu/cpuN buffer of sched:sched_switch, exceptions:page_fault_*
 * and sched:sched_migrate_task (dest_cpu N) counted what perf did on that CPU within the
 * few events its later enable and earlier disable miss (measured 154/156 switches,
 * 308/313 faults, 22/22 migrations). ref has no tracefs-backed source yet, so it
 * refuses rather than approximates.
 * ENOSYS is an answer Linux never gives to these opens on x86 (its one ENOSYS in
 * perf_event_open() is for a user stack dump an arch cannot take), so a client and a
 * differential run can tell ref's refusal from any answer of Linux. */
int ref_event_cpu_wide_check(const struct ref_event *ev)
{
	int user_only = (ev->attr.flags & PECS_ATTR_EXCLUDE_KERNEL) != 0;

	if (ev->pid != -1 || ev->attr.type != PECS_TYPE_SOFTWARE)
		return 0;
	switch (ev->attr.config) {
	case PECS_SW_PAGE_FAULTS:
	case PECS_SW_PAGE_FAULTS_MIN:
	case PECS_SW_PAGE_FAULTS_MAJ:
		return -ENOSYS;
	case PECS_SW_CONTEXT_SWITCHES:
	case PECS_SW_CPU_MIGRATIONS:
	case PECS_SW_CGROUP_SWITCHES:
		return user_only ? 0 : -ENOSYS;
	default:
		return 0;
	}
}
