/* The tracer's waits for its tasks' ptrace stops (event_trace.c consumes them). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "ref/event/event_trace.h"

/* A stop of the task whose notification someone else's wait took: Linux reports a
 * ptrace stop to every thread of the tracer's process (kernel/exit.c
 * wait_consider_task()), so a program's own waitpid() on its child may take it, and the
 * task would stay stopped for good. PTRACE_GETSIGINFO succeeds on a task in a ptrace
 * stop only; the status is rebuilt from the siginfo ptrace_do_notify() left, whose
 * si_code is the status's event and signal for an event stop. 1 with *status, else 0. */
static int stolen_stop(pid_t tid, int *status)
{
	siginfo_t si;
	int event_stop;

	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si))
		return 0;
	event_stop = si.si_code > 0 && (si.si_code & 0x7f) == si.si_signo && (si.si_code >> 8);
	*status = (event_stop ? si.si_code : si.si_signo) << 8 | 0x7f;
	return 1;
}

/* The task's pending stop, not consumed: 1 with *si, 0 when none, -1 on an error. */
static int peek(const struct ref_trace_task *k, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	if (waitid(P_PID, (id_t)k->tid, si, WEXITED | WSTOPPED | __WALL | WNOWAIT | WNOHANG))
		return -1;
	return si->si_pid != 0;
}

/* The next stop, consumed, without ever reaping the task (its parent does):
 * 1 with *status, 0 when none is pending (block 0), -1 when the task is gone. A blocking
 * wait looks every few tens of microseconds, not in waitid(), and each look also asks
 * whether the task sits in a stop whose notification another wait took
 * (stolen_stop()): its notification is set before the stop can be seen, so a look
 * that then finds none finds none later either. */
int ref_trace_next_stop(const struct ref_trace_task *k, int block, int *status)
{
	struct timespec pause = { 0, 10000 };
	siginfo_t si;
	int r;

	for (;;) {
		r = peek(k, &si);
		if (r < 0)
			return errno == EINTR ? 0 : -1;
		if (r > 0)
			break;
		if (stolen_stop(k->tid, status)) {
			r = peek(k, &si);
			if (r < 0)
				return errno == EINTR ? 0 : -1;
			if (r > 0)
				break;
			return 1;
		}
		if (!block)
			return 0;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 1000000)
			pause.tv_nsec *= 2;
	}
	if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
		return -1;
	return waitpid(k->tid, status, __WALL | WNOHANG) == k->tid ? 1 : 0;
}
