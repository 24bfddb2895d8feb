/* Which check wins when an open breaks two rules at once, and what a failed open costs.
 * perf_event_open() checks in a fixed order (kernel/events/core.c: perf_event_open, then
 * perf_event_alloc, then the context and group checks), and a caller that gets the
 * earlier check's errno learns nothing about the later fault. Every pair below was
 * measured on Linux 6.18, as root and as uid 65534. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/safe.h"

/* Above the kernel's PID_MAX_LIMIT (4M): no task can have it. */
#define NO_SUCH_PID 0x3fffffff
/* No fd the case could have open; the group-fd cases use the same number. */
#define NOT_AN_FD 9999
/* No PMU registers this type. */
#define NO_SUCH_TYPE 1000u

/* A cpu one past the host's last. */
#define CPU_PAST_LAST (-2)

/* One pair of faults: the attr as the row builds it, the other arguments, and the errno
 * of the earlier check. */
struct order_row {
	const char *what;
	uint64_t config;
	int no_such_type;         /* type = NO_SUCH_TYPE */
	uint64_t set, clear;      /* attr flag bits added to and removed from the default */
	uint64_t read_format, sample_type;
	int clockid;              /* non-zero: use_clockid with this clock */
	int deep_callchain;       /* a callchain deeper than max_stack */
	int freq_over_limit;      /* freq with a rate above max_sample_rate */
	pid_t pid;
	int cpu, group_fd;
	unsigned long flags;
	int err;
	int err_no_kernel;        /* when non-zero: the errno for a caller that may not count
				   * the kernel */
};

#define SAMPLE_READ_INHERIT .set = PECS_ATTR_INHERIT, .sample_type = PECS_SAMPLE_READ
#define TASK_CLOCK .config = PECS_SW_TASK_CLOCK
#define NO_TYPE .no_such_type = 1
#define ARGS(p, c, g) .pid = (p), .cpu = (c), .group_fd = (g)

/* In the kernel's order: each row's fault is checked before the other fault it holds. */
static const struct order_row order_rows[] = {
	/* the attr's own rules before type and pid */
	{"unknown read_format with an unknown type and pid", NO_TYPE,
	 .read_format = PECS_FORMAT_MAX, ARGS(NO_SUCH_PID, -1, -1), .err = EINVAL},
	/* the privilege to count the kernel before the PMU lookup */
	{"kernel counting with an unknown type", NO_TYPE, .clear = PECS_ATTR_EXCLUDE_KERNEL,
	 ARGS(0, -1, -1), .err = ENOENT, .err_no_kernel = EACCES},
	/* the frequency limit before the group fd */
	{"frequency above the limit with a bad group fd", TASK_CLOCK, .freq_over_limit = 1,
	 ARGS(0, -1, NOT_AN_FD), .err = EINVAL},
	/* the group fd before the pid */
	{"bad group fd with no such pid", TASK_CLOCK, ARGS(NO_SUCH_PID, -1, NOT_AN_FD),
	 .err = EBADF},
	/* the pid before the cpu and the type */
	{"no such pid on a cpu out of range", NO_TYPE, ARGS(NO_SUCH_PID, CPU_PAST_LAST, -1),
	 .err = ESRCH},
	{"no such pid with inherit and SAMPLE_READ", TASK_CLOCK, SAMPLE_READ_INHERIT,
	 ARGS(NO_SUCH_PID, -1, -1), .err = ESRCH},
	/* the cpu before the type */
	{"cpu out of range with an unknown type", NO_TYPE, ARGS(0, CPU_PAST_LAST, -1),
	 .err = EINVAL},
	/* inherit with SAMPLE_READ before the PMU lookup */
	{"inherit and SAMPLE_READ with an unknown type", NO_TYPE, SAMPLE_READ_INHERIT,
	 ARGS(0, -1, -1), .err = EINVAL},
	/* the PMU lookup before aux_output and the callchain depth */
	{"unknown type with aux_output", NO_TYPE, .set = PECS_ATTR_AUX_OUTPUT, ARGS(0, -1, -1),
	 .err = ENOENT},
	{"unknown type with too deep a callchain", NO_TYPE, .deep_callchain = 1,
	 ARGS(0, -1, -1), .err = ENOENT},
	/* aux_output before the callchain depth and the clock */
	{"aux_output with too deep a callchain", TASK_CLOCK, .set = PECS_ATTR_AUX_OUTPUT,
	 .deep_callchain = 1, ARGS(0, -1, -1), .err = EOPNOTSUPP},
	{"aux_output with a bad clockid", TASK_CLOCK, .set = PECS_ATTR_AUX_OUTPUT,
	 .clockid = 99, ARGS(0, -1, -1), .err = EOPNOTSUPP},
	/* the callchain depth before the clock */
	{"too deep a callchain with a bad clockid", TASK_CLOCK, .deep_callchain = 1,
	 .clockid = 99, ARGS(0, -1, -1), .err = EOVERFLOW},
	/* the clock before the permission to watch another user's task (pid 1) or a cpu */
	{"bad clockid on pid 1", TASK_CLOCK, .clockid = 99, ARGS(1, -1, -1), .err = EINVAL},
	{"bad clockid cpu-wide", TASK_CLOCK, .clockid = 99, ARGS(-1, 0, -1), .err = EINVAL},
	{"unknown type cpu-wide", NO_TYPE, ARGS(-1, 0, -1), .err = ENOENT},
};

static void deep_callchain(struct pecs_t *t, struct pecs_attr *a)
{
	a->sample_period = 1000000;
	a->sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN;
	a->flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	a->sample_max_stack = (uint16_t)(pecs_host(t)->max_stack + 1);
}

static void order_row_check(struct pecs_t *t, const struct order_row *r)
{
	int kernel_ok = pecs_host(t)->privileged || pecs_host(t)->paranoid < 2;
	struct pecs_attr a;

	pecs_attr_counting(t, &a, r->config);
	if (r->no_such_type)
		a.type = NO_SUCH_TYPE;
	a.flags = (a.flags | r->set) & ~r->clear;
	a.read_format = r->read_format;
	a.sample_type = r->sample_type;
	if (r->freq_over_limit) {
		a.flags |= PECS_ATTR_FREQ;
		a.sample_period = (uint64_t)pecs_host(t)->max_sample_rate + 1;
	}
	if (r->deep_callchain)
		deep_callchain(t, &a);
	if (r->clockid) {
		a.flags |= PECS_ATTR_USE_CLOCKID;
		a.clockid = r->clockid;
	}
	int cpu = r->cpu == CPU_PAST_LAST ? pecs_host(t)->ncpus : r->cpu;
	int err = r->err_no_kernel && !kernel_ok ? r->err_no_kernel : r->err;
	PECS_CHECK_ERR(t, pecs_open(t, &a, r->pid, cpu, r->group_fd, r->flags), err, "%s",
		       r->what);
}

PECS_CASE("Required.Open.Order.EarlierCheckWins", "", "OPEN-ORDER")
{
	int ncpus = pecs_host(t)->ncpus, devnull;
	struct pecs_attr a, *big;
	size_t len;

	if (ncpus <= 0 || pecs_host(t)->max_stack <= 0 || pecs_host(t)->max_stack >= 0xffff)
		PECS_BROKEN(t, "host facts: %d cpus, max_stack %d", ncpus, pecs_host(t)->max_stack);

	/* the flags argument before the attr is even read */
	PECS_CHECK_ERR(t, pecs_open(t, NULL, 0, -1, -1, 1ul << 9), EINVAL,
		       "flag bit 9 with a NULL attr");

	/* the attr's size before the fields inside it */
	big = pecs_cnt_big_attr(t, PECS_SW_TASK_CLOCK, &len);
	if (!big)
		PECS_BROKEN(t, "page size %ld", pecs_host(t)->page_size);
	big->size = pecs_host(t)->attr_size + 8;
	((unsigned char *)big)[pecs_host(t)->attr_size] = 1;
	big->flags |= 1ull << 40;
	PECS_CHECK_ERR(t, pecs_open(t, big, 0, -1, -1, 0), E2BIG,
		       "non-zero tail with a reserved flag");

	for (size_t i = 0; i < sizeof(order_rows) / sizeof(order_rows[0]); i++)
		order_row_check(t, &order_rows[i]);

	/* the PMU lookup before the cgroup fd, and the cgroup fd before the callchain depth */
	devnull = PECS_SAFE_SYS(t, open("/dev/null", O_RDONLY | O_CLOEXEC));
	pecs_attr_counting(t, &a, 0);
	a.type = NO_SUCH_TYPE;
	int r = pecs_open(t, &a, devnull, 0, -1, PECS_FLAG_PID_CGROUP);
	pecs_attr_counting(t, &a, PECS_SW_CPU_CLOCK);
	deep_callchain(t, &a);
	int r2 = pecs_open(t, &a, devnull, 0, -1, PECS_FLAG_PID_CGROUP);
	close(devnull);
	PECS_CHECK_ERR(t, r, ENOENT, "unknown type with a bad cgroup fd");
	PECS_CHECK_ERR(t, r2, EBADF, "bad cgroup fd with too deep a callchain");
}

/* perf_event_alloc() takes the event's id from a global counter before the PMU lookup,
 * so an open refused there (ENOENT) uses one up, while one refused earlier (EINVAL from
 * the attr's rules) does not. Other processes take ids too, so the gaps are measured
 * several times and the smallest kept: a gap can only grow from outside. */
PECS_CASE("Required.Open.Order.LateFailureSpendsAnId", "counting", "OPEN-ID-SPENT-ON-LATE-FAILURE")
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
		PECS_CHECK_OK(t, pecs_event_id(t, f1, &i1));
		PECS_CHECK_OK(t, pecs_event_id(t, f2, &i2));
		PECS_CHECK_OK(t, pecs_event_id(t, f3, &i3));
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
