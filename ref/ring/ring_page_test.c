/* The reference ring's metadata page and mappings, next to a real perf mapping on the
 * running kernel: field offsets and values, the data_size - 8 fill limit and LOST as
 * the kernel reports them, argument checks, and mappings sharing memory.
 *
 * Expected values come from docs/behaviours.md (MMAP-PAGE-LAYOUT, RING-*; measured on
 * Linux 6.18, ../shared/research/linux-abi.md section 4 "mmap") and from
 * kernel/events/ring_buffer.c (6.12).
 */
#define _GNU_SOURCE
#include "pecs/opts.h"
#include "ring_test_support.h"

static void test_metadata_page(void **state)
{
	struct ref_ring *r;
	struct view v;
	size_t i;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 3, 0, 0), 0);
	assert_int_equal(ref_ring_len(r), 3 * (size_t)page);
	v = map_view(r, PROT_READ);
	assert_int_equal(rd32(v.base, OFF_VERSION), 0);
	assert_int_equal(rd32(v.base, OFF_COMPAT), 0);
	assert_int_equal(rd32(v.base, OFF_LOCK), 0);
	assert_int_equal(rd32(v.base, OFF_INDEX), 0);
	assert_int_equal(rd64(v.base, OFF_CAPS), PECS_CAP_BIT0_IS_DEPRECATED);
	assert_int_equal(rd32(v.base, OFF_PMC_WIDTH) & 0xffff, 0);
	assert_int_equal(rd32(v.base, OFF_SIZE), 96);
	assert_int_equal(rd64(v.base, OFF_DATA_HEAD), 0);
	assert_int_equal(rd64(v.base, OFF_DATA_TAIL), 0);
	assert_int_equal(rd64(v.base, OFF_DATA_OFFSET), page);
	assert_int_equal(rd64(v.base, OFF_DATA_SIZE), 2 * page);
	for (i = OFF_AUX_HEAD; i <= OFF_AUX_SIZE; i += 8)
		assert_int_equal(rd64(v.base, i), 0);
	for (i = 96; i < OFF_DATA_HEAD; i++)
		assert_int_equal(v.base[i], 0);

	/* Seqlock: +2 per update, fields in place; offset carries the count (index 0). */
	ref_ring_update_userpage(r, 1234, 5000, 4000);
	assert_int_equal(rd32(v.base, OFF_LOCK), 2);
	assert_int_equal(rd64(v.base, OFF_OFFSET), 1234);
	assert_int_equal(rd64(v.base, OFF_TIME_ENABLED), 5000);
	assert_int_equal(rd64(v.base, OFF_TIME_RUNNING), 4000);
	ref_ring_update_times(r, 6000, 4500);
	assert_int_equal(rd32(v.base, OFF_LOCK), 4);
	assert_int_equal(rd64(v.base, OFF_OFFSET), 1234);
	assert_int_equal(rd64(v.base, OFF_TIME_ENABLED), 6000);
	assert_int_equal(rd64(v.base, OFF_TIME_RUNNING), 4500);
	assert_int_equal(ref_ring_unmap(r, v.base), 0);
	ref_ring_destroy(r);
}

/* The same fields from a real perf mapping of the running kernel. capabilities is left
 * out on purpose: it describes the host's PMU and clock, not a layout rule. */
static void test_metadata_page_against_kernel(void **state)
{
	static const size_t nr_pages[] = { 1, 2, 3, 5 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nr_pages) / sizeof(nr_pages[0]); i++) {
		size_t len = nr_pages[i] * (size_t)page;
		struct pecs_attr a;
		struct ref_ring *r;
		struct view v;
		uint8_t *k;
		int fd;

		memset(&a, 0, sizeof(a));
		a.type = PECS_TYPE_SOFTWARE;
		a.size = PECS_ATTR_SIZE_VER8;
		a.config = PECS_SW_TASK_CLOCK;
		a.sample_period = 1000000;
		a.flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		if (fd < 0)
			skip();
		k = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(k != MAP_FAILED);
		assert_int_equal(ref_ring_create(&r, nr_pages[i], 0, 0), 0);
		v = map_view(r, PROT_READ | PROT_WRITE);
		ref_ring_update_userpage(r, 0, 0, 0); /* as perf_mmap() updates once */
		assert_int_equal(rd32(v.base, OFF_VERSION), rd32(k, OFF_VERSION));
		assert_int_equal(rd32(v.base, OFF_COMPAT), rd32(k, OFF_COMPAT));
		assert_int_equal(rd32(v.base, OFF_INDEX), rd32(k, OFF_INDEX));
		assert_int_equal(rd32(v.base, OFF_SIZE), rd32(k, OFF_SIZE));
		assert_int_equal(rd64(v.base, OFF_DATA_OFFSET), rd64(k, OFF_DATA_OFFSET));
		assert_int_equal(rd64(v.base, OFF_DATA_SIZE), rd64(k, OFF_DATA_SIZE));
		assert_int_equal(rd64(v.base, OFF_DATA_HEAD), rd64(k, OFF_DATA_HEAD));
		assert_int_equal(rd32(v.base, OFF_LOCK) % 2, 0);
		assert_int_equal(rd32(k, OFF_LOCK) % 2, 0);
		ref_ring_unmap(r, v.base);
		ref_ring_destroy(r);
		munmap(k, len);
		close(fd);
	}
}

static void burn_ms(long ms)
{
	struct timespec t0, t;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A writable one-data-page perf ring left unread on the running kernel, then the same
 * record sizes into the reference ring: both stop at the same head, and both put a
 * LOST {id, count read() reports} in front of the first record once space frees. */
static void test_fill_and_lost_against_kernel(void **state)
{
	size_t len = 2 * (size_t)page;
	struct pecs_attr a;
	uint64_t id, kvals[2], khead, lost_rec[3];
	uint8_t *k, rec[24];
	struct ref_ring *r;
	struct view v;
	int fd;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.type = PECS_TYPE_SOFTWARE;
	a.size = PECS_ATTR_SIZE_VER8;
	a.config = PECS_SW_TASK_CLOCK;
	a.sample_period = 10000;
	a.sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TID; /* 24-byte records */
	a.read_format = PECS_FORMAT_LOST;
	a.flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		skip();
	k = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(k != MAP_FAILED);
	assert_int_equal(ioctl(fd, PECS_IOC_ID, &id), 0);
	ioctl(fd, PECS_IOC_ENABLE, 0);
	burn_ms(100);
	ioctl(fd, PECS_IOC_DISABLE, 0);
	assert_int_equal(read(fd, kvals, sizeof(kvals)), 16);
	khead = rd64(k, OFF_DATA_HEAD);
	if (kvals[1] == 0) { /* too few samples to fill the page on this host */
		munmap(k, len);
		close(fd);
		skip();
	}

	assert_int_equal(ref_ring_create(&r, 2, page, 0), 0);
	v = map_view(r, PROT_READ | PROT_WRITE);
	make_record(rec, PECS_RECORD_SAMPLE, 24, 0);
	while (ref_ring_write(r, rec, 24) == 0)
		;
	assert_int_equal(view_head(&v), khead);

	/* Free everything and let one more record in. */
	__atomic_store_n((uint64_t *)(k + OFF_DATA_TAIL), khead, __ATOMIC_RELEASE);
	ioctl(fd, PECS_IOC_ENABLE, 0);
	burn_ms(5);
	ioctl(fd, PECS_IOC_DISABLE, 0);
	assert_true(rd64(k, OFF_DATA_HEAD) >= khead + 24 + 24);
	{
		struct view kv = { k, k + page, (uint64_t)page };

		view_copy(&kv, khead, lost_rec, 24); /* it may wrap */
	}
	assert_int_equal(lost_rec[0], PECS_RECORD_LOST | 24ull << 48);
	assert_int_equal(lost_rec[1], id);
	assert_int_equal(lost_rec[2], kvals[1]);

	view_set_tail(&v, view_head(&v));
	{
		uint64_t mine[3], owed = ref_ring_pending_lost(r);

		assert_int_equal(ref_ring_write(r, rec, 24), 0);
		view_copy(&v, khead, mine, 24);
		assert_int_equal(mine[0], lost_rec[0]);
		assert_int_equal(mine[2], owed);
		assert_int_equal(ref_ring_pending_lost(r), 0);
	}
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
	munmap(k, len);
	close(fd);
}

static void test_bad_arguments(void **state)
{
	static const size_t bad_pages[] = { 0, 4, 6, 7, 8, 10 };
	struct ref_ring *r;
	uint8_t rec[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_pages) / sizeof(bad_pages[0]); i++)
		assert_int_equal(ref_ring_create(&r, bad_pages[i], 0, 0), -EINVAL);
	assert_int_equal(ref_ring_create(&r, 2, 3000, 0), -EINVAL);
	assert_int_equal(ref_ring_create(&r, 2, 0, 0), 0);
	make_record(rec, PECS_RECORD_SAMPLE, 24, 0);
	assert_int_equal(ref_ring_write(r, rec, 20), -EINVAL); /* not a multiple of 8 */
	assert_int_equal(ref_ring_write(r, rec, 32), -EINVAL); /* header says 24 */
	assert_int_equal(ref_ring_write(r, rec, 0), -EINVAL);
	assert_int_equal(ref_ring_write(r, rec, 24), 0);
	assert_int_equal(ref_ring_pending_lost(r), 0);
	ref_ring_destroy(r);
}

static void test_mappings_share_memory(void **state)
{
	struct ref_ring *r;
	struct view a, b;
	uint8_t rec[32];

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 0, 0), 0);
	a = map_view(r, PROT_READ | PROT_WRITE);
	b = map_view(r, PROT_READ);
	make_record(rec, PECS_RECORD_SAMPLE, 32, 7);
	assert_int_equal(ref_ring_write(r, rec, 32), 0);
	assert_int_equal(view_head(&a), 32);
	assert_int_equal(view_head(&b), 32);
	assert_memory_equal(b.data, rec, 32);
	/* A tail written through one mapping is what the writer and others see. */
	view_set_tail(&a, 32);
	assert_int_equal(rd64(b.base, OFF_DATA_TAIL), 32);
	assert_int_equal(ref_ring_tail(r), 32);
	ref_ring_unmap(r, a.base);
	ref_ring_unmap(r, b.base);
	ref_ring_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_page),
		cmocka_unit_test(test_metadata_page_against_kernel),
		cmocka_unit_test(test_fill_and_lost_against_kernel),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_mappings_share_memory),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
