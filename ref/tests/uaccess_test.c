/* Bad user pointers: every argument the engine copies to or from answers EFAULT, as
 * copy_to_user()/copy_from_user() make Linux do, and a fault changes nothing. The
 * _linux twin holds the kernel to the same expectations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "helpers.h"

/* A page nothing may touch, and one only readable. */
static void *none_page, *ro_page;

static int setup(void **state)
{
	none_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none_page == MAP_FAILED || ro_page == MAP_FAILED)
		return -1;
	return setup_root(state);
}

static int open_attr(struct pecs_attr a)
{
	int fd = ref_engine_open(E, &a, 0, -1, -1, 0);

	assert_true(fd >= 0);
	return fd;
}

static void test_read_fault(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	uint8_t *two;
	uint64_t v[2];
	int fd;

	(void)state;
	a.read_format = PECS_FORMAT_ID;
	fd = open_attr(a);
	assert_int_equal(ref_engine_read(E, fd, none_page, 16), -EFAULT);
	assert_int_equal(ref_engine_read(E, fd, ro_page, 16), -EFAULT);
	/* A buffer whose second half is the inaccessible page. */
	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_int_equal(mprotect(two + 4096, 4096, PROT_NONE), 0);
	assert_int_equal(ref_engine_read(E, fd, two + 4096 - 8, 16), -EFAULT);
	/* The size check still comes first. */
	assert_int_equal(ref_engine_read(E, fd, none_page, 8), -ENOSPC);
	/* The fd still reads. */
	assert_int_equal(ref_engine_read(E, fd, v, sizeof(v)), 16);
	assert_int_equal(v[1], event_id(E, fd));
	munmap(two, 8192);
	ref_engine_close(E, fd);
}

static void test_ioc_id_fault(void **state)
{
	int fd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ID, (unsigned long)none_page), -EFAULT);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ID, (unsigned long)ro_page), -EFAULT);
	assert_true(event_id(E, fd) > 0);
	ref_engine_close(E, fd);
}

static void test_ioc_period_fault(void **state)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	int fd = open_attr(a), cfd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));
	uint64_t period = 200000;

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PERIOD, (unsigned long)none_page),
			 -EFAULT);
	/* The copy comes before the sampling check: a counting event faults too. */
	assert_int_equal(ref_engine_ioctl(E, cfd, PECS_IOC_PERIOD, (unsigned long)none_page),
			 -EFAULT);
	assert_int_equal(ref_engine_ioctl(E, cfd, PECS_IOC_PERIOD, (unsigned long)&period),
			 -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PERIOD, (unsigned long)&period), 0);
	ref_engine_close(E, cfd);
	ref_engine_close(E, fd);
}

static void test_filter_fault(void **state)
{
	int fd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));
	char *end;

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_FILTER, (unsigned long)none_page),
			 -EFAULT);
	/* A readable string is refused for what it says, not for where it is. */
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_FILTER, (unsigned long)"x"),
			 -EINVAL);
	/* The string runs into the inaccessible page before its NUL. */
	end = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(end != MAP_FAILED);
	memset(end, 'a', 4096);
	assert_int_equal(mprotect(end + 4096, 4096, PROT_NONE), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_FILTER, (unsigned long)(end + 4000)),
			 -EFAULT);
	munmap(end, 8192);
	ref_engine_close(E, fd);
}

static void test_attr_fault(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	uint8_t *two;
	int fd;

	(void)state;
	assert_int_equal(ref_engine_open(E, none_page, 0, -1, -1, 0), -EFAULT);
	/* An attr whose bytes past the size field are inaccessible. */
	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	memcpy(two + 4096 - 16, &a, 16);
	assert_int_equal(mprotect(two + 4096, 4096, PROT_NONE), 0);
	assert_int_equal(ref_engine_open(E, (struct pecs_attr *)(two + 4096 - 16), 0, -1, -1, 0),
			 -EFAULT);
	/* A size past the engine's struct whose tail reaches the page: its zero check
	 * faults. */
	a.size = sizeof(a) + 64;
	memcpy(two + 4096 - sizeof(a) - 8, &a, sizeof(a));
	memset(two + 4096 - 8, 0, 8);
	assert_int_equal(ref_engine_open(E, (struct pecs_attr *)(two + 4096 - sizeof(a) - 8), 0,
					 -1, -1, 0),
			 -EFAULT);
	/* E2BIG still writes the size it knows back. */
	a.size = 4096 + 8;
	fd = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_int_equal(fd, -E2BIG);
	assert_int_equal(a.size, sizeof(a));
	munmap(two, 8192);
	fd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_MODIFY_ATTRIBUTES,
					  (unsigned long)none_page),
			 -EFAULT);
	ref_engine_close(E, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_fault),
		cmocka_unit_test(test_ioc_id_fault),
		cmocka_unit_test(test_ioc_period_fault),
		cmocka_unit_test(test_filter_fault),
		cmocka_unit_test(test_attr_fault),
	};

	return cmocka_run_group_tests(tests, setup, teardown_engine);
}
