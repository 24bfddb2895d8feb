/* The unwinder ends a callchain at the first address that is not a user one, and its
 * fast trace agrees with a cursor walk. A stack is forged so that libunwind steps from
 * a real function into a chosen return address: 0xffffffffffffffff (what a corrupt
 * stack gave here), a non-canonical address, a kernel one, and 0. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ucontext.h>

#include <cmocka.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "unwind.h"

/* A leaf whose unwind entry says, at its first instruction, that the return address is
 * at the stack pointer: the state right after a call. */
__attribute__((noinline)) int pecs_unwind_test_leaf(int x)
{
	return x * 3 + 1;
}

/* 16-byte aligned, as the stack is at a call; [0] is the return address. */
static uint64_t fake_stack[64] __attribute__((aligned(16)));

/* A context stopped at the leaf's first instruction, about to return to ra. */
static void forge(ucontext_t *uc, uint64_t ra)
{
	assert_int_equal(getcontext(uc), 0);
	memset(fake_stack, 0, sizeof(fake_stack));
	fake_stack[0] = ra;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)pecs_unwind_test_leaf;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&fake_stack[0];
	uc->uc_mcontext.gregs[REG_RBP] = 0;
}

static void test_user_ip(void **state)
{
	(void)state;
	assert_true(ref_unwind_user_ip((uint64_t)(uintptr_t)pecs_unwind_test_leaf));
	assert_true(ref_unwind_user_ip(0x1000));
	assert_true(ref_unwind_user_ip(0x00007fffffffefffull));
	assert_false(ref_unwind_user_ip(0));
	assert_false(ref_unwind_user_ip(0xffffffffffffffffull));
	assert_false(ref_unwind_user_ip(0xfffffffffffffe00ull)); /* PERF_CONTEXT_USER */
	assert_false(ref_unwind_user_ip(0xffffffff81000000ull)); /* kernel text */
	assert_false(ref_unwind_user_ip(0x8000000000000000ull)); /* non-canonical */
	assert_false(ref_unwind_user_ip(0xdead000000000000ull)); /* non-canonical */
}

/* The chain from the leaf: its own IP, then whatever the forged return address is,
 * kept only when it is a user address. */
static unsigned chain_to(uint64_t ra, uint64_t *ips)
{
	ucontext_t uc;

	forge(&uc, ra);
	return ref_unwind_signal_frame(&uc, ips, 16);
}

static void test_chain_stops_at_bad_addresses(void **state)
{
	static const uint64_t bad[] = {
		0xffffffffffffffffull, 0x8000000000000000ull, 0x0000800000000000ull,
		0xffff800000000000ull, 0xffffffff81000000ull, 0,
	};
	uint64_t ips[16];
	unsigned n;

	(void)state;
	ref_unwind_warm_up();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(ips, 0xa5, sizeof(ips));
		n = chain_to(bad[i], ips);
		if (n != 1)
			fail_msg("return address %#llx: %u frames, [1] = %#llx",
				 (unsigned long long)bad[i], n, (unsigned long long)ips[1]);
		assert_int_equal(ips[0], (uint64_t)(uintptr_t)pecs_unwind_test_leaf);
	}
}

/* The forged stack does unwind: a user return address is followed, so the cases above
 * stop because of the address, not because the forgery failed. */
static void test_chain_follows_user_addresses(void **state)
{
	uint64_t ips[16], ra = (uint64_t)(uintptr_t)test_user_ip + 4;
	unsigned n;

	(void)state;
	ref_unwind_warm_up();
	n = chain_to(ra, ips);
	assert_true(n >= 2);
	assert_int_equal(ips[0], (uint64_t)(uintptr_t)pecs_unwind_test_leaf);
	assert_int_equal(ips[1], ra);
	for (unsigned i = 0; i < n; i++)
		assert_true(ref_unwind_user_ip(ips[i]));
}

/* A context whose own IP is not a user address gives an empty chain, not that IP. */
static void test_bad_context_ip(void **state)
{
	ucontext_t uc;
	uint64_t ips[4];

	(void)state;
	forge(&uc, 0);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)0xffffffffffffffffull;
	assert_int_equal(ref_unwind_signal_frame(&uc, ips, 4), 0);
}

/* In a signal's own handler the fast trace and a cursor from the signal's context give
 * the same chain: the trace is spliced at the interrupted IP, neither the handler's
 * frames nor a frame of the interrupted code lost. Signals come from raise() (at a
 * system call's exit) and from a timer that lands anywhere in a loop 5 calls deep. */
#define CHAINS 64

struct chain_pair {
	uint64_t rip, fast[64], cursor[64];
	unsigned nr_fast, nr_cursor;
};

static struct chain_pair pairs[CHAINS];
static volatile sig_atomic_t nr_pairs;

static void on_test_signal(int signo, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct chain_pair *p;

	(void)signo;
	(void)si;
	if (nr_pairs >= CHAINS)
		return;
	p = &pairs[nr_pairs];
	p->rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	p->nr_fast = ref_unwind_signal_frame(uc, p->fast, 64);
	p->nr_cursor = ref_unwind_context(uc, p->cursor, 64);
	nr_pairs = nr_pairs + 1;
}

static volatile uint64_t spin_sink;

__attribute__((noinline)) static void spin_deep(int depth, bool by_timer)
{
	if (depth) {
		spin_deep(depth - 1, by_timer);
		__asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
		return;
	}
	if (!by_timer) {
		raise(SIGUSR2);
		return;
	}
	for (uint64_t i = 0; i < 4000000000ull && nr_pairs < CHAINS; i++)
		spin_sink += i;
}

static void test_fast_trace_matches_cursor(void **state)
{
	struct sigaction sa = { 0 }, old;
	struct sigevent ev = { 0 };
	struct itimerspec every = { { 0, 200000 }, { 0, 200000 } };
	timer_t timer;
	int i;

	(void)state;
#if defined(__SANITIZE_THREAD__)
	/* TSan runs a handler at its next interception point, from its own frames, with
	 * a context whose stack has moved on: nothing to compare. */
	print_message("not checked under TSan (signals deferred)\n");
	return;
#endif
	ref_unwind_warm_up();
	sa.sa_sigaction = on_test_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	nr_pairs = 0;
	spin_deep(5, false);
	assert_int_equal(nr_pairs, 1);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR2;
	ev._sigev_un._tid = gettid();
	assert_int_equal(timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer), 0);
	assert_int_equal(timer_settime(timer, 0, &every, NULL), 0);
	spin_deep(5, true);
	timer_delete(timer);
	assert_int_equal(sigaction(SIGUSR2, &old, NULL), 0);
	assert_true(nr_pairs > 1);
	for (i = 0; i < nr_pairs; i++) {
		struct chain_pair *p = &pairs[i];

		assert_true(p->nr_fast >= 7); /* the IP, spin_deep x6, the test */
		assert_int_equal(p->nr_fast, p->nr_cursor);
		assert_int_equal(p->fast[0], p->rip);
		assert_memory_equal(p->fast, p->cursor, p->nr_fast * sizeof(uint64_t));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_ip),
		cmocka_unit_test(test_chain_stops_at_bad_addresses),
		cmocka_unit_test(test_chain_follows_user_addresses),
		cmocka_unit_test(test_bad_context_ip),
		cmocka_unit_test(test_fast_trace_matches_cursor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
