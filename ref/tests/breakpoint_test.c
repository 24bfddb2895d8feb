/* The breakpoint PMU's rules as the policy model decides them: the kernel half for each
 * caller and paranoid level (which the conformance cases meet only at the host's level),
 * and the ENOSPC every valid breakpoint gets because the engine sets no debug register. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"
#include "ref/attr/attr.h"

#define KERNEL_ADDR 0xffffffff80000000ull
#define TASK_SIZE_MAX 0x7ffffffff000ull

static struct pecs_attr bp(uint32_t type, uint64_t addr, uint64_t len)
{
	struct pecs_attr a = attr_counting(0);

	a.type = PECS_TYPE_BREAKPOINT;
	a.bp_type = type;
	a.config1 = addr;
	a.config2 = len;
	return a;
}

static int open_as(const struct ref_policy *p, struct pecs_attr a)
{
	struct ref_engine *e = engine_with(p);
	int fd;

	assert_non_null(e);
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	ref_engine_free(e);
	return fd < 0 ? fd : 0;
}

/* hw_breakpoint_parse after perf_allow_kernel: EACCES from paranoid 2 up, EPERM below it
 * without CAP_SYS_ADMIN, and for root the register the engine cannot set. */
static void test_kernel_half(void **state)
{
	struct ref_policy root = policy_root(), nobody;
	struct pecs_attr a = bp(2, KERNEL_ADDR, 8);

	(void)state;
	assert_int_equal(open_as(&root, a), -EINVAL); /* exclude_kernel */
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(open_as(&root, a), -ENOSPC);
	root.caps &= ~REF_CAP_MASK(REF_CAP_SYS_ADMIN); /* CAP_PERFMON alone */
	assert_int_equal(open_as(&root, a), -EPERM);
	for (int par = -1; par <= 2; par++) {
		nobody = policy_nobody(par);
		assert_int_equal(open_as(&nobody, a), par > 1 ? -EACCES : -EPERM);
	}
	/* the last 8 bytes below TASK_SIZE_MAX are the user's; one more reaches the kernel's */
	nobody = policy_nobody(1);
	a = bp(2, TASK_SIZE_MAX - 8, 8);
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(open_as(&nobody, a), -ENOSPC);
	a.config1 = TASK_SIZE_MAX - 4;
	a.config2 = 4;
	assert_int_equal(open_as(&nobody, a), -ENOSPC);
	a.config1 = TASK_SIZE_MAX;
	assert_int_equal(open_as(&nobody, a), -EPERM);
}

/* Every valid breakpoint, data or instruction, is ENOSPC;
 * the rules come first whatever the caller. */
static void test_valid_is_enospc(void **state)
{
	struct ref_policy nobody = policy_nobody(2);

	(void)state;
	assert_int_equal(open_as(&nobody, bp(2, 0x1000, 1)), -ENOSPC);
	assert_int_equal(open_as(&nobody, bp(3, 0x1000, 8)), -ENOSPC);
	assert_int_equal(open_as(&nobody, bp(4, 0x1001, 8)), -ENOSPC);
	assert_int_equal(open_as(&nobody, bp(1, 0x1000, 8)), -EINVAL);
	assert_int_equal(open_as(&nobody, bp(0, 0x1000, 8)), -EINVAL);
	assert_int_equal(open_as(&nobody, bp(7, 0x1000, 8)), -EINVAL);
	assert_int_equal(open_as(&nobody, bp(2, 0x1004, 8)), -EINVAL);
	assert_int_equal(open_as(&nobody, bp(2, 0x1000, 5)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_half),
		cmocka_unit_test(test_valid_is_enospc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
