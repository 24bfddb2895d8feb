/* ref_engine_inject_sample(), the engine's own entry for handing it a decoded sample:
 * a disabled event drops the sample without counting it lost (SAMPLE-DISABLED-DROPPED),
 * wakeup_events counts injected samples, a counting event takes none, an unknown fd is
 * EBADF. What Linux does with real samples is checked by the conformance cases
 * (Required.Ring.*, Required.Poll.*, Required.Engine.* on the engine). */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "helpers.h"

#define PG 4096

static uint64_t head_of(void *m)
{
	return __atomic_load_n(&((struct pecs_mmap_page *)m)->data_head, __ATOMIC_ACQUIRE);
}

static const struct pecs_record_header *rec_at(void *m, uint64_t off)
{
	return (const struct pecs_record_header *)((char *)m + PG + off);
}

static int inject(int fd, uint64_t ip)
{
	uint64_t ips[1] = {ip};
	struct pecs_sample s = {.size = sizeof(s), .pid = 10, .tid = 11, .nr_ips = 1, .ips = ips};

	return ref_engine_inject_sample(E, fd, &s);
}

static void test_samples_and_wakeup(void **state)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000,
					   PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_ID);
	const struct pecs_record_header *h;
	uint64_t id;
	void *m;
	int fd;

	(void)state;
	a.wakeup_events = 2;
	a.flags |= PECS_ATTR_DISABLED;
	fd = ref_engine_open(E, &a, 0, -1, -1, 0);
	id = event_id(E, fd);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	/* disabled: dropped, not lost */
	assert_int_equal(inject(fd, 0x1000), 0);
	assert_int_equal(head_of(m), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(inject(fd, 0x1000), 0);
	assert_int_equal(head_of(m), 32);
	h = rec_at(m, 0);
	assert_int_equal(h->type, PECS_RECORD_SAMPLE);
	assert_int_equal(h->size, 32);
	assert_int_equal(((const uint64_t *)h)[1], 0x1000);
	assert_int_equal(((const uint64_t *)h)[3], id);
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), 0);
	assert_int_equal(inject(fd, 0x2000), 0);
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), POLLIN);
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), 0);
	/* a counting event takes no samples */
	{
		struct pecs_attr c = attr_counting(PECS_SW_TASK_CLOCK);
		int cf = ref_engine_open(E, &c, 0, -1, -1, 0);

		assert_int_equal(inject(cf, 1), -EINVAL);
		ref_engine_close(E, cf);
	}
	assert_int_equal(inject(4999, 1), -EBADF);
	ref_engine_munmap(E, m, 3 * PG);
	ref_engine_close(E, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_and_wakeup),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
