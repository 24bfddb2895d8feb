#include "support_wait.h"

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
	uint64_t end = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t sink = 0;

	/* tens of microseconds of arithmetic between two reads of the clock */
	do {
		for (int i = 0; i < (1 << 15); i++)
			sink += (uint64_t)i;
	} while (pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	(void)sink;
}
