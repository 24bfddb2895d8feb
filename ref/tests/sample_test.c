/* Sample words the engine derives at delivery: a group member's READ times, and the
 * task-dependent CGROUP and CODE_PAGE_SIZE. Samples are injected, so this test has no
 * Linux twin; Required.Record.Sample.* check the same against the kernel. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#define PG 4096

struct ring {
	void *m;
	int fd;
};

static void map(struct ring *r, int fd)
{
	r->fd = fd;
	assert_int_equal(ref_engine_mmap(E, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0,
					 &r->m),
			 0);
}

/* The first record's words after its header. */
static const uint64_t *first_record(const struct ring *r, uint16_t *size)
{
	const struct pecs_mmap_page *pg = r->m;
	const struct pecs_record_header *h = (const void *)((const char *)r->m + PG);

	assert_true(__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) >= sizeof(*h));
	assert_int_equal(h->type, PECS_RECORD_SAMPLE);
	*size = h->size;
	return (const uint64_t *)(h + 1);
}

static int inject_ip(int fd, uint64_t ip)
{
	struct pecs_sample s = {.size = sizeof(s), .pid = (uint32_t)getpid(),
				.tid = (uint32_t)getpid(), .time = 1};

	s.ips = &ip;
	s.nr_ips = 1;
	return ref_engine_inject_sample(E, fd, &s);
}

static void test_member_read_times(void **state)
{
	const uint64_t rf = PECS_FORMAT_GROUP | PECS_FORMAT_TOTAL_TIME_ENABLED |
			    PECS_FORMAT_TOTAL_TIME_RUNNING;
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);
	uint64_t v[5];
	const uint64_t *w;
	uint16_t size;
	struct ring r;
	int leader, member;

	(void)state;
	a.read_format = rf;
	leader = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_true(leader >= 0);
	burn_cpu_ms(30);
	a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_READ);
	a.read_format = rf;
	a.flags |= PECS_ATTR_DISABLED;
	member = ref_engine_open(E, &a, 0, -1, leader, 0);
	assert_true(member >= 0);
	map(&r, member);
	assert_int_equal(ref_engine_ioctl(E, member, PECS_IOC_ENABLE, 0), 0);
	burn_cpu_ms(5);
	assert_int_equal(inject_ip(member, 0x1000), 0);
	w = first_record(&r, &size);
	assert_int_equal(size, 8 + 5 * 8); /* header, nr, two times, two values */
	assert_int_equal(w[0], 2);
	/* read(2) of the group: the leader's times, 30 ms more than the member's. */
	assert_int_equal(ref_engine_read(E, member, v, sizeof(v)), 40);
	assert_true(v[1] >= 30000000);
	assert_true(w[1] > 0);
	assert_true(w[1] + 25000000 < v[1]);
	assert_true(w[2] <= w[1]);
	ref_engine_munmap(E, r.m, 3 * PG);
	ref_engine_close(E, member);
	ref_engine_close(E, leader);
}

static uint64_t code_page_size_at(uint64_t ip)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000,
					   PECS_SAMPLE_CODE_PAGE_SIZE);
	const uint64_t *w;
	uint16_t size;
	struct ring r;
	uint64_t got;
	int fd = ref_engine_open(E, &a, 0, -1, -1, 0);

	assert_true(fd >= 0);
	map(&r, fd);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(inject_ip(fd, ip), 0);
	w = first_record(&r, &size);
	assert_int_equal(size, 16);
	got = w[0];
	ref_engine_munmap(E, r.m, 3 * PG);
	ref_engine_close(E, fd);
	return got;
}

static void test_code_page_size(void **state)
{
	uint64_t base = (uint64_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	/* A page written is present; one never touched is mapped but has no page. */
	p[0] = 1;
	assert_int_equal(code_page_size_at((uintptr_t)p), base);
	assert_int_equal(code_page_size_at((uintptr_t)p + PG), 0);
	/* An unmapped address, and ip 0. */
	assert_int_equal(munmap(p + 2 * PG, PG), 0);
	assert_int_equal(code_page_size_at((uintptr_t)p + 2 * PG), 0);
	assert_int_equal(code_page_size_at(0), 0);
	munmap(p, 2 * PG);
}

/* The root's id is 1 on every hierarchy; a task elsewhere gets its directory's. */
static void test_cgroup(void **state)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_CGROUP);
	FILE *f = fopen("/proc/cgroups", "r");
	char line[256];
	int have = 0, fd;
	const uint64_t *w;
	uint16_t size;
	struct ring r;

	(void)state;
	while (f && fgets(line, sizeof(line), f))
		have |= !strncmp(line, "perf_event\t", 11);
	if (f)
		fclose(f);
	fd = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	map(&r, fd);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(inject_ip(fd, 0x1000), 0);
	w = first_record(&r, &size);
	assert_int_equal(size, 16);
	if (have)
		assert_true(w[0] != 0);
	else
		assert_int_equal(w[0], 0);
	ref_engine_munmap(E, r.m, 3 * PG);
	ref_engine_close(E, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_member_read_times),
		cmocka_unit_test(test_code_page_size),
		cmocka_unit_test(test_cgroup),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
