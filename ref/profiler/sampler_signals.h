/* The signals a live sampler takes and sends besides its timer's: which one it takes
 * (ref_sampler_default_signo(), pecs/profiler/sampler.h) and the SIGTRAP of a sigtrap
 * event's overflow. Private to ref/profiler. */
#ifndef REF_PROFILER_SAMPLER_SIGNALS_H
#define REF_PROFILER_SAMPLER_SIGNALS_H

#include <stdint.h>
#include <sys/types.h>

/* attr.sigtrap: the overflow's SIGTRAP, as perf_sigtrap() sends it (si_code TRAP_PERF,
 * si_perf_data data, si_perf_type type), to thread tid of this process pid. From the
 * sampler's handler on that thread: async-signal-safe. */
void ref_sampler_send_sigtrap(pid_t pid, pid_t tid, uint64_t data, uint32_t type);

#endif /* REF_PROFILER_SAMPLER_SIGNALS_H */
