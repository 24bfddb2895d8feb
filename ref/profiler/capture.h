/* What the live sampler copies of the interrupted thread besides its backtrace: the
 * user registers and the user stack above their SP, for REGS_USER, REGS_INTR and
 * STACK_USER. Async-signal-safe. Private to ref/profiler.
 */
#ifndef REF_PROFILER_CAPTURE_H
#define REF_PROFILER_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

/* x86-64's registers in perf's numbering (enum perf_event_x86_regs, PERF_REG_X86_64_MAX). */
#define REF_CAPTURE_NR_REGS 24u
#define REF_CAPTURE_REG_SP 7u

/* Fills regs[REF_CAPTURE_NR_REGS] from a signal's ucontext, as perf_reg_value() reads
 * them from the interrupted pt_regs; returns the abi (PECS_SAMPLE_REGS_ABI_64), or
 * PECS_SAMPLE_REGS_ABI_NONE where this build cannot read them. */
uint32_t ref_capture_regs(const ucontext_t *uc, uint64_t *regs);

/* Copies up to n bytes of this process's memory from sp upwards into buf, stopping at
 * the first byte that cannot be read, as the kernel's copy from the user stack stops
 * at a fault; returns the bytes copied. */
size_t ref_capture_stack(uint64_t sp, void *buf, size_t n);

#endif /* REF_PROFILER_CAPTURE_H */
