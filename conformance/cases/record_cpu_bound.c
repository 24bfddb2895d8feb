#define _GNU_SOURCE
/* A task event bound to one CPU (pid 0, cpu N) is scheduled in only while its task runs
 * on N (event_filter_match() in kernel/events/core.c: a cpu other than the one the
 * context is switched in on filters it out), so a sampler bound to a CPU the task never
 * runs on takes no sample, and one bound to the task's own CPU samples with SAMPLE_CPU
 * saying that CPU. The thread stays on the CPU it is on (narrowing the mask to another
 * waits for that CPU's stopper thread, see Record.Sample.CpuIsThePinnedCpu). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pecs/toolkit/cpu.h"
#include "pecs/toolkit/event.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define ST (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CPU)

/* Samples of a task-clock sampler on this thread bound to cpu, over 30 ms of its CPU at
 * 1 ms: how many, and how many say another CPU than want_cpu. */
static void sample_on(struct pecs_t *t, int cpu, int want_cpu, int *samples, int *elsewhere)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .period_ns = 1000000, .sample_type = ST,
			      .flags = PECS_SAMPLER_ON_CPU, .cpu = cpu);
	int ret;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 16, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(30000000ull);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	*samples = *elsewhere = 0;
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, ST, 0, &s));
		(*samples)++;
		*elsewhere += s.cpu != (uint32_t)want_cpu;
	}
	PECS_CHECK_OK(t, ret);
}

PECS_CASE("Required.Record.Sample.BoundToAnotherCpuTakesNone", "mmap,sampling",
	  "REC-SAMPLE-CPU-BOUND")
{
	int cpu = sched_getcpu(), other, samples, elsewhere, err;

	if (pecs_host(t)->ncpus < 2)
		PECS_ENV_SKIP(t, "one CPU: no other CPU to bind the event to");
	if (cpu < 0)
		PECS_ENV_SKIP(t, "this thread's CPU cannot be read: %s", strerror(errno));
	pecs_keep_affinity(t, NULL);
	if ((err = pecs_pin_self(cpu)))
		PECS_ENV_SKIP(t, "cannot pin this thread to CPU %d: %s", cpu, strerror(err));
	other = cpu == 0 ? 1 : 0;
	sample_on(t, other, other, &samples, &elsewhere);
	PECS_CHECK(t, samples == 0, "bound to CPU %d while the thread ran on CPU %d only: %d "
		   "samples (%d of them saying CPU %d)", other, cpu, samples, samples - elsewhere,
		   other);
	sample_on(t, cpu, cpu, &samples, &elsewhere);
	PECS_CHECK(t, samples > 0 && elsewhere == 0, "bound to CPU %d, the thread's own: %d "
		   "samples, %d saying another CPU", cpu, samples, elsewhere);
}
