#define _GNU_SOURCE
#include "unwind.h"

#include <cpuid.h>
#include <stdatomic.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

/* CPUID.(EAX=7,ECX=0):ECX bit 16: the CPU can run 5-level page tables (LA57). */
#define CPUID_LEAF7_ECX_LA57 (1u << 16)

/* Not under ThreadSanitizer: it runs a handler later, from its own frames, so the trace
 * never passes through the signal's context, and the fast trace's per-thread cache is
 * freed by a key destructor that takes a lock after TSan has torn the exiting thread
 * down (a crash at the exit of every sampled thread). */
#if defined(__SANITIZE_THREAD__)
#define FAST_TRACE 0
#else
#define FAST_TRACE 1
#endif

static _Atomic uint64_t user_end; /* 0 until first asked */

static uint64_t user_va_end(void)
{
	uint64_t end = atomic_load_explicit(&user_end, memory_order_relaxed);
	unsigned a, b, c, d;

	if (end)
		return end;
	/* A 5-level kernel hands out addresses above 2^47 only to a mapping that asks
	 * for them, but when the CPU could, such an address is still a user one. */
	end = 1ull << 47;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & CPUID_LEAF7_ECX_LA57))
		end = 1ull << 56;
	atomic_store_explicit(&user_end, end, memory_order_relaxed);
	return end;
}

bool ref_unwind_user_ip(uint64_t ip)
{
	return ip != 0 && ip < user_va_end();
}

void ref_unwind_warm_up(void)
{
	static atomic_int done;
	unw_context_t uc;
	unw_cursor_t c;
	void *trace[4];

	(void)user_va_end();
	/* The fast trace creates its key once and each thread's cache on its first use:
	 * outside a handler for this thread at least. */
	if (FAST_TRACE)
		unw_backtrace(trace, 4);
	if (atomic_exchange_explicit(&done, 1, memory_order_acq_rel))
		return;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
		while (unw_step(&c) > 0)
			;
}

/* A signal handler's frames above the interrupted one: ours, the sanitizers', the
 * signal trampoline. */
#define HANDLER_FRAMES_MAX 32u

/* Where uc is the signal frame the kernel pushed on this very stack, libunwind's fast
 * trace (unw_backtrace) walks from here through the handler and the trampoline into the
 * interrupted code, with a per-thread cache of frame shapes and no system call on a
 * hit. A cursor's unw_step takes the shared cache's lock, two sigprocmask calls per
 * frame: 8.5 us for 15 frames here, against 0.12 us. The chain starts at uc's IP; 0
 * when it is not on the trace (a context built elsewhere, or a handler run later from
 * a sanitizer's own frames). */
static unsigned from_own_stack(uint64_t rip, uint64_t *ips, unsigned max)
{
	void *trace[REF_UNWIND_MAX_FRAMES + HANDLER_FRAMES_MAX];
	int got = unw_backtrace(trace, (int)(max + HANDLER_FRAMES_MAX));
	unsigned n = 0;
	int i = 0;

	while (i < got && (uint64_t)(uintptr_t)trace[i] != rip)
		i++;
	for (; i < got && n < max; i++) {
		uint64_t ip = (uint64_t)(uintptr_t)trace[i];

		if (!ref_unwind_user_ip(ip))
			break;
		ips[n++] = ip;
	}
	return n;
}

unsigned ref_unwind_context(ucontext_t *uc, uint64_t *ips, unsigned max)
{
	unw_cursor_t c;
	unsigned n = 0;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];

	/* On x86-64 libunwind's context is the ucontext: start from the interrupted frame,
	 * flagged as a signal frame so its IP is taken as is (not as a return address). */
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
		do {
			unw_word_t ip;

			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ref_unwind_user_ip(ip))
				break;
			ips[n++] = ip;
		} while (n < max && unw_step(&c) > 0);
	}
	if (n == 0 && ref_unwind_user_ip(rip))
		ips[n++] = rip;
	return n;
}

unsigned ref_unwind_signal_frame(ucontext_t *uc, uint64_t *ips, unsigned max)
{
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	unsigned n = 0;

	if (max > REF_UNWIND_MAX_FRAMES)
		max = REF_UNWIND_MAX_FRAMES;
	if (FAST_TRACE && ref_unwind_user_ip(rip))
		n = from_own_stack(rip, ips, max);
	return n ? n : ref_unwind_context(uc, ips, max);
}
