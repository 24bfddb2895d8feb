/* The live sampler's unwinder: the interrupted user context of a signal, as a list of
 * user-space instruction addresses, innermost first.
 *
 * Linux's user callchains hold user addresses only: its frame walk stops at the first
 * frame outside user memory, and the values at the top of the address space are
 * reserved for the PERF_CONTEXT_* markers (PERF_CONTEXT_MAX is -4095). libunwind, given
 * a corrupt or foreign stack (a frame without unwind info, a stack a sanitizer runtime
 * has moved on from), can step to any value at all, 0xffffffffffffffff included. So
 * the chain ends at the first address that is not a canonical user address.
 *
 * Private to ref/profiler.
 */
#ifndef REF_PROFILER_UNWIND_H
#define REF_PROFILER_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

/* Does ip lie in the user half of the x86-64 address space (nonzero, below the end of
 * user memory for the CPU's virtual address width: 2^47, or 2^56 with 5-level
 * paging)? Anything else is non-canonical, a kernel address or a marker. */
bool ref_unwind_user_ip(uint64_t ip);

/* The first libunwind use outside any handler: its one-time setup allocates. Also sets
 * per-thread caching, which the handler needs. Idempotent and thread-safe. */
void ref_unwind_warm_up(void);

/* The most frames either unwinder writes (kernel.perf_event_max_stack's ceiling). */
#define REF_UNWIND_MAX_FRAMES 255u

/* Unwinds uc (a signal's ucontext) into ips, at most max (>= 1) frames. Stops at the
 * first address ref_unwind_user_ip() refuses. When libunwind gives nothing, the
 * context's own IP alone, if it is a user address. Returns the frames written (0 only
 * when the context's IP is not a user address). Async-signal-safe after warm-up.
 * Called from the handler of the signal whose frame uc is, it takes libunwind's fast
 * trace; otherwise, or when the trace does not pass through uc, it falls back to
 * ref_unwind_context(). */
unsigned ref_unwind_signal_frame(ucontext_t *uc, uint64_t *ips, unsigned max);

/* The same with a libunwind cursor started from uc, wherever uc came from. */
unsigned ref_unwind_context(ucontext_t *uc, uint64_t *ips, unsigned max);

#endif /* REF_PROFILER_UNWIND_H */
