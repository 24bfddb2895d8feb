#define _GNU_SOURCE
#include "sampler_signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/profiler/sampler.h"

/* siginfo's _sigfault member: si_addr at 16, then _perf's data (unsigned long) at 24 and
 * type (u32) at 32, which the C library's siginfo_t does not name. */
#define SI_PERF_DATA_OFF 24
#define SI_PERF_TYPE_OFF 32
#define TRAP_PERF_CODE 6

/* Per signal: the running samplers that use it, and whether its handler is ours. Start
 * and stop take and release under the lock (never a handler). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int users[NSIG];

/* The kernel's struct sigaction (rt_sigaction(2)): the C library's sigaction() adds its
 * own restorer and SA_RESTORER on the way in, so only this puts an action back as the
 * program last set it (flags 0 for one never set). */
struct kernel_action {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
static struct kernel_action saved[NSIG];

static int kernel_action(int signo, const struct kernel_action *act, struct kernel_action *old)
{
	return (int)syscall(SYS_rt_sigaction, signo, act, old, sizeof(act->mask));
}

static bool action_is_default(int signo)
{
	struct sigaction old;

	return sigaction(signo, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
	       old.sa_handler == SIG_DFL;
}

/* A signal the program does not use: the highest real-time one whose action is the
 * default, or one a running sampler already holds. SIGPROF would take over the
 * program's own ITIMER_PROF handler; a real-time signal with the default action is one
 * nobody here listens for (the default would end the process). */
int ref_sampler_default_signo(void)
{
	int signo;

	pthread_mutex_lock(&lock);
	for (signo = SIGRTMAX; signo > SIGRTMIN; signo--)
		if (users[signo] || action_is_default(signo))
			break;
	pthread_mutex_unlock(&lock);
	return signo;
}

int ref_sampler_signal_take(int signo, void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa;
	int ret = 0;

	if (signo < 1 || signo >= NSIG)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	if (users[signo] == 0) {
		/* The program's own handler is never replaced: it may have taken the
		 * signal since the sampler was made. */
		if (!action_is_default(signo) || kernel_action(signo, NULL, &saved[signo])) {
			ret = -EBUSY;
			goto out;
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		/* Samplers on one thread may use different signals; one handler must not
		 * run inside another, which would make two producers of one buffer. */
		sigfillset(&sa.sa_mask);
		if (sigaction(signo, &sa, NULL) < 0) {
			ret = -errno;
			goto out;
		}
	}
	users[signo]++;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

void ref_sampler_signal_release(int signo)
{
	struct kernel_action ign = { SIG_IGN, 0, NULL, 0 };

	if (signo < 1 || signo >= NSIG)
		return;
	pthread_mutex_lock(&lock);
	if (users[signo] > 0 && --users[signo] == 0) {
		/* The timers are gone, but a signal they queued may still be pending on the
		 * target: ignoring the signal discards it (POSIX), where the default action
		 * it would meet next would end the process. Then the action it had. */
		kernel_action(signo, &ign, NULL);
		kernel_action(signo, &saved[signo], NULL);
	}
	pthread_mutex_unlock(&lock);
}

/* Queued to the thread from its own handler, so it is taken as the handler returns,
 * before the thread runs on: synchronous, as the kernel's task work is. The kernel takes
 * si_code TRAP_PERF (>= 0) from a sender only for its own process. */
void ref_sampler_send_sigtrap(pid_t pid, pid_t tid, uint64_t data, uint32_t type)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGTRAP;
	si.si_code = TRAP_PERF_CODE;
	memcpy((char *)&si + SI_PERF_DATA_OFF, &data, sizeof(data));
	memcpy((char *)&si + SI_PERF_TYPE_OFF, &type, sizeof(type));
	syscall(SYS_rt_tgsigqueueinfo, pid, tid, SIGTRAP, &si);
}
