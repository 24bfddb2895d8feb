/* The engine's attr copy and read-size rule called directly, and the opens where the
 * engine departs from Linux on purpose (docs/behaviours.md: OPEN-SW-CPU-WIDE-COUNTERS).
 * The ABI rules of perf_event_open themselves are conformance cases (Required.Open.*),
 * which run against both the kernel and the engine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "helpers.h"
#include "ref/attr/attr.h"
#include "ref/record/record.h"

/* Opens and closes; returns the errno or 0. */
static int try_open(struct pecs_attr *a, pid_t pid, int cpu)
{
	int fd = ref_engine_open(E, a, pid, cpu, -1, 0);

	if (fd < 0)
		return fd;
	ref_engine_close(E, fd);
	return 0;
}

/* No honest count of cgroup switches that include the kernel's on a task: ENOENT where
 * Linux opens. No per-CPU source for page faults or kernel-inclusive switches: ENOSYS,
 * after every check Linux makes (event_cpu_wide.c). The user-only cgroup-switch and
 * context-switch counters are 0 on Linux as well, so they open, cpu-wide too. */
static void test_divergences(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_CGROUP_SWITCHES);

	(void)state;
	assert_int_equal(try_open(&a, 0, -1), 0);
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(try_open(&a, 0, -1), -ENOENT);
	assert_int_equal(try_open(&a, -1, 0), -ENOSYS);
	a.flags |= PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(try_open(&a, -1, 0), 0);
	a = attr_counting(PECS_SW_CONTEXT_SWITCHES);
	assert_int_equal(try_open(&a, -1, 0), 0);
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(try_open(&a, -1, 0), -ENOSYS);
	a = attr_counting(PECS_SW_PAGE_FAULTS);
	assert_int_equal(try_open(&a, -1, 0), -ENOSYS);
	a = attr_counting(PECS_SW_CPU_CLOCK);
	assert_int_equal(try_open(&a, -1, 0), 0);
}

static void test_copy_direct(void **state)
{
	struct ref_limits lim = {.ncpus = 2, .page_size = 4096, .max_stack = 127,
				 .max_sample_rate = 100000, .mlock_kb = 516};
	struct ref_policy p = policy_root();
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK), out;

	(void)state;
	a.size = 0;
	assert_int_equal(ref_attr_copy(&a, &out, &lim, &p), 0);
	assert_int_equal(out.size, 64);
	/* VER0 stops before branch_sample_type: later fields are not copied. */
	a.size = 64;
	a.sample_regs_user = 5;
	assert_int_equal(ref_attr_copy(&a, &out, &lim, &p), 0);
	assert_int_equal(out.sample_regs_user, 0);
	/* sample_max_stack 0 means the sysctl's value. */
	a.size = 136;
	a.sample_regs_user = 0;
	assert_int_equal(ref_attr_copy(&a, &out, &lim, &p), 0);
	assert_int_equal(out.sample_max_stack, 127);
	/* the read size rule counts the kernel's extra member */
	assert_int_equal(ref_record_read_size(PECS_FORMAT_GROUP, 2047), 8 + 2047 * 8);
	assert_int_equal(ref_record_read_size(0x1f, 2), 24 + 2 * 24);
	assert_int_equal(ref_record_read_size(0x17, 6), 8 * 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_divergences),
		cmocka_unit_test(test_copy_direct),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
