/* The live sampler: the kernel's POSIX timers signal the target thread each time its
 * CPU-time clock passes another period (cpu_timer.h says how, and why not a CPU-time
 * timer alone); the handler unwinds the interrupted context with libunwind and appends
 * one backtrace record (FXT, or markup when configured so) to a lock-free buffer that
 * the session's collector drains every 10 ms. A signal that stands for several periods
 * (the thread ran on while its handler could not run) writes one sample, with the
 * stack of its moment, and the other periods are skipped (Stop's periods_skipped), as
 * Linux's hrtimer skips the periods it overran; a TSan build writes each, up to 1024
 * (sampler.c says why). Callchains hold user addresses only and end at the first
 * other value.
 *
 * Targets: a thread of this process (its thread CPU-time clock) or this process (the
 * process CPU-time clock, signals delivered to target.thread). An event on a task uses
 * the thread target whether it is CPU_CLOCK or TASK_CLOCK: Linux counts both on the task
 * the event is attached to. libunwind unwinds only its own address space, so other processes
 * are INVALID_CONFIGURATION. Up to 64 samplers run at once, on one thread or on several;
 * a 65th start() is BAD_STATE (the process-wide list the signal handler serves is that
 * long). Samplers on one thread may share a signal: whichever arrives serves them all.
 *
 * The handler calls only: clock_gettime, getrusage and timer_settime (system calls
 * without locks; timer_settime is on the POSIX list, getrusage is not), sched_getcpu (a
 * vDSO/getcpu read), libunwind's local unwinder (its fast trace, whose per-thread cache
 * is made on a thread's first use; warmed up at start), the FXT/markup writers and
 * memcpy. libunwind finds unwind tables through dl_iterate_phdr, which takes the
 * loader's lock: a sample landing inside dlopen/dlclose on the target thread can
 * deadlock. Do not sample threads that load libraries.
 */
#ifndef PECS_PROFILER_SAMPLER_H
#define PECS_PROFILER_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/profiler/profiler.h"

struct ref_sampler_opts {
	int signo;            /* 0: ref_sampler_default_signo() at each start */
	size_t buffer_bytes;  /* 0: start()'s buffer_size_mb */
	unsigned max_frames;  /* 0: 127 (kernel.perf_event_max_stack's default); at most 255 */
};

int ref_profiler_new_sampler(struct ref_profiler **out, const struct ref_sampler_opts *opts);

/* Samples lost so far because the buffer was full (grows while running). */
uint64_t ref_sampler_dropped(const struct ref_profiler *p);

/* The signal samplers use unless told otherwise: the highest real-time signal whose
 * action is the default (or which a running sampler holds), so the program's own
 * signals (SIGPROF and its ITIMER_PROF among them) stay the program's. Asked again at
 * each start: the handler is installed only while samplers run. */
int ref_sampler_default_signo(void);

#endif /* PECS_PROFILER_SAMPLER_H */
