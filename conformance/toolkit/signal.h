/* A case's own signal handler: installed for the case, the action the process had put
 * back when the case ends, however it ends. */
#ifndef PECS_TOOLKIT_SIGNAL_H
#define PECS_TOOLKIT_SIGNAL_H

#include <signal.h>

#include "pecs/case.h"

/* handler for signo (SA_SIGINFO | SA_RESTART, nothing blocked while it runs), with the
 * previous action restored by the case's cleanup (pecs_defer). BROKEN when refused. */
void pecs_catch_signal(struct pecs_t *t, int signo, void (*handler)(int, siginfo_t *, void *));

#endif /* PECS_TOOLKIT_SIGNAL_H */
