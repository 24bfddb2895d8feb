/* What the software counters other than the clocks count, for the calling thread
 * (measured on Linux 6.18; perf_swevent_event in kernel/events/core.c). All are user-only:
 * the scheduler raises its counters with kernel registers, so those stay at 0, while a
 * page fault taken in user space is counted. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/safe.h"

#define RF_TE (PECS_FORMAT_TOTAL_TIME_ENABLED)
#define FAULT_PAGES 256

struct value_te {
	uint64_t value, enabled;
};

/* This thread's context switches, as the scheduler counts them. */
static long switches(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw + ru.ru_nivcsw : 0;
}

/* Short sleeps until the thread has been switched out `times` times (at most 1000
 * sleeps): a sleep whose timer expired before the thread got to schedule() (a slow or
 * emulated kernel) does not switch. Returns the switches made. */
static long block_briefly(int times)
{
	long start = switches(), n = 0;

	for (int i = 0; i < 1000 && (n = switches() - start) < times; i++)
		nanosleep(&(struct timespec){0, 200000}, NULL);
	return switches() - start;
}

PECS_CASE("Required.Read.Count.PageFaultsOfTouchedPages", "counting", "READ-COUNT-PAGE-FAULTS")
{
	static const uint64_t cfgs[] = {PECS_SW_PAGE_FAULTS, PECS_SW_PAGE_FAULTS_MIN,
					PECS_SW_PAGE_FAULTS_MAJ};
	long page = pecs_host(t)->page_size;
	uint64_t v[3];
	struct pecs_attr a;
	int fds[3];
	char *p;

	for (int i = 0; i < 3; i++) {
		pecs_attr_counting(t, &a, cfgs[i]);
		fds[i] = PECS_OPEN(t, &a, 0, -1, -1, 0);
	}
	p = PECS_SAFE_MMAP(t, NULL, (size_t)page * FAULT_PAGES, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* one fault per page: no huge page may back the range */
	madvise(p, (size_t)page * FAULT_PAGES, MADV_NOHUGEPAGE);
	for (int i = 0; i < 3; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fds[i], PECS_IOC_ENABLE, 0));
	for (int i = 0; i < FAULT_PAGES; i++)
		p[(size_t)i * (size_t)page] = 1;
	/* In reverse: the minor and major counters' windows then lie inside the all-faults
	 * one, so a fault taken between two of these calls (an emulator touching memory of
	 * its own, a stack page) cannot make minor exceed all. */
	for (int i = 2; i >= 0; i--)
		PECS_CHECK_OK(t, pecs_ioctl(t, fds[i], PECS_IOC_DISABLE, 0));
	munmap(p, (size_t)page * FAULT_PAGES);
	for (int i = 0; i < 3; i++)
		PECS_CHECK_EQ(t, pecs_read(t, fds[i], &v[i], sizeof(v[i])), sizeof(v[i]));
	/* The upper bound only refuses counting far beyond the task's own faults: a runtime
	 * that keeps shadow memory (TSan, ASan, valgrind) takes a fault of its own on each
	 * first touch, and those are the task's faults too (513 for 256 under TSan). */
	PECS_CHECK(t, v[0] >= FAULT_PAGES && v[0] <= 4 * FAULT_PAGES,
		   "PAGE_FAULTS %llu for %d first touches", (unsigned long long)v[0], FAULT_PAGES);
	PECS_CHECK(t, v[1] >= FAULT_PAGES && v[1] <= v[0],
		   "PAGE_FAULTS_MIN %llu for %d first touches (all faults %llu)",
		   (unsigned long long)v[1], FAULT_PAGES, (unsigned long long)v[0]);
	/* fresh anonymous memory needs no I/O */
	PECS_CHECK(t, v[2] < FAULT_PAGES, "PAGE_FAULTS_MAJ %llu for anonymous memory",
		   (unsigned long long)v[2]);
}

PECS_CASE("Required.Read.Count.SwitchesUserOnlyZero", "counting", "READ-COUNT-SWITCHES")
{
	static const uint64_t cfgs[] = {PECS_SW_CONTEXT_SWITCHES, PECS_SW_CPU_MIGRATIONS};
	struct pecs_attr a;
	uint64_t v;
	int fds[2], kern = -1;
	long switched;

	for (int i = 0; i < 2; i++) {
		pecs_attr_counting(t, &a, cfgs[i]);
		fds[i] = PECS_OPEN(t, &a, 0, -1, -1, 0);
		PECS_CHECK_OK(t, pecs_ioctl(t, fds[i], PECS_IOC_ENABLE, 0));
	}
	/* Where the kernel may be watched, a kernel-inclusive counter shows the switches
	 * did happen. */
	if (pecs_host(t)->privileged || pecs_host(t)->paranoid < 2) {
		pecs_attr_counting(t, &a, PECS_SW_CONTEXT_SWITCHES);
		a.flags &= ~(PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_DISABLED);
		kern = PECS_OPEN(t, &a, 0, -1, -1, 0);
	}
	switched = block_briefly(3);
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fds[i], PECS_IOC_DISABLE, 0));
		PECS_CHECK_EQ(t, pecs_read(t, fds[i], &v, sizeof(v)), sizeof(v));
		PECS_CHECK(t, v == 0, "user-only config %llu counted %llu",
			   (unsigned long long)cfgs[i], (unsigned long long)v);
	}
	if (kern >= 0) {
		PECS_CHECK_EQ(t, pecs_read(t, kern, &v, sizeof(v)), sizeof(v));
		/* every switch the scheduler counted in the window, at least the 3 waited for */
		PECS_CHECK(t, v >= 3 && v >= (uint64_t)switched, "the kernel-inclusive counter "
			   "saw %llu switches; the thread made %ld", (unsigned long long)v, switched);
	}
}

/* Counters that nothing raises on this path: DUMMY and BPF_OUTPUT by design, alignment
 * and emulation faults because the burn loop makes none (x86 never raises them). Their
 * enabled time still runs. */
PECS_CASE("Required.Read.Count.NeverRaisedCountersZero", "counting", "READ-COUNT-ZERO")
{
	static const uint64_t cfgs[] = {PECS_SW_DUMMY, PECS_SW_BPF_OUTPUT,
					PECS_SW_ALIGNMENT_FAULTS, PECS_SW_EMULATION_FAULTS};
	struct value_te v;
	struct pecs_attr a;

	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		pecs_cnt_attr(t, &a, cfgs[i], RF_TE);
		int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);

		PECS_CHECK_OK(t, pecs_cnt_run(t, fd, 0, 1000000));
		PECS_CHECK_EQ(t, pecs_read(t, fd, &v, sizeof(v)), sizeof(v));
		PECS_CHECK(t, v.value == 0, "config %llu counted %llu", (unsigned long long)cfgs[i],
			   (unsigned long long)v.value);
		PECS_CHECK(t, v.enabled > 0, "config %llu: time_enabled 0 after a run",
			   (unsigned long long)cfgs[i]);
	}
}
