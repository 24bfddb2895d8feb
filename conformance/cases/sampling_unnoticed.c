#define _GNU_SOURCE
/* A sampled program cannot tell it is sampled. Linux takes a cpu-clock or task-clock
 * sample from an hrtimer interrupt while the task runs (perf_swevent_hrtimer in
 * kernel/events/core.c): nothing is queued to the task, so its system calls end as they
 * would unsampled, its signal dispositions, mask and interval timers stay its own.
 * Each case samples the calling thread at 10 kHz (the rate a profiler asking for high
 * resolution uses) around what a program does: sleep, wait, take its own SIGPROF. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS 100000ull /* 10 kHz */
#define ROUNDS 100
#define SLEEP_MS 3
#define BURN_NS 300000ull   /* CPU between two sleeps: 3 periods */

/* A sampling task-clock event on this thread, enabled, its ring mapped. */
static int sample_self(struct pecs_t *t)
{
	struct pecs_attr a;
	struct pecs_ring r;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 16, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	return fd;
}

/* What one kind of sleep gave over the rounds: calls that failed with EINTR, and calls
 * that returned before their time. */
struct sleeps {
	int eintr, short_;
	int other_errno;
};

typedef int (*sleep_fn)(void *ctx); /* 0, or -errno; sleeps SLEEP_MS */

static void run_sleeps(sleep_fn fn, void *ctx, struct sleeps *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t w0;
		int ret;

		pecs_burn_user(BURN_NS);
		w0 = pecs_clock_ns(CLOCK_MONOTONIC);
		ret = fn(ctx);
		if (ret == -EINTR)
			out->eintr++;
		else if (ret < 0)
			out->other_errno = -ret;
		else if (pecs_clock_ns(CLOCK_MONOTONIC) - w0 < SLEEP_MS * 1000000ull)
			out->short_++;
	}
}

static int sleep_poll(void *ctx)
{
	(void)ctx;
	return poll(NULL, 0, SLEEP_MS) < 0 ? -errno : 0;
}

static int sleep_nanosleep(void *ctx)
{
	struct timespec ts = { 0, SLEEP_MS * 1000000L }, rem;

	(void)ctx;
	/* Not restarted by hand: a cut-short sleep is what the case looks for. */
	return nanosleep(&ts, &rem) < 0 ? -errno : 0;
}

static int sleep_epoll(void *ctx)
{
	struct epoll_event ev;
	int n = epoll_wait(*(int *)ctx, &ev, 1, SLEEP_MS);

	return n < 0 ? -errno : 0;
}

static void check_sleeps(struct pecs_t *t, const char *what, sleep_fn fn, void *ctx)
{
	struct sleeps s;

	sample_self(t);
	run_sleeps(fn, ctx, &s);
	PECS_CHECK(t, s.other_errno == 0, "%s failed with %s", what, pecs_errname(s.other_errno));
	PECS_CHECK(t, s.eintr == 0 && s.short_ == 0,
		   "%s of %d ms, %d times between bursts of CPU sampled at 10 kHz: %d ended "
		   "with EINTR, %d returned early", what, SLEEP_MS, ROUNDS, s.eintr, s.short_);
}

PECS_CASE("Required.Sampling.Unnoticed.PollSleepsItsTime", "sampling,mmap",
	  "SAMPLE-UNNOTICED-SLEEP")
{
	check_sleeps(t, "poll(NULL, 0, 3)", sleep_poll, NULL);
}

PECS_CASE("Required.Sampling.Unnoticed.NanosleepSleepsItsTime", "sampling,mmap",
	  "SAMPLE-UNNOTICED-SLEEP")
{
	check_sleeps(t, "nanosleep", sleep_nanosleep, NULL);
}

PECS_CASE("Required.Sampling.Unnoticed.EpollWaitSleepsItsTime", "sampling,mmap",
	  "SAMPLE-UNNOTICED-SLEEP")
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		PECS_BROKEN(t, "epoll_create1: %s", pecs_errname(errno));
	check_sleeps(t, "epoll_wait", sleep_epoll, &ep);
	close(ep);
}

/* A futex wait with a timeout, as a timed pthread_cond_wait or sem_timedwait does: the
 * kernel restarts it through its restart block, which a handler turns into EINTR. */
static int sleep_futex(void *ctx)
{
	static int word;
	struct timespec ts = { 0, SLEEP_MS * 1000000L };

	(void)ctx;
	if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0) == 0)
		return 0;
	return errno == ETIMEDOUT ? 0 : -errno;
}

PECS_CASE("Required.Sampling.Unnoticed.FutexWaitSleepsItsTime", "sampling,mmap",
	  "SAMPLE-UNNOTICED-WAIT")
{
	check_sleeps(t, "FUTEX_WAIT with a timeout", sleep_futex, NULL);
}

/* A reader blocked on an empty pipe; a thread of the case's own (not sampled) writes a
 * byte SLEEP_MS after each read began. */
struct pipe_waiter {
	int fds[2];
	sem_t go;
	atomic_int stop;
};

static void *pipe_writer(void *arg)
{
	struct pipe_waiter *w = arg;
	struct timespec ts = { 0, SLEEP_MS * 1000000L };

	for (;;) {
		while (sem_wait(&w->go) < 0 && errno == EINTR)
			;
		if (atomic_load(&w->stop))
			return NULL;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		ts = (struct timespec){ 0, SLEEP_MS * 1000000L };
		if (write(w->fds[1], "x", 1) != 1)
			return NULL;
	}
}

static int sleep_pipe_read(void *ctx)
{
	struct pipe_waiter *w = ctx;
	char c;
	ssize_t n;

	sem_post(&w->go);
	n = read(w->fds[0], &c, 1);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

PECS_CASE("Required.Sampling.Unnoticed.PipeReadWaitsForItsData", "sampling,mmap",
	  "SAMPLE-UNNOTICED-WAIT")
{
	struct pipe_waiter w;
	pthread_t th;

	memset(&w, 0, sizeof(w));
	if (pipe2(w.fds, O_CLOEXEC) < 0 || sem_init(&w.go, 0, 0) < 0)
		PECS_BROKEN(t, "pipe2/sem_init: %s", pecs_errname(errno));
	if (pthread_create(&th, NULL, pipe_writer, &w) != 0)
		PECS_BROKEN(t, "pthread_create failed");
	check_sleeps(t, "read on an empty pipe", sleep_pipe_read, &w);
	atomic_store(&w.stop, 1);
	sem_post(&w.go);
	pthread_join(th, NULL);
	close(w.fds[0]);
	close(w.fds[1]);
	sem_destroy(&w.go);
}

/* The signal mask and every signal's action, as the program reads them. */
struct signal_state {
	sigset_t mask;
	struct sigaction act[NSIG];
	int have[NSIG]; /* sigaction() could read it (glibc keeps 32 and 33 for itself) */
};

static void read_signal_state(struct signal_state *st)
{
	memset(st, 0, sizeof(*st));
	pthread_sigmask(SIG_SETMASK, NULL, &st->mask);
	for (int sig = 1; sig < NSIG; sig++)
		st->have[sig] = sigaction(sig, NULL, &st->act[sig]) == 0;
}

/* The first signal whose action differs, or 0. */
static int changed_action(const struct signal_state *a, const struct signal_state *b)
{
	for (int sig = 1; sig < NSIG; sig++) {
		if (a->have[sig] != b->have[sig])
			return sig;
		if (a->have[sig] && (a->act[sig].sa_handler != b->act[sig].sa_handler ||
				     a->act[sig].sa_flags != b->act[sig].sa_flags))
			return sig;
	}
	return 0;
}

/* The first signal whose mask bit differs, or 0. */
static int changed_mask(const struct signal_state *a, const struct signal_state *b)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&a->mask, sig) != sigismember(&b->mask, sig))
			return sig;
	return 0;
}

/* While its thread is sampled, the program reads the same signal mask and the same
 * action for every signal as before: the hrtimer that takes Linux's samples installs
 * nothing in the task. */
PECS_CASE("Required.Sampling.Unnoticed.SignalStateUntouched", "sampling,mmap",
	  "SAMPLE-UNNOTICED-SIGNALS")
{
	static struct signal_state before, during;
	int sig;

	read_signal_state(&before);
	sample_self(t);
	pecs_burn_user(50000000ull);
	read_signal_state(&during);
	sig = changed_mask(&before, &during);
	PECS_CHECK(t, sig == 0, "signal %d's bit in the thread's mask changed while sampled",
		   sig);
	sig = changed_action(&before, &during);
	PECS_CHECK(t, sig == 0, "signal %d's action changed while the thread was sampled: "
		   "handler %p flags %#x, was %p flags %#x", sig,
		   sig ? (void *)during.act[sig].sa_handler : NULL,
		   sig ? (unsigned)during.act[sig].sa_flags : 0u,
		   sig ? (void *)before.act[sig].sa_handler : NULL,
		   sig ? (unsigned)before.act[sig].sa_flags : 0u);
}

/* SIGPROF goes to the process: any of its threads may take it (an implementation's
 * own, too), hence an atomic count. */
static atomic_int prof_hits;

static void on_prof(int signo)
{
	(void)signo;
	atomic_fetch_add_explicit(&prof_hits, 1, memory_order_relaxed);
}

/* The program's own ITIMER_PROF (every 2 ms of its CPU) fires while its thread is
 * sampled. The kernel checks it at the scheduler tick, so 200 ms of CPU give one
 * SIGPROF a tick the thread was on a CPU for: ~50 at HZ=250 idle, 8 per 100 ms seen with
 * both cores busy. A sampler that took SIGPROF for itself leaves the program none. */
PECS_CASE("Required.Sampling.Unnoticed.ItimerProfStillFires", "sampling,mmap",
	  "SAMPLE-UNNOTICED-ITIMER")
{
	struct sigaction sa, old_sa;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } }, off = { { 0, 0 }, { 0, 0 } };
	int hits;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	atomic_store(&prof_hits, 0);
	sample_self(t);
	if (sigaction(SIGPROF, &sa, &old_sa) < 0 || setitimer(ITIMER_PROF, &it, NULL) < 0)
		PECS_BROKEN(t, "setting up SIGPROF: %s", pecs_errname(errno));
	pecs_burn_user(200000000ull);
	setitimer(ITIMER_PROF, &off, NULL);
	hits = atomic_load(&prof_hits);
	sigaction(SIGPROF, &old_sa, NULL);
	/* Enough to tell "fires" from "taken away" on a loaded host. */
	PECS_CHECK(t, hits >= 3, "the program's ITIMER_PROF (2 ms) fired %d times over 200 ms "
		   "of its CPU while sampled", hits);
}
