/* ioctl(2) requests: effects and errnos (linux-abi.md section 2). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "helpers.h"

static int open_attr(struct pecs_attr a)
{
	int fd = ref_engine_open(E, &a, 0, -1, -1, 0);

	assert_true(fd >= 1000);
	return fd;
}

static void test_unknown_and_encoding(void **state)
{
	int fd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, 0x2420, 0), -ENOTTY);
	/* the size field is part of the request number */
	assert_int_equal(ref_engine_ioctl(E, fd, 0x40042407, 0), -ENOTTY);
	assert_int_equal(ref_engine_ioctl(E, fd, 0x2407, 0), -ENOTTY);
	/* the kernel's cmd is 32 bits: the upper half of the long is not looked at */
	assert_int_equal(ref_engine_ioctl(E, fd, 0x100002400ul, 0), 0);
	ref_engine_close(E, fd);
}

static void test_id(void **state)
{
	int fd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));
	uint64_t id = 0, buf[2];
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	int fd2;

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ID, (unsigned long)&id), 0);
	assert_true(id > 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ID, 0), -EFAULT);
	a.read_format = PECS_FORMAT_ID;
	fd2 = open_attr(a);
	assert_int_equal(ref_engine_read(E, fd2, buf, sizeof(buf)), 16);
	assert_int_equal(buf[1], event_id(E, fd2));
	assert_true(buf[1] > id);
	ref_engine_close(E, fd2);
	ref_engine_close(E, fd);
}

static void test_period(void **state)
{
	int c = open_attr(attr_counting(PECS_SW_TASK_CLOCK));
	int s = open_attr(attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP));
	struct pecs_attr fa = attr_sampling(PECS_SW_PAGE_FAULTS, 1000, PECS_SAMPLE_IP);
	struct pecs_attr ca = attr_sampling(PECS_SW_TASK_CLOCK, 1000, PECS_SAMPLE_IP);
	uint64_t v;
	int f, cf;

	(void)state;
	v = 1000;
	assert_int_equal(ref_engine_ioctl(E, c, PECS_IOC_PERIOD, (unsigned long)&v), -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_PERIOD, 0), -EFAULT);
	assert_int_equal(ref_engine_ioctl(E, c, PECS_IOC_PERIOD, 0), -EFAULT);
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_PERIOD, (unsigned long)&v), 0);
	v = 0;
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_PERIOD, (unsigned long)&v), -EINVAL);
	v = 1ull << 63;
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_PERIOD, (unsigned long)&v), -EINVAL);
	/* a frequency event takes a frequency, bounded by the sample rate */
	fa.flags |= PECS_ATTR_FREQ;
	f = open_attr(fa);
	v = 100001;
	assert_int_equal(ref_engine_ioctl(E, f, PECS_IOC_PERIOD, (unsigned long)&v), -EINVAL);
	v = 100000;
	assert_int_equal(ref_engine_ioctl(E, f, PECS_IOC_PERIOD, (unsigned long)&v), 0);
	/* the clock events forgot their frequency at open: this is a period now */
	ca.flags |= PECS_ATTR_FREQ;
	cf = open_attr(ca);
	v = 200000;
	assert_int_equal(ref_engine_ioctl(E, cf, PECS_IOC_PERIOD, (unsigned long)&v), 0);
	ref_engine_close(E, cf);
	ref_engine_close(E, f);
	ref_engine_close(E, s);
	ref_engine_close(E, c);
}

static void test_refresh_errors(void **state)
{
	struct pecs_attr ia = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	int c = open_attr(attr_counting(PECS_SW_TASK_CLOCK)), i;

	(void)state;
	ia.flags |= PECS_ATTR_INHERIT;
	i = open_attr(ia);
	assert_int_equal(ref_engine_ioctl(E, c, PECS_IOC_REFRESH, 1), -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, i, PECS_IOC_REFRESH, 1), -EINVAL);
	ref_engine_close(E, i);
	ref_engine_close(E, c);
}

static void test_filter_bpf(void **state)
{
	int fd = open_attr(attr_counting(PECS_SW_TASK_CLOCK));
	int devnull = open("/dev/null", O_RDONLY);

	(void)state;
	assert_true(devnull >= 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_FILTER, 0), -EFAULT);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_FILTER, (unsigned long)"common_pid != 0"),
			 -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_BPF, 9999), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_BPF, (unsigned long)-1), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_SET_BPF, (unsigned long)devnull), -EINVAL);
	/* root: the event is simply not a tracepoint */
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_QUERY_BPF, 0), -EINVAL);
	close(devnull);
	ref_engine_close(E, fd);
}

static void test_query_bpf_unpriv(void **state)
{
	struct ref_policy p = policy_nobody(2);
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	struct ref_engine *e;
	int fd;

	(void)state;
	/* skip() leaves the test by longjmp: decide before there is anything to free. */
	if (getenv("PECS_ON_LINUX") && geteuid() == 0)
		skip();
	e = engine_with(&p);
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_QUERY_BPF, 0), -EPERM);
	ref_engine_free(e);
}

static void test_modify_attributes(void **state)
{
	static const uint64_t cfgs[] = {PECS_SW_CPU_CLOCK, PECS_SW_TASK_CLOCK, PECS_SW_PAGE_FAULTS,
					PECS_SW_DUMMY};
	unsigned char big[4097];
	struct pecs_attr *n = (struct pecs_attr *)big;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		int fd = open_attr(attr_counting(cfgs[i]));

		memset(big, 0, sizeof(big));
		*n = attr_counting(cfgs[i]);
		assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)n),
				 i < 2 ? -EINVAL : -EOPNOTSUPP);
		assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_MODIFY_ATTRIBUTES, 0), -EFAULT);
		n->size = 4097;
		assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)n),
				 -E2BIG);
		assert_int_equal(n->size, 136);
		/* the attr rules apply before the event's own */
		n->size = 136;
		n->reserved_2 = 1;
		assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)n),
				 -EINVAL);
		ref_engine_close(E, fd);
	}
}

static void test_set_output_errors(void **state)
{
	int a = open_attr(attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP));
	int b = open_attr(attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP));
	struct pecs_attr wa = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	struct pecs_attr ca = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	int w, c1, devnull = open("/dev/null", O_RDONLY);
	void *ma, *mb;

	(void)state;
	wa.flags |= PECS_ATTR_WRITE_BACKWARD;
	w = open_attr(wa);
	c1 = ref_engine_open(E, &ca, 0, 1, -1, 0);
	assert_true(c1 >= 0);
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, 9999), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)devnull), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, 0xfffffffful), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)-1), 0);
	/* target without a buffer */
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
	assert_int_equal(ref_engine_mmap(E, b, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &mb), 0);
	assert_int_equal(ref_engine_ioctl(E, b, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, c1, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, w, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
	/* another clock, another task */
	{
		struct pecs_attr k = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
		int kfd, other;

		k.flags |= PECS_ATTR_USE_CLOCKID;
		k.clockid = 1;
		kfd = open_attr(k);
		assert_int_equal(ref_engine_ioctl(E, kfd, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
		ref_engine_close(E, kfd);
		k = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
		other = ref_engine_open(E, &k, 1, -1, -1, 0);
		assert_true(other >= 0);
		assert_int_equal(ref_engine_ioctl(E, other, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
		ref_engine_close(E, other);
	}
	/* FD_OUTPUT at open redirects into the group fd's buffer (so mapping is EBUSY) */
	{
		struct pecs_attr o = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
		int ofd = ref_engine_open(E, &o, 0, -1, b, PECS_FLAG_FD_OUTPUT | PECS_FLAG_FD_NO_GROUP);
		void *mo;

		assert_true(ofd >= 0);
		assert_int_equal(ref_engine_mmap(E, ofd, 3 * 4096, PROT_READ, MAP_SHARED, 0, &mo), -EBUSY);
		ref_engine_close(E, ofd);
		/* and refuses an unmapped one */
		assert_int_equal(ref_engine_open(E, &o, 0, -1, a, PECS_FLAG_FD_OUTPUT |
						 PECS_FLAG_FD_NO_GROUP), -EINVAL);
	}
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)b), 0);
	/* a redirected event cannot be mapped: another size EINVAL, the same EBUSY
	 * (measured on 6.18) */
	assert_int_equal(ref_engine_mmap(E, a, 5 * 4096, PROT_READ, MAP_SHARED, 0, &ma), -EINVAL);
	assert_int_equal(ref_engine_mmap(E, a, 3 * 4096, PROT_READ, MAP_SHARED, 0, &ma), -EBUSY);
	/* an event with its own live mapping cannot be redirected */
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)-1), 0);
	assert_int_equal(ref_engine_mmap(E, a, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &ma), 0);
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)b), -EINVAL);
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_SET_OUTPUT, (unsigned long)-1), -EINVAL);
	ref_engine_munmap(E, ma, 3 * 4096);
	ref_engine_munmap(E, mb, 3 * 4096);
	close(devnull);
	ref_engine_close(E, c1);
	ref_engine_close(E, w);
	ref_engine_close(E, b);
	ref_engine_close(E, a);
}

static void test_pause_errors(void **state)
{
	int fd = open_attr(attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP));
	void *m;

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PAUSE_OUTPUT, 1), -EINVAL);
	/* a metadata-only mapping has no data pages to pause */
	assert_int_equal(ref_engine_mmap(E, fd, 4096, PROT_READ, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PAUSE_OUTPUT, 1), -EINVAL);
	ref_engine_munmap(E, m, 4096);
	assert_int_equal(ref_engine_mmap(E, fd, 2 * 4096, PROT_READ, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
	ref_engine_munmap(E, m, 2 * 4096);
	ref_engine_close(E, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_and_encoding),
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_refresh_errors),
		cmocka_unit_test(test_filter_bpf),
		cmocka_unit_test(test_query_bpf_unpriv),
		cmocka_unit_test(test_modify_attributes),
		cmocka_unit_test(test_set_output_errors),
		cmocka_unit_test(test_pause_errors),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
