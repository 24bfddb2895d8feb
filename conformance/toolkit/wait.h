/* How long a case waits for something its own thread has to drive.
 *
 * A task event advances only while the task runs, so a wait measured in wall time turns
 * a loaded host, ptrace or an emulator into a false divergence: the thread simply did not
 * get the CPU. A budget is spent in both clocks and runs out only when both are spent: at
 * least limit_ms of wall time, and at least limit_ms of this thread's own CPU time. A
 * wait that runs out therefore had the CPU it asked for, and what was missing is the
 * implementation's doing.
 */
#ifndef PECS_TOOLKIT_WAIT_H
#define PECS_TOOLKIT_WAIT_H

#include <stdint.h>

struct pecs_budget {
	uint64_t wall_end, cpu_end;
};

void pecs_budget_start(struct pecs_budget *b, unsigned int limit_ms);
/* Nonzero while either clock still has time left. */
int pecs_budget_left(const struct pecs_budget *b);

/* Spin in user space for at least ns of this thread's CPU time, reading the clock
 * about every 100 us of it (more often on a fast start). A sampler that excludes the kernel drops a tick that lands in a
 * system call; under ptrace every clock read is one (and is charged to the thread far
 * beyond what the task clock sees), so a burner that reads the clock every microsecond
 * starves the sampler and splits the two clocks on a traced run. */
void pecs_burn_user(uint64_t ns);

#endif /* PECS_TOOLKIT_WAIT_H */
