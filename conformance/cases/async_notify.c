/* Asynchronous notification on event fds: fcntl(2) O_ASYNC with an owner (F_SETOWN,
 * F_SETOWN_EX) and a signal (F_SETSIG). perf_fasync() puts the fd on the event's fasync
 * list; __perf_event_overflow() then queues a wakeup at every overflow, whatever the
 * ring's wakeup_events (kernel/events/core.c), perf_output_wakeup() at the ring's wakeup
 * points (ring_buffer.c), and perf_event_wakeup() signals the owner through
 * kill_fasync() with POLL_IN, or POLL_HUP for the overflow that uses up IOC_REFRESH's
 * count. What the signal carries is fs/fcntl.c send_sigio_to_task(): a plain SIGIO
 * (SI_KERNEL, nothing else) without F_SETSIG, else the full siginfo. Measured on Linux
 * 6.18 and in the 6.1 VM.
 *
 * A handler records each signal, on whichever thread takes it, so an implementation's
 * own threads cannot swallow one; it stays installed after the case, so a signal that
 * comes late is harmless. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/task.h"
#include "pecs/toolkit/version.h"
#include "pecs/toolkit/thread.h"
#include "pecs/toolkit/wait.h"

#define MS 1000000ull
#define MAX_SIGS 512
#define BAND_IN (POLLIN | POLLRDNORM)
#define BAND_HUP (POLLHUP | POLLERR)

struct sig_seen {
	int signo, code, fd;
	long band;
	pid_t tid;        /* the thread that took it */
	atomic_int ready; /* set last: a process's signal may be taken by any thread */
};

static struct sig_seen seen[MAX_SIGS];
static atomic_int nseen;

static void record(int signo, siginfo_t *si, void *uc)
{
	int i = atomic_fetch_add(&nseen, 1);

	(void)uc;
	if (i >= MAX_SIGS)
		return;
	seen[i].signo = signo;
	seen[i].code = si->si_code;
	seen[i].fd = si->si_fd;
	seen[i].band = si->si_band;
	seen[i].tid = (pid_t)syscall(SYS_gettid);
	atomic_store_explicit(&seen[i].ready, 1, memory_order_release);
}

static void catch_signal(struct pecs_t *t, int signo)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = record;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL) < 0)
		PECS_BROKEN(t, "sigaction(%d): %s", signo, pecs_errname(errno));
	sigemptyset(&set);
	sigaddset(&set, signo);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	for (int i = 0; i < MAX_SIGS; i++)
		atomic_store(&seen[i].ready, 0);
	atomic_store(&nseen, 0);
}

/* The signals recorded whole, in the order they were counted. */
static int count(void)
{
	int n = atomic_load(&nseen), i = 0;

	n = n < MAX_SIGS ? n : MAX_SIGS;
	while (i < n && atomic_load_explicit(&seen[i].ready, memory_order_acquire))
		i++;
	return i;
}

/* Waits until at least want signals came or limit_ms passed; then a little longer, so
 * the count is the settled one (the last overflow's signal may trail its sample). */
static int wait_signals(int want, int limit_ms)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (int i = 0; i < limit_ms / 10 && count() < want; i++)
		nanosleep(&ts, NULL);
	for (int i = 0, last = -1; i < 20 && count() != last; i++) {
		last = count();
		ts.tv_nsec = 25 * 1000 * 1000;
		nanosleep(&ts, NULL);
	}
	return count();
}

/* A sampler on this thread that signals signo (0: no F_SETSIG) to this process. */
static int async_sampler(struct pecs_t *t, int signo, uint32_t wakeup_events)
{
	int fd = PECS_SAMPLER(t, .period_ns = MS, .sample_type = PECS_SAMPLE_IP,
			      .wakeup_events = wakeup_events);

	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)getpid()), 0);
	if (signo)
		PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)signo), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_ASYNC), 0);
	return fd;
}

static void run_for(struct pecs_t *t, int fd, uint64_t ns)
{
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0), 0);
	PECS_CHECK_OK(t, pecs_burn_event(t, fd, ns, 2000));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0), 0);
}

/* Signals [from, n) carried what they should. */
static void check_range(struct pecs_t *t, int from, int n, int signo, int code, long band,
			int fd)
{
	for (int i = from; i < n; i++) {
		PECS_CHECK(t, seen[i].signo == signo && seen[i].code == code &&
			   seen[i].band == band && seen[i].fd == fd,
			   "signal %d of %d: signo %d si_code %d si_band %#lx si_fd %d, expected "
			   "%d, %d, %#lx, %d", i + 1, n, seen[i].signo, seen[i].code, seen[i].band,
			   seen[i].fd, signo, code, band, fd);
	}
}

static void check_each(struct pecs_t *t, int n, int signo, int code, long band, int fd)
{
	check_range(t, 0, n, signo, code, band, fd);
}

PECS_CASE("Required.Fasync.Fcntl.Defaults", "fasync", "FASYNC-FCNTL-DEFAULTS")
{
	struct f_owner_ex ex = {.type = -1, .pid = -1};
	int fd = PECS_SAMPLER(t);
	int fl = pecs_fcntl(t, fd, F_GETFL, 0);

	PECS_CHECK(t, fl >= 0 && (fl & O_ACCMODE) == O_RDWR && !(fl & (O_ASYNC | O_NONBLOCK)),
		   "F_GETFL of a new event: %s, expected O_RDWR without O_ASYNC or O_NONBLOCK",
		   pecs_retname(fl));
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETSIG, 0), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN, 0), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN_EX, (unsigned long)&ex), 0);
	PECS_CHECK(t, (int)ex.type == F_OWNER_TID && ex.pid == 0,
		   "F_GETOWN_EX of a new event: type %d pid %d, expected F_OWNER_TID 0", ex.type,
		   ex.pid);
}

static void check_owner(struct pecs_t *t, int fd, int type, pid_t pid)
{
	struct f_owner_ex ex = {.type = -1, .pid = -1};

	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN_EX, (unsigned long)&ex), 0);
	PECS_CHECK(t, (int)ex.type == type && ex.pid == pid,
		   "F_GETOWN_EX: type %d pid %d, expected %d %d", ex.type, ex.pid, type, pid);
}

static void group_child_end(pid_t pid);

static void group_child_cleanup(void *arg)
{
	pid_t *pid = arg;

	if (*pid > 0)
		group_child_end(*pid);
	*pid = 0;
}

/* A child alone in a process group of its own; it ends by itself after 10 s, or when the
 * case ends. */
static pid_t group_live;

static pid_t group_child(struct pecs_t *t)
{
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		alarm(10);
		for (;;)
			pause();
	}
	if (pid < 0)
		PECS_BROKEN(t, "fork: %s", pecs_errname(errno));
	setpgid(pid, pid); /* whichever of the two runs first makes the group */
	group_live = pid;
	pecs_defer(t, group_child_cleanup, &group_live);
	return pid;
}

static void group_child_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

PECS_CASE("Required.Fasync.Fcntl.SetThenGet", "fasync", "FASYNC-FCNTL-ROUNDTRIP")
{
	int fd = PECS_SAMPLER(t);
	pid_t group = group_child(t);
	struct f_owner_ex tid = {.type = F_OWNER_TID, .pid = gettid()};

	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_ASYNC), 0);
	PECS_CHECK(t, pecs_fcntl(t, fd, F_GETFL, 0) & O_ASYNC, "O_ASYNC set, F_GETFL lacks it");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, 0), 0);
	PECS_CHECK(t, !(pecs_fcntl(t, fd, F_GETFL, 0) & O_ASYNC), "O_ASYNC cleared, F_GETFL has it");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)SIGRTMIN), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETSIG, 0), SIGRTMIN);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, 0), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETSIG, 0), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)getpid()), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN, 0), getpid());
	check_owner(t, fd, F_OWNER_PID, getpid());
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN_EX, (unsigned long)&tid), 0);
	check_owner(t, fd, F_OWNER_TID, gettid());
	/* A negative F_SETOWN names a process group: a child's own (this process may be
	 * in group 0, as under a VM's init). */
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)(long)-group), 0);
	check_owner(t, fd, F_OWNER_PGRP, group);
	group_child_cleanup(&group_live);
	/* f_getown(): a group with no task left in it reads as none. */
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN, 0), 0, "the group's last task exited");
	check_owner(t, fd, F_OWNER_PGRP, 0);
	/* Owner 0 is none; f_setown() keeps its process type. */
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, 0), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN, 0), 0);
	check_owner(t, fd, F_OWNER_PID, 0);
}

PECS_CASE("Required.Fasync.Fcntl.BadArgumentsErrno", "fasync", "FASYNC-FCNTL-ERRNO")
{
	int fd = PECS_SAMPLER(t);
	struct f_owner_ex bad_type = {.type = 3, .pid = getpid()};
	struct f_owner_ex no_pid = {.type = F_OWNER_PID, .pid = INT_MAX};

	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)SIGRTMIN), 0);
	/* valid_signal(): 0.._NSIG (64) only. */
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETSIG, 65), EINVAL, "F_SETSIG 65");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)-1), EINVAL, "F_SETSIG -1");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETSIG, 0), SIGRTMIN, "a refused F_SETSIG kept");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, 64), 0, "F_SETSIG _NSIG");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)INT_MIN), EINVAL,
		       "F_SETOWN INT_MIN");
	/* Past pid_max's ceiling: no such process or group. */
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETOWN, INT_MAX), ESRCH, "F_SETOWN INT_MAX");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)-INT_MAX), ESRCH,
		       "F_SETOWN -INT_MAX");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETOWN_EX, (unsigned long)&bad_type), EINVAL,
		       "F_SETOWN_EX type 3");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETOWN_EX, (unsigned long)&no_pid), ESRCH,
		       "F_SETOWN_EX pid INT_MAX");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETOWN_EX, 0), EFAULT, "F_SETOWN_EX NULL");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_GETOWN_EX, 0), EFAULT, "F_GETOWN_EX NULL");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN, 0), 0, "refused owners were not taken");
}

PECS_CASE("Required.Fasync.Signal.PollInAtEachWakeup", "fasync,sampling,mmap,poll",
	  "FASYNC-SIGNAL-POLL-IN")
{
	struct pecs_ring r;
	int signo = SIGRTMIN, fd, n, samples;

	catch_signal(t, signo);
	fd = async_sampler(t, signo, 1);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), 0, "nothing written yet");
	run_for(t, fd, 40 * MS);
	n = wait_signals(1, 2000);
	PECS_CHECK(t, n >= 1, "40 ms of 1 ms overflows with O_ASYNC: no signal");
	check_each(t, n, signo, POLL_IN, BAND_IN, fd);
	samples = pecs_ring_count(&r, PECS_RECORD_SAMPLE);
	PECS_CHECK(t, samples >= 1 && n <= samples, "%d signals for %d samples", n, samples);
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), POLLIN, "signalled wakeups: readable");
}

/* The fasync wakeup is the overflow's own: a ring that has not reached wakeup_events
 * stays unready for poll, and its owner is signalled at every sample all the same. */
PECS_CASE("Required.Fasync.Signal.EveryOverflowBeforeWakeupEvents", "fasync,sampling,mmap,poll",
	  "FASYNC-SIGNAL-EVERY-OVERFLOW")
{
	struct pecs_ring r;
	int signo = SIGRTMIN, fd, n, samples, rev;

	catch_signal(t, signo);
	fd = async_sampler(t, signo, 100000);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	run_for(t, fd, 40 * MS);
	/* First, as it makes an implementation write what it has taken. */
	rev = pecs_poll(t, fd, POLLIN, 0);
	samples = pecs_ring_count(&r, PECS_RECORD_SAMPLE);
	PECS_CHECK(t, samples >= 4, "40 ms at 1 ms: only %d samples", samples);
	PECS_CHECK_EQ(t, rev, 0, "wakeup_events not reached: not ready");
	n = wait_signals(samples, 2000);
	PECS_CHECK(t, 2 * n >= samples && n <= samples, "%d signals for %d samples", n, samples);
	check_each(t, n, signo, POLL_IN, BAND_IN, fd);
}

PECS_CASE("Required.Fasync.Signal.PollHupWhenRefreshRunsOut", "fasync,sampling,ioctl.refresh",
	  "FASYNC-SIGNAL-POLL-HUP")
{
	int signo = SIGRTMIN, fd, n, hup = 0;

	catch_signal(t, signo);
	fd = async_sampler(t, signo, 1);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, 3), 0);
	pecs_burn_user(30 * MS);
	n = wait_signals(3, 2000);
	PECS_CHECK(t, n >= 1 && n <= 3, "REFRESH 3: %d signals", n);
	for (int i = 0; i < n; i++)
		hup += seen[i].code == POLL_HUP;
	PECS_CHECK(t, hup == 1, "%d POLL_HUP signals, expected one", hup);
	check_each(t, n - 1, signo, POLL_IN, BAND_IN, fd);
	check_range(t, n - 1, n, signo, POLL_HUP, BAND_HUP, fd); /* the last */
	pecs_burn_user(10 * MS);
	PECS_CHECK_EQ(t, wait_signals(n + 1, 50), n, "signals after the event disabled itself");
}

/* The signal O_ASYNC sends at overflows with F_SETSIG setsig (0: none), caught as signo:
 * each with code and band, and si_fd the event's when with_fd. */
static void one_signal_kind(struct pecs_t *t, int signo, int setsig, int code, long band,
			    int with_fd)
{
	int fd, n;

	catch_signal(t, signo);
	fd = async_sampler(t, setsig, 1);
	run_for(t, fd, 40 * MS);
	n = wait_signals(1, 2000);
	PECS_CHECK(t, n >= 1, "no SIG%s", sigabbrev_np(signo));
	check_each(t, n, signo, code, band, with_fd ? fd : 0);
}

/* Without F_SETSIG: SIGIO sent as SEND_SIG_PRIV, si_code SI_KERNEL and no band or fd. */
PECS_CASE("Required.Fasync.Signal.PlainSigioWithoutSetsig", "fasync,sampling",
	  "FASYNC-SIGNAL-SIGIO-PLAIN")
{
	one_signal_kind(t, SIGIO, 0, SI_KERNEL, 0, 0);
}

/* F_SETSIG SIGIO is not the default: the full siginfo, as for any other signal. */
PECS_CASE("Required.Fasync.Signal.SetsigSigioFullInfo", "fasync,sampling",
	  "FASYNC-SIGNAL-SETSIG")
{
	one_signal_kind(t, SIGIO, SIGIO, POLL_IN, BAND_IN, 1);
}

/* A signal with si_codes of its own (SIGSYS's SYS_SECCOMP) gets SI_SIGIO instead of
 * POLL_IN, so the code cannot be misread as the signal's own. */
PECS_CASE("Required.Fasync.Signal.SignalSpecificCodesSiSigio", "fasync,sampling",
	  "FASYNC-SIGNAL-SETSIG")
{
	one_signal_kind(t, SIGSYS, SIGSYS, SI_SIGIO, BAND_IN, 1);
}

/* O_ASYNC without an owner, or an owner without O_ASYNC, signals nobody. */
PECS_CASE("Required.Fasync.Signal.NeedsOwnerAndAsync", "fasync,sampling,mmap,poll",
	  "FASYNC-SIGNAL-NEEDS-BOTH")
{
	struct pecs_ring r;
	int signo = SIGRTMIN;
	int fd = PECS_SAMPLER(t, .period_ns = MS, .sample_type = PECS_SAMPLE_IP,
			      .wakeup_events = 1);

	catch_signal(t, signo);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)signo), 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_ASYNC), 0);
	run_for(t, fd, 40 * MS);
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), POLLIN, "samples were written");
	PECS_CHECK_EQ(t, wait_signals(1, 100), 0, "O_ASYNC without an owner");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, 0), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)getpid()), 0);
	run_for(t, fd, 40 * MS);
	PECS_CHECK_EQ(t, wait_signals(1, 100), 0, "an owner without O_ASYNC");
}

/* F_SETOWN_EX F_OWNER_TID names a second thread; this one samples and leaves the signal
 * unblocked, so a signal sent to the process would be taken here (complete_signal()
 * prefers the thread it was sent to, the group leader, when it can take it). Returns
 * how many came, with the spinner finished. */
static int thread_owner_run(struct pecs_t *t, int signo, pid_t *owner, int *fdp)
{
	struct pecs_spinner sp;
	struct f_owner_ex ex = {.type = F_OWNER_TID};
	int fd = PECS_SAMPLER(t, .period_ns = MS, .sample_type = PECS_SAMPLE_IP);
	int n;

	*fdp = fd;
	catch_signal(t, signo);
	PECS_CHECK_OK(t, pecs_spinner_start(&sp));
	ex.pid = sp.tid;
	*owner = sp.tid;
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN_EX, (unsigned long)&ex), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)signo), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_ASYNC), 0);
	run_for(t, fd, 40 * MS);
	n = wait_signals(1, 2000);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, 0), 0);
	PECS_CHECK_OK(t, pecs_spinner_finish(&sp));
	/* f_getown(): an owner that has exited reads as none. */
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETOWN, 0), 0, "the owner thread exited");
	return n;
}

PECS_CASE("Required.Fasync.Signal.ThreadOwnerTakesIt", "fasync,sampling",
	  "FASYNC-SIGNAL-OWNER-TID")
{
	pid_t owner;
	int fd, n = thread_owner_run(t, SIGRTMIN, &owner, &fd);

	PECS_CHECK(t, n >= 1, "no signal for the owner thread");
	for (int i = 0; i < n; i++)
		PECS_CHECK(t, seen[i].tid == owner, "signal %d of %d taken by thread %d, not the "
			   "owner %d", i + 1, n, seen[i].tid, owner);
}

PECS_CASE("Required.Fasync.Signal.ThreadOwnerSiginfo", "fasync,sampling",
	  "FASYNC-SIGNAL-OWNER-TID")
{
	pid_t owner;
	int fd, n = thread_owner_run(t, SIGRTMIN, &owner, &fd);

	PECS_CHECK(t, n >= 1, "no signal for the owner thread");
	check_each(t, n, SIGRTMIN, POLL_IN, BAND_IN, fd);
}

static char old_name[16];

static void restore_name(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, old_name, 0, 0, 0);
}

/* A side-band record that reaches the ring's wakeup point signals too
 * (perf_output_wakeup() sets pending_kill POLL_IN), since a release after 6.1: a dummy
 * event with attr.comm and a 1-byte watermark, which never overflows, signals at the
 * COMM a new name writes. */
PECS_CASE("Required.Fasync.Signal.SideBandWakeup", "fasync,mmap,poll,tracepoint.syscalls",
	  "FASYNC-SIGNAL-SIDE-BAND")
{
	struct pecs_attr a;
	struct pecs_ring r;
	int signo = SIGRTMIN, fd, n, ret;

	PECS_SAFE_SYS(t, prctl(PR_GET_NAME, old_name, 0, 0, 0));
	pecs_defer(t, restore_name, NULL);
	catch_signal(t, signo);
	pecs_attr_counting(t, &a, PECS_SW_DUMMY);
	a.flags |= PECS_ATTR_COMM | PECS_ATTR_WATERMARK;
	a.wakeup_events = 1; /* wakeup_watermark: one byte */
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)getpid()), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)signo), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_ASYNC), 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK_EQ(t, wait_signals(1, 50), 0, "a signal before any record");
	ret = pecs_task_set_name(t, "pecs-fasync");
	if (ret == -ENOSYS)
		PECS_UNSUPPORTED(t, "the implementation has no task_event entry");
	PECS_CHECK_OK(t, ret);
	/* Before it (6.1.192's ring_buffer.c), a side-band wakeup left pending_kill 0 and
	 * kill_fasync() was never called: the record and readiness, no signal. */
	if (pecs_linux_before(t, 6, 2)) {
		PECS_CHECK_EQ(t, wait_signals(1, 200), 0, "Linux 6.1 signals no side-band wakeup");
		PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), POLLIN, "the wakeup made it readable");
		PECS_ENV_SKIP(t, "side-band wakeups signal since a release after 6.1 (perf_output_wakeup "
			      "sets pending_kill in 6.12, not in 6.1.192)");
	}
	if (pecs_linux_before(t, 6, 12))
		PECS_ENV_SKIP(t, "the release between 6.1 and 6.12 that made side-band wakeups "
			      "signal is not pinned");
	n = wait_signals(1, 2000);
	PECS_CHECK_EQ(t, n, 1, "one COMM record, one wakeup");
	check_each(t, n, signo, POLL_IN, BAND_IN, fd);
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), POLLIN, "the wakeup made it readable");
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_COMM), 1);
}

/* 1 when this process may change an inode owned by root it does not own: euid 0 or
 * CAP_FOWNER (inode_owner_or_capable() on perf's anonymous inode). */
static int owns_or_fowner(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};

	if (geteuid() == 0)
		return 1;
	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return (data[CAP_FOWNER / 32].effective >> (CAP_FOWNER % 32)) & 1;
}

/* setfl()'s own checks, before O_ASYNC is looked at: O_NOATIME is for the inode's owner
 * (root's anonymous inode) or CAP_FOWNER, else EPERM; O_DIRECT needs FMODE_CAN_ODIRECT,
 * which a perf file lacks: EINVAL. A refused F_SETFL changes no flag. */
PECS_CASE("Required.Fasync.Fcntl.SetflRules", "fasync", "FASYNC-FCNTL-SETFL")
{
	int fd = PECS_SAMPLER(t);
	int may = owns_or_fowner();
	int ret = pecs_fcntl(t, fd, F_SETFL, O_NOATIME | O_ASYNC | O_NONBLOCK);

	if (may) {
		PECS_CHECK_EQ(t, ret, 0, "O_NOATIME with euid 0 or CAP_FOWNER");
		PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETFL, 0),
			      O_RDWR | O_NOATIME | O_ASYNC | O_NONBLOCK);
	} else {
		PECS_CHECK_ERR(t, ret, EPERM, "O_NOATIME without euid 0 or CAP_FOWNER");
		PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETFL, 0), O_RDWR, "a refused F_SETFL");
	}
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_APPEND), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETFL, 0), O_RDWR | O_APPEND, "O_NOATIME dropped");
	PECS_CHECK_ERR(t, pecs_fcntl(t, fd, F_SETFL, O_DIRECT | O_ASYNC), EINVAL, "O_DIRECT");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_GETFL, 0), O_RDWR | O_APPEND, "a refused F_SETFL");
}

/* An inherited copy signals through its parent's fasync (perf_event_fasync()): on a
 * child process, a thread it makes burns 30 ms at 1 ms periods while the child's first
 * thread waits, and this process, the owner, gets the parent event's signal with its fd
 * for those overflows. */
PECS_CASE("Required.Fasync.Signal.InheritedCopySignals", "fasync,sampling,pid.other",
	  "FASYNC-SIGNAL-INHERIT")
{
	struct pecs_kid_opts o = {.burn_ns = 30 * MS};
	struct pecs_kid *k;
	struct pecs_attr a;
	int signo = SIGRTMIN, fd, n, ret;

	catch_signal(t, signo);
	ret = pecs_kid_start(t, &o, &k);
	if (ret)
		PECS_BROKEN(t, "the child could not start: %s", pecs_errname(-ret));
	pecs_attr_sampling(t, &a, PECS_SW_CPU_CLOCK, MS, PECS_SAMPLE_IP);
	a.flags |= PECS_ATTR_INHERIT;
	fd = pecs_open(t, &a, pecs_kid_pid(k), -1, -1, 0);
	PECS_CHECK_OK(t, fd, "an inherit sampler on the child");
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETOWN, (unsigned long)getpid()), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETSIG, (unsigned long)signo), 0);
	PECS_CHECK_EQ(t, pecs_fcntl(t, fd, F_SETFL, O_ASYNC), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0), 0);
	pecs_kid_do(t, k, PECS_KID_THREAD);
	n = wait_signals(5, 2000);
	/* The child's first thread only reads its commands: an overflow of its own at most.
	 * One at least: a sanitizer that runs handlers late (TSan) merges them (1 of 30 seen
	 * on the kernel under TSan). */
	PECS_CHECK(t, n >= 1, "%d signals for the inherited copy's 30 ms at 1 ms", n);
	check_each(t, n, signo, POLL_IN, BAND_IN, fd);
}
