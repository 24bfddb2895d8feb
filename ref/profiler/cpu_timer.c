#define _GNU_SOURCE
#include "cpu_timer.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NS 1000000000ull
/* The least time the target runs between two signals. A signal costs it about 20 us
 * here besides the handler (the timer's interrupt, the signal frame, rearming), so
 * periods near Linux's shortest (10 us) would leave it a third of its CPU. */
#define MIN_GAP_NS 20000ull

static int read_clock(clockid_t clock, uint64_t *ns)
{
	struct timespec ts;

	*ns = 0; /* gcc -O2 cannot tell that errno is never 0 on failure */
	if (clock_gettime(clock, &ts) < 0)
		return -errno;
	*ns = (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
	return 0;
}

static struct timespec timespec_of(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / NS), (long)(ns % NS) };
}

static uint64_t wall_now(void)
{
	uint64_t ns;

	read_clock(CLOCK_MONOTONIC, &ns);
	return ns;
}

/* A one-shot timer at an absolute time of its clock; 0 disarms. */
static void set_at(timer_t id, uint64_t at)
{
	struct itimerspec it = { { 0, 0 }, timespec_of(at) };

	timer_settime(id, at ? TIMER_ABSTIME : 0, &it, NULL);
}

static int create(clockid_t clock, pid_t tid, int signo, void *value, timer_t *id)
{
	struct sigevent ev;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = signo;
	ev.sigev_value.sival_ptr = value;
	ev._sigev_un._tid = tid;
	if (timer_create(clock, &ev, id) < 0)
		return -errno;
	return 0;
}

/* Reads the clock: *now, and the whole periods since the origin. -1 on a timer not set
 * up (period 0) or a clock that cannot be read (the target is gone). */
static int periods_since_origin(const struct cpu_timer *t, uint64_t *now, uint64_t *due)
{
	if (!t->period || read_clock(t->clock, now) < 0 || *now < t->origin)
		return -1;
	*due = (*now - t->origin) / t->period;
	return 0;
}

/* The calling thread's voluntary context switches: it slept. -1 when unknown. */
static long voluntary_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return -1;
	return ru.ru_nvcsw;
}

/* After a take, on the target thread (whose switches getrusage() reads): arms the timer
 * that fits, the wall-clock one no sooner than not_before, unless the target went to
 * sleep since the last arm without the clock getting to a multiple, told by its
 * voluntary switches (a thread's own clock) or by a process clock that did not move at
 * all. */
static void arm(struct cpu_timer *t, uint64_t not_before)
{
	uint64_t now = t->take_clock, wall = t->take_wall;
	uint64_t next = t->origin + (t->taken + 1) * t->period;
	uint64_t left = next > now ? next - now : 1, speed = 1, at;
	long switches = t->thread_clock ? voluntary_switches() : -1;
	bool asleep = false;

	if (!t->take_reached) {
		if (t->thread_clock)
			asleep = switches >= 0 && t->armed_switches >= 0 &&
				 switches != t->armed_switches;
		else
			asleep = now == t->armed_clock;
	}
	/* A process clock runs up to rate times faster than wall time: as fast as it
	 * ran since the last arm, within that bound. */
	if (t->rate > 1 && wall > t->armed_wall && now > t->armed_clock) {
		speed = (now - t->armed_clock) / (wall - t->armed_wall);
		speed = speed < 1 ? 1 : speed > t->rate ? t->rate : speed;
	}
	if (asleep) {
		if (!t->sleeping)
			set_at(t->wall, 0);
		set_at(t->cpu, next);
	} else {
		if (t->sleeping)
			set_at(t->cpu, 0);
		at = wall + (left + speed - 1) / speed;
		set_at(t->wall, at > not_before ? at : not_before);
	}
	t->sleeping = asleep;
	t->armed_clock = now;
	t->armed_wall = wall;
	t->armed_switches = switches;
}

int ref_cpu_timer_init(struct cpu_timer *t, clockid_t clock, unsigned rate, uint64_t period,
		       pid_t tid, int signo, void *value)
{
	int ret;

	memset(t, 0, sizeof(*t));
	if (!period || !rate)
		return -EINVAL;
	t->clock = clock;
	t->rate = rate;
	t->thread_clock = rate == 1;
	t->armed_switches = -1;
	atomic_init(&t->stopping, false);
	atomic_init(&t->live, false);
	ret = read_clock(clock, &t->origin);
	if (!ret)
		ret = create(CLOCK_MONOTONIC, tid, signo, value, &t->wall);
	if (ret)
		return ret;
	t->have_wall = true;
	ret = create(clock, tid, signo, value, &t->cpu);
	if (ret)
		return ret;
	t->have_cpu = true;
	t->armed_clock = t->origin;
	t->armed_wall = wall_now();
	/* Last: a handler treats a timer with period 0 as not set up. */
	t->period = period;
	return 0;
}

int ref_cpu_timer_run(struct cpu_timer *t)
{
	struct itimerspec first;

	if (!t->period || !t->have_cpu)
		return -EINVAL;
	/* The handler's fields are the owner's until the release store: a signal of an
	 * earlier run may land on the target thread at any moment and must take nothing
	 * before it. The first period is a whole one of wall time away at the earliest. */
	first.it_interval = (struct timespec){ 0, 0 };
	first.it_value = timespec_of(t->armed_wall + (t->period + t->rate - 1) / t->rate);
	atomic_store_explicit(&t->live, true, memory_order_release);
	if (timer_settime(t->wall, TIMER_ABSTIME, &first, NULL) < 0)
		return -errno;
	return 0;
}

void ref_cpu_timer_stop(struct cpu_timer *t)
{
	atomic_store_explicit(&t->stopping, true, memory_order_seq_cst);
}

void ref_cpu_timer_destroy(struct cpu_timer *t)
{
	if (t->have_wall)
		timer_delete(t->wall);
	if (t->have_cpu)
		timer_delete(t->cpu);
	t->have_wall = t->have_cpu = false;
}

uint64_t ref_cpu_timer_take(struct cpu_timer *t, uint64_t wall, uint64_t *late)
{
	uint64_t now, due, n = 0;

	*late = 0;
	/* Not running yet (or never set up: period 0, which a signal queued for an earlier
	 * run must not divide by). */
	if (!atomic_load_explicit(&t->live, memory_order_acquire))
		return 0;
	t->take_reached = false;
	if (periods_since_origin(t, &now, &due) < 0)
		return 0;
	if (due > t->taken) {
		n = due - t->taken;
		*late = now - (t->origin + due * t->period);
		t->taken = due;
	}
	t->take_clock = now;
	t->take_wall = wall;
	t->take_thread_cpu = now;
	if (!t->thread_clock && read_clock(CLOCK_THREAD_CPUTIME_ID, &t->take_thread_cpu) < 0)
		t->take_thread_cpu = UINT64_MAX;
	t->take_reached = n > 0;
	t->take_pending = true;
	return n;
}

void ref_cpu_timer_rearm(struct cpu_timer *t, uint64_t wall)
{
	uint64_t cpu, gap = MIN_GAP_NS;

	if (!t->take_pending || atomic_load_explicit(&t->stopping, memory_order_seq_cst))
		return;
	t->take_pending = false;
	/* A handler that ran longer than a period would otherwise find the next one due
	 * as it returns, and the thread would run nothing but handlers. Between two
	 * signals the target runs three times the CPU the handler took (MIN_GAP_NS at
	 * least), so handlers stay near a quarter of its CPU, the share Linux lets
	 * samples take by default (perf_cpu_time_max_percent); the periods that pass
	 * meanwhile are skipped. CPU time, not wall time: a handler preempted on a busy
	 * machine did not cost the thread anything. */
	if (read_clock(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0 && cpu > t->take_thread_cpu &&
	    (cpu - t->take_thread_cpu) * 3 > gap)
		gap = (cpu - t->take_thread_cpu) * 3;
	arm(t, wall + gap);
}

uint64_t ref_cpu_timer_owed(struct cpu_timer *t)
{
	uint64_t now, due;

	if (periods_since_origin(t, &now, &due) < 0)
		return 0;
	return due > t->taken ? due - t->taken : 0;
}
