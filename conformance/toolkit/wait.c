#include "pecs/toolkit/wait.h"

#include <time.h>

#include "pecs/case.h"

void pecs_budget_start(struct pecs_budget *b, unsigned int limit_ms)
{
	uint64_t ns = (uint64_t)limit_ms * 1000000ull;

	b->wall_end = pecs_clock_ns(CLOCK_MONOTONIC) + ns;
	b->cpu_end = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
}

int pecs_budget_left(const struct pecs_budget *b)
{
	return pecs_clock_ns(CLOCK_MONOTONIC) < b->wall_end ||
	       pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) < b->cpu_end;
}

void pecs_burn_user(uint64_t ns)
{
	uint64_t now = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID), end = now + ns, before;
	volatile uint64_t sink = 0;
	uint32_t runs = 1u << 15;

	/* Runs start at tens of microseconds natively and grow until one takes 100 us of
	 * CPU. They never shrink: under ptrace a clock read costs the thread more CPU than
	 * that, and sizing runs by the clock would then leave nothing but clock reads. */
	for (;;) {
		before = now;
		for (uint32_t i = 0; i < runs; i++)
			sink += i;
		now = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (now >= end)
			break;
		if (now - before < 100000 && runs < (1u << 24))
			runs *= 2;
	}
	(void)sink;
}
