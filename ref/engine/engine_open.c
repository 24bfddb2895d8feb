/* perf_event_open(2), check by check in the order of the kernel's syscall and
 * perf_event_alloc() (kernel/events/core.c, 6.12), with the errno each gives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref/engine/engine.h"
#include "ref/record/record.h"
#include "ref/policy/policy.h"

#define FLAG_ALL (PECS_FLAG_FD_NO_GROUP | PECS_FLAG_FD_OUTPUT | PECS_FLAG_PID_CGROUP | \
		  PECS_FLAG_FD_CLOEXEC)

/* perf_event_set_clock(): the clocks that are safe to read from any context. */
static int clock_valid(int clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_BOOTTIME:
	case CLOCK_TAI:
		return 1;
	default:
		return 0;
	}
}

static int leader_gone(const struct ref_event *leader)
{
	return leader->pid != -1 && ref_event_task_exited(leader->tid, leader->same_process);
}

/* Checks that need only the attr, before any task or group is looked at. */
static int check_attr(struct ref_engine *e, const struct pecs_attr *a, pid_t pid, int cpu,
		      unsigned long flags)
{
	const struct ref_policy *pol = &e->env.policy;
	int err;

	err = ref_policy_allow_open(pol);
	if (err)
		return err;
	/* 6.12's source also asks this for CALLCHAIN without exclude_callchain_kernel;
	 * measured on 6.18, an exclude_kernel event with such a callchain opens
	 * unprivileged at paranoid 2 (its kernel callchain is implied excluded), and so
	 * does one with text_poke. */
	if (!(a->flags & PECS_ATTR_EXCLUDE_KERNEL)) {
		err = ref_policy_allow_kernel(pol);
		if (err)
			return err;
	}
	if ((a->flags & PECS_ATTR_NAMESPACES) && !ref_policy_perfmon(pol))
		return -EACCES;
	if (a->flags & PECS_ATTR_FREQ) {
		if (a->sample_period > (uint64_t)e->env.lim.max_sample_rate)
			return -EINVAL;
	} else if (a->sample_period & (1ull << 63)) {
		return -EINVAL;
	}
	if (a->sample_type & PECS_SAMPLE_PHYS_ADDR) {
		err = ref_policy_allow_kernel(pol);
		if (err)
			return err;
	}
	if ((flags & PECS_FLAG_PID_CGROUP) && (pid == -1 || cpu == -1))
		return -EINVAL;
	return 0;
}

/* perf_event_alloc() up to the PMU: cpu range, sigtrap, then (with an id spent, as the
 * kernel spends one from here on) inherit rules, PMU lookup, aux, cgroup, stack depth. */
static int check_alloc(struct ref_engine *e, const struct pecs_attr *a, int has_task, int cpu,
		       unsigned long flags, enum ref_kind *kind, struct ref_syscall_tp *tp,
		       uint64_t *id)
{
	int err;

	if ((unsigned)cpu >= (unsigned)e->env.lim.ncpus && (!has_task || cpu != -1))
		return -EINVAL;
	if ((a->flags & PECS_ATTR_SIGTRAP) && !has_task)
		return -EINVAL;
	*id = e->next_id++;
	if ((a->flags & PECS_ATTR_INHERIT) && (a->sample_type & PECS_SAMPLE_READ) &&
	    !(a->sample_type & PECS_SAMPLE_TID))
		return -EINVAL;
	err = ref_attr_kind(a, !has_task, kind, tp, &e->env.policy);
	if (err)
		return err;
	if (a->flags & PECS_ATTR_AUX_OUTPUT)
		return -EOPNOTSUPP;
	if ((a->aux_action & REF_AUX_PAUSE) && (a->aux_action & REF_AUX_RESUME))
		return -EINVAL;
	if (a->aux_action & REF_AUX_START_PAUSED)
		return -EOPNOTSUPP;
	/* No cgroup hierarchy is modelled: every cgroup fd is one perf cannot use. */
	if (flags & PECS_FLAG_PID_CGROUP)
		return -EBADF;
	if ((a->sample_type & PECS_SAMPLE_CALLCHAIN) && a->sample_max_stack > e->env.lim.max_stack)
		return -EOVERFLOW;
	return 0;
}

/* The rules for joining a group, once the new event's context is known. */
static int check_group(const struct ref_event *leader, const struct ref_event *ev)
{
	if (leader->leader != leader)
		return -EINVAL;
	if (leader->clock != ev->clock)
		return -EINVAL;
	if (leader->cpu != ev->cpu)
		return -EINVAL;
	/* Same context: both on one task, or both cpu-wide. */
	if ((leader->pid == -1) != (ev->pid == -1) || (ev->pid != -1 && leader->tid != ev->tid))
		return -EINVAL;
	if (leader_gone(leader))
		return -ENODEV;
	if (ev->attr.flags & (PECS_ATTR_EXCLUSIVE | PECS_ATTR_PINNED))
		return -EINVAL;
	return 0;
}

/* perf_event_validate_size(): every member's read() must stay within 16 KiB once the new
 * event has joined (n members: the leader, its siblings and the new one). */
static int check_read_size(const struct ref_event *leader, const struct ref_event *ev)
{
	uint32_t n = leader ? leader->nr_siblings + 2 : 1;

	if (ref_record_read_size(ev->attr.read_format, n) > PECS_READ_SIZE_MAX)
		return -E2BIG;
	if (!leader)
		return 0;
	if (ref_record_read_size(leader->attr.read_format, n) > PECS_READ_SIZE_MAX)
		return -E2BIG;
	for (uint64_t f = 0; f < PECS_FORMAT_MAX; f++)
		if (leader->sibling_formats[f] &&
		    ref_record_read_size(f, n) > PECS_READ_SIZE_MAX)
			return -E2BIG;
	return 0;
}

/* The checks that need the new event, then its fd; the event goes away on failure.
 * Starts it unless attr.disabled. The fd or a negative errno. */
static int install(struct ref_engine *e, struct ref_event *ev, struct ref_event *leader,
		   struct ref_event *output)
{
	struct ref_defer d = {0};
	int err = 0, fd = -1;

	if (leader)
		err = check_group(leader, ev);
	if (!err && output)
		err = ref_event_set_output(ev, output);
	if (!err)
		err = check_read_size(leader, ev);
	if (!err && ref_attr_needs_aux_leader(&ev->attr))
		err = -EINVAL;
	if (!err)
		err = ref_event_cpu_wide_check(ev);
	if (!err && leader)
		err = ref_event_group_add(leader, ev);
	if (!err) {
		fd = ref_engine_fd_install(e, ev);
		if (fd < 0)
			err = fd;
	}
	if (err) {
		/* Putting the last reference detaches it from a group it joined. */
		ref_event_put(ev, &d);
		ref_event_defer_run(&e->env, &d);
		return err;
	}
	if (!(ev->attr.flags & PECS_ATTR_DISABLED)) {
		ref_event_enable(ev, &d);
		ref_event_defer_run(&e->env, &d);
	}
	return fd;
}

int ref_engine_open_locked(struct ref_engine *e, struct pecs_attr *uattr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags)
{
	struct ref_event *leader = NULL, *output = NULL, *ev;
	struct pecs_attr a;
	enum ref_kind kind = REF_KIND_ZERO;
	struct ref_syscall_tp tp = { .nr = -1 };
	pid_t tid = -1;
	int same_process = 0, has_task = 0, err;
	struct ref_event_task t = { .proc_tid = -1 };
	uint64_t id = 0;

	if (flags & ~(unsigned long)FLAG_ALL)
		return -EINVAL;
	err = ref_attr_copy(uattr, &a, &e->env.lim, &e->env.policy);
	if (err)
		return err;
	err = check_attr(e, &a, pid, cpu, flags);
	if (err)
		return err;
	if (group_fd != -1) {
		leader = ref_engine_fd_lookup(e, group_fd);
		if (!leader)
			return -EBADF;
		if (leader_gone(leader))
			return -ENODEV;
		if (flags & PECS_FLAG_FD_OUTPUT)
			output = leader;
		if (flags & PECS_FLAG_FD_NO_GROUP)
			leader = NULL;
	}
	if (pid != -1 && !(flags & PECS_FLAG_PID_CGROUP)) {
		err = ref_event_task_find(pid, &tid, &same_process);
		if (err)
			return err;
		has_task = 1;
	}
	if (has_task && leader &&
	    ((leader->attr.flags ^ a.flags) & PECS_ATTR_INHERIT))
		return -EINVAL;
	err = check_alloc(e, &a, has_task, cpu, flags, &kind, &tp, &id);
	if (err)
		return err;
	if ((a.flags & PECS_ATTR_USE_CLOCKID) && !clock_valid(a.clockid))
		return -EINVAL;
	if (has_task) {
		t.proc_tid = ref_event_task_proc_id(tid, same_process);
		err = ref_policy_allow_task(&e->env.policy, t.proc_tid, same_process);
		if (err)
			return err;
	} else {
		err = ref_policy_allow_cpu(&e->env.policy);
		if (err)
			return err;
	}
	t.pid = has_task ? pid : -1;
	t.tid = tid;
	t.same_process = same_process;
	ev = ref_event_new(&e->env, &a, kind, &tp, id, &t, cpu);
	if (!ev)
		return has_task ? -ESRCH : -ENOMEM;
	return install(e, ev, leader, output);
}
