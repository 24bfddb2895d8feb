/* The FIDL-shaped state machine, the replay profiler's reads, and whole sessions over
 * every stream vector: the session must deliver exactly the vector's samples whatever
 * chunk size the replay serves. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pecs/profiler/replay.h"
#include "pecs/profiler/session.h"
#include "pecs/stream/fxt_writer.h"
#include "pecs/vectors.h"

static const struct ref_profiler_sampling sampling = {
	.period = 1000000,
	.timebase = REF_PROFILER_NANOSECONDS,
	.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER,
};
static const struct ref_profiler_target target = { .kind = REF_PROFILER_TASK_PROCESS, .koid = 1 };

static struct ref_profiler *replay_of(const uint8_t *data, size_t len, size_t chunk)
{
	struct pecs_profiler_stream st = {
		.size = sizeof(st), .format = PECS_STREAM_DETECT, .data = data, .len = len,
		.chunk = chunk,
	};
	struct ref_profiler *p;

	assert_int_equal(ref_profiler_new_replay(&p, &st), 0);
	return p;
}

static void test_fidl_errors(void **state)
{
	struct ref_profiler *p = replay_of((const uint8_t *)"1\n", 2, 0);
	struct ref_profiler_config cfg = { 0 };
	struct ref_profiler_sampling zero = sampling;
	struct ref_profiler_result res = { 0 };
	char b[4];

	(void)state;
	assert_int_equal(ref_profiler_start(p, NULL), -EBUSY);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_BAD_STATE);
	assert_int_equal(ref_profiler_stop(p, &res), -EBUSY);
	assert_int_equal(ref_profiler_read(p, b, sizeof(b)), -EBUSY);

	assert_int_equal(ref_profiler_configure(p, &cfg), -EINVAL);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_MISSING_SAMPLE_CONFIGS);
	cfg.samplings = &sampling;
	cfg.nr_samplings = 1;
	assert_int_equal(ref_profiler_configure(p, &cfg), -EINVAL);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_MISSING_TARGET_CONFIGS);
	cfg.targets = &target;
	cfg.nr_targets = 1;
	zero.period = 0;
	cfg.samplings = &zero;
	assert_int_equal(ref_profiler_configure(p, &cfg), -EINVAL);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_INVALID_CONFIGURATION);
	zero.period = 1;
	zero.callgraph = 9;
	assert_int_equal(ref_profiler_configure(p, &cfg), -EINVAL);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_INVALID_CONFIGURATION);
	assert_int_equal(ref_profiler_start(p, NULL), -EBUSY); /* refused config leaves it idle */

	cfg.samplings = &sampling;
	assert_int_equal(ref_profiler_configure(p, &cfg), 0);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_OK);
	assert_int_equal(ref_profiler_start(p, NULL), 0);
	assert_int_equal(ref_profiler_configure(p, &cfg), -EBUSY); /* running */
	assert_int_equal(ref_profiler_start(p, NULL), -EBUSY);
	assert_int_equal(ref_profiler_stop(p, &res), 0);
	assert_int_equal(ref_profiler_stop(p, &res), -EBUSY);
	assert_int_equal(ref_profiler_read(p, b, sizeof(b)), 2);
	assert_int_equal(ref_profiler_read(p, b, sizeof(b)), -EPIPE); /* EOF once stopped */
	assert_int_equal(ref_profiler_reset(p), 0);
	assert_int_equal(ref_profiler_start(p, NULL), -EBUSY); /* reset forgets the config */
	ref_profiler_free(p);

	assert_int_equal(ref_profiler_fidl_errno(REF_PROFILER_BAD_SOCKET), -EBADF);
	assert_int_equal(ref_profiler_fidl_errno(REF_PROFILER_MISSING_COMPONENT_URL), -EINVAL);
}

static void test_replay_chunks(void **state)
{
	static const uint8_t data[] = "0123456789";
	struct ref_profiler_config cfg = { .samplings = &sampling,
					   .nr_samplings = 1, .targets = &target, .nr_targets = 1 };
	struct ref_profiler *p = replay_of(data, 10, 3);
	uint8_t b[16];

	(void)state;
	assert_int_equal(ref_profiler_configure(p, &cfg), 0);
	assert_int_equal(ref_profiler_start(p, NULL), 0);
	assert_int_equal(ref_profiler_read(p, b, sizeof(b)), 3);
	assert_int_equal(ref_profiler_read(p, b + 3, 2), 2); /* caller's len wins when smaller */
	assert_int_equal(ref_profiler_read(p, b + 5, sizeof(b)), 3);
	assert_int_equal(ref_profiler_read(p, b + 8, sizeof(b)), 2);
	assert_memory_equal(b, data, 10);
	assert_int_equal(ref_profiler_read(p, b, sizeof(b)), 0); /* running: nothing now */
	assert_int_equal(ref_profiler_stop(p, NULL), 0);
	assert_int_equal(ref_profiler_read(p, b, sizeof(b)), -EPIPE);
	ref_profiler_free(p);
}

struct collected {
	struct pecs_sample s[64];
	uint64_t ips[64][REF_STREAM_MAX_FRAMES];
	size_t n;
};

static int keep(void *ctx, const struct pecs_sample *s)
{
	struct collected *c = ctx;

	if (c->n == 64)
		return -ENOSPC;
	c->s[c->n] = *s;
	memcpy(c->ips[c->n], s->ips, 8 * s->nr_ips);
	c->s[c->n].ips = c->ips[c->n];
	c->n++;
	return 0;
}

static void session_over(const struct pecs_vec_stream *v, size_t chunk, struct collected *c,
			 struct ref_profiler_session_result *res)
{
	struct pecs_koid_map_entry koids[16];
	struct pecs_profiler_stream st = {
		.size = sizeof(st),
		.format = v->is_text ? PECS_STREAM_MARKUP : PECS_STREAM_FXT,
		.data = v->stream, .len = v->stream_len, .chunk = chunk,
		.koids = koids, .nr_koids = v->nr_koids,
	};
	struct ref_profiler_session_opts opts = { .sink = keep, .sink_ctx = c };
	struct ref_profiler_enable en = { .period_ns = 250000,
					  .callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER,
					  .kind = REF_PROFILER_TASK_PROCESS, .pid = 1, .tid = 1 };
	struct ref_profiler_session *s;
	struct ref_profiler *p;

	for (uint32_t i = 0; i < v->nr_koids; i++) {
		koids[i].koid = v->koids[i].koid;
		koids[i].linux_id = v->koids[i].linux_id;
	}
	if (!v->nr_koids)
		st.koids = NULL;
	memset(c, 0, sizeof(*c));
	assert_int_equal(ref_profiler_new_replay(&p, &st), 0);
	assert_int_equal(ref_profiler_session_new(&s, p, &opts), 0);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	assert_int_equal(ref_profiler_session_enable(s, &en), -EBUSY);
	assert_int_equal(c->n, 0); /* a script is delivered at poll/disable, not at enable */
	assert_int_equal(ref_profiler_session_disable(s, res), 0);
	assert_int_equal(ref_profiler_session_disable(s, res), -EBUSY);
	ref_profiler_session_free(s);
}

static void test_sessions_over_vectors(void **state)
{
	static struct collected c;
	struct ref_profiler_session_result res;
	const size_t chunks[] = { 0, 1, 2, 7, 8, 9, 4096 };

	(void)state;
	for (size_t i = 0; i < pecs_vec_fxt_count + pecs_vec_markup_count; i++) {
		const struct pecs_vec_stream *v = i < pecs_vec_fxt_count
							  ? &pecs_vec_fxt[i]
							  : &pecs_vec_markup[i - pecs_vec_fxt_count];

		for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
			session_over(v, chunks[k], &c, &res);
			if (c.n != v->nr_samples)
				fail_msg("tcId %d chunk %zu: %zu samples, want %u", v->tc_id,
					 chunks[k], c.n, v->nr_samples);
			for (size_t j = 0; j < c.n; j++) {
				assert_int_equal(c.s[j].pid, v->samples[j].pid);
				assert_int_equal(c.s[j].tid, v->samples[j].tid);
				assert_int_equal(c.s[j].nr_ips, v->samples[j].nr_ips);
				assert_true(c.s[j].time == v->samples[j].time);
				assert_int_equal(c.s[j].period, 0); /* the event's own */
				assert_int_equal(c.s[j].cpu, 0);
				assert_int_equal(c.s[j].misc, PECS_MISC_USER);
			}
			assert_true(res.stream.samples == v->nr_samples);
			assert_true(res.profiler.missing_process_mappings ==
				    res.stream.dropped_unmapped);
			if (v->error_code) {
				assert_string_equal(ref_stream_errc_name(res.error.code),
						    v->error_code);
				assert_true(res.error.offset == v->error_offset);
			} else {
				assert_int_equal(res.error.code, REF_STREAM_OK);
			}
		}
	}
}

/* The Fuchsia unit test's stream: one sample kept, one dropped, and Stop's stats. */
static void test_session_stats_and_reenable(void **state)
{
	static struct collected c;
	uint8_t b[256];
	size_t n = 0;
	const uint64_t ip1 = 0x12345678, ip2 = 0x87654321;
	struct ref_fxt_who mapped = { 0, 1001, 1002 }, unmapped = { 0, 9999, 9998 };
	const struct pecs_koid_map_entry map[] = { { 1001, 42 }, { 1002, 43 } };
	struct pecs_profiler_stream st = { .size = sizeof(st), .format = PECS_STREAM_DETECT,
					   .data = b, .chunk = 5, .koids = map, .nr_koids = 2 };
	struct ref_profiler_session_opts opts = { .sink = keep, .sink_ctx = &c };
	struct ref_profiler_enable en = { .period_ns = 1000000,
					  .kind = REF_PROFILER_TASK_THREAD, .pid = 1, .tid = 1 };
	struct ref_profiler_session_result res = { 0 };
	struct ref_profiler_session *s;
	struct ref_profiler *p;

	(void)state;
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &mapped, 1000, &ip1, 1);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &unmapped, 2000, &ip2, 1);
	st.len = n;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ref_profiler_new_replay(&p, &st), 0);
	assert_int_equal(ref_profiler_session_new(&s, p, &opts), 0);
	for (int round = 1; round <= 2; round++) {
		assert_int_equal(ref_profiler_session_enable(s, &en), 0);
		assert_int_equal(ref_profiler_session_poll(s), 0);
		assert_int_equal(c.n, (size_t)round); /* poll delivers while enabled */
		assert_int_equal(ref_profiler_session_disable(s, &res), 0);
		assert_int_equal(c.n, (size_t)round);
		assert_int_equal(c.s[round - 1].pid, 42);
		assert_int_equal(c.s[round - 1].tid, 43);
		assert_true(c.s[round - 1].ips[0] == ip1);
		assert_int_equal(c.s[round - 1].time, 1000);
		assert_int_equal(res.profiler.samples_collected, 2);
		assert_int_equal(res.profiler.missing_process_mappings, 1);
		assert_int_equal(res.format, PECS_STREAM_FXT);
	}
	assert_int_equal(ref_profiler_session_poll(s), -EBUSY);
	ref_profiler_session_free(s);
}

/* The sink and the lost callback share one context: the samples come first. */
struct dropping {
	struct collected c;
	uint64_t lost;
};

static int count_lost(void *ctx, uint64_t nr)
{
	((struct dropping *)ctx)->lost += nr;
	return 0;
}

/* buffer_samples: each enable keeps that many samples of the stream, the rest are
 * dropped on a full buffer, through the lost callback and Stop's dropped_buffer_full,
 * whether the samples are read at a poll or at disable. */
static void test_buffer_samples_drop(void **state)
{
	static struct dropping k;
	uint8_t b[512];
	size_t n = 0;
	struct ref_fxt_who who = { 0, 42, 43 };
	struct pecs_profiler_stream st = { .size = sizeof(st), .format = PECS_STREAM_FXT,
					   .data = b, .chunk = 24, .buffer_samples = 3 };
	struct ref_profiler_session_opts opts = { .sink = keep,
						  .sink_ctx = &k.c, .lost = count_lost };
	struct ref_profiler_enable en = { .period_ns = 1000000,
					  .kind = REF_PROFILER_TASK_THREAD, .pid = 1, .tid = 1 };
	struct ref_profiler_session_result res = { 0 };
	struct ref_profiler_session *s;
	struct ref_profiler *p;

	(void)state;
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	for (uint64_t i = 0; i < 5; i++) {
		uint64_t ip = 0x1000 + i;

		n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &who, 1000 * (i + 1), &ip, 1);
	}
	st.len = n;
	memset(&k, 0, sizeof(k));
	assert_int_equal(ref_profiler_new_replay(&p, &st), 0);
	assert_int_equal(ref_profiler_session_new(&s, p, &opts), 0);
	for (int round = 1; round <= 2; round++) {
		assert_int_equal(ref_profiler_session_enable(s, &en), 0);
		if (round == 2)
			assert_int_equal(ref_profiler_session_poll(s), 0);
		assert_int_equal(ref_profiler_session_disable(s, &res), 0);
		assert_int_equal(k.c.n, (size_t)(3 * round));
		assert_true(k.c.s[3 * round - 1].ips[0] == 0x1002); /* the first three */
		assert_int_equal(k.lost, (uint64_t)(2 * round));
		assert_int_equal(res.profiler.dropped_buffer_full, 2);
		assert_int_equal(res.profiler.samples_collected, 5);
	}
	ref_profiler_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fidl_errors),
		cmocka_unit_test(test_replay_chunks),
		cmocka_unit_test(test_sessions_over_vectors),
		cmocka_unit_test(test_session_stats_and_reenable),
		cmocka_unit_test(test_buffer_samples_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
