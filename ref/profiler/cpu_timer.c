#define _GNU_SOURCE
#include "cpu_timer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
/* How much CPU a thread must run without waiting before the wall-clock timer takes
 * over from the CPU-time one: more than a tick at HZ=250, and more than the bursts
 * between waits of a thread that waits often. CPU time, not wall time: a burst
 * preempted on a busy machine does not grow longer. */
#define CALM_NS 5000000ull

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

/* Another thread's voluntary switches, from its status in /proc (the count getrusage()
 * reads for the thread itself); -1 when unknown. */
static long thread_switches(pid_t tid)
{
	static const char key[] = "voluntary_ctxt_switches:";
	char path[64], buf[2048];
	const char *at;
	ssize_t n;
	int fd;

	if (tid == (pid_t)syscall(SYS_gettid))
		return voluntary_switches();
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	at = strstr(buf, key);
	return at ? strtol(at + sizeof(key) - 1, NULL, 10) : -1;
}

/* Whether a thread's own clock stays with (or goes to) the CPU-time timer. A wall-clock
 * timer that fires while the thread waits ends its poll, nanosleep or epoll_wait with
 * EINTR, and nothing in user space can tell that the thread is about to wait; the
 * CPU-time timer cannot do that (its expiry is checked at the tick the thread is on a
 * CPU for and signalled by task work as the thread returns to user space). So a thread
 * that waited since the last arm (its voluntary switches grew), or whose switches are
 * unknown, gets the CPU-time timer, and only one that then ran CALM_NS of its CPU
 * without waiting gets the wall-clock one back. Updates where the stretch began. */
static bool thread_stays_coarse(struct cpu_timer *t)
{
	if (t->take_switches < 0 || t->armed_switches < 0 ||
	    t->take_switches != t->armed_switches) {
		t->calm_from = t->take_clock;
		return true;
	}
	return t->sleeping && t->take_clock - t->calm_from < CALM_NS;
}

/* After a take, on the target thread (whose switches getrusage() reads): arms the timer
 * that fits, the wall-clock one no sooner than not_before. A process clock goes to the
 * CPU-time timer when it did not move at all since the last arm. */
static void arm(struct cpu_timer *t, uint64_t not_before)
{
	uint64_t now = t->take_clock, wall = t->take_wall;
	uint64_t next = t->origin + (t->taken + 1) * t->period;
	uint64_t left = next > now ? next - now : 1, speed = 1, at;
	long switches = t->thread_clock ? voluntary_switches() : -1;
	bool coarse;

	if (t->thread_clock)
		coarse = thread_stays_coarse(t);
	else
		coarse = !t->take_reached && now == t->armed_clock;
	/* A process clock runs up to rate times faster than wall time: as fast as it
	 * ran since the last arm, within that bound. */
	if (t->rate > 1 && wall > t->armed_wall && now > t->armed_clock) {
		speed = (now - t->armed_clock) / (wall - t->armed_wall);
		speed = speed < 1 ? 1 : speed > t->rate ? t->rate : speed;
	}
	if (coarse) {
		if (!t->sleeping)
			set_at(t->wall, 0);
		set_at(t->cpu, next);
	} else {
		if (t->sleeping)
			set_at(t->cpu, 0);
		at = wall + (left + speed - 1) / speed;
		set_at(t->wall, at > not_before ? at : not_before);
	}
	t->sleeping = coarse;
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
	t->armed_switches = t->take_switches = -1;
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
	/* A thread that runs on from here without waiting gets the wall-clock timer at the
	 * first tick past CALM_NS of its CPU, not a stretch later. */
	if (t->thread_clock)
		t->armed_switches = thread_switches(tid);
	t->calm_from = t->origin;
	/* Last: a handler treats a timer with period 0 as not set up. */
	t->period = period;
	return 0;
}

int ref_cpu_timer_run(struct cpu_timer *t)
{
	struct itimerspec first;
	timer_t id;

	if (!t->period || !t->have_cpu)
		return -EINVAL;
	/* The handler's fields are the owner's until the release store: a signal of an
	 * earlier run may land on the target thread at any moment and must take nothing
	 * before it. A thread's own clock starts on the CPU-time timer (the thread may be
	 * about to wait; thread_stays_coarse()); a process clock on the wall-clock one,
	 * whose first period is a whole one of wall time away at the earliest. */
	first.it_interval = (struct timespec){ 0, 0 };
	if (t->thread_clock) {
		first.it_value = timespec_of(t->origin + t->period);
		id = t->cpu;
		t->sleeping = true;
	} else {
		first.it_value = timespec_of(t->armed_wall + (t->period + t->rate - 1) / t->rate);
		id = t->wall;
	}
	atomic_store_explicit(&t->live, true, memory_order_release);
	if (timer_settime(id, TIMER_ABSTIME, &first, NULL) < 0)
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
	/* Read before the handler does anything: its own waits (the unwinder's locks) are
	 * not the thread's. */
	t->take_switches = t->thread_clock ? voluntary_switches() : -1;
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
