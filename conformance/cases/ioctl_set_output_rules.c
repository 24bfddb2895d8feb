/* PERF_EVENT_IOC_SET_OUTPUT refusals that concern what the two events watch, beside
 * ioctl_set_output.c's: perf_event_set_output() in kernel/events/core.c refuses a target
 * with another clock (when either uses use_clockid) and, for per-task events, a target on
 * another task. Measured here. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/thread.h"

#define PERIOD_NS 100000ull

static void sampler(struct pecs_t *t, struct pecs_attr *a)
{
	pecs_attr_sampling(t, a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP);
}

PECS_CASE("Required.Ioctl.SetOutput.OtherClockEinval", "ioctl.set_output,mmap",
	  "IOC-SET-OUTPUT-EINVAL-CLOCK")
{
	struct pecs_attr a;
	struct pecs_ring r;
	int target, src;

	sampler(t, &a);
	target = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, target, 1, PROT_READ | PROT_WRITE, &r));
	a.flags |= PECS_ATTR_USE_CLOCKID;
	a.clockid = 1; /* CLOCK_MONOTONIC, where the target keeps the default clock */
	src = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, src, PECS_IOC_SET_OUTPUT, (unsigned long)target), EINVAL);
}

PECS_CASE("Required.Ioctl.SetOutput.OtherTaskEinval", "ioctl.set_output,mmap,pid.other",
	  "IOC-SET-OUTPUT-EINVAL-TASK")
{
	struct pecs_spinner s = {0};
	struct pecs_attr a;
	struct pecs_ring r;
	int target, src, ret;

	sampler(t, &a);
	target = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, target, 1, PROT_READ | PROT_WRITE, &r));
	PECS_SAFE_HOST(t, pecs_spinner_start(&s));
	/* Another thread of this process: another task, which anyone may watch. */
	src = pecs_open(t, &a, s.tid, -1, -1, 0);
	ret = src < 0 ? src : pecs_ioctl(t, src, PECS_IOC_SET_OUTPUT, (unsigned long)target);
	pecs_spinner_finish(&s);
	PECS_CHECK_OK(t, src, "open on the second thread");
	PECS_CHECK_ERR(t, ret, EINVAL, "SET_OUTPUT into another task's ring");
}

/* Only the full-width -1 detaches: the same bits as a 32-bit -1 (0xffffffff) name an fd,
 * and no fd has that number (perf_fget_light). */
PECS_CASE("Required.Ioctl.SetOutput.MinusOneIn32BitsEbadf", "ioctl.set_output",
	  "IOC-SET-OUTPUT-EBADF")
{
	struct pecs_attr a;
	int src;

	sampler(t, &a);
	src = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, src, PECS_IOC_SET_OUTPUT, 0xfffffffful), EBADF);
}
