/* The unwinder ends a callchain at the first address that is not a user one. A stack
 * is forged so that libunwind steps from a real function into a chosen return
 * address: 0xffffffffffffffff (what a corrupt stack gave here), a non-canonical
 * address, a kernel one, and 0. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_ip),
		cmocka_unit_test(test_chain_stops_at_bad_addresses),
		cmocka_unit_test(test_chain_follows_user_addresses),
		cmocka_unit_test(test_bad_context_ip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
