#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/toolkit/cpu.h"

static void restore(void *arg)
{
	sched_setaffinity(0, sizeof(cpu_set_t), arg);
	free(arg);
}

void pecs_keep_affinity(struct pecs_t *t, cpu_set_t *mask)
{
	cpu_set_t *kept = malloc(sizeof(*kept));

	if (!kept)
		PECS_BROKEN(t, "no memory for the CPU mask");
	if (sched_getaffinity(0, sizeof(*kept), kept)) {
		int err = errno;

		free(kept);
		PECS_ENV_SKIP(t, "this thread's CPU mask cannot be read: %s", strerror(err));
	}
	if (mask)
		*mask = *kept;
	pecs_defer(t, restore, kept);
}

int pecs_pin_self(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? errno : 0;
}
