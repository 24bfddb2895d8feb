/* The isolated case's limit: given again only while the CPUs were saturated, and only
 * CASE_DEADLINE_PATIENCE times. The pressure file is a file of the test's own, so the
 * verdicts do not depend on how busy this machine is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "case_deadline.h"

static char path[512];

static void write_pressure(const char *fmt, long long total)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, fmt, total);
	fclose(f);
}

#define PSI "some avg10=0.00 avg60=0.00 avg300=0.00 total=%lld\n" \
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"

/* The limit has passed, whatever the clock says. */
static void pass_the_limit(struct case_deadline *d)
{
	d->at_ms = case_deadline_now_ms() - 1;
}

static int setup(void **s)
{
	(void)s;
	const char *dir = getenv("TEST_TMPDIR");
	snprintf(path, sizeof(path), "%s/pecs-deadline-%d", dir ? dir : "/tmp", (int)getpid());
	return 0;
}

static int teardown(void **s)
{
	(void)s;
	unlink(path);
	return 0;
}

static void test_not_yet(void **s)
{
	(void)s;
	struct case_deadline d;
	write_pressure(PSI, 0);
	case_deadline_start(&d, 60, path);
	assert_int_equal(case_deadline_expired(&d), 0);
	assert_true(case_deadline_left_ms(&d) > 50000);
	assert_int_equal(d.extended, 0);
}

static void test_idle_machine_first_limit_final(void **s)
{
	(void)s;
	struct case_deadline d;
	write_pressure(PSI, 5000000);
	case_deadline_start(&d, 10, path);
	/* 4.9 s of 10 s stalled: under half */
	write_pressure(PSI, 5000000 + 4900000);
	pass_the_limit(&d);
	assert_int_equal(case_deadline_expired(&d), 1);
	assert_int_equal(d.extended, 0);
}

static void test_saturated_machine_bounded_patience(void **s)
{
	(void)s;
	struct case_deadline d;
	long long total = 1000;
	write_pressure(PSI, total);
	case_deadline_start(&d, 10, path);
	for (int i = 1; i <= CASE_DEADLINE_PATIENCE; i++) {
		total += 5000000; /* exactly half of the limit */
		write_pressure(PSI, total);
		pass_the_limit(&d);
		assert_int_equal(case_deadline_expired(&d), 0);
		assert_int_equal(d.extended, i);
		assert_true(case_deadline_left_ms(&d) > 5000);
	}
	total += 10000000;
	write_pressure(PSI, total);
	pass_the_limit(&d);
	assert_int_equal(case_deadline_expired(&d), 1);
	assert_int_equal(d.extended, CASE_DEADLINE_PATIENCE);
}

static void test_no_pressure_file_first_limit_final(void **s)
{
	(void)s;
	struct case_deadline d;
	case_deadline_start(&d, 10, "/nonexistent/pressure/cpu");
	assert_true(d.stall_us < 0);
	pass_the_limit(&d);
	assert_int_equal(case_deadline_expired(&d), 1);
}

static void test_malformed_pressure_first_limit_final(void **s)
{
	(void)s;
	struct case_deadline d;
	write_pressure("full avg10=0.00 total=%lld\n", 1);
	case_deadline_start(&d, 10, path);
	assert_true(d.stall_us < 0);
	write_pressure(PSI, 99000000);
	pass_the_limit(&d);
	assert_int_equal(case_deadline_expired(&d), 1);
}

static void test_zero_means_sixty_seconds(void **s)
{
	(void)s;
	struct case_deadline d;
	case_deadline_start(&d, 0, NULL);
	assert_true(d.limit_ms == 60000.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_yet),
		cmocka_unit_test(test_idle_machine_first_limit_final),
		cmocka_unit_test(test_saturated_machine_bounded_patience),
		cmocka_unit_test(test_no_pressure_file_first_limit_final),
		cmocka_unit_test(test_malformed_pressure_first_limit_final),
		cmocka_unit_test(test_zero_means_sixty_seconds),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
