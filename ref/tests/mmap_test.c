/* mmap(2) rules, poll(2), and samples on their way into the ring: enabled state,
 * REFRESH, PAUSE_OUTPUT, SET_OUTPUT, lost accounting. Tests that need
 * ref_engine_inject_sample() are skipped on Linux (PECS_ON_LINUX). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "helpers.h"

#define PG 4096

static int on_linux(void)
{
	return getenv("PECS_ON_LINUX") != NULL;
}

static int open_sampling(uint64_t st, uint64_t rf, uint64_t extra_flags)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000, st);
	int fd;

	a.read_format = rf;
	a.flags |= extra_flags;
	fd = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_true(fd >= 1000);
	return fd;
}

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

static void test_lengths(void **state)
{
	static const int good[] = {1, 2, 3, 5, 9, 17};
	static const int bad[] = {4, 6, 7, 8, 10, 12};
	int fd = open_sampling(PECS_SAMPLE_IP, 0, 0);
	void *m;

	(void)state;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(ref_engine_mmap(E, fd, (size_t)good[i] * PG, PROT_READ, MAP_SHARED, 0, &m), 0);
		assert_int_equal(ref_engine_munmap(E, m, (size_t)good[i] * PG), 0);
		assert_int_equal(ref_engine_mmap(E, fd, (size_t)bad[i] * PG, PROT_READ, MAP_SHARED, 0, &m),
				 -EINVAL);
	}
	/* the length is rounded up to pages first */
	assert_int_equal(ref_engine_mmap(E, fd, 2 * PG - 100, PROT_READ, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_munmap(E, m, 2 * PG), 0);
	ref_engine_close(E, fd);
}

static void test_flags_prot(void **state)
{
	int fd = open_sampling(PECS_SAMPLE_IP, 0, 0);
	void *m, *m2;

	(void)state;
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ, MAP_PRIVATE, 0, &m), -EINVAL);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_EXEC, MAP_SHARED, 0, &m), -EPERM);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, 0, &m), -EPERM);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ, MAP_SHARED, PG, &m), -EINVAL);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ, MAP_SHARED, 100, &m), -EINVAL);
	/* a second map of the same size shares the buffer; another size is refused */
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_mmap(E, fd, 5 * PG, PROT_READ, MAP_SHARED, 0, &m2), -EINVAL);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ, MAP_SHARED, 0, &m2), 0);
	assert_ptr_not_equal(m, m2);
	((struct pecs_mmap_page *)m)->data_tail = 64;
	assert_int_equal(((struct pecs_mmap_page *)m2)->data_tail, 64);
	((struct pecs_mmap_page *)m)->data_tail = 0;
	assert_int_equal(((struct pecs_mmap_page *)m2)->data_offset, PG);
	assert_int_equal(((struct pecs_mmap_page *)m2)->data_size, 2 * PG);
	/* perf mappings go whole */
	assert_int_equal(ref_engine_munmap(E, m, PG), -EINVAL);
	assert_int_equal(ref_engine_munmap(E, m, 3 * PG), 0);
	assert_int_equal(ref_engine_munmap(E, m2, 3 * PG), 0);
	/* a counting event maps too */
	{
		int c = ref_engine_open(E, &(struct pecs_attr){.size = 136, .type = 1, .config = 1,
				.flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV}, 0, -1, -1, 0);

		assert_int_equal(ref_engine_mmap(E, c, 3 * PG, PROT_READ, MAP_SHARED, 0, &m), 0);
		assert_int_equal(ref_engine_poll(E, c, POLLIN, 0), 0);
		assert_int_equal(ref_engine_munmap(E, m, 3 * PG), 0);
		ref_engine_close(E, c);
	}
	ref_engine_close(E, fd);
}

static void test_poll(void **state)
{
	int fd = open_sampling(PECS_SAMPLE_IP, 0, 0);
	void *m;

	(void)state;
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), POLLHUP);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), 0);
	assert_int_equal(ref_engine_munmap(E, m, 3 * PG), 0);
	/* unmapped again: no buffer */
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), POLLHUP);
	ref_engine_close(E, fd);
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
	if (on_linux())
		skip();
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

/* REFRESH n: n more overflows, the last one still written, then the event is off. */
static void test_refresh(void **state)
{
	uint64_t buf[2], te1, te2;
	void *m;
	int fd;

	(void)state;
	if (on_linux())
		skip();
	fd = open_sampling(PECS_SAMPLE_IP, PECS_FORMAT_TOTAL_TIME_ENABLED, PECS_ATTR_DISABLED);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_REFRESH, 2), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(inject(fd, 0x10 + i), 0);
	assert_int_equal(head_of(m), 2 * 16);
	ref_engine_read(E, fd, buf, sizeof(buf));
	te1 = buf[1];
	burn_cpu_ms(3);
	ref_engine_read(E, fd, buf, sizeof(buf));
	te2 = buf[1];
	assert_int_equal(te1, te2); /* disabled itself */
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_REFRESH, 1), 0);
	assert_int_equal(inject(fd, 0x20), 0);
	assert_int_equal(inject(fd, 0x21), 0);
	assert_int_equal(head_of(m), 3 * 16);
	ref_engine_munmap(E, m, 3 * PG);
	ref_engine_close(E, fd);
}

/* Paused output counts samples lost; a LOST record goes out before the next sample. */
static void test_pause_lost(void **state)
{
	const struct pecs_record_header *h;
	uint64_t buf[2], id;
	void *m;
	int fd;

	(void)state;
	if (on_linux())
		skip();
	fd = open_sampling(PECS_SAMPLE_IP, PECS_FORMAT_LOST, 0);
	id = event_id(E, fd);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	assert_int_equal(inject(fd, 1), 0);
	assert_int_equal(inject(fd, 2), 0);
	assert_int_equal(head_of(m), 0);
	assert_int_equal(ref_engine_read(E, fd, buf, sizeof(buf)), 16);
	assert_int_equal(buf[1], 2);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
	assert_int_equal(inject(fd, 3), 0);
	h = rec_at(m, 0);
	assert_int_equal(h->type, PECS_RECORD_LOST);
	assert_int_equal(h->size, 24);
	assert_int_equal(((const uint64_t *)h)[1], id);
	assert_int_equal(((const uint64_t *)h)[2], 2);
	h = rec_at(m, 24);
	assert_int_equal(h->type, PECS_RECORD_SAMPLE);
	assert_int_equal(((const uint64_t *)h)[1], 3);
	assert_int_equal(head_of(m), 40);
	ref_engine_munmap(E, m, 3 * PG);
	ref_engine_close(E, fd);
}

/* A full writable ring: lost counted per event, visible in read(); a metadata-only map
 * drops samples without counting them. */
static void test_full_and_one_page(void **state)
{
	uint64_t buf[2];
	void *m;
	int fd;

	(void)state;
	if (on_linux())
		skip();
	fd = open_sampling(PECS_SAMPLE_IP, PECS_FORMAT_LOST, 0);
	assert_int_equal(ref_engine_mmap(E, fd, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	for (int i = 0; i < PG / 16 + 10; i++)
		assert_int_equal(inject(fd, (uint64_t)i), 0);
	ref_engine_read(E, fd, buf, sizeof(buf));
	assert_true(buf[1] >= 10);
	assert_true(head_of(m) <= PG);
	ref_engine_munmap(E, m, 2 * PG);
	ref_engine_close(E, fd);

	fd = open_sampling(PECS_SAMPLE_IP, PECS_FORMAT_LOST, 0);
	assert_int_equal(ref_engine_mmap(E, fd, PG, PROT_READ, MAP_SHARED, 0, &m), 0);
	assert_int_equal(inject(fd, 1), 0);
	ref_engine_read(E, fd, buf, sizeof(buf));
	assert_int_equal(buf[1], 0);
	ref_engine_munmap(E, m, PG);
	ref_engine_close(E, fd);
}

/* SET_OUTPUT: the source's samples land in the target's ring with the source's id. */
static void test_set_output_redirect(void **state)
{
	uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_ID;
	int t = open_sampling(st, 0, 0), s = open_sampling(st, 0, 0);
	uint64_t sid = event_id(E, s);
	void *m;

	(void)state;
	if (on_linux())
		skip();
	assert_int_equal(ref_engine_mmap(E, t, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_SET_OUTPUT, (unsigned long)t), 0);
	assert_int_equal(inject(s, 0x77), 0);
	assert_int_equal(head_of(m), 24);
	assert_int_equal(((const uint64_t *)rec_at(m, 0))[2], sid);
	assert_int_equal(ref_engine_poll(E, s, POLLIN, 0), 0);
	/* back to no buffer */
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_SET_OUTPUT, (unsigned long)-1), 0);
	assert_int_equal(inject(s, 0x78), 0);
	assert_int_equal(head_of(m), 24);
	assert_int_equal(ref_engine_poll(E, s, POLLIN, 0), POLLHUP);
	/* when the target's last mapping goes, redirected events lose the buffer */
	assert_int_equal(ref_engine_ioctl(E, s, PECS_IOC_SET_OUTPUT, (unsigned long)t), 0);
	assert_int_equal(ref_engine_munmap(E, m, 3 * PG), 0);
	assert_int_equal(ref_engine_poll(E, s, POLLIN, 0), POLLHUP);
	ref_engine_close(E, s);
	ref_engine_close(E, t);
}

/* A group member's samples carry its own id (Linux), not the leader's (Starnix seed). */
static void test_member_sample_id(void **state)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000,
					   PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID);
	int l, mfd;
	void *m;

	(void)state;
	if (on_linux())
		skip();
	l = ref_engine_open(E, &a, 0, -1, -1, 0);
	mfd = ref_engine_open(E, &a, 0, -1, l, 0);
	assert_int_equal(ref_engine_mmap(E, mfd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(inject(mfd, 5), 0);
	{
		const uint64_t *r = (const uint64_t *)rec_at(m, 0);
		uint64_t id = event_id(E, mfd);

		assert_int_equal(r[1], id);
		assert_int_equal(r[2], id);
		assert_int_equal(r[3], id);
		assert_int_not_equal(id, event_id(E, l));
	}
	ref_engine_munmap(E, m, 3 * PG);
	ref_engine_close(E, mfd);
	ref_engine_close(E, l);
}

/* close() while mapped: the mapping stays valid and the event stays in its group. */
static void test_close_while_mapped(void **state)
{
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	uint64_t buf[4];
	void *m;
	int l, mfd;

	(void)state;
	a.read_format = PECS_FORMAT_GROUP;
	l = ref_engine_open(E, &a, 0, -1, -1, 0);
	mfd = ref_engine_open(E, &a, 0, -1, l, 0);
	assert_int_equal(ref_engine_mmap(E, mfd, 3 * PG, PROT_READ, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_close(E, mfd), 0);
	assert_int_equal(ref_engine_read(E, l, buf, sizeof(buf)), 24);
	assert_int_equal(buf[0], 2);
	assert_int_equal(((struct pecs_mmap_page *)m)->data_offset, PG);
	assert_int_equal(ref_engine_munmap(E, m, 3 * PG), 0);
	assert_int_equal(ref_engine_read(E, l, buf, sizeof(buf)), 16);
	assert_int_equal(buf[0], 1);
	ref_engine_close(E, l);
}

/* Shared with the thread: release on store, acquire on load. */
struct brief {
	_Atomic pid_t tid;
	atomic_int go;
};

static void *brief_thread(void *arg)
{
	struct brief *b = arg;

	atomic_store_explicit(&b->tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	while (!atomic_load_explicit(&b->go, memory_order_acquire))
		;
	return NULL;
}

/* A task event whose task has exited polls POLLHUP even with a buffer. */
static void test_poll_task_exited(void **state)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	struct brief b = {0, 0};
	pthread_t th;
	pid_t tid;
	void *m;
	int fd, r = 0;

	(void)state;
	pthread_create(&th, NULL, brief_thread, &b);
	while (!(tid = atomic_load_explicit(&b.tid, memory_order_acquire)))
		;
	fd = ref_engine_open(E, &a, tid, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_poll(E, fd, POLLIN, 0), 0);
	atomic_store_explicit(&b.go, 1, memory_order_release);
	pthread_join(th, NULL);
	/* the kernel finishes the thread shortly after join returns */
	for (int i = 0; i < 1000 && r != POLLHUP; i++) {
		struct timespec ms = {0, 1000000};

		r = ref_engine_poll(E, fd, POLLIN, 0);
		nanosleep(&ms, NULL);
	}
	assert_int_equal(r, POLLHUP);
	ref_engine_munmap(E, m, 3 * PG);
	ref_engine_close(E, fd);
}

struct late {
	int fd;
};

static void *inject_later(void *arg)
{
	struct late *l = arg;
	struct timespec ts = {0, 50 * 1000000L};

	nanosleep(&ts, NULL);
	inject(l->fd, 9);
	return NULL;
}

static void test_poll_waits(void **state)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	struct late l;
	pthread_t th;
	void *m;

	(void)state;
	if (on_linux())
		skip();
	a.wakeup_events = 1;
	l.fd = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_mmap(E, l.fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_poll(E, l.fd, POLLIN, 10), 0);
	pthread_create(&th, NULL, inject_later, &l);
	assert_int_equal(ref_engine_poll(E, l.fd, POLLIN, 5000), POLLIN);
	pthread_join(th, NULL);
	ref_engine_munmap(E, m, 3 * PG);
	ref_engine_close(E, l.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_flags_prot),
		cmocka_unit_test(test_poll),
		cmocka_unit_test(test_samples_and_wakeup),
		cmocka_unit_test(test_refresh),
		cmocka_unit_test(test_pause_lost),
		cmocka_unit_test(test_full_and_one_page),
		cmocka_unit_test(test_set_output_redirect),
		cmocka_unit_test(test_member_sample_id),
		cmocka_unit_test(test_close_while_mapped),
		cmocka_unit_test(test_poll_waits),
		cmocka_unit_test(test_poll_task_exited),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
