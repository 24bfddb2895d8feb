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
 * Waits with WNOHANG only look (what a SIGCHLD handler does, and a handler must not run
 * into the implementation's locks); all waits pass straight through while no event is
 * open. A wait never takes a ptrace stop that another thread of this process traces
 * the child for (foreign_trap()). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/* The tracer of pid (TracerPid in its /proc status): 0 when untraced or unknown. */
static pid_t tracer_of(pid_t pid)
{
	static const char key[] = "\nTracerPid:";
	char path[64], buf[2048];
	const char *at;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	at = strstr(buf, key);
	return at ? (pid_t)strtol(at + sizeof(key) - 1, NULL, 10) : 0;
}

/* A ptrace stop the caller does not trace the child for: another thread of this process
 * does, as the implementation's tracer does (ref samples another process with ptrace
 * from a thread of its own). Linux reports it to every thread's wait in the tracer's
 * process, even with no WUNTRACED (kernel/exit.c wait_consider_task(): "traced by its
 * real parent's group"), and a wait that takes it leaves the tracee stopped with no
 * tracer to resume it. A tracer that detached between the look and the read of its id
 * (TracerPid 0) counts too: the look is made again. The tracer's own waits pass. */
static bool foreign_trap(const siginfo_t *si)
{
	return si->si_code == CLD_TRAPPED && tracer_of(si->si_pid) != (pid_t)syscall(SYS_gettid);
}

enum settled { GO_ON, FAILED, NOTHING };

/* Before the caller's wait: GO_ON, with *only the child whose change it will find;
 * FAILED with errno when the wait itself failed in the way the caller's would (EINTR,
 * ECHILD); NOTHING for a WNOHANG wait that would find only a foreign trap. A blocking
 * wait reads every event first. */
static enum settled settle(idtype_t type, id_t id, int options, pid_t *only)
{
	void *ctx;
	int err;
	siginfo_t si;

	*only = 0;
	if (ip_table_count() == 0 || (options & WNOWAIT))
		return GO_ON;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (ip_real()->waitid(type, id, &si, options | WNOWAIT) < 0)
			return FAILED;
		if (si.si_pid == 0)
			return GO_ON; /* WNOHANG, and no child changed */
		if (!foreign_trap(&si))
			break;
		if (options & WNOHANG)
			return NOTHING;
		/* Its tracer resumes it within microseconds. */
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	*only = si.si_pid;
	/* Only an end takes the counts with it; and a handler's wait must not run into the
	 * engine's locks. */
	if ((options & WNOHANG) || si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED ||
	    si.si_code == CLD_CONTINUED)
		return GO_ON;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	if (impl)
		ip_table_each(read_one, (void *)impl);
	return GO_ON;
}

/* wait4's pid and options as waitid takes them. */
static enum settled settle_pid(pid_t pid, int options, pid_t *only)
{
	idtype_t type = pid > 0 ? P_PID : pid == -1 ? P_ALL : P_PGID;
	id_t id = pid > 0 ? (id_t)pid : pid < -1 ? (id_t)-pid : 0;
	int opt = WEXITED | (options & (WCONTINUED | __WALL | __WCLONE | __WNOTHREAD | WNOHANG));

	if (options & WUNTRACED)
		opt |= WSTOPPED;
	return settle(type, id, opt, only);
}

/* The caller's wait then takes the change settle() saw, not one that came since. */
pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	pid_t only;

	switch (settle_pid(pid, options, &only)) {
	case FAILED:
		return -1;
	case NOTHING:
		return 0;
	default:
		return ip_real()->wait4(only ? only : pid, status, options, ru);
	}
}

pid_t waitpid(pid_t pid, int *status, int options)
{
	return wait4(pid, status, options, NULL);
}

pid_t wait(int *status)
{
	return wait4(-1, status, 0, NULL);
}

int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
	pid_t only;

	switch (settle(type, id, options, &only)) {
	case FAILED:
		return -1;
	case NOTHING:
		memset(info, 0, sizeof(*info));
		return 0;
	default:
		return only ? ip_real()->waitid(P_PID, (id_t)only, info, options)
			    : ip_real()->waitid(type, id, info, options);
	}
}
