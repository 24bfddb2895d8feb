/* Which software events sample this thread's CPU time: the two clocks, from their
 * hrtimer (perf_swevent_hrtimer, kernel/events/core.c), and no other. The counters
 * (faults, switches, migrations, ...) overflow only on what they count, so a thread that
 * burns CPU without faulting or switching gives them no sample at any period. Found by
 * the mutation score (ref's live sampler must tell the configs apart); measured on 6.18
 * as root and uid 65534. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"

#define PERIOD 1000000ull /* 1 ms of a clock; a million of a counter's events */

static int open_ring(struct pecs_t *t, uint64_t config, struct pecs_ring *r)
{
	struct pecs_attr a;

	pecs_attr_sampling(t, &a, config, PERIOD, PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 16, PROT_READ | PROT_WRITE, r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	return fd;
}

/* cpu-clock samples a busy thread as task-clock does. */
PECS_CASE("Required.Sampling.Configs.BothClocksSampleCpuTime", "sampling,mmap",
	  "SAMPLE-SW-CONFIG-CPU-TIME")
{
	static const uint64_t clocks[] = {PECS_SW_CPU_CLOCK, PECS_SW_TASK_CLOCK};

	for (size_t i = 0; i < 2; i++) {
		struct pecs_ring r;
		int fd = open_ring(t, clocks[i], &r);
		int n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 5, 3000);

		PECS_CHECK(t, n >= 5, "config %llu: %d samples after up to 3 s of CPU at a 1 ms "
			   "period", (unsigned long long)clocks[i], n);
		PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	}
}

/* Every other software event, sampling at a period of a million, gets no sample while
 * the thread burns 50 ms of CPU (timed by a task clock of its own). */
PECS_CASE("Required.Sampling.Configs.CountersGetNoCpuTimeSamples", "sampling,mmap",
	  "SAMPLE-SW-CONFIG-CPU-TIME")
{
	static const uint64_t counters[] = {
		PECS_SW_PAGE_FAULTS,	  PECS_SW_CONTEXT_SWITCHES, PECS_SW_CPU_MIGRATIONS,
		PECS_SW_PAGE_FAULTS_MIN, PECS_SW_PAGE_FAULTS_MAJ, PECS_SW_ALIGNMENT_FAULTS,
		PECS_SW_EMULATION_FAULTS,
	};
	enum { N = sizeof(counters) / sizeof(counters[0]) };
	struct pecs_ring r[N];
	struct pecs_attr a;
	int fd[N];

	for (size_t i = 0; i < N; i++)
		fd[i] = open_ring(t, counters[i], &r[i]);
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	int clock = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, clock, PECS_IOC_ENABLE, 0));
	int err = pecs_burn_event(t, clock, 50000000, 3000);
	if (err == -ETIMEDOUT)
		PECS_ENV_SKIP(t, "the thread got no 50 ms of CPU within its budget");
	PECS_CHECK_OK(t, err);
	for (size_t i = 0; i < N; i++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
		int n = pecs_ring_count(&r[i], PECS_RECORD_SAMPLE);
		PECS_CHECK(t, n == 0, "config %llu: %d samples over 50 ms of CPU at a period of "
			   "a million", (unsigned long long)counters[i], n);
	}
}
