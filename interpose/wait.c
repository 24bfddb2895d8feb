/* The waits that reap a child: before the reap, every open event is read once.
 *
 * A process's counters in /proc and its CPU clock go with it when its parent reaps it,
 * and a launcher such as perf stat reads its events only after wait4() returned. An
 * implementation that counts another process from outside (ref does, from /proc and the
 * task's clock) must see the task's last values while it is a zombie: the kernel keeps
 * the counts in the event itself. So a blocking wait first waits with WNOWAIT, which
 * leaves the child waitable, reads each event through the implementation (the kernel's
 * answers do not move by it), then does the caller's wait, which finds the same child.
 * Measured on this kernel: a zombie's CPU clock, schedstat, fault and switch counts
 * equal the rusage its reaper gets, to the nanosecond and the fault.
 *
 * Waits with WNOHANG pass straight through: they are what a SIGCHLD handler does, and
 * a handler must not run into the implementation's locks. So do all waits while no
 * event is open. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "interpose/interpose.h"

/* Room for a group read of 500 members; a larger group's read fails with ENOSPC before
 * the implementation reads anything, and its counts then stop at the last read. */
#define READ_ROOM 8192

static void read_one(int impl_fd, void *arg)
{
	const struct pecs_impl *impl = arg;
	char buf[READ_ROOM];
	void *ctx;
	int err;

	ip_impl(&ctx, &err);
	impl->read(ctx, impl_fd, buf, sizeof(buf));
}

/* How long a ptrace stop the caller did not ask for may stay before it is taken for
 * the caller's own: an implementation's tracer takes its stops within a millisecond. */
#define FOREIGN_STOP_NS 500000000ll

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* The wait with WNOWAIT, past the ptrace stops of the implementation's tracer (ref's
 * follows a task it counts to see its exec): any thread's wait reports the stops of a
 * task another thread of its process traces, even a wait for exits only (do_wait()
 * scans each thread's ptraced list), and a caller that reaps its child with wait4(pid,
 * &st, 0), as perf stat does, would take the stop for the child's end and consume it.
 * A caller that asks for stops (WSTOPPED, __WALL, __WCLONE: a tracer's waits) sees them
 * at once; for the others a stop is waited past, unless it outlasts FOREIGN_STOP_NS. */
static int wait_past_stops(idtype_t type, id_t id, siginfo_t *si, int options)
{
	long long start = 0;
	const struct timespec pause = {0, 20000};

	for (;;) {
		memset(si, 0, sizeof(*si));
		if (ip_real()->waitid(type, id, si, options | WNOWAIT) < 0)
			return -1;
		if (si->si_pid == 0 || si->si_code != CLD_TRAPPED ||
		    (options & (WSTOPPED | __WALL | __WCLONE)))
			return 0;
		if (!start)
			start = mono_ns();
		else if (mono_ns() - start > FOREIGN_STOP_NS)
			return 0;
		nanosleep(&pause, NULL);
	}
}

/* 0 to go on with the caller's wait, or -1 with errno when the wait itself failed in
 * the way the caller's would (EINTR, ECHILD). */
static int settle(idtype_t type, id_t id, int options)
{
	void *ctx;
	int err;
	siginfo_t si;

	if (ip_table_count() == 0 || (options & (WNOHANG | WNOWAIT)))
		return 0;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	if (!impl)
		return 0;
	if (wait_past_stops(type, id, &si, options) < 0)
		return -1;
	if (si.si_pid != 0)
		ip_table_each(read_one, (void *)impl);
	return 0;
}

/* wait4's pid and options as waitid takes them. */
static int settle_pid(pid_t pid, int options)
{
	idtype_t type = pid > 0 ? P_PID : pid == -1 ? P_ALL : P_PGID;
	id_t id = pid > 0 ? (id_t)pid : pid < -1 ? (id_t)-pid : 0;
	int opt = WEXITED | (options & (WCONTINUED | __WALL | __WCLONE | __WNOTHREAD | WNOHANG));

	if (options & WUNTRACED)
		opt |= WSTOPPED;
	return settle(type, id, opt);
}

pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	if (settle_pid(pid, options) < 0)
		return -1;
	return ip_real()->wait4(pid, status, options, ru);
}

pid_t waitpid(pid_t pid, int *status, int options)
{
	if (settle_pid(pid, options) < 0)
		return -1;
	return ip_real()->waitpid(pid, status, options);
}

pid_t wait(int *status)
{
	if (settle_pid(-1, 0) < 0)
		return -1;
	return ip_real()->wait(status);
}

int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
	if (settle(type, id, options) < 0)
		return -1;
	return ip_real()->waitid(type, id, info, options);
}
