/* The loader and storer against callers older, equal and newer than us. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pecs/opts.h"

/* Version 1 ended at b; we are version 2 (c added). */
struct demo_opts {
	size_t size;
	uint64_t a;
	uint64_t b;
	uint64_t c;
};
#define DEMO_V1 PECS_OPTS_SIZE_TO(demo_opts, b)

/* A newer caller's view: one field we do not know. */
struct demo_opts_v3 {
	size_t size;
	uint64_t a, b, c, d;
};

static struct demo_opts defaults(void)
{
	return (struct demo_opts){ .size = sizeof(struct demo_opts), .a = 1, .b = 2, .c = 3 };
}

static void test_load_older_caller_keeps_defaults(void **state)
{
	struct demo_opts ours = defaults();
	PECS_OPTS(demo_opts, caller, .a = 10, .b = 20, .c = 30);

	(void)state;
	caller.size = DEMO_V1;
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), &caller, DEMO_V1), 0);
	assert_int_equal(ours.size, sizeof(ours));
	assert_int_equal(ours.a, 10);
	assert_int_equal(ours.b, 20);
	assert_int_equal(ours.c, 3); /* not passed: the default */
}

static void test_load_equal(void **state)
{
	struct demo_opts ours = defaults();
	PECS_OPTS(demo_opts, caller, .a = 10, .c = 30);

	(void)state;
	assert_int_equal(caller.size, sizeof(struct demo_opts));
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), &caller, DEMO_V1), 0);
	assert_int_equal(ours.a, 10);
	assert_int_equal(ours.b, 0); /* passed as zero: the caller's zero wins */
	assert_int_equal(ours.c, 30);
}

static void test_load_newer_caller_zero_tail(void **state)
{
	struct demo_opts ours = defaults();
	PECS_OPTS(demo_opts_v3, caller, .a = 10, .b = 20, .c = 30);

	(void)state;
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), &caller, DEMO_V1), 0);
	assert_int_equal(ours.size, sizeof(ours));
	assert_int_equal(ours.c, 30);
}

static void test_load_newer_caller_nonzero_tail(void **state)
{
	struct demo_opts ours = defaults();
	PECS_OPTS(demo_opts_v3, caller, .a = 10, .d = 1);

	(void)state;
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), &caller, DEMO_V1), -E2BIG);
	assert_int_equal(ours.a, 1); /* untouched on error */
}

static void test_load_below_minimum(void **state)
{
	struct demo_opts ours = defaults();
	PECS_OPTS(demo_opts, caller, .a = 10);

	(void)state;
	caller.size = DEMO_V1 - 1;
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), &caller, DEMO_V1), -EINVAL);
	caller.size = 0;
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), &caller, 0), -EINVAL);
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), NULL, DEMO_V1), -EINVAL);
	assert_int_equal(ours.a, 1);
}

static void test_load_over_cap(void **state)
{
	static unsigned char big[PECS_OPTS_MAX + 8];
	struct demo_opts ours = defaults();
	size_t size = sizeof(big);

	(void)state;
	memcpy(big, &size, sizeof(size));
	assert_int_equal(pecs_opts_load(&ours, sizeof(ours), big, DEMO_V1), -E2BIG);
}

static void test_check_in_place(void **state)
{
	PECS_OPTS(demo_opts_v3, caller, .a = 10);

	(void)state;
	assert_int_equal(pecs_opts_check(&caller, sizeof(struct demo_opts), DEMO_V1), 0);
	caller.d = 1;
	assert_int_equal(pecs_opts_check(&caller, sizeof(struct demo_opts), DEMO_V1), -E2BIG);
	caller.size = DEMO_V1 - 1;
	assert_int_equal(pecs_opts_check(&caller, sizeof(struct demo_opts), DEMO_V1), -EINVAL);
}

static void test_store_sizes(void **state)
{
	struct demo_opts ours = { .size = sizeof(ours), .a = 10, .b = 20, .c = 30 };
	struct demo_opts older = { .size = DEMO_V1, .c = 99 };
	struct demo_opts_v3 newer = { .size = sizeof(newer), .d = 99 };

	(void)state;
	assert_int_equal(pecs_opts_store(&older, &ours, sizeof(ours), DEMO_V1), 0);
	assert_int_equal(older.size, DEMO_V1);
	assert_int_equal(older.b, 20);
	assert_int_equal(older.c, 99); /* past its size: not written */
	assert_int_equal(pecs_opts_store(&newer, &ours, sizeof(ours), DEMO_V1), 0);
	assert_int_equal(newer.size, sizeof(newer));
	assert_int_equal(newer.c, 30);
	assert_int_equal(newer.d, 0); /* unknown to us: reads as not reported */
	older.size = DEMO_V1 - 8;
	assert_int_equal(pecs_opts_store(&older, &ours, sizeof(ours), DEMO_V1), -EINVAL);
	assert_int_equal(pecs_opts_store(NULL, &ours, sizeof(ours), DEMO_V1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_older_caller_keeps_defaults),
		cmocka_unit_test(test_load_equal),
		cmocka_unit_test(test_load_newer_caller_zero_tail),
		cmocka_unit_test(test_load_newer_caller_nonzero_tail),
		cmocka_unit_test(test_load_below_minimum),
		cmocka_unit_test(test_load_over_cap),
		cmocka_unit_test(test_check_in_place),
		cmocka_unit_test(test_store_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
