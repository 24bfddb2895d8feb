/* The example must diverge exactly as documented, or the expectations file proves nothing:
 * these tests pin each quirk through the plugin's own vtable. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "pecs/impl.h"

const struct pecs_impl *pecs_plugin_impl(void);

static const struct pecs_impl *impl;
static void *ctx;

static int setup(void **state)
{
	(void)state;
	impl = pecs_plugin_impl();
	return impl->setup(&ctx);
}

static int teardown(void **state)
{
	(void)state;
	impl->teardown(ctx);
	return 0;
}

static void counting(struct pecs_attr *a, uint64_t read_format, int disabled)
{
	memset(a, 0, sizeof(*a));
	a->type = PECS_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PECS_SW_TASK_CLOCK;
	a->read_format = read_format;
	a->flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV |
		   (disabled ? PECS_ATTR_DISABLED : 0);
}

static uint64_t read1(int fd)
{
	uint64_t v[4] = {0};
	assert_int_equal(impl->read(ctx, fd, v, sizeof(v)), 8);
	return v[0];
}

static void count_is_a_read_stub(void **state)
{
	(void)state;
	struct pecs_attr a;
	counting(&a, 0, 0);
	int fd = impl->open(ctx, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(read1(fd), 1);
	assert_int_equal(read1(fd), 2);
	assert_int_equal(impl->ioctl(ctx, fd, PECS_IOC_DISABLE, 0), 0);
	assert_int_equal(read1(fd), 2); /* frozen while disabled */
	assert_int_equal(impl->ioctl(ctx, fd, PECS_IOC_RESET, 0), 0);
	assert_int_equal(read1(fd), 0);
	assert_int_equal(impl->close(ctx, fd), 0);
}

static void times_are_equal_and_lost_adds_nothing(void **state)
{
	(void)state;
	struct pecs_attr a;
	counting(&a, PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING |
			     PECS_FORMAT_ID | PECS_FORMAT_LOST, 0);
	int fd = impl->open(ctx, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	uint64_t v[8];
	usleep(1000);
	/* Linux gives 5 words (value, te, tr, id, lost); the snapshot 4. */
	assert_int_equal(impl->read(ctx, fd, v, sizeof(v)), 32);
	assert_true(v[1] > 0);
	assert_int_equal(v[1], v[2]);
	assert_int_equal(impl->read(ctx, fd, v, 31), -ENOSPC);
}

static void open_refusals(void **state)
{
	(void)state;
	struct pecs_attr a;
	counting(&a, PECS_FORMAT_GROUP, 1);
	assert_int_equal(impl->open(ctx, &a, 0, -1, -1, 0), -ENOSYS);
	counting(&a, 0, 1);
	assert_int_equal(impl->open(ctx, &a, -1, -1, -1, 0), -EINVAL);
	assert_int_equal(impl->open(ctx, &a, getpid(), -1, -1, 0), -ENOSYS);
	assert_int_equal(impl->open(ctx, &a, -2, -1, -1, 0), -ENOSYS);
	a.size = 4097; /* not looked at */
	a.flags |= PECS_ATTR_RESERVED_MASK;
	int fd = impl->open(ctx, &a, 0, 0, -1, 0xff);
	assert_true(fd >= 0);
	assert_int_equal(a.size, 4097); /* nothing written back */
	assert_int_equal(impl->open(ctx, &a, 0, -1, 0, 0), -EINVAL); /* stdin: open, no leader */
	assert_int_equal(impl->open(ctx, &a, 0, -1, 9999, 0), -EBADF);
	a.type = 1000;
	assert_int_equal(impl->open(ctx, &a, 0, -1, -1, 0), -EINVAL);
}

static void nine_ioctls_enosys(void **state)
{
	(void)state;
	struct pecs_attr a;
	counting(&a, 0, 1);
	int fd = impl->open(ctx, &a, 0, -1, -1, 0);
	const unsigned long nine[] = {
		PECS_IOC_REFRESH, PECS_IOC_PERIOD,  PECS_IOC_SET_OUTPUT,
		PECS_IOC_SET_FILTER, PECS_IOC_ID, PECS_IOC_SET_BPF,
		PECS_IOC_PAUSE_OUTPUT, PECS_IOC_MODIFY_ATTRIBUTES, PECS_IOC_QUERY_BPF,
	};
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(impl->ioctl(ctx, fd, nine[i], 0), -ENOSYS);
	assert_int_equal(impl->ioctl(ctx, fd, 0x2499, 0), -ENOTTY);
	/* matched as a u32: high bits are dropped */
	assert_int_equal(impl->ioctl(ctx, fd, PECS_IOC_ENABLE | (1ul << 40), 0), 0);
	assert_int_equal(impl->write(ctx, fd, "x", 1), -ENOSYS);
}

struct ring {
	int leader, member;
	uint64_t leader_id;
	uint8_t *map;
	size_t len;
};

/* A sampling member of a group, mapped, with a profiler stream; enabled then disabled. */
static void sample_run(struct ring *r, const void *stream, size_t len, size_t chunk)
{
	struct pecs_attr a;
	counting(&a, PECS_FORMAT_ID, 1);
	r->leader = impl->open(ctx, &a, 0, -1, -1, 0);
	assert_true(r->leader >= 0);
	uint64_t v[2];
	assert_int_equal(impl->read(ctx, r->leader, v, sizeof(v)), 16);
	r->leader_id = v[1];
	a.sample_period = 100000;
	a.sample_type = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			PECS_SAMPLE_TIME | PECS_SAMPLE_ID | PECS_SAMPLE_CALLCHAIN;
	r->member = impl->open(ctx, &a, 0, -1, r->leader, 0);
	assert_true(r->member >= 0);
	long page = sysconf(_SC_PAGESIZE);
	r->len = (size_t)page * 5;
	void *addr;
	assert_int_equal(impl->mmap(ctx, r->member, r->len, PROT_READ | PROT_WRITE, MAP_SHARED,
				    0, &addr), 0);
	r->map = addr;
	struct pecs_profiler_stream s = {.size = sizeof(s), .data = stream, .len = len,
					 .chunk = chunk};
	assert_int_equal(impl->set_profiler(ctx, r->member, &s), 0);
	assert_int_equal(impl->ioctl(ctx, r->member, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(impl->ioctl(ctx, r->member, PECS_IOC_DISABLE, 0), 0);
}

static void metadata_page_is_hard_coded(void **state)
{
	(void)state;
	struct ring r;
	sample_run(&r, "", 0, 0);
	const struct pecs_mmap_page *m = (const void *)r.map;
	assert_int_equal(m->version, 1);
	assert_int_equal(m->compat_version, 2);
	assert_int_equal(m->index, 3);
	assert_int_equal(m->offset, 19337);
	assert_int_equal(m->capabilities, 30);
	assert_int_equal(m->size, 0);
	assert_int_equal(m->data_offset, (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(m->data_size, r.len - (size_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(m->data_head, 0);
	impl->munmap(ctx, r.map, r.len);
}

static const uint64_t *first_record(const struct ring *r, uint16_t *misc, uint16_t *size)
{
	const struct pecs_mmap_page *m = (const void *)r->map;
	const uint8_t *rec = r->map + m->data_offset;
	const struct pecs_record_header *h = (const void *)rec;
	assert_int_equal(h->type, PECS_RECORD_SAMPLE);
	*misc = h->misc;
	*size = h->size;
	return (const uint64_t *)(rec + sizeof(*h));
}

static void fxt_samples_carry_the_leaders_id(void **state)
{
	(void)state;
	const uint64_t n = 2;
	uint64_t fxt[] = {
		PECS_FXT_MAGIC_WORD,
		/* profiler record, backtrace, inline thread, n ips: 4 + n words */
		10 | (4 + n) << 4 | 2ull << 16 | 0ull << 20 | n << 28,
		7000, 789, 987, 0x402a964b1499ull, 0x4ae0293bull,
	};
	struct ring r;
	sample_run(&r, fxt, sizeof(fxt), 0);
	uint16_t misc, size;
	const uint64_t *b = first_record(&r, &misc, &size);
	assert_int_equal(misc, PECS_MISC_KERNEL);
	/* IDENTIFIER, IP, TID, ID, CALLCHAIN(nr + 2); TIME is not written */
	assert_int_equal(size, 8 + 8 * (4 + 1 + n));
	assert_int_equal(b[0], r.leader_id);
	assert_int_equal(b[1], 0x402a964b1499ull);
	assert_int_equal(b[2], 789ull | 987ull << 32);
	assert_int_equal(b[3], r.leader_id);
	assert_int_equal(b[4], n);
	assert_int_equal(((const struct pecs_mmap_page *)(const void *)r.map)->data_head, size);
	impl->munmap(ctx, r.map, r.len);
}

static void each_session_replays_the_stream(void **state)
{
	(void)state;
	static const char text[] = "{{{reset}}}\n7\n8\n{{{bt:0:0x1000:pc}}}\n";
	struct ring r;
	sample_run(&r, text, strlen(text), 0);
	const struct pecs_mmap_page *m = (const void *)r.map;
	uint64_t one = m->data_head;
	assert_true(one > 0);
	assert_int_equal(impl->ioctl(ctx, r.member, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(impl->ioctl(ctx, r.member, PECS_IOC_DISABLE, 0), 0);
	assert_int_equal(m->data_head, 2 * one);
	impl->munmap(ctx, r.map, r.len);
}

static const char markup[] = "{{{reset}}}\n42\n43\n{{{bt:0:0x1000:pc}}}\n{{{bt:1:0x2000:ra}}}\n";

static void text_in_one_read_is_one_sample(void **state)
{
	(void)state;
	struct ring r;
	sample_run(&r, markup, strlen(markup), 0);
	uint16_t misc, size;
	const uint64_t *b = first_record(&r, &misc, &size);
	assert_int_equal(b[1], 0x1000);
	assert_int_equal(b[2], 42ull | 43ull << 32);
	assert_int_equal(b[4], 2); /* callchain nr */
	impl->munmap(ctx, r.map, r.len);
}

static void text_line_split_across_reads_is_lost(void **state)
{
	(void)state;
	/* The peek takes 8 bytes; the next read ends inside the second bt line. */
	size_t cut = (size_t)(strstr(markup, "{{{bt:1") - markup) + 5;
	struct ring r;
	sample_run(&r, markup, strlen(markup), cut - 8);
	uint16_t misc, size;
	const uint64_t *b = first_record(&r, &misc, &size);
	assert_int_equal(b[4], 1); /* the split frame is gone */
	assert_int_equal(((const struct pecs_mmap_page *)(const void *)r.map)->data_head, size);
	impl->munmap(ctx, r.map, r.len);
}

static void text_without_reset_loses_its_first_bytes(void **state)
{
	(void)state;
	static const char s[] = "42\n43\n{{{bt:0:0x1000:pc}}}\n";
	struct ring r;
	sample_run(&r, s, strlen(s), 0);
	assert_int_equal(((const struct pecs_mmap_page *)(const void *)r.map)->data_head, 0);
	impl->munmap(ctx, r.map, r.len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(count_is_a_read_stub, setup, teardown),
		cmocka_unit_test_setup_teardown(times_are_equal_and_lost_adds_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(open_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(nine_ioctls_enosys, setup, teardown),
		cmocka_unit_test_setup_teardown(metadata_page_is_hard_coded, setup, teardown),
		cmocka_unit_test_setup_teardown(fxt_samples_carry_the_leaders_id, setup, teardown),
		cmocka_unit_test_setup_teardown(each_session_replays_the_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(text_in_one_read_is_one_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(text_line_split_across_reads_is_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(text_without_reset_loses_its_first_bytes, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
