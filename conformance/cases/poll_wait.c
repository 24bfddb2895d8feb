/* poll() that waits: a timeout with nothing delivered returns 0 after the timeout, a
 * wakeup during the wait ends it early, and the exit of the watched task is a hang-up
 * even with a ring (perf_poll: is_event_hup in kernel/events/core.c). Measured on Linux
 * 6.18. The samples come from a second thread of this process, since the polling thread
 * itself is blocked. */
#include <poll.h>
#include <time.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/thread.h"

#define MS 1000000ull

static int open_thread_sampler(struct pecs_t *t, pid_t tid, int enabled)
{
	struct pecs_attr a;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, MS, PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	a.wakeup_events = 1;
	if (enabled)
		a.flags &= ~PECS_ATTR_DISABLED;
	return pecs_open(t, &a, tid, -1, -1, 0);
}

PECS_CASE("Required.Poll.Timeout.NothingDeliveredWaitsTheTimeout", "poll,mmap", "POLL-TIMEOUT")
{
	struct pecs_ring r;
	uint64_t start, took;
	int fd = open_thread_sampler(t, 0, 0), rev;

	PECS_CHECK_OK(t, fd);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r));
	start = pecs_clock_ns(CLOCK_MONOTONIC);
	rev = pecs_poll(t, fd, POLLIN, 20);
	took = pecs_clock_ns(CLOCK_MONOTONIC) - start;
	PECS_CHECK(t, rev == 0, "a disabled event's ring: revents %s, expected 0",
		   pecs_retname(rev));
	PECS_CHECK(t, took >= 19 * MS, "poll with a 20 ms timeout returned after %llu us",
		   (unsigned long long)(took / 1000));
}

PECS_CASE("Required.Poll.Timeout.WakeupEndsTheWait", "poll,mmap,sampling,pid.other", "POLL-TIMEOUT")
{
	struct pecs_spinner s;
	struct pecs_ring r;
	uint64_t start, took, ran = 0;
	int fd, mapped, rev, err;

	PECS_SAFE_HOST(t, pecs_spinner_start(&s));
	fd = open_thread_sampler(t, s.tid, 0);
	/* The implementation's open or mmap failing is its failure, not the case's setup. */
	mapped = fd < 0 ? fd : pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r);
	if (mapped < 0) {
		pecs_spinner_finish(&s);
		PECS_FAIL(t, "%s a sampler on the second thread failed: %s",
			  fd < 0 ? "perf_event_open of" : "mapping", pecs_retname(mapped));
	}
	start = pecs_clock_ns(CLOCK_MONOTONIC);
	rev = pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0);
	if (rev == 0)
		rev = pecs_poll(t, fd, POLLIN, 3000);
	took = pecs_clock_ns(CLOCK_MONOTONIC) - start;
	pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0);
	pecs_event_value(t, fd, &ran);
	err = pecs_spinner_finish(&s);
	/* The wakeup needs one 1 ms period of the other thread's CPU. When the whole
	 * timeout passed without it, the event's own count says whose doing that was: a
	 * thread that never got two periods of CPU is the host's; one that did, and no
	 * wakeup, is the implementation's. */
	if (rev == 0 && ran < 2 * MS)
		PECS_ENV_SKIP(t, "the second thread ran only %llu us of its task clock during a "
			      "%llu ms poll", (unsigned long long)(ran / 1000),
			      (unsigned long long)(took / MS));
	PECS_CHECK(t, rev >= 0 && (rev & POLLIN), "polling a sampler of a spinning thread: "
		   "revents %s after %llu ms, while the thread ran %llu us at a 1 ms period",
		   pecs_retname(rev), (unsigned long long)(took / MS),
		   (unsigned long long)(ran / 1000));
	PECS_CHECK(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE) >= 1, "POLLIN with no sample");
	PECS_CHECK_OK(t, err, "the thread did not finish");
}

PECS_CASE("Required.Poll.TaskExited.Pollhup", "poll,mmap,pid.other", "POLL-TASK-EXITED-HUP")
{
	struct pecs_spinner s;
	struct pecs_ring r;
	uint64_t end;
	int fd, mapped, before, after = 0, err;

	PECS_SAFE_HOST(t, pecs_spinner_start(&s));
	fd = open_thread_sampler(t, s.tid, 0);
	mapped = fd < 0 ? fd : pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r);
	if (mapped < 0) {
		pecs_spinner_finish(&s);
		PECS_FAIL(t, "%s an event on the second thread failed: %s",
			  fd < 0 ? "perf_event_open of" : "mapping", pecs_retname(mapped));
	}
	before = pecs_poll(t, fd, POLLIN, 0);
	err = pecs_spinner_finish(&s);
	PECS_CHECK_OK(t, err, "the thread did not finish");
	PECS_CHECK(t, before == 0, "while the thread lives: revents %s, expected 0",
		   pecs_retname(before));
	end = pecs_clock_ns(CLOCK_MONOTONIC) + 1000 * MS;
	do {
		after = pecs_poll(t, fd, POLLIN, 0);
	} while (after >= 0 && !(after & POLLHUP) && pecs_clock_ns(CLOCK_MONOTONIC) < end);
	PECS_CHECK(t, after >= 0 && (after & POLLHUP), "after the thread exited: revents %s, "
		   "expected POLLHUP", pecs_retname(after));
}
