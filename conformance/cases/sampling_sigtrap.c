#define _GNU_SOURCE
/* attr.sigtrap: each overflow of a sampling event sends SIGTRAP to the thread whose event
 * overflowed, synchronously (perf_pending_task -> perf_sigtrap -> send_sig_perf in
 * kernel/events/core.c), with si_code TRAP_PERF, si_perf_data the attr's sig_data and
 * si_perf_type its type. sigtrap needs remove_on_exec (OPEN-SIGTRAP-EINVAL). No ring is
 * needed: the signal comes from the overflow, not from the output. */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pecs/case.h"
#include "pecs/toolkit/signal.h"
#include "pecs/toolkit/wait.h"

#define TRAP_PERF_CODE 6 /* TRAP_PERF, <asm-generic/siginfo.h> */
#define SIG_DATA 0x5eedfacecafeull
/* siginfo's _sigfault: si_addr at 16, then the _perf member: data (unsigned long) at
 * 24, type (u32) at 32. The C library's siginfo_t does not name them. */
#define PERF_DATA_OFF 24
#define PERF_TYPE_OFF 32

static volatile sig_atomic_t traps, bad_code, bad_data, bad_type, bad_tid;
static pid_t sampled_tid;

static void on_trap(int signo, siginfo_t *si, void *uc)
{
	uint64_t data;
	uint32_t type;

	(void)signo;
	(void)uc;
	memcpy(&data, (const char *)si + PERF_DATA_OFF, sizeof(data));
	memcpy(&type, (const char *)si + PERF_TYPE_OFF, sizeof(type));
	traps++;
	bad_code += si->si_code != TRAP_PERF_CODE;
	bad_data += data != SIG_DATA;
	bad_type += type != PECS_TYPE_SOFTWARE;
	bad_tid += gettid() != sampled_tid;
}

PECS_CASE("Required.Sampling.Sigtrap.EachOverflowTrapsTheThread", "sampling",
	  "SAMPLE-SIGTRAP")
{
	struct pecs_attr a;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	a.flags |= PECS_ATTR_SIGTRAP | PECS_ATTR_REMOVE_ON_EXEC;
	a.sig_data = SIG_DATA;
	pecs_catch_signal(t, SIGTRAP, on_trap);
	traps = bad_code = bad_data = bad_type = bad_tid = 0;
	sampled_tid = gettid();
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(30000000ull);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	/* 30 overflows; SIGTRAP does not queue, so two close together may be one. */
	PECS_CHECK(t, traps >= 5, "%d SIGTRAPs over 30 ms of CPU at a 1 ms period", traps);
	PECS_CHECK(t, !bad_code && !bad_data && !bad_type && !bad_tid,
		   "of %d SIGTRAPs: %d without si_code TRAP_PERF, %d without si_perf_data "
		   "0x%llx, %d without si_perf_type %d, %d on another thread", traps, bad_code,
		   bad_data, (unsigned long long)SIG_DATA, bad_type, PECS_TYPE_SOFTWARE, bad_tid);
}
