/* The engine's group bookkeeping: what it keeps in a leader to answer per-open checks
 * without walking the members (docs/pipeline-notes.md, group open and close). The ABI
 * rule itself is the conformance case Required.Open.GroupFd.ReadSizeOver16KiBE2big. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "helpers.h"

/* A member reading the whole group with GROUP: 8 bytes of nr and 8 per event. */
#define FIT ((PECS_READ_SIZE_MAX - 8) / 8)

static int open_ev(int group_fd, uint64_t read_format)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);

	a.read_format = read_format;
	return ref_engine_open(E, &a, 0, -1, group_fd, 0);
}

/* The 16 KiB read limit follows the members as they come and go: a GROUP member caps
 * the group while it is in it, and no longer once it has closed (the leader's count of
 * its siblings' read formats goes down with it). */
static void test_read_limit_follows_members(void **state)
{
	static int fds[FIT + 1];
	int leader = open_ev(-1, 0), grouped, n = 0;

	(void)state;
	assert_true(leader >= 0);
	grouped = open_ev(leader, PECS_FORMAT_GROUP);
	assert_true(grouped >= 0);
	/* leader + grouped + members: FIT events read exactly 16 KiB through grouped. */
	while (2 + n < (int)FIT) {
		fds[n] = open_ev(leader, 0);
		assert_true(fds[n] >= 0);
		n++;
	}
	assert_int_equal(open_ev(leader, 0), -E2BIG);
	assert_int_equal(ref_engine_close(E, grouped), 0);
	fds[n] = open_ev(leader, 0);
	assert_true(fds[n] >= 0);
	n++;
	/* Back in, GROUP again is refused: the group is too big for its read now. */
	assert_int_equal(open_ev(leader, PECS_FORMAT_GROUP), -E2BIG);
	/* A member that failed to join left no count behind. */
	fds[n] = open_ev(leader, 0);
	assert_true(fds[n] >= 0);
	n++;
	while (n)
		assert_int_equal(ref_engine_close(E, fds[--n]), 0);
	assert_int_equal(ref_engine_close(E, leader), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_limit_follows_members),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
