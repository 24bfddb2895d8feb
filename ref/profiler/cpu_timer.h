/* Signals a thread each time a CPU-time clock passes another multiple of a period: the
 * live sampler's stand-in for the hrtimer Linux's cpu-clock and task-clock events use.
 *
 * POSIX CPU-time timers (timer_create on a CPU clock) expire only on scheduler ticks,
 * measured here as 4 ms: a 100 us period would give one signal per 40 periods, and a
 * 2 ms burst of CPU often none at all. The ticker instead runs a thread that reads the
 * clock (exact, not tick-based), sleeps until the next multiple could be reached, and
 * queues signo to the target thread with value when it is. The handler calls
 * ref_cpu_ticker_take(), which reads the clock again and says how many periods passed since
 * the last take: usually 1, more when the signal came late (a busy machine).
 *
 * Setting up is two steps so that the owner can publish the ticker to its signal
 * handler between them: ref_cpu_ticker_init() fills in every field the handler reads, and
 * only ref_cpu_ticker_run() starts queueing signals. A handler that meets a ticker which is
 * not set up (period 0) takes nothing.
 *
 * Private to ref/profiler.
 */
#ifndef REF_PROFILER_CPU_TICKER_H
#define REF_PROFILER_CPU_TICKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct cpu_ticker {
	clockid_t clock;
	uint64_t period;   /* clock ns; 0 until init */
	uint64_t origin;   /* the clock at init */
	unsigned rate;     /* how much faster than wall time the clock may run: 1 for a
			    * thread, the CPU count for a process */
	pid_t pid, tid;
	uid_t uid;
	int signo;
	void *value;

	/* Shared between the ticker thread and the handler on the target thread. */
	_Atomic uint64_t taken; /* periods handed out by take(); the handler writes it */
	atomic_bool in_flight;  /* a signal was queued and not yet taken */
	uint64_t sent;          /* signals queued; the ticker thread's own */

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;         /* under lock */
	bool running;      /* the owner's: set by run, cleared by stop */
};

/* Fills in the ticker and reads the clock's origin; queues nothing yet. 0 or a
 * negative errno. */
int ref_cpu_ticker_init(struct cpu_ticker *t, clockid_t clock, unsigned rate, uint64_t period,
			pid_t tid, int signo, void *value);
/* Starts the thread of an initialised ticker. 0 or a negative errno. */
int ref_cpu_ticker_run(struct cpu_ticker *t);
/* Stops and joins the thread; no signal is queued after it returns (one queued before
 * may still arrive). Safe on a ticker that never ran. */
void ref_cpu_ticker_stop(struct cpu_ticker *t);
/* From the signal handler (async-signal-safe): periods passed since the last take;
 * *late is how much CPU time has run since the latest of them ended. 0 on a ticker
 * that is not initialised. */
uint64_t ref_cpu_ticker_take(struct cpu_ticker *t, uint64_t *late);
/* Queues a signal with value now if a period has passed that no signal covers yet,
 * rather than waiting for the thread to notice. On the target thread itself the
 * handler has run by the time this returns. 1 when a signal was queued. */
int ref_cpu_ticker_kick(struct cpu_ticker *t, void *value);

#endif /* REF_PROFILER_CPU_TICKER_H */
