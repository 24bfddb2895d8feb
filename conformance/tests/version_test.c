/* The Linux version a case reads from an implementation's release string: a Linux
 * release gives its major.minor, anything else (ref, a snapshot's own name) none, so that
 * it follows the newest behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "pecs/toolkit/version.h"

static void test_linux_releases(void **state)
{
	(void)state;
	assert_int_equal(pecs_linux_version_of("6.1.0-50-cloud-amd64"), 6001);
	assert_int_equal(pecs_linux_version_of("6.18.44"), 6018);
	assert_int_equal(pecs_linux_version_of("6.12.118+deb13-amd64"), 6012);
	assert_int_equal(pecs_linux_version_of("5.15"), 5015);
	/* 6.9 is older than 6.12: the minor is a number, not a decimal fraction */
	assert_true(pecs_linux_version_of("6.9.0") < pecs_linux_version_of("6.12.0"));
}

static void test_not_linux(void **state)
{
	(void)state;
	assert_int_equal(pecs_linux_version_of("ref on 6.1.0"), 0);
	assert_int_equal(pecs_linux_version_of(""), 0);
	assert_int_equal(pecs_linux_version_of("6"), 0);
	assert_int_equal(pecs_linux_version_of("6."), 0);
	assert_int_equal(pecs_linux_version_of("starnix"), 0);
	assert_int_equal(pecs_linux_version_of("1.2.3"), 0);
}

/* Point releases: Debian's as the runner states it from uname -v, a vanilla one, none. */
static void test_point_releases(void **state)
{
	(void)state;
	assert_int_equal(pecs_linux_point_of("6.1.176"), 176);
	assert_int_equal(pecs_linux_point_of("6.12.118"), 118);
	assert_int_equal(pecs_linux_point_of("6.18.44-fc-v1252"), 44);
	assert_int_equal(pecs_linux_point_of("6.1.0-50-cloud-amd64"), 0);
	assert_int_equal(pecs_linux_point_of("5.15"), 0);
	assert_int_equal(pecs_linux_point_of("6.9-rc1"), 0);
	assert_int_equal(pecs_linux_point_of("ref on 6.1.176"), -1);
	assert_int_equal(pecs_linux_point_of("garbage"), -1);
	assert_int_equal(pecs_linux_point_of(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_releases),
		cmocka_unit_test(test_not_linux),
		cmocka_unit_test(test_point_releases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
