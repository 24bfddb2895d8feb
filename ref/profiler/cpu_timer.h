/* Signals a thread each time a CPU-time clock passes another multiple of a period: the
 * live sampler's stand-in for the hrtimer that Linux's cpu-clock and task-clock events
 * run while their task is on a CPU.
 *
 * The kernel's own POSIX timers do the waiting, so no thread of ours wakes per period.
 * Two of them deliver signo with value to the target thread (SIGEV_THREAD_ID), one
 * armed at a time:
 * - a wall-clock timer (CLOCK_MONOTONIC) for the moment the CPU-time clock can reach
 *   the next multiple at the earliest. While the target runs, it fires on time, as an
 *   hrtimer does. The handler calls ref_cpu_timer_take(), which reads the clock and arms
 *   the timer again: for the next multiple, or, when the target was preempted and has
 *   not got there yet, for what is left;
 * - a timer on the CPU-time clock itself, once the target has gone to sleep: it cannot
 *   fire before the target has run to the next multiple, so a sleeping thread is not
 *   woken again and again. Such timers expire on scheduler ticks only (4 ms here: one
 *   signal per 40 periods of 100 us), which is why it only wakes the wall-clock timer.
 *
 * A wall-clock timer that expires while the target sleeps interrupts that sleep once,
 * as any signal does (SA_RESTART restarts most calls; nanosleep, poll and the like
 * return EINTR). docs/behaviours.md SAMPLER-TIMER keeps it as a divergence, and
 * docs/pipeline-notes.md "Live sampler overhead" has the alternatives measured.
 *
 * Setting up is two steps so that the owner can publish the timer to its signal
 * handler between them: ref_cpu_timer_init() fills in every field the handler reads and
 * creates the timers, and only ref_cpu_timer_run() arms one. A handler that meets a
 * timer which is not set up (period 0) takes nothing.
 *
 * Private to ref/profiler.
 */
#ifndef REF_PROFILER_CPU_TIMER_H
#define REF_PROFILER_CPU_TIMER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct cpu_timer {
	clockid_t clock;
	uint64_t period;   /* clock ns; 0 until init */
	uint64_t origin;   /* the clock at init */
	unsigned rate;     /* how much faster than wall time the clock may run: 1 for a
			    * thread, the CPU count for a process */
	bool thread_clock; /* the target's own clock: its sleeps are told apart from
			    * preemption by its voluntary context switches */
	timer_t wall, cpu;
	bool have_wall, have_cpu;
	atomic_bool live;     /* set by run: the handler may take */
	atomic_bool stopping; /* set by the owner: the handler arms nothing more */

	/* The handler's, on the target thread, between run and stop. */
	uint64_t taken;       /* periods handed out by take() */
	uint64_t armed_clock; /* the clock and wall time when a timer was last armed */
	uint64_t armed_wall;
	long armed_switches;  /* the target's voluntary switches then; -1 unknown */
	bool sleeping;        /* the CPU-time timer is the armed one */
	uint64_t take_clock, take_wall; /* what the last take() read, for the rearm */
	uint64_t take_thread_cpu;       /* the target thread's CPU time then */
	bool take_reached, take_pending;
};

/* Reads the clock's origin and creates the timers; arms nothing yet. 0 or a negative
 * errno. */
int ref_cpu_timer_init(struct cpu_timer *t, clockid_t clock, unsigned rate, uint64_t period,
		       pid_t tid, int signo, void *value);
/* Arms the wall-clock timer for the first period. 0 or a negative errno. */
int ref_cpu_timer_run(struct cpu_timer *t);
/* From now on the handler arms nothing; a timer armed before may still fire once. */
void ref_cpu_timer_stop(struct cpu_timer *t);
/* Deletes the timers. The owner calls it once no handler can be inside take() (a
 * deleted timer's id may be handed to a new timer). A signal already queued may still
 * arrive. Safe on a timer that init failed on. */
void ref_cpu_timer_destroy(struct cpu_timer *t);
/* From the signal handler (async-signal-safe), on the target thread, with the wall
 * time (CLOCK_MONOTONIC ns) read at its start: the periods passed since the last take.
 * *late is how much CPU time has run since the latest of them ended. 0 on a timer that
 * is not set up. */
uint64_t ref_cpu_timer_take(struct cpu_timer *t, uint64_t wall, uint64_t *late);
/* At the end of the same handler, with the wall time then: arms the next timer, no
 * sooner than three times the handler's CPU time from now. Nothing without a take
 * before it. */
void ref_cpu_timer_rearm(struct cpu_timer *t, uint64_t wall);
/* After stop, with no handler running: periods passed that no take() handed out. */
uint64_t ref_cpu_timer_owed(struct cpu_timer *t);

#endif /* REF_PROFILER_CPU_TIMER_H */
