/* The pecs.user_regs blob (fxt_format.h): written by ref_fxt_write_user_regs(), read
 * back into the sample of the backtrace right after it, and nowhere else. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pecs/stream/fxt_format.h"
#include "pecs/stream/fxt_reader.h"
#include "pecs/stream/fxt_writer.h"

struct seen {
	int samples;
	struct pecs_sample last;
	uint64_t regs[8];
	uint8_t stack[64];
};

static int sink(void *ctx, const struct pecs_sample *s)
{
	struct seen *seen = ctx;

	seen->samples++;
	seen->last = *s;
	if (s->nr_regs)
		memcpy(seen->regs, s->regs, 8 * s->nr_regs);
	if (s->stack_size)
		memcpy(seen->stack, s->stack, s->stack_size);
	return 0;
}

static const struct ref_fxt_who who = { 0, 10, 11 };
static const uint64_t ips[2] = { 0x401000, 0x402000 };
static const uint64_t regs[3] = { 0x11, 0x22, 0x33 };
static const uint8_t stack[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 };

static size_t head(uint8_t *buf, size_t cap)
{
	size_t n = (size_t)ref_fxt_write_magic(buf, cap);

	return n + (size_t)ref_fxt_write_init(buf + n, cap - n, 1000000000u);
}

/* Feeds buf[0..len) one byte at a time (records split across pushes) or whole. */
static int feed(struct seen *seen, const uint8_t *buf, size_t len, int bytewise,
		struct ref_stream_error *err)
{
	struct ref_stream_target t = { .sink = sink, .sink_ctx = seen };
	struct ref_fxt_reader *r;
	int ret = 0;

	memset(seen, 0, sizeof(*seen));
	assert_int_equal(ref_fxt_reader_new(&r, &t), 0);
	for (size_t i = 0; i < len && !ret; i += bytewise ? 1 : len)
		ret = ref_fxt_reader_feed(r, buf + i, bytewise ? 1 : len);
	if (!ret)
		ret = ref_fxt_reader_finish(r);
	ref_fxt_reader_error(r, err);
	ref_fxt_reader_free(r);
	return ret;
}

static void test_blob_reaches_next_backtrace(void **state)
{
	uint8_t buf[1024];
	struct ref_stream_error err;
	struct seen seen;
	size_t n = head(buf, sizeof(buf));

	(void)state;
	n += (size_t)ref_fxt_write_user_regs(buf + n, sizeof(buf) - n, PECS_SAMPLE_REGS_ABI_64,
					     regs, 3, stack, sizeof(stack));
	n += (size_t)ref_fxt_write_backtrace(buf + n, sizeof(buf) - n, &who, 5, ips, 2);
	/* A second backtrace gets none: the blob was the first one's. */
	n += (size_t)ref_fxt_write_backtrace(buf + n, sizeof(buf) - n, &who, 6, ips, 2);
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		assert_int_equal(feed(&seen, buf, n, bytewise, &err), 0);
		assert_int_equal(seen.samples, 2);
		assert_int_equal(seen.last.regs_abi, 0);
	}
	n = head(buf, sizeof(buf));
	n += (size_t)ref_fxt_write_user_regs(buf + n, sizeof(buf) - n, PECS_SAMPLE_REGS_ABI_64,
					     regs, 3, stack, sizeof(stack));
	n += (size_t)ref_fxt_write_backtrace(buf + n, sizeof(buf) - n, &who, 5, ips, 2);
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		assert_int_equal(feed(&seen, buf, n, bytewise, &err), 0);
		assert_int_equal(seen.samples, 1);
		assert_int_equal(seen.last.regs_abi, PECS_SAMPLE_REGS_ABI_64);
		assert_int_equal(seen.last.nr_regs, 3);
		assert_memory_equal(seen.regs, regs, sizeof(regs));
		assert_int_equal(seen.last.stack_size, sizeof(stack));
		assert_memory_equal(seen.stack, stack, sizeof(stack));
	}
}

/* Any other record between the blob and the backtrace leaves the sample without. */
static void test_blob_then_other_record(void **state)
{
	uint8_t buf[1024];
	struct ref_stream_error err;
	struct seen seen;
	struct ref_fxt_str none = { NULL, 0, 0 };
	size_t n = head(buf, sizeof(buf));

	(void)state;
	n += (size_t)ref_fxt_write_user_regs(buf + n, sizeof(buf) - n, PECS_SAMPLE_REGS_ABI_64,
					     regs, 3, stack, sizeof(stack));
	n += (size_t)ref_fxt_write_kernel_object(buf + n, sizeof(buf) - n, 2, 11, &none);
	n += (size_t)ref_fxt_write_backtrace(buf + n, sizeof(buf) - n, &who, 5, ips, 2);
	assert_int_equal(feed(&seen, buf, n, 0, &err), 0);
	assert_int_equal(seen.samples, 1);
	assert_int_equal(seen.last.regs_abi, 0);
	assert_null(seen.last.regs);
}

/* A blob of another name is passed over; ours with a payload its counts do not match is
 * FXT_BAD_USER_REGS. */
static void test_foreign_and_bad_blobs(void **state)
{
	uint8_t buf[1024];
	struct ref_stream_error err;
	struct seen seen;
	size_t n = head(buf, sizeof(buf)), blob;

	(void)state;
	blob = n;
	n += (size_t)ref_fxt_write_user_regs(buf + n, sizeof(buf) - n, PECS_SAMPLE_REGS_ABI_64,
					     regs, 3, stack, sizeof(stack));
	n += (size_t)ref_fxt_write_backtrace(buf + n, sizeof(buf) - n, &who, 5, ips, 2);
	buf[blob + 8] = 'q'; /* "qecs.user_regs" */
	assert_int_equal(feed(&seen, buf, n, 0, &err), 0);
	assert_int_equal(seen.samples, 1);
	assert_int_equal(seen.last.regs_abi, 0);
	buf[blob + 8] = 'p';
	buf[blob + 8 + 16 + 8] = 200; /* nr_regs 200: past the payload */
	assert_int_equal(feed(&seen, buf, n, 0, &err), -EBADMSG);
	assert_string_equal(ref_stream_errc_name(err.code), "FXT_BAD_USER_REGS");
	assert_int_equal(err.offset, blob);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blob_reaches_next_backtrace),
		cmocka_unit_test(test_blob_then_other_record),
		cmocka_unit_test(test_foreign_and_bad_blobs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
