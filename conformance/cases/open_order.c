/* Which check wins when an open breaks two rules at once, and what a failed open costs.
 * perf_event_open() checks in a fixed order (kernel/events/core.c: perf_event_open, then
 * perf_event_alloc, then the context and group checks), and a caller that gets the
 * earlier check's errno learns nothing about the later fault. Every pair below was
 * measured on Linux 6.18, as root and as uid 65534. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "pecs/toolkit/counting.h"

/* Above the kernel's PID_MAX_LIMIT (4M): no task can have it. */
#define NO_SUCH_PID 0x3fffffff
/* No fd the case could have open; the group-fd cases use the same number. */
#define NOT_AN_FD 9999
/* No PMU registers this type. */
#define NO_SUCH_TYPE 1000u

/* One pair: attr as prepared, the arguments, and the errno of the earlier check. */
#define ORDER(t, what, attr, pid, cpu, group_fd, flags, err)                              \
	do {                                                                             \
		int r_ = pecs_open((t), (attr), (pid), (cpu), (group_fd), (flags));       \
		PECS_CHECK((t), r_ == -(err), "%s: %s, expected %s", (what), pecs_retname(r_), \
			   pecs_errname(err));                                           \
	} while (0)

static void deep_callchain(struct pecs_t *t, struct pecs_attr *a)
{
	a->sample_period = 1000000;
	a->sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN;
	a->flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	a->sample_max_stack = (uint16_t)(pecs_host(t)->max_stack + 1);
}

PECS_CASE("Required.Open.Order.EarlierCheckWins", "", "OPEN-ORDER")
{
	int ncpus = pecs_host(t)->ncpus, devnull;
	int kernel_ok = pecs_host(t)->privileged || pecs_host(t)->paranoid < 2;
	struct pecs_attr a, *big;
	size_t len;

	if (ncpus <= 0 || pecs_host(t)->max_stack <= 0 || pecs_host(t)->max_stack >= 0xffff)
		PECS_BROKEN(t, "host facts: %d cpus, max_stack %d", ncpus, pecs_host(t)->max_stack);

	/* the flags argument before the attr is even read */
	ORDER(t, "flag bit 9 with a NULL attr", NULL, 0, -1, -1, 1ul << 9, EINVAL);

	/* the attr's size before the fields inside it */
	big = pecs_cnt_big_attr(t, PECS_SW_TASK_CLOCK, &len);
	if (!big)
		PECS_BROKEN(t, "page size %ld", pecs_host(t)->page_size);
	big->size = pecs_host(t)->attr_size + 8;
	((unsigned char *)big)[pecs_host(t)->attr_size] = 1;
	big->flags |= 1ull << 40;
	ORDER(t, "non-zero tail with a reserved flag", big, 0, -1, -1, 0, E2BIG);

	/* the attr's own rules before type and pid */
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	a.read_format = PECS_FORMAT_MAX;
	ORDER(t, "unknown read_format with an unknown type and pid", &a, NO_SUCH_PID, -1, -1, 0,
	      EINVAL);

	/* the privilege to count the kernel before the PMU lookup */
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	ORDER(t, "kernel counting with an unknown type", &a, 0, -1, -1, 0,
	      kernel_ok ? ENOENT : EACCES);

	/* the frequency limit before the group fd */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.flags |= PECS_ATTR_FREQ;
	a.sample_period = (uint64_t)pecs_host(t)->max_sample_rate + 1;
	ORDER(t, "frequency above the limit with a bad group fd", &a, 0, -1, NOT_AN_FD, 0, EINVAL);

	/* the group fd before the pid */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	ORDER(t, "bad group fd with no such pid", &a, NO_SUCH_PID, -1, NOT_AN_FD, 0, EBADF);

	/* the pid before the cpu and the type */
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	ORDER(t, "no such pid on a cpu out of range", &a, NO_SUCH_PID, ncpus, -1, 0, ESRCH);
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.flags |= PECS_ATTR_INHERIT;
	a.sample_type = PECS_SAMPLE_READ;
	ORDER(t, "no such pid with inherit and SAMPLE_READ", &a, NO_SUCH_PID, -1, -1, 0, ESRCH);

	/* the cpu before the type */
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	ORDER(t, "cpu out of range with an unknown type", &a, 0, ncpus, -1, 0, EINVAL);

	/* inherit with SAMPLE_READ before the PMU lookup */
	a.flags |= PECS_ATTR_INHERIT;
	a.sample_type = PECS_SAMPLE_READ;
	ORDER(t, "inherit and SAMPLE_READ with an unknown type", &a, 0, -1, -1, 0, EINVAL);

	/* the PMU lookup before aux_output, the cgroup fd and the callchain depth */
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	a.flags |= PECS_ATTR_AUX_OUTPUT;
	ORDER(t, "unknown type with aux_output", &a, 0, -1, -1, 0, ENOENT);
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	deep_callchain(t, &a);
	ORDER(t, "unknown type with too deep a callchain", &a, 0, -1, -1, 0, ENOENT);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0)
		PECS_BROKEN(t, "open /dev/null: %s", pecs_errname(errno));
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	{
		int r = pecs_open(t, &a, devnull, 0, -1, PECS_FLAG_PID_CGROUP);

		/* then the cgroup fd before the callchain depth */
		pecs_attr_counting(t, &a, PECS_SW_CPU_CLOCK);
		deep_callchain(t, &a);
		int r2 = pecs_open(t, &a, devnull, 0, -1, PECS_FLAG_PID_CGROUP);

		close(devnull);
		PECS_CHECK_ERR(t, r, ENOENT, "unknown type with a bad cgroup fd");
		PECS_CHECK_ERR(t, r2, EBADF, "bad cgroup fd with too deep a callchain");
	}

	/* aux_output before the callchain depth and the clock */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.flags |= PECS_ATTR_AUX_OUTPUT;
	deep_callchain(t, &a);
	ORDER(t, "aux_output with too deep a callchain", &a, 0, -1, -1, 0, EOPNOTSUPP);
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.flags |= PECS_ATTR_AUX_OUTPUT | PECS_ATTR_USE_CLOCKID;
	a.clockid = 99;
	ORDER(t, "aux_output with a bad clockid", &a, 0, -1, -1, 0, EOPNOTSUPP);

	/* the callchain depth before the clock */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	deep_callchain(t, &a);
	a.flags |= PECS_ATTR_USE_CLOCKID;
	a.clockid = 99;
	ORDER(t, "too deep a callchain with a bad clockid", &a, 0, -1, -1, 0, EOVERFLOW);

	/* the clock before the permission to watch another user's task (pid 1) or a cpu */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.flags |= PECS_ATTR_USE_CLOCKID;
	a.clockid = 99;
	ORDER(t, "bad clockid on pid 1", &a, 1, -1, -1, 0, EINVAL);
	ORDER(t, "bad clockid cpu-wide", &a, -1, 0, -1, 0, EINVAL);
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	ORDER(t, "unknown type cpu-wide", &a, -1, 0, -1, 0, ENOENT);
}

/* perf_event_alloc() takes the event's id from a global counter before the PMU lookup,
 * so an open refused there (ENOENT) uses one up, while one refused earlier (EINVAL from
 * the attr's rules) does not. Other processes take ids too, so the gaps are measured
 * several times and the smallest kept: a gap can only grow from outside. */
PECS_CASE("Required.Open.Order.LateFailureSpendsAnId", "counting",
	  "OPEN-ID-SPENT-ON-LATE-FAILURE")
{
	uint64_t min_late = ~0ull, min_early = ~0ull;
	int round;

	/* Ids are global: another process opening an event between ours widens a gap, never
	 * narrows it. So the smallest gap over the rounds is the implementation's, and the
	 * rounds go on (bounded) until one was left alone; a slow run only needs more. */
	for (round = 0; round < 128 && (min_late > 2 || min_early > 1); round++) {
		struct pecs_attr ok, bad;
		uint64_t i1, i2, i3;
		int f1, f2, f3;

		pecs_attr_counting(t, &ok, PECS_SW_TASK_CLOCK);
		f1 = PECS_OPEN(t, &ok, 0, -1, -1, 0);
		bad = ok;
		bad.config = PECS_SW_MAX; /* refused by the software PMU: after the id */
		PECS_CHECK_ERR(t, pecs_open(t, &bad, 0, -1, -1, 0), ENOENT);
		f2 = PECS_OPEN(t, &ok, 0, -1, -1, 0);
		bad = ok;
		bad.sample_period = 1ull << 63; /* refused by perf_event_open: before it */
		PECS_CHECK_ERR(t, pecs_open(t, &bad, 0, -1, -1, 0), EINVAL);
		f3 = PECS_OPEN(t, &ok, 0, -1, -1, 0);
		PECS_CHECK_OK(t, pecs_cnt_id(t, f1, &i1));
		PECS_CHECK_OK(t, pecs_cnt_id(t, f2, &i2));
		PECS_CHECK_OK(t, pecs_cnt_id(t, f3, &i3));
		PECS_CHECK(t, i1 < i2 && i2 < i3, "ids %llu, %llu, %llu not increasing",
			   (unsigned long long)i1, (unsigned long long)i2, (unsigned long long)i3);
		if (i2 - i1 < min_late)
			min_late = i2 - i1;
		if (i3 - i2 < min_early)
			min_early = i3 - i2;
		pecs_close(t, f1);
		pecs_close(t, f2);
		pecs_close(t, f3);
	}
	PECS_CHECK(t, min_late == 2, "an ENOENT open between two events: smallest id gap %llu "
		   "in %d rounds, expected 2", (unsigned long long)min_late, round);
	PECS_CHECK(t, min_early == 1, "an EINVAL open between two events: smallest id gap %llu "
		   "in %d rounds, expected 1", (unsigned long long)min_early, round);
}
