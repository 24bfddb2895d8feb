/* Records through the reference ring: page offsets, the data_size - 8 fill limit
 * (CIRC_SPACE), LOST before the next record, overwrite mode, the 1-page mapping,
 * write_backward, watermark and wakeup_events wakeups. Each test reads the ring through
 * a mapping of its own, as a perf reader would. ring_page_test.c has the metadata page.
 *
 * Expected values come from docs/behaviours.md (RING-*; measured on Linux 6.18) and
 * from kernel/events/ring_buffer.c (6.12).
 */
#define _GNU_SOURCE
#include "ring_test_support.h"

static void test_wrap_at_exact_offsets(void **state)
{
	struct ref_ring *r;
	struct view v;
	uint8_t rec[64], back[64];
	uint64_t seq = 0;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 0, 0), 0); /* one data page */
	v = map_view(r, PROT_READ | PROT_WRITE);
	/* 24-byte records up to 8 bytes before the end... */
	while (view_head(&v) + 24 <= v.size - 8) {
		make_record(rec, PECS_RECORD_SAMPLE, 24, seq++);
		assert_int_equal(ref_ring_write(r, rec, 24), 0);
		view_set_tail(&v, view_head(&v));
	}
	assert_int_equal(view_head(&v) % 24, 0);
	/* ...then one whose header takes the last bytes of the area and whose body
	 * continues at offset 0, with no padding between. */
	uint64_t at = view_head(&v);
	make_record(rec, PECS_RECORD_SAMPLE, 48, seq++);
	assert_int_equal(ref_ring_write(r, rec, 48), 0);
	assert_int_equal(view_head(&v), at + 48);
	assert_true((at & (v.size - 1)) + 8 <= v.size); /* the header did not straddle */
	assert_memory_equal(v.data + (at & (v.size - 1)), rec, v.size - (at & (v.size - 1)));
	assert_memory_equal(v.data, rec + (v.size - (at & (v.size - 1))),
			    48 - (v.size - (at & (v.size - 1))));
	view_copy(&v, at, back, 48);
	assert_memory_equal(back, rec, 48);
	/* The next record starts right after, in the second lap. */
	view_set_tail(&v, view_head(&v));
	make_record(rec, PECS_RECORD_SAMPLE, 16, seq++);
	assert_int_equal(ref_ring_write(r, rec, 16), 0);
	assert_memory_equal(v.data + ((at + 48) & (v.size - 1)), rec, 16);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
}

/* What encode_rec() writes, and how often it ran. */
struct enc {
	const uint8_t *rec;
	int calls, fail;
};

static int encode_rec(void *ctx, void *out, size_t len)
{
	struct enc *e = ctx;

	e->calls++;
	if (e->fail)
		return -EIO;
	memcpy(out, e->rec, len);
	return 0;
}

/* ref_ring_write_encoded(): the same bytes as ref_ring_write(), in place and across
 * the end of the area; a failing encoder leaves head, and so the reader, as they were. */
static void test_write_encoded(void **state)
{
	struct ref_ring *r;
	struct view v;
	uint8_t rec[48], back[48];
	struct enc e = { rec, 0, 0 };
	uint64_t seq = 0, at;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 0, 0), 0);
	v = map_view(r, PROT_READ | PROT_WRITE);
	while (view_head(&v) + 24 <= v.size - 8) {
		at = view_head(&v);
		make_record(rec, PECS_RECORD_SAMPLE, 24, seq++);
		assert_int_equal(ref_ring_write_encoded(r, 24, encode_rec, &e, NULL), 0);
		assert_int_equal(view_head(&v), at + 24);
		assert_memory_equal(v.data + (at & (v.size - 1)), rec, 24);
		view_set_tail(&v, view_head(&v));
	}
	/* A failing encoder: its error, nothing published. */
	at = view_head(&v);
	e.fail = 1;
	assert_int_equal(ref_ring_write_encoded(r, 48, encode_rec, &e, NULL), -EIO);
	assert_int_equal(view_head(&v), at);
	e.fail = 0;
	/* A record that wraps goes through the ring's own buffer, same bytes. */
	make_record(rec, PECS_RECORD_SAMPLE, 48, seq++);
	assert_int_equal(ref_ring_write_encoded(r, 48, encode_rec, &e, NULL), 0);
	assert_int_equal(view_head(&v), at + 48);
	view_copy(&v, at, back, 48);
	assert_memory_equal(back, rec, 48);
	assert_int_equal(e.calls, (int)seq + 1);
	/* Lengths the ring refuses never reach the encoder. */
	assert_int_equal(ref_ring_write_encoded(r, 20, encode_rec, &e, NULL), -EINVAL);
	assert_int_equal(ref_ring_write_encoded(r, 4, encode_rec, &e, NULL), -EINVAL);
	assert_int_equal(e.calls, (int)seq + 1);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
}

static void test_head_beyond_2_32(void **state)
{
	const size_t len = 65528; /* the largest record a u16 size allows */
	struct ref_ring *r;
	struct view v;
	uint8_t *rec = malloc(len), *back = malloc(len);
	uint64_t seq = 0, at = 0;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 1 + 32, 4096, 0), 0);
	v = map_view(r, PROT_READ | PROT_WRITE);
	make_record(rec, PECS_RECORD_SAMPLE, len, 0);
	while (view_head(&v) <= (1ull << 32) + 3 * len) {
		at = view_head(&v);
		/* Only the sequence word changes; the pattern is checked on the last one. */
		memcpy(rec + 8, &seq, 8);
		seq++;
		assert_int_equal(ref_ring_write(r, rec, len), 0);
		view_set_tail(&v, view_head(&v));
	}
	assert_int_equal(view_head(&v), seq * len);
	assert_true(view_head(&v) > (1ull << 32));
	assert_int_equal(ref_ring_pending_lost(r), 0);
	view_copy(&v, at, back, len);
	assert_memory_equal(back, rec, len);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
	free(rec);
	free(back);
}

static void test_writable_fills_to_size_minus_8(void **state)
{
	static const size_t sizes[] = { 8, 16, 24, 40 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ref_ring *r;
		struct view v;
		uint8_t rec[64];
		uint64_t n = 0;

		assert_int_equal(ref_ring_create(&r, 2, 4096, 0), 0);
		v = map_view(r, PROT_READ | PROT_WRITE);
		make_record(rec, PECS_RECORD_SAMPLE, sizes[i], 0);
		while (ref_ring_write(r, rec, sizes[i]) == 0)
			n++;
		/* CIRC_SPACE keeps one byte back: records fit while they end at or before
		 * data_size - 1, so at most data_size - 8 bytes are ever in use. */
		assert_int_equal(n, (4096 - 1) / sizes[i]);
		assert_int_equal(view_head(&v), n * sizes[i]);
		assert_true(view_head(&v) <= 4096 - 8);
		assert_int_equal(ref_ring_pending_lost(r), 1);
		assert_int_equal(ref_ring_write(r, rec, sizes[i]), -ENOSPC);
		assert_int_equal(ref_ring_pending_lost(r), 2);
		/* Nothing moved while lost. */
		assert_int_equal(view_head(&v), n * sizes[i]);
		ref_ring_unmap(r, v.base);
		ref_ring_destroy(r);
	}
}

struct lost_ctx {
	struct ref_record_desc desc;
	const void *last_cookie;
	int calls;
};

static ssize_t encode_lost(void *arg, const void *cookie, uint64_t lost, void *out, size_t cap)
{
	struct lost_ctx *c = arg;

	c->calls++;
	c->last_cookie = cookie;
	return ref_record_encode_lost(&c->desc, lost, cookie, out, cap);
}

static void test_lost_record_once_space_frees(void **state)
{
	struct lost_ctx lc = {
		.desc = {
			  .sample_type = PECS_SAMPLE_TID | PECS_SAMPLE_TIME | PECS_SAMPLE_ID,
			  .sample_id_all = 1, .id = 4242, .stream_id = 4242 },
	};
	struct pecs_sample next = { .size = sizeof(next), .pid = 10, .tid = 11, .time = 999 };
	struct ref_ring *r;
	struct view v;
	uint8_t rec[64], back[64];
	uint64_t full;
	int calls;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 4096, 0), 0);
	ref_ring_set_lost_fn(r, encode_lost, &lc);
	v = map_view(r, PROT_READ | PROT_WRITE);
	make_record(rec, PECS_RECORD_SAMPLE, 32, 1);
	while (ref_ring_write(r, rec, 32) == 0)
		;
	assert_int_equal(ref_ring_write(r, rec, 32), -ENOSPC);
	assert_int_equal(ref_ring_write(r, rec, 32), -ENOSPC);
	assert_int_equal(ref_ring_pending_lost(r), 3);
	full = view_head(&v);
	/* Room for the record but not for LOST (48 with its trailer) in front of it:
	 * both wait, and this one is lost too. */
	view_set_tail(&v, 32); /* 63 bytes free: 32 would fit, 48 + 32 do not */
	assert_int_equal(ref_ring_write_with(r, rec, 32, &next), -ENOSPC);
	assert_int_equal(ref_ring_pending_lost(r), 4);
	assert_int_equal(view_head(&v), full);
	/* Now it fits: LOST {id, 4} with the trailer of the record that found space. */
	view_set_tail(&v, full);
	make_record(rec, PECS_RECORD_SAMPLE, 32, 2);
	assert_int_equal(ref_ring_write_with(r, rec, 32, &next), 0);
	assert_ptr_equal(lc.last_cookie, &next);
	assert_int_equal(view_head(&v), full + 48 + 32);
	view_copy(&v, full, back, 48);
	assert_int_equal(rd32(back, 0), PECS_RECORD_LOST);
	assert_int_equal(rd32(back, 4), 48u << 16); /* misc 0, size 48 */
	assert_int_equal(rd64(back, 8), 4242);
	assert_int_equal(rd64(back, 16), 4);
	assert_int_equal(rd64(back, 24), 10 | 11ull << 32);
	assert_int_equal(rd64(back, 32), 999);
	assert_int_equal(rd64(back, 40), 4242);
	view_copy(&v, full + 48, back, 32);
	assert_memory_equal(back, rec, 32);
	/* Reported once: nothing is pending. */
	assert_int_equal(ref_ring_pending_lost(r), 0);
	view_set_tail(&v, view_head(&v));
	calls = lc.calls;
	assert_int_equal(ref_ring_write(r, rec, 32), 0);
	assert_int_equal(lc.calls, calls);
	assert_int_equal(view_head(&v), full + 48 + 32 + 32);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
}

static void test_lost_without_encoder(void **state)
{
	struct ref_ring *r;
	struct view v;
	uint8_t rec[16];

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 4096, 0), 0);
	v = map_view(r, PROT_READ | PROT_WRITE);
	ref_ring_set_paused(r, 1);
	make_record(rec, PECS_RECORD_SAMPLE, 16, 1);
	assert_int_equal(ref_ring_write(r, rec, 16), -ENOSPC);
	assert_int_equal(ref_ring_pending_lost(r), 1);
	assert_int_equal(view_head(&v), 0);
	ref_ring_set_paused(r, 0);
	assert_int_equal(ref_ring_write(r, rec, 16), 0);
	assert_int_equal(view_head(&v), 24 + 16);
	assert_int_equal(rd64(v.data, 0), PECS_RECORD_LOST | 24ull << 48);
	assert_int_equal(rd64(v.data, 8), 0);
	assert_int_equal(rd64(v.data, 16), 1);
	assert_memory_equal(v.data + 24, rec, 16);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
}

static void test_overwrite_ignores_tail(void **state)
{
	struct ref_ring *r;
	struct view v;
	uint8_t rec[24], back[24];
	uint64_t i;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 4096, 1), 0);
	v = map_view(r, PROT_READ);
	for (i = 0; i < 1000; i++) {
		make_record(rec, PECS_RECORD_SAMPLE, 24, i);
		assert_int_equal(ref_ring_write(r, rec, 24), 0);
	}
	assert_int_equal(view_head(&v), 24000);
	assert_int_equal(ref_ring_pending_lost(r), 0);
	view_copy(&v, 24000 - 24, back, 24);
	assert_memory_equal(back, rec, 24);
	/* The oldest bytes are gone: offset 0 holds a later lap. */
	assert_int_not_equal(rd64(v.data, 8), 0);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
}

static void test_one_page_mapping(void **state)
{
	struct ref_ring *r;
	struct view v;
	uint8_t rec[16];

	(void)state;
	assert_int_equal(ref_ring_create(&r, 1, 0, 0), 0);
	v = map_view(r, PROT_READ | PROT_WRITE);
	assert_int_equal(v.size, 0);
	assert_int_equal(rd64(v.base, OFF_DATA_OFFSET), page);
	make_record(rec, PECS_RECORD_SAMPLE, 16, 1);
	assert_int_equal(ref_ring_write(r, rec, 16), -ENODATA);
	/* Resuming cannot give it pages: still dropped, never counted. */
	ref_ring_set_paused(r, 0);
	assert_int_equal(ref_ring_write(r, rec, 16), -ENODATA);
	assert_int_equal(ref_ring_pending_lost(r), 0);
	assert_int_equal(view_head(&v), 0);
	assert_int_equal(ref_ring_poll(r), 0);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);
}

static void test_backward(void **state)
{
	struct ref_ring_opts o = { .nr_pages = 2, .page_size = 4096,
				   .overwrite = 1, .backward = 1 };
	struct ref_ring *r;
	struct view v;
	uint8_t rec[40], back[40];
	uint64_t i;

	(void)state;
	assert_int_equal(ref_ring_create_opts(&r, &o), 0);
	v = map_view(r, PROT_READ);
	make_record(rec, PECS_RECORD_SAMPLE, 24, 0);
	assert_int_equal(ref_ring_write(r, rec, 24), 0);
	/* data_head counts down from 0: the newest record starts at the head. */
	assert_int_equal(view_head(&v), (uint64_t)0 - 24);
	assert_memory_equal(v.data + 4096 - 24, rec, 24);
	for (i = 1; i < 300; i++) {
		make_record(rec, PECS_RECORD_SAMPLE, 40, i);
		assert_int_equal(ref_ring_write(r, rec, 40), 0);
	}
	assert_int_equal(view_head(&v), (uint64_t)0 - 24 - 299 * 40);
	view_copy(&v, view_head(&v), back, 40);
	assert_memory_equal(back, rec, 40);
	ref_ring_unmap(r, v.base);
	ref_ring_destroy(r);

	/* Writable and backward: the same one-byte-back rule, mirrored. */
	o.overwrite = 0;
	assert_int_equal(ref_ring_create_opts(&r, &o), 0);
	make_record(rec, PECS_RECORD_SAMPLE, 8, 0);
	for (i = 0; ref_ring_write(r, rec, 8) == 0; i++)
		;
	assert_int_equal(i, 511);
	assert_int_equal(ref_ring_head(r), (uint64_t)0 - 4088);
	assert_int_equal(ref_ring_pending_lost(r), 1);
	ref_ring_destroy(r);
}

static int wakeups;

static void count_wakeup(void *arg)
{
	(void)arg;
	wakeups++;
}

static void test_watermark_wakeup(void **state)
{
	struct ref_ring *r;
	uint8_t rec[512];
	int i;

	(void)state;
	wakeups = 0;
	assert_int_equal(ref_ring_create(&r, 2, 4096, 1), 0);
	ref_ring_set_wakeup_fn(r, count_wakeup, NULL);
	make_record(rec, PECS_RECORD_SAMPLE, 512, 0);
	/* Default watermark: half the data area; a wakeup once the head passes it. */
	for (i = 0; i < 4; i++)
		assert_int_equal(ref_ring_write(r, rec, 512), 0);
	assert_false(ref_ring_readable(r));
	assert_int_equal(ref_ring_poll(r), 0);
	assert_int_equal(ref_ring_write(r, rec, 512), 0);
	assert_true(ref_ring_readable(r));
	assert_int_equal(wakeups, 1);
	assert_int_equal(ref_ring_poll(r), EPOLLIN | EPOLLRDNORM);
	/* Once per wakeup. */
	assert_int_equal(ref_ring_poll(r), 0);
	assert_false(ref_ring_readable(r));
	ref_ring_destroy(r);

	/* attr.watermark with wakeup_watermark 1000 bytes. */
	struct ref_ring_opts o = { .nr_pages = 2, .page_size = 4096,
				   .overwrite = 1, .watermark = 1, .wakeup_watermark = 1000,
				   .wakeup_events = 1 /* ignored with watermark */ };
	assert_int_equal(ref_ring_create_opts(&r, &o), 0);
	make_record(rec, PECS_RECORD_SAMPLE, 496, 0);
	assert_int_equal(ref_ring_write(r, rec, 496), 0);
	assert_int_equal(ref_ring_write(r, rec, 496), 0);
	assert_int_equal(ref_ring_poll(r), 0); /* 992 */
	assert_int_equal(ref_ring_write(r, rec, 496), 0);
	assert_int_equal(ref_ring_poll(r), EPOLLIN | EPOLLRDNORM); /* 1488 */
	ref_ring_destroy(r);
}

static void test_wakeup_events(void **state)
{
	struct ref_ring_opts o = { .nr_pages = 2, .page_size = 4096,
				   .overwrite = 1, .wakeup_events = 3 };
	struct ref_ring *r;
	uint8_t rec[24];
	int i;

	(void)state;
	assert_int_equal(ref_ring_create_opts(&r, &o), 0);
	for (i = 0; i < 2; i++) {
		make_record(rec, PECS_RECORD_SAMPLE, 24, (uint64_t)i);
		ref_ring_write(r, rec, 24);
	}
	/* Non-sample records do not count towards wakeup_events. */
	make_record(rec, PECS_RECORD_COMM, 24, 0);
	ref_ring_write(r, rec, 24);
	assert_int_equal(ref_ring_poll(r), 0);
	make_record(rec, PECS_RECORD_SAMPLE, 24, 2);
	ref_ring_write(r, rec, 24);
	assert_int_equal(ref_ring_poll(r), EPOLLIN | EPOLLRDNORM);
	for (i = 0; i < 2; i++)
		ref_ring_write(r, rec, 24);
	assert_int_equal(ref_ring_poll(r), 0);
	ref_ring_write(r, rec, 24);
	assert_int_equal(ref_ring_poll(r), EPOLLIN | EPOLLRDNORM);
	ref_ring_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrap_at_exact_offsets),
		cmocka_unit_test(test_head_beyond_2_32),
		cmocka_unit_test(test_writable_fills_to_size_minus_8),
		cmocka_unit_test(test_lost_record_once_space_frees),
		cmocka_unit_test(test_lost_without_encoder),
		cmocka_unit_test(test_overwrite_ignores_tail),
		cmocka_unit_test(test_one_page_mapping),
		cmocka_unit_test(test_backward),
		cmocka_unit_test(test_watermark_wakeup),
		cmocka_unit_test(test_wakeup_events),
		cmocka_unit_test(test_write_encoded),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
