#define _GNU_SOURCE
#include "cpu_ticker.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Shortest and longest sleeps between clock reads. The longest (one tick) applies
 * while the target does not run, so an idle target costs ~250 wake-ups a second. */
#define SLEEP_MIN_NS 20000ull
#define SLEEP_IDLE_MAX_NS 4000000ull

static int read_clock(clockid_t clock, uint64_t *ns)
{
	struct timespec ts;

	*ns = 0; /* gcc -O2 cannot tell that errno is never 0 on failure */
	if (clock_gettime(clock, &ts) < 0)
		return -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

static int queue_signal(struct cpu_ticker *t, void *value)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = t->signo;
	si.si_code = SI_QUEUE;
	si.si_pid = t->pid;
	si.si_uid = t->uid;
	si.si_value.sival_ptr = value;
	if (syscall(SYS_rt_tgsigqueueinfo, t->pid, t->tid, t->signo, &si) < 0)
		return -errno;
	return 0;
}

static void deadline_after(struct timespec *ts, uint64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ns += (uint64_t)ts->tv_nsec;
	ts->tv_sec += (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
}

static void *run(void *arg)
{
	struct cpu_ticker *t = arg;
	uint64_t last = t->origin, idle = 0;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		uint64_t now, due, taken, next, sleep;
		struct timespec until;

		if (read_clock(t->clock, &now) < 0)
			break; /* the target is gone */
		due = (now - t->origin) / t->period;
		taken = atomic_load_explicit(&t->taken, memory_order_acquire);
		/* One signal at a time: a handler that runs late takes every period up to
		 * its own moment, so a second signal queued meanwhile would find none. */
		if (due > taken && !atomic_exchange_explicit(&t->in_flight, true,
							     memory_order_acq_rel)) {
			if (queue_signal(t, t->value) < 0)
				break;
			t->sent++;
		}
		/* The clock cannot reach the next multiple sooner than this in wall time. */
		next = t->origin + ((due > taken ? due : taken) + 1) * t->period;
		sleep = next > now ? (next - now) / t->rate : t->period / t->rate;
		if (now == last) {
			/* Not running: back off towards a tick, the POSIX timer's resolution. */
			idle = idle ? idle * 2 : sleep;
			if (idle > SLEEP_IDLE_MAX_NS)
				idle = SLEEP_IDLE_MAX_NS;
			if (idle > sleep)
				sleep = idle;
		} else {
			idle = 0;
		}
		last = now;
		if (sleep < SLEEP_MIN_NS)
			sleep = SLEEP_MIN_NS;
		deadline_after(&until, sleep);
		while (!t->stop && pthread_cond_timedwait(&t->wake, &t->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int ref_cpu_ticker_init(struct cpu_ticker *t, clockid_t clock, unsigned rate, uint64_t period,
			pid_t tid, int signo, void *value)
{
	int ret;

	memset(t, 0, sizeof(*t));
	if (!period || !rate)
		return -EINVAL;
	t->clock = clock;
	t->rate = rate;
	t->pid = getpid();
	t->uid = getuid(); /* once: a system call per signal was a tenth of the ticker */
	t->tid = tid;
	t->signo = signo;
	t->value = value;
	atomic_init(&t->taken, 0);
	atomic_init(&t->in_flight, false);
	ret = read_clock(clock, &t->origin);
	if (ret)
		return ret;
	/* Last: a handler treats a ticker with period 0 as not set up. */
	t->period = period;
	return 0;
}

int ref_cpu_ticker_run(struct cpu_ticker *t)
{
	pthread_condattr_t ca;
	int ret;

	if (!t->period || t->running)
		return -EINVAL;
	t->stop = false;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&t->thread, NULL, run, t);
	if (ret) {
		pthread_cond_destroy(&t->wake);
		pthread_mutex_destroy(&t->lock);
		return -ret;
	}
	t->running = true;
	return 0;
}

void ref_cpu_ticker_stop(struct cpu_ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	t->running = false;
}

uint64_t ref_cpu_ticker_take(struct cpu_ticker *t, uint64_t *late)
{
	uint64_t now, due, taken = atomic_load_explicit(&t->taken, memory_order_relaxed), n = 0;

	*late = 0;
	/* clock_gettime is async-signal-safe; the handler is the only writer of taken.
	 * period 0: the owner has not set this ticker up (or has cleared it), so a signal
	 * queued for an earlier run of it must not divide by it. */
	if (t->period && read_clock(t->clock, &now) == 0 && now >= t->origin) {
		due = (now - t->origin) / t->period;
		if (due > taken) {
			n = due - taken;
			*late = now - (t->origin + due * t->period);
			atomic_store_explicit(&t->taken, due, memory_order_release);
		}
	}
	atomic_store_explicit(&t->in_flight, false, memory_order_release);
	return n;
}

int ref_cpu_ticker_kick(struct cpu_ticker *t, void *value)
{
	uint64_t now;

	if (!t->running || !t->period || read_clock(t->clock, &now) < 0 || now < t->origin ||
	    (now - t->origin) / t->period <=
		    atomic_load_explicit(&t->taken, memory_order_acquire))
		return 0;
	/* A signal a thread sends itself is handled before the system call returns. */
	return queue_signal(t, value) == 0;
}
