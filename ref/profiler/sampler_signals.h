/* The signals a live sampler takes and sends: which one it takes
 * (ref_sampler_default_signo(), pecs/profiler/sampler.h), its handler's installation
 * while it runs, and the SIGTRAP of a sigtrap event's overflow. Private to
 * ref/profiler. */
#ifndef REF_PROFILER_SAMPLER_SIGNALS_H
#define REF_PROFILER_SAMPLER_SIGNALS_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* A running sampler's hold on signo: the first installs handler (SA_SIGINFO,
 * SA_RESTART, every signal blocked while it runs), over the default action only;
 * -EBUSY when the program has an action of its own there. */
int ref_sampler_signal_take(int signo, void (*handler)(int, siginfo_t *, void *));
/* After the sampler's timers are deleted: the last release discards a signal still
 * pending and gives the signal its default action back, so that a program that is no
 * longer sampled reads the actions it set. */
void ref_sampler_signal_release(int signo);

/* attr.sigtrap: the overflow's SIGTRAP, as perf_sigtrap() sends it (si_code TRAP_PERF,
 * si_perf_data data, si_perf_type type), to thread tid of this process pid. From the
 * sampler's handler on that thread: async-signal-safe. */
void ref_sampler_send_sigtrap(pid_t pid, pid_t tid, uint64_t data, uint32_t type);

#endif /* REF_PROFILER_SAMPLER_SIGNALS_H */
