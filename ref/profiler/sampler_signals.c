#define _GNU_SOURCE
#include "sampler_signals.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/profiler/sampler.h"

/* siginfo's _sigfault member: si_addr at 16, then _perf's data (unsigned long) at 24 and
 * type (u32) at 32, which the C library's siginfo_t does not name. */
#define SI_PERF_DATA_OFF 24
#define SI_PERF_TYPE_OFF 32
#define TRAP_PERF_CODE 6

/* A signal the program does not use: the highest real-time one whose action is still
 * the default when first asked. SIGPROF would take over the program's own ITIMER_PROF
 * handler; a real-time signal with the default action is one nobody here listens for
 * (the default would end the process). Chosen once: samplers share it. */
int ref_sampler_default_signo(void)
{
	static atomic_int chosen;
	int signo = atomic_load_explicit(&chosen, memory_order_acquire);
	int expected = 0;
	struct sigaction old;

	if (signo)
		return signo;
	for (signo = SIGRTMAX; signo > SIGRTMIN; signo--)
		if (sigaction(signo, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			break;
	/* Two first callers pick the same one unless a handler came between. */
	atomic_compare_exchange_strong_explicit(&chosen, &expected, signo, memory_order_acq_rel,
						memory_order_acquire);
	return atomic_load_explicit(&chosen, memory_order_acquire);
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
