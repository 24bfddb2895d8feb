/* The live sampler's register and stack capture (capture.h), after
 * arch/x86/kernel/perf_regs.c perf_reg_value() and kernel/events/core.c
 * perf_output_sample_ustack(). */
#define _GNU_SOURCE
#include "capture.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pecs/sample.h"

#if defined(__x86_64__)
/* uc_flags: the kernel stored SS in the sigcontext (Linux 4.6 and later). */
#define UC_SIGCONTEXT_SS 0x2
/* A 64-bit user task's stack segment, __USER_DS, when the context does not say. */
#define USER_DS 0x2b

uint32_t ref_capture_regs(const ucontext_t *uc, uint64_t *regs)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	uint64_t segs = (uint64_t)g[REG_CSGSFS]; /* cs, gs, fs, ss: 16 bits each */
	static const int from[REF_CAPTURE_NR_REGS] = {
		REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
		REG_RIP, REG_EFL, -1, -1, -1, -1, -1, -1,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
	};

	for (unsigned i = 0; i < REF_CAPTURE_NR_REGS; i++)
		regs[i] = from[i] < 0 ? 0 : (uint64_t)g[from[i]];
	regs[10] = segs & 0xffff; /* CS */
	regs[11] = uc->uc_flags & UC_SIGCONTEXT_SS ? segs >> 48 : USER_DS; /* SS */
	/* DS, ES, FS, GS (12-15): perf_reg_validate() refuses them for a 64-bit task. */
	return PECS_SAMPLE_REGS_ABI_64;
}
#else
uint32_t ref_capture_regs(const ucontext_t *uc, uint64_t *regs)
{
	(void)uc;
	memset(regs, 0, REF_CAPTURE_NR_REGS * sizeof(*regs));
	return PECS_SAMPLE_REGS_ABI_NONE;
}
#endif

/* process_vm_readv() on this process reads like the kernel's own copy: it stops at the
 * first page it cannot read and returns what it got, where a plain load would fault. */
size_t ref_capture_stack(uint64_t sp, void *buf, size_t n)
{
	struct iovec local = { buf, n };
	struct iovec remote = { (void *)(uintptr_t)sp, n };
	long got;

	if (!n)
		return 0;
	got = syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL);
	return got > 0 ? (size_t)got : 0;
}
