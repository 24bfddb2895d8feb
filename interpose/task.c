/* The system calls and names the implementation is told of: an implementation in this
 * process does not see the program's system calls as the kernel does, so the entries
 * behind its syscalls:* tracepoints report them (pecs_impl.task_event). Only the calls
 * that perf's own tests make are reported (getsid, getppid, getpgid, prctl, by their
 * wrappers or through syscall()); others would need their wrappers interposed too.
 *
 * Nothing is reported while no event is open, nor from inside a report: the
 * implementation itself makes system calls (ref reads tracefs and /proc) and must not be
 * told of its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/interpose.h"

static __thread int reporting;

int ip_task_reported(long nr)
{
	return nr == SYS_getsid || nr == SYS_getppid || nr == SYS_getpgid || nr == SYS_prctl;
}

static void report(struct ip_task_call *c, struct pecs_task_event *te)
{
	reporting = 1;
	te->size = sizeof(*te);
	te->nr = (int32_t)c->nr;
	te->ip = c->ip;
	c->impl->task_event(c->ctx, te);
	reporting = 0;
}

void ip_task_enter(struct ip_task_call *c, long nr, const unsigned long args[6], void *ip)
{
	int err;

	c->impl = NULL;
	if (reporting || ip_table_count() == 0)
		return;
	c->impl = ip_impl(&c->ctx, &err);
	if (!c->impl || !PECS_IMPL_HAS(c->impl, task_event)) {
		c->impl = NULL;
		return;
	}
	c->nr = nr;
	c->ip = (uint64_t)(uintptr_t)ip;
	struct pecs_task_event te = {.what = PECS_TASK_SYSCALL_ENTER};

	for (int i = 0; i < 6; i++)
		te.args[i] = args[i];
	report(c, &te);
}

void ip_task_comm(struct ip_task_call *c, const char *comm)
{
	struct pecs_task_event te = {.what = PECS_TASK_COMM, .comm = comm};

	if (c->impl)
		report(c, &te);
}

int ip_task_perf_events(struct ip_task_call *c, int on)
{
	struct pecs_task_event te = {
		.what = on ? PECS_TASK_PERF_EVENTS_ENABLE : PECS_TASK_PERF_EVENTS_DISABLE,
	};

	if (!c->impl)
		return 0;
	report(c, &te);
	return 1;
}

/* r is what the C library returned: -1 and errno on failure, which the record carries
 * as the kernel's -errno. */
long ip_task_exit(struct ip_task_call *c, long r)
{
	int e = errno;
	struct pecs_task_event te = {.what = PECS_TASK_SYSCALL_EXIT, .ret = r < 0 ? -e : r};

	if (c->impl)
		report(c, &te);
	errno = e;
	return r;
}

pid_t getsid(pid_t pid)
{
	struct ip_task_call c;

	ip_task_enter(&c, SYS_getsid, (unsigned long[6]){(unsigned long)pid},
		      __builtin_return_address(0));
	return (pid_t)ip_task_exit(&c, ip_real()->getsid(pid));
}

pid_t getppid(void)
{
	struct ip_task_call c;

	ip_task_enter(&c, SYS_getppid, (unsigned long[6]){0}, __builtin_return_address(0));
	return (pid_t)ip_task_exit(&c, ip_real()->getppid());
}

pid_t getpgid(pid_t pid)
{
	struct ip_task_call c;

	ip_task_enter(&c, SYS_getpgid, (unsigned long[6]){(unsigned long)pid},
		      __builtin_return_address(0));
	return (pid_t)ip_task_exit(&c, ip_real()->getpgid(pid));
}
