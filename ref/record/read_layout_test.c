/* read(2) layouts from ref_record_read_size()/ref_record_read_encode().
 *
 * Two sources of expected bytes, neither of them the encoder:
 *  - hand-built vectors from the layout in docs/behaviours.md (READ-LAYOUT-SINGLE,
 *    READ-LAYOUT-GROUP; measured) and
 *    perf_read_one()/perf_read_group() in kernel/events/core.c (6.12);
 *  - the running kernel: a disabled event reads value, time_enabled, time_running
 *    and lost as 0 and id as PERF_EVENT_IOC_ID says, so its bytes are fully known and
 *    can be compared with the encoder's for all 32 read_formats.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "ref/record/record.h"

/* ---- hand-built vectors ---------------------------------------------------------- */

static const struct ref_read_member members3[3] = {
	{ .value = 0x1111, .id = 0x2222, .lost = 0x3333 },
	{ .value = 0x4444, .id = 0x5555, .lost = 0x6666 },
	{ .value = 0x7777, .id = 0x8888, .lost = 0x9999 },
};

/* Expected layout for rf, spelled out field by field from the documented order rather
 * than from any shared helper. */
static size_t expected_words(uint64_t rf, uint32_t nr, uint64_t te, uint64_t tr,
			     const struct ref_read_member *m, uint64_t *w)
{
	size_t n = 0;
	uint32_t i;

	if (!(rf & PECS_FORMAT_GROUP)) {
		w[n++] = m[0].value;
		if (rf & PECS_FORMAT_TOTAL_TIME_ENABLED)
			w[n++] = te;
		if (rf & PECS_FORMAT_TOTAL_TIME_RUNNING)
			w[n++] = tr;
		if (rf & PECS_FORMAT_ID)
			w[n++] = m[0].id;
		if (rf & PECS_FORMAT_LOST)
			w[n++] = m[0].lost;
		return n;
	}
	w[n++] = nr;
	if (rf & PECS_FORMAT_TOTAL_TIME_ENABLED)
		w[n++] = te;
	if (rf & PECS_FORMAT_TOTAL_TIME_RUNNING)
		w[n++] = tr;
	for (i = 0; i < nr; i++) {
		w[n++] = m[i].value;
		if (rf & PECS_FORMAT_ID)
			w[n++] = m[i].id;
		if (rf & PECS_FORMAT_LOST)
			w[n++] = m[i].lost;
	}
	return n;
}

static void test_all_32_formats_hand_built(void **state)
{
	uint64_t rf;

	(void)state;
	for (rf = 0; rf < PECS_FORMAT_MAX; rf++) {
		uint32_t nr = (rf & PECS_FORMAT_GROUP) ? 3 : 1;
		struct ref_read_values v = { 0xaaaa, 0xbbbb, nr, members3 };
		uint64_t want[32], got[40];
		size_t nw = expected_words(rf, nr, 0xaaaa, 0xbbbb, members3, want);
		ssize_t n;

		assert_int_equal(ref_record_read_size(rf, nr), nw * 8);
		memset(got, 0xcc, sizeof(got));
		n = ref_record_read_encode(rf, &v, got, sizeof(got));
		assert_int_equal(n, (ssize_t)(nw * 8));
		assert_memory_equal(got, want, nw * 8);
		/* Nothing written past the layout. */
		assert_int_equal(got[nw], 0xccccccccccccccccull);
	}
}

static void test_literal_vectors(void **state)
{
	/* rf = TE|TR|ID|GROUP|LOST (0x1f) with two counters: 72 bytes (READ-LAYOUT-GROUP). */
	static const uint64_t group_1f[] = { 2, 0xaaaa, 0xbbbb, 0x1111, 0x2222, 0x3333,
					     0x4444, 0x5555, 0x6666 };
	/* rf = ID (0x4), single: value then id. */
	static const uint64_t single_4[] = { 0x1111, 0x2222 };
	struct ref_read_values v2 = { 0xaaaa, 0xbbbb, 2, members3 };
	struct ref_read_values v1 = { 0xaaaa, 0xbbbb, 1, members3 };
	uint64_t out[16];

	(void)state;
	assert_int_equal(ref_record_read_size(0x1f, 2), 72);
	assert_int_equal(ref_record_read_encode(0x1f, &v2, out, sizeof(out)), 72);
	assert_memory_equal(out, group_1f, sizeof(group_1f));
	assert_int_equal(ref_record_read_encode(0x4, &v1, out, sizeof(out)), 16);
	assert_memory_equal(out, single_4, sizeof(single_4));
	/* Sizes without values: 8 x (1 + bits among TE, TR, ID, LOST) for a single. */
	assert_int_equal(ref_record_read_size(0, 1), 8);
	assert_int_equal(ref_record_read_size(0x17, 1), 40);
	assert_int_equal(ref_record_read_size(PECS_FORMAT_GROUP, 1), 16);
}

static void test_errors(void **state)
{
	struct ref_read_values v1 = { 1, 2, 1, members3 };
	struct ref_read_values v3 = { 1, 2, 3, members3 };
	struct ref_read_values v0 = { 1, 2, 0, members3 };
	uint64_t out[16];

	(void)state;
	/* One byte short of the layout. */
	assert_int_equal(ref_record_read_encode(0x7, &v1, out, 31), -ENOSPC);
	assert_int_equal(ref_record_read_encode(0x7, &v1, out, 32), 32);
	assert_int_equal(ref_record_read_encode(0x8, &v3, out, 0), -ENOSPC);
	/* Several counters need GROUP; a group has at least its leader. */
	assert_int_equal(ref_record_read_encode(0x7, &v3, out, sizeof(out)), -EINVAL);
	assert_int_equal(ref_record_read_encode(0x8, &v0, out, sizeof(out)), -EINVAL);
	/* Bit 5 is not a read_format bit in 6.12. */
	assert_int_equal(ref_record_read_encode(0x20, &v1, out, sizeof(out)), -EINVAL);
	assert_int_equal(ref_record_read_encode(0x7, NULL, out, sizeof(out)), -EINVAL);
}

static void test_group_read_size_cap(void **state)
{
	static struct ref_read_member many[2048];
	struct ref_read_values v = { 0, 0, 0, many };
	static uint64_t out[4096];

	(void)state;
	/* GROUP-only: 8 + 8 nr. 2047 counters read 16384 bytes, 2048 pass the 16 KiB
	 * the kernel allows (OPEN-GROUP-READ-SIZE-E2BIG: E2BIG at the 2048th member). */
	v.nr = 2047;
	assert_int_equal(ref_record_read_size(PECS_FORMAT_GROUP, 2047), 16384);
	assert_int_equal(ref_record_read_encode(PECS_FORMAT_GROUP, &v, out, sizeof(out)), 16384);
	v.nr = 2048;
	assert_int_equal(ref_record_read_encode(PECS_FORMAT_GROUP, &v, out, sizeof(out)), -E2BIG);
}

/* ---- the running kernel ------------------------------------------------------------ */

static int sys_perf_event_open(struct pecs_attr *a, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, group_fd, 0);
}

static void counting_attr(struct pecs_attr *a, uint64_t rf)
{
	memset(a, 0, sizeof(*a));
	a->type = PECS_TYPE_SOFTWARE;
	a->size = PECS_ATTR_SIZE_VER8;
	a->config = PECS_SW_TASK_CLOCK;
	a->read_format = rf;
	a->flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
}

static void test_all_32_formats_against_kernel(void **state)
{
	uint64_t rf;

	(void)state;
	for (rf = 0; rf < PECS_FORMAT_MAX; rf++) {
		struct pecs_attr a;
		struct ref_read_member m[2] = { { 0 } };
		uint32_t nr = (rf & PECS_FORMAT_GROUP) ? 2 : 1;
		struct ref_read_values v = { 0, 0, nr, m };
		uint8_t kbuf[256], ebuf[256];
		ssize_t kn, en;
		int fd[2] = { -1, -1 };
		uint32_t i;

		for (i = 0; i < nr; i++) {
			counting_attr(&a, rf);
			fd[i] = sys_perf_event_open(&a, i ? fd[0] : -1);
			if (fd[i] < 0) {
				if (i)
					close(fd[0]);
				skip();
			}
			assert_int_equal(ioctl(fd[i], PECS_IOC_ID, &m[i].id), 0);
		}
		memset(kbuf, 0xcc, sizeof(kbuf));
		kn = read(fd[0], kbuf, sizeof(kbuf));
		en = ref_record_read_encode(rf, &v, ebuf, sizeof(ebuf));
		for (i = 0; i < nr; i++)
			close(fd[i]);
		assert_int_equal(kn, (ssize_t)ref_record_read_size(rf, nr));
		assert_int_equal(en, kn);
		assert_memory_equal(ebuf, kbuf, (size_t)kn);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_32_formats_hand_built),
		cmocka_unit_test(test_literal_vectors),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_group_read_size_cap),
		cmocka_unit_test(test_all_32_formats_against_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
