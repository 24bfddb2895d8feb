/* Where the calling thread runs, for the cases that bind events or the thread to a CPU:
 * the mask the thread had comes back when the case ends, however it ends. */
#ifndef PECS_TOOLKIT_CPU_H
#define PECS_TOOLKIT_CPU_H

#include <sched.h> /* cpu_set_t: the includer defines _GNU_SOURCE */

#include "pecs/case.h"

/* Keeps the calling thread's CPU mask, restored by the case's cleanup (pecs_defer), and
 * copies it into *mask when mask is not NULL. ENV_SKIP when the mask cannot be read. */
void pecs_keep_affinity(struct pecs_t *t, cpu_set_t *mask);

/* Pins the calling thread to cpu alone: 0, or the errno (the case says what it means). */
int pecs_pin_self(int cpu);

#endif /* PECS_TOOLKIT_CPU_H */
