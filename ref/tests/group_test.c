/* Groups, ids and read(2) layouts, checked against layouts computed here from the
 * man page's field lists (not from the encoder). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "helpers.h"

static int open_ev(uint64_t rf, int group_fd, int disabled)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	int fd;

	a.read_format = rf;
	if (disabled)
		a.flags |= PECS_ATTR_DISABLED;
	fd = ref_engine_open(E, &a, 0, -1, group_fd, 0);
	assert_true(fd >= 1000);
	return fd;
}

static int bits(uint64_t v)
{
	return __builtin_popcountll(v);
}

static void test_ids(void **state)
{
	int a = open_ev(0, -1, 0), b = open_ev(0, a, 0), c = open_ev(0, -1, 0);
	uint64_t ia = event_id(E, a), ib = event_id(E, b), ic = event_id(E, c);

	(void)state;
	assert_true(ia > 0);
	if (getenv("PECS_ON_LINUX")) {
		/* ids are global to the kernel: other processes may take some between */
		assert_true(ib > ia);
		assert_true(ic > ib);
	} else {
		assert_int_equal(ib, ia + 1);
		assert_int_equal(ic, ib + 1);
	}
	assert_int_equal(ref_engine_ioctl(E, a, PECS_IOC_ID, 0), -EFAULT);
	ref_engine_close(E, c);
	ref_engine_close(E, b);
	ref_engine_close(E, a);
}

/* Engine fds start at 1000, reuse the lowest free one, and unknown fds are EBADF. */
static void test_fds(void **state)
{
	int a = open_ev(0, -1, 0), b = open_ev(0, -1, 0);
	uint64_t v;

	(void)state;
	assert_int_equal(b, a + 1);
	ref_engine_close(E, a);
	assert_int_equal(open_ev(0, -1, 0), a);
	assert_int_equal(ref_engine_read(E, 3, &v, 8), -EBADF);
	assert_int_equal(ref_engine_read(E, 999, &v, 8), -EBADF);
	assert_int_equal(ref_engine_read(E, b + 100, &v, 8), -EBADF);
	assert_int_equal(ref_engine_ioctl(E, 5000, PECS_IOC_ENABLE, 0), -EBADF);
	assert_int_equal(ref_engine_close(E, 5000), -EBADF);
	assert_int_equal(ref_engine_write(E, a, &v, 8), -EINVAL);
	assert_int_equal(ref_engine_write(E, 5000, &v, 8), -EBADF);
	ref_engine_close(E, a);
	ref_engine_close(E, b);
	assert_int_equal(ref_engine_close(E, b), -EBADF);
}

/* Single-event layout: value, [TE], [TR], [ID], [LOST]. */
static void check_single(uint64_t rf)
{
	uint64_t buf[8], id;
	size_t want = 8u * (1 + bits(rf & 0x17));
	int fd = open_ev(rf, -1, 1), k = 1;

	id = event_id(E, fd);
	assert_int_equal(ref_engine_read(E, fd, buf, want - 1), -ENOSPC);
	assert_int_equal(ref_engine_read(E, fd, buf, 0), -ENOSPC);
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(ref_engine_read(E, fd, buf, sizeof(buf)), want);
	/* never enabled: value and times are 0, the id is filled in */
	assert_int_equal(buf[0], 0);
	if (rf & PECS_FORMAT_TOTAL_TIME_ENABLED)
		assert_int_equal(buf[k++], 0);
	if (rf & PECS_FORMAT_TOTAL_TIME_RUNNING)
		assert_int_equal(buf[k++], 0);
	if (rf & PECS_FORMAT_ID)
		assert_int_equal(buf[k++], id);
	if (rf & PECS_FORMAT_LOST)
		assert_int_equal(buf[k++], 0);
	assert_int_equal(buf[k], 0xa5a5a5a5a5a5a5a5ull); /* nothing past read_size */
	ref_engine_close(E, fd);
}

/* Group layout: nr, [TE], [TR], then per member value, [ID], [LOST]; leader first. */
static void check_group(uint64_t rf)
{
	uint64_t buf[16];
	int l = open_ev(rf, -1, 1), m = open_ev(rf, l, 1);
	uint64_t il = event_id(E, l), im = event_id(E, m);
	size_t hdr = 1 + bits(rf & 3), ent = 1 + bits(rf & 0x14);
	size_t want = 8 * (hdr + 2 * ent);

	for (int via = 0; via < 2; via++) {
		int fd = via ? m : l;

		assert_int_equal(ref_engine_read(E, fd, buf, want - 1), -ENOSPC);
		memset(buf, 0xa5, sizeof(buf));
		assert_int_equal(ref_engine_read(E, fd, buf, sizeof(buf)), want);
		assert_int_equal(buf[0], 2);
		for (int i = 0; i < 2; i++) {
			uint64_t *e = &buf[hdr + i * ent];
			int k = 1;

			assert_int_equal(e[0], 0);
			if (rf & PECS_FORMAT_ID)
				assert_int_equal(e[k++], i ? im : il);
			if (rf & PECS_FORMAT_LOST)
				assert_int_equal(e[k++], 0);
		}
		assert_int_equal(buf[want / 8], 0xa5a5a5a5a5a5a5a5ull);
	}
	ref_engine_close(E, m);
	ref_engine_close(E, l);
}

static void test_read_formats(void **state)
{
	(void)state;
	for (uint64_t rf = 0; rf < 32; rf++) {
		if (rf & PECS_FORMAT_GROUP)
			check_group(rf);
		else
			check_single(rf);
	}
}

/* A member opened without GROUP reads only itself; with GROUP, the whole group. */
static void test_member_formats(void **state)
{
	int l = open_ev(PECS_FORMAT_GROUP | PECS_FORMAT_ID, -1, 1);
	int m = open_ev(PECS_FORMAT_ID, l, 1);
	uint64_t buf[8];

	(void)state;
	assert_int_equal(ref_engine_read(E, m, buf, sizeof(buf)), 16);
	assert_int_equal(buf[1], event_id(E, m));
	assert_int_equal(ref_engine_read(E, l, buf, sizeof(buf)), 40);
	assert_int_equal(buf[0], 2);
	assert_int_equal(buf[2], event_id(E, l));
	assert_int_equal(buf[4], event_id(E, m));
	ref_engine_close(E, m);
	ref_engine_close(E, l);
}

static void test_close_leader(void **state)
{
	uint64_t rf = PECS_FORMAT_GROUP | PECS_FORMAT_ID;
	int l = open_ev(rf, -1, 1), m1 = open_ev(rf, l, 1), m2 = open_ev(rf, l, 1);
	uint64_t buf[8], i1 = event_id(E, m1), i2 = event_id(E, m2);

	(void)state;
	assert_int_equal(ref_engine_read(E, m2, buf, sizeof(buf)), 8 + 3 * 16);
	/* creation order */
	assert_int_equal(buf[4], i1);
	assert_int_equal(buf[6], i2);
	ref_engine_close(E, l);
	/* each member is now a group of one */
	assert_int_equal(ref_engine_read(E, m1, buf, sizeof(buf)), 24);
	assert_int_equal(buf[0], 1);
	assert_int_equal(buf[2], i1);
	assert_int_equal(ref_engine_read(E, m2, buf, sizeof(buf)), 24);
	assert_int_equal(buf[2], i2);
	/* the closed leader's fd is gone */
	assert_int_equal(ref_engine_open(E, &(struct pecs_attr){.size = 136, .type = 1,
			 .config = 1, .flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV},
			 0, -1, l, 0), -EBADF);
	/* closing a member shrinks the group */
	ref_engine_close(E, m2);
	ref_engine_close(E, m1);
	l = open_ev(rf, -1, 1);
	m1 = open_ev(rf, l, 1);
	m2 = open_ev(rf, l, 1);
	ref_engine_close(E, m1);
	assert_int_equal(ref_engine_read(E, l, buf, sizeof(buf)), 8 + 2 * 16);
	assert_int_equal(buf[4], event_id(E, m2));
	ref_engine_close(E, m2);
	ref_engine_close(E, l);
}

static void test_group_rules(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	int l = open_ev(0, -1, 0), m = open_ev(0, l, 0), cw;

	(void)state;
	/* a member cannot lead */
	assert_int_equal(ref_engine_open(E, &a, 0, -1, m, 0), -EINVAL);
	/* NO_GROUP ignores the group even when the fd is a member */
	cw = ref_engine_open(E, &a, 0, -1, m, PECS_FLAG_FD_NO_GROUP);
	assert_true(cw >= 0);
	ref_engine_close(E, cw);
	/* only a leader may be pinned or exclusive */
	a.flags |= PECS_ATTR_PINNED;
	assert_int_equal(ref_engine_open(E, &a, 0, -1, l, 0), -EINVAL);
	a.flags ^= PECS_ATTR_PINNED | PECS_ATTR_EXCLUSIVE;
	assert_int_equal(ref_engine_open(E, &a, 0, -1, l, 0), -EINVAL);
	/* another cpu, another context, another clock, another inherit */
	a = attr_counting(PECS_SW_TASK_CLOCK);
	assert_int_equal(ref_engine_open(E, &a, 0, 1, l, 0), -EINVAL);
	cw = ref_engine_open(E, &a, -1, 0, -1, 0);
	assert_true(cw >= 0);
	assert_int_equal(ref_engine_open(E, &a, 0, 0, cw, 0), -EINVAL);
	assert_int_equal(ref_engine_open(E, &a, -1, 1, cw, 0), -EINVAL);
	ref_engine_close(E, cw);
	a.flags |= PECS_ATTR_USE_CLOCKID;
	a.clockid = 1;
	assert_int_equal(ref_engine_open(E, &a, 0, -1, l, 0), -EINVAL);
	a = attr_counting(PECS_SW_TASK_CLOCK);
	a.flags |= PECS_ATTR_INHERIT;
	assert_int_equal(ref_engine_open(E, &a, 0, -1, l, 0), -EINVAL);
	/* any software event may join */
	a = attr_counting(PECS_SW_PAGE_FAULTS);
	cw = ref_engine_open(E, &a, 0, -1, l, 0);
	assert_true(cw >= 0);
	ref_engine_close(E, cw);
	ref_engine_close(E, m);
	ref_engine_close(E, l);
}

/* The 2048th member of a GROUP-only leader makes read() exceed 16 KiB: E2BIG. */
static void test_group_read_size(void **state)
{
	int fds[2048], n;

	(void)state;
	fds[0] = open_ev(PECS_FORMAT_GROUP, -1, 1);
	for (n = 1; n < 2047; n++)
		fds[n] = open_ev(PECS_FORMAT_GROUP, fds[0], 1);
	{
		struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);

		a.read_format = PECS_FORMAT_GROUP;
		a.flags |= PECS_ATTR_DISABLED;
		assert_int_equal(ref_engine_open(E, &a, 0, -1, fds[0], 0), -E2BIG);
		/* a member with a smaller format is still refused for the others' sake */
		a.read_format = 0;
		assert_int_equal(ref_engine_open(E, &a, 0, -1, fds[0], 0), -E2BIG);
	}
	{
		static uint64_t buf[2048];

		assert_int_equal(ref_engine_read(E, fds[5], buf, sizeof(buf)), 8 + 2047 * 8);
		assert_int_equal(buf[0], 2047);
	}
	while (n--)
		ref_engine_close(E, fds[n]);
}

/* FLAG_GROUP from a member's fd reaches the whole group; arg is cut to 32 bits. */
/* A member's times move only while its leader is enabled as well: before, and again
 * after the leader is disabled, an enabled member's value and times stand still. */
static void test_member_times_follow_leader(void **state)
{
	uint64_t rf = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING;
	int l = open_ev(rf, -1, 1), m = open_ev(rf, l, 0);
	uint64_t a[3], b[3];

	(void)state;
	burn_cpu_ms(3);
	assert_int_equal(ref_engine_read(E, m, a, sizeof(a)), 24);
	assert_int_equal(a[0], 0);
	assert_int_equal(a[1], 0);
	assert_int_equal(a[2], 0);
	assert_int_equal(ref_engine_ioctl(E, l, PECS_IOC_ENABLE, 0), 0);
	burn_cpu_ms(3);
	assert_int_equal(ref_engine_ioctl(E, l, PECS_IOC_DISABLE, 0), 0);
	assert_int_equal(ref_engine_read(E, m, a, sizeof(a)), 24);
	assert_true(a[0] > 0 && a[1] > 0 && a[2] > 0);
	burn_cpu_ms(3);
	assert_int_equal(ref_engine_read(E, m, b, sizeof(b)), 24);
	assert_int_equal(b[0], a[0]);
	assert_int_equal(b[1], a[1]);
	assert_int_equal(b[2], a[2]);
	ref_engine_close(E, m);
	ref_engine_close(E, l);
}

static void test_group_ioctls(void **state)
{
	uint64_t rf = PECS_FORMAT_GROUP | PECS_FORMAT_TOTAL_TIME_ENABLED;
	int l = open_ev(rf, -1, 1), m = open_ev(rf, l, 1);
	uint64_t b1[4], b2[4];

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, m, PECS_IOC_ENABLE, PECS_IOC_FLAG_GROUP), 0);
	burn_cpu_ms(5);
	assert_int_equal(ref_engine_read(E, l, b1, sizeof(b1)), 32);
	assert_true(b1[1] > 0); /* leader enabled */
	assert_true(b1[3] > 0); /* member enabled and running */
	/* bit 32 is not the group flag: only the leader is disabled */
	assert_int_equal(ref_engine_ioctl(E, l, PECS_IOC_DISABLE, 1ul << 32), 0);
	ref_engine_read(E, l, b1, sizeof(b1));
	burn_cpu_ms(5);
	ref_engine_read(E, l, b2, sizeof(b2));
	assert_int_equal(b1[1], b2[1]);
	assert_int_equal(b1[2], b2[2]);
	/* the member is enabled but cannot run without its leader */
	assert_int_equal(b1[3], b2[3]);
	assert_int_equal(ref_engine_ioctl(E, m, PECS_IOC_DISABLE, PECS_IOC_FLAG_GROUP), 0);
	/* DISABLE(GROUP) then ENABLE(leader) leaves the member disabled */
	assert_int_equal(ref_engine_ioctl(E, l, PECS_IOC_ENABLE, 0), 0);
	ref_engine_read(E, l, b1, sizeof(b1));
	burn_cpu_ms(5);
	ref_engine_read(E, l, b2, sizeof(b2));
	assert_true(b2[2] > b1[2]);
	assert_int_equal(b1[3], b2[3]);
	/* RESET(GROUP) zeroes every count */
	assert_int_equal(ref_engine_ioctl(E, m, PECS_IOC_ENABLE, 0), 0);
	burn_cpu_ms(2);
	assert_int_equal(ref_engine_ioctl(E, l, PECS_IOC_DISABLE, PECS_IOC_FLAG_GROUP), 0);
	assert_int_equal(ref_engine_ioctl(E, m, PECS_IOC_RESET, 0xfffffff1ul), 0);
	ref_engine_read(E, l, b1, sizeof(b1));
	assert_int_equal(b1[2], 0);
	assert_int_equal(b1[3], 0);
	assert_true(b1[1] > 0); /* times survive RESET */
	ref_engine_close(E, m);
	ref_engine_close(E, l);
}

/* Shared with the thread: release on store, acquire on load, so the test thread sees the
 * tid as soon as it is written and the thread sees go. */
struct short_lived {
	_Atomic pid_t tid;
	atomic_int go;
};

static void *live_briefly(void *arg)
{
	struct short_lived *s = arg;

	atomic_store_explicit(&s->tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	while (!atomic_load_explicit(&s->go, memory_order_acquire))
		;
	return NULL;
}

/* A leader whose task has exited takes no new members: ENODEV. */
static void test_leader_task_exited(void **state)
{
	struct short_lived s = {0, 0};
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	pthread_t th;
	pid_t tid;
	int l;

	(void)state;
	pthread_create(&th, NULL, live_briefly, &s);
	while (!(tid = atomic_load_explicit(&s.tid, memory_order_acquire)))
		;
	l = ref_engine_open(E, &a, tid, -1, -1, 0);
	assert_true(l >= 0);
	atomic_store_explicit(&s.go, 1, memory_order_release);
	pthread_join(th, NULL);
	/* join returns at the thread's futex wake, a little before the kernel is done with
	 * it: wait until the tid is really gone */
	for (int i = 0; i < 1000; i++) {
		int fd = ref_engine_open(E, &a, tid, -1, -1, 0);
		struct timespec ms = {0, 1000000};

		if (fd < 0)
			break;
		ref_engine_close(E, fd);
		nanosleep(&ms, NULL);
	}
	/* the group fd is looked at before the pid */
	assert_int_equal(ref_engine_open(E, &a, tid, -1, l, 0), -ENODEV);
	assert_int_equal(ref_engine_open(E, &a, tid, -1, -1, 0), -ESRCH);
	assert_int_equal(ref_engine_open(E, &a, 0, -1, l, 0), -ENODEV);
	ref_engine_close(E, l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_fds),
		cmocka_unit_test(test_read_formats),
		cmocka_unit_test(test_member_formats),
		cmocka_unit_test(test_close_leader),
		cmocka_unit_test(test_group_rules),
		cmocka_unit_test(test_group_read_size),
		cmocka_unit_test(test_group_ioctls),
		cmocka_unit_test(test_member_times_follow_leader),
		cmocka_unit_test(test_leader_task_exited),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
