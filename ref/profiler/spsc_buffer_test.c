/* The single-producer queue under a real second thread: entries arrive whole, in order,
 * across wrap-around, and a full queue refuses instead of overwriting. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>

#include <cmocka.h>

#include "spsc_buffer.h"

#define ENTRIES 200000u

static struct spsc_buffer q;
static _Atomic uint64_t refused;

/* Entry i has length i % 61 and every byte (uint8_t)(i + j). */
static void *producer(void *arg)
{
	uint8_t bytes[64];

	(void)arg;
	for (uint32_t i = 0; i < ENTRIES;) {
		struct spsc_entry e = { i % 61, i, (uint64_t)i * 3 };

		for (uint32_t j = 0; j < e.len; j++)
			bytes[j] = (uint8_t)(i + j);
		if (ref_spsc_push(&q, &e, bytes) == 0) {
			i++;
		} else {
			atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
			/* Let the consumer run on a machine with fewer free cores than
			 * spinning threads. */
			sched_yield();
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t;
	uint8_t buf[64];
	uint32_t next = 0;

	(void)state;
	assert_int_equal(ref_spsc_init(&q, 1000), 0); /* rounds up to 1024: wraps often */
	assert_int_equal(q.cap, 1024);
	atomic_store(&refused, 0);
	assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);
	while (next < ENTRIES) {
		struct spsc_entry e;

		if (!ref_spsc_pop(&q, &e, buf, sizeof(buf))) {
			sched_yield();
			continue;
		}
		assert_int_equal(e.cpu, next);
		assert_int_equal(e.len, next % 61);
		assert_true(e.time == (uint64_t)next * 3);
		for (uint32_t j = 0; j < e.len; j++)
			assert_int_equal(buf[j], (uint8_t)(next + j));
		next++;
	}
	pthread_join(t, NULL);
	/* ~15 entries fit, so the producer met a full queue: the refusal path ran. */
	assert_true(atomic_load(&refused) > 0);
	assert_int_equal(ref_spsc_pop(&q, &(struct spsc_entry){ 0 }, buf, sizeof(buf)), 0);
	ref_spsc_destroy(&q);
}

static void test_full_refuses(void **state)
{
	struct spsc_buffer b;
	struct spsc_entry e = { 40, 1, 2 }, out;
	uint8_t bytes[40] = { 7 }, buf[40];

	(void)state;
	assert_int_equal(ref_spsc_init(&b, 64), 0);
	assert_int_equal(ref_spsc_push(&b, &e, bytes), 0); /* 16 + 40 = 56 of 64 */
	assert_int_equal(ref_spsc_push(&b, &e, bytes), -ENOSPC);
	assert_int_equal(ref_spsc_pop(&b, &out, buf, sizeof(buf)), 1);
	assert_int_equal(out.len, 40);
	assert_int_equal(buf[0], 7);
	assert_int_equal(ref_spsc_push(&b, &e, bytes), 0); /* space again, wrapping */
	assert_int_equal(ref_spsc_pop(&b, &out, buf, sizeof(buf)), 1);
	assert_int_equal(out.len, 40);
	assert_int_equal(buf[0], 7);
	ref_spsc_destroy(&b);
}

/* A mark is passed once every entry pushed before it is taken, not before; entries
 * pushed after it do not move it. */
static void test_mark_passed(void **state)
{
	struct spsc_buffer b;
	struct spsc_entry e = { 8, 1, 2 }, out;
	uint8_t bytes[8] = { 1 }, buf[8];
	uint64_t mark;

	(void)state;
	assert_int_equal(ref_spsc_init(&b, 256), 0);
	assert_true(ref_spsc_passed(&b, ref_spsc_mark(&b))); /* empty */
	assert_int_equal(ref_spsc_push(&b, &e, bytes), 0);
	assert_int_equal(ref_spsc_push(&b, &e, bytes), 0);
	mark = ref_spsc_mark(&b);
	assert_int_equal(ref_spsc_push(&b, &e, bytes), 0);
	assert_false(ref_spsc_passed(&b, mark));
	assert_int_equal(ref_spsc_pop(&b, &out, buf, sizeof(buf)), 1);
	assert_false(ref_spsc_passed(&b, mark));
	assert_int_equal(ref_spsc_pop(&b, &out, buf, sizeof(buf)), 1);
	assert_true(ref_spsc_passed(&b, mark));
	assert_int_equal(ref_spsc_pop(&b, &out, buf, sizeof(buf)), 1);
	assert_int_equal(ref_spsc_pop(&b, &out, buf, sizeof(buf)), 0);
	ref_spsc_destroy(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_full_refuses),
		cmocka_unit_test(test_mark_passed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
