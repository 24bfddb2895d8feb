/* The engine's fd table and id counter: what is the engine's own design rather than the
 * ABI (docs/behaviours.md FD-ENGINE-LOCAL). The ABI facts about ids and fds are
 * conformance cases (Required.Group.Id.*, Required.Read.Write.IsEinval). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "helpers.h"

static int open_ev(int group_fd)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	int fd = ref_engine_open(E, &a, 0, -1, group_fd, 0);

	assert_true(fd >= 1000);
	return fd;
}

/* One engine numbers its events one after the other; Linux only promises increasing ids
 * because other processes take some in between. */
static void test_ids_consecutive(void **state)
{
	int a = open_ev(-1), b = open_ev(a), c = open_ev(-1);
	uint64_t ia = event_id(E, a), ib = event_id(E, b), ic = event_id(E, c);

	(void)state;
	assert_true(ia > 0);
	assert_int_equal(ib, ia + 1);
	assert_int_equal(ic, ib + 1);
	ref_engine_close(E, c);
	ref_engine_close(E, b);
	ref_engine_close(E, a);
}

/* Engine fds start at 1000, reuse the lowest free one, and unknown fds are EBADF. */
static void test_fds(void **state)
{
	int a = open_ev(-1), b = open_ev(-1);
	uint64_t v;

	(void)state;
	assert_int_equal(b, a + 1);
	ref_engine_close(E, a);
	assert_int_equal(open_ev(-1), a);
	assert_int_equal(ref_engine_read(E, 3, &v, 8), -EBADF);
	assert_int_equal(ref_engine_read(E, 999, &v, 8), -EBADF);
	assert_int_equal(ref_engine_read(E, b + 100, &v, 8), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, 5000, PECS_IOC_ENABLE, 0), -EBADF);
	assert_int_equal(ref_engine_close(E, 5000), -EBADF);
	assert_int_equal(ref_engine_write(E, 5000, &v, 8), -EBADF);
	ref_engine_close(E, a);
	ref_engine_close(E, b);
	assert_int_equal(ref_engine_close(E, b), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_consecutive),
		cmocka_unit_test(test_fds),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
