/* What a caller without CAP_PERFMON sees at perf_event_paranoid 2, the common default.
 * Runs against the engine with that policy, and (unpriv_test_linux) against the kernel
 * when the test runs unprivileged at paranoid 2. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "helpers.h"

const int pecs_shim_unprivileged = 1;

static int try_open(struct pecs_attr a, pid_t pid, int cpu, int group_fd)
{
	int fd = ref_engine_open(E, &a, pid, cpu, group_fd, 0);

	if (fd < 0)
		return fd;
	ref_engine_close(E, fd);
	return 0;
}

static void test_open_rules(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK), t;

	(void)state;
	assert_int_equal(try_open(a, 0, -1, -1), 0);
	assert_int_equal(try_open(a, 0, 0, -1), 0);
	assert_int_equal(try_open(a, getpid(), -1, -1), 0);
	assert_int_equal(try_open(a, -1, 0, -1), -EACCES);
	t = a;
	t.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(try_open(t, 0, -1, -1), -EACCES);
	t = a;
	t.flags |= PECS_ATTR_NAMESPACES;
	assert_int_equal(try_open(t, 0, -1, -1), -EACCES);
	t = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_PHYS_ADDR);
	assert_int_equal(try_open(t, 0, -1, -1), -EACCES);
	t = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_CALLCHAIN);
	assert_int_equal(try_open(t, 0, -1, -1), 0);
	/* exclude_hv is not a privilege matter for software events */
	t = a;
	t.flags &= ~PECS_ATTR_EXCLUDE_HV;
	assert_int_equal(try_open(t, 0, -1, -1), 0);
}

static void test_order(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK), t;

	(void)state;
	/* the kernel-visibility check precedes the frequency check */
	t = a;
	t.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	t.flags |= PECS_ATTR_FREQ;
	t.sample_period = 100001;
	assert_int_equal(try_open(t, 0, -1, -1), -EACCES);
	/* the PMU lookup precedes the cpu-wide check */
	t = a;
	t.type = 1000;
	assert_int_equal(try_open(t, -1, 0, -1), -ENOENT);
	t = attr_counting(PECS_SW_MAX);
	assert_int_equal(try_open(t, -1, 0, -1), -ENOENT);
	/* attr rules precede everything */
	t = a;
	t.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	t.read_format = PECS_FORMAT_MAX;
	assert_int_equal(try_open(t, -1, 0, -1), -EINVAL);
}

static void test_ioctls(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	int fd = ref_engine_open(E, &a, 0, -1, -1, 0);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_QUERY_BPF, 0), -EPERM);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	ref_engine_close(E, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_rules),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_ioctls),
	};

	return cmocka_run_group_tests(tests, setup_nobody, teardown_engine);
}
