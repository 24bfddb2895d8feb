/* Every FXT and markup vector through the decoders, at every chunk size from 1 byte to
 * the whole stream, explicitly and (where the bytes allow) by detection. Each run must
 * give exactly the vector's samples, and its error code and offset; the samples must
 * also encode to the vector's ring bytes with this test's own field walk. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pecs/abi.h"
#include "pecs/stream/decoder.h"
#include "pecs/vectors.h"

#define MAX_SAMPLES 64

struct got_sample {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t nr;
	uint64_t ips[REF_STREAM_MAX_FRAMES];
};

struct run {
	struct got_sample s[MAX_SAMPLES];
	size_t n;
	int overflow;
	struct ref_stream_error err;
	int ret;
	struct ref_stream_stats stats;
};

static int collect(void *ctx, const struct pecs_sample *s)
{
	struct run *r = ctx;
	struct got_sample *g;

	if (r->n == MAX_SAMPLES) {
		r->overflow = 1;
		return 0;
	}
	g = &r->s[r->n++];
	g->pid = s->pid;
	g->tid = s->tid;
	g->time = s->time;
	g->nr = s->nr_ips;
	memcpy(g->ips, s->ips, s->nr_ips * sizeof(uint64_t));
	return 0;
}

/* chunk == 0: the schedule in v->chunks, then the rest at once. */
static void decode(const struct pecs_vec_stream *v, enum pecs_stream_format fmt, size_t chunk,
		   struct run *r)
{
	struct pecs_koid_map_entry koids[16];
	struct ref_stream_target t = { .sink = collect, .sink_ctx = r };
	struct ref_stream_decoder *d;
	size_t off = 0, k = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	assert_true(v->nr_koids <= 16);
	for (uint32_t i = 0; i < v->nr_koids; i++) {
		koids[i].koid = v->koids[i].koid;
		koids[i].linux_id = v->koids[i].linux_id;
	}
	t.koids = v->nr_koids ? koids : NULL;
	t.nr_koids = v->nr_koids;
	assert_int_equal(ref_stream_decoder_new(&d, fmt, &t), 0);
	while (off < v->stream_len && ret == 0) {
		size_t n = v->stream_len - off;

		if (chunk && n > chunk)
			n = chunk;
		if (!chunk && k < v->nr_chunks && n > v->chunks[k])
			n = v->chunks[k++];
		ret = ref_stream_decoder_feed(d, v->stream + off, n);
		off += n;
	}
	if (ret == 0)
		ret = ref_stream_decoder_finish(d);
	r->ret = ret;
	ref_stream_decoder_error(d, &r->err);
	ref_stream_decoder_stats(d, &r->stats);
	ref_stream_decoder_free(d);
}

static void check_run(const struct pecs_vec_stream *v, const struct run *r, size_t chunk)
{
	char where[96];

	snprintf(where, sizeof(where), "tcId %d chunk %zu", v->tc_id, chunk);
	if (r->overflow || r->n != v->nr_samples)
		fail_msg("%s: %zu samples, want %u", where, r->n, v->nr_samples);
	for (size_t i = 0; i < r->n; i++) {
		const struct pecs_vec_stream_sample *w = &v->samples[i];
		const struct got_sample *g = &r->s[i];

		if (g->pid != w->pid || g->tid != w->tid || g->time != w->time ||
		    g->nr != w->nr_ips ||
		    (w->nr_ips && memcmp(g->ips, w->ips, w->nr_ips * sizeof(uint64_t)) != 0))
			fail_msg("%s: sample %zu differs (pid %u tid %u time %llu nr %u)", where, i,
				 g->pid, g->tid, (unsigned long long)g->time, g->nr);
	}
	if (v->error_code) {
		const char *name = ref_stream_errc_name(r->err.code);

		if (r->ret != -EBADMSG || !name || strcmp(name, v->error_code) != 0 ||
		    r->err.offset != v->error_offset)
			fail_msg("%s: error %s at %llu (ret %d), want %s at %llu", where,
				 name ? name : "?", (unsigned long long)r->err.offset, r->ret,
				 v->error_code, (unsigned long long)v->error_offset);
	} else if (r->ret != 0) {
		fail_msg("%s: unexpected error %s at %llu", where,
			 ref_stream_errc_name(r->err.code), (unsigned long long)r->err.offset);
	}
	if (r->stats.samples != v->nr_samples)
		fail_msg("%s: stats.samples %llu", where, (unsigned long long)r->stats.samples);
}

static void put(uint8_t **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

/* This test's own PERF_RECORD_SAMPLE walk for the fields the vectors use. */
static size_t encode(const struct pecs_vec_stream *v, const struct got_sample *s, uint8_t *out)
{
	uint8_t *p = out + 8;
	struct pecs_record_header h = { PECS_RECORD_SAMPLE, PECS_MISC_USER, 0 };
	uint64_t st = v->sample_type, zero = 0;

	if (st & PECS_SAMPLE_IP)
		put(&p, &s->ips[0], 8);
	if (st & PECS_SAMPLE_TID) {
		put(&p, &s->pid, 4);
		put(&p, &s->tid, 4);
	}
	if (st & PECS_SAMPLE_TIME)
		put(&p, &s->time, 8);
	if (st & PECS_SAMPLE_CPU)
		put(&p, &zero, 8);
	if (st & PECS_SAMPLE_PERIOD)
		put(&p, &v->sample_period, 8);
	if (st & PECS_SAMPLE_CALLCHAIN) {
		/* The vectors' rings assume kernel.perf_event_max_stack = 127. */
		uint64_t kept = s->nr < 127 ? s->nr : 127, nr = 1 + kept, ctx = PECS_CONTEXT_USER;

		put(&p, &nr, 8);
		put(&p, &ctx, 8);
		put(&p, s->ips, 8 * kept);
	}
	h.size = p - out;
	memcpy(out, &h, sizeof(h));
	return h.size;
}

static void check_ring(const struct pecs_vec_stream *v, const struct run *r)
{
	static uint8_t buf[1 << 16];
	size_t len = 0;

	if (!v->has_ring)
		return;
	for (size_t i = 0; i < r->n; i++)
		len += encode(v, &r->s[i], buf + len);
	if (len != v->ring_len || (len && memcmp(buf, v->ring, len) != 0))
		fail_msg("tcId %d: ring bytes differ (%zu vs %u)", v->tc_id, len, v->ring_len);
}

static void run_vector(const struct pecs_vec_stream *v, enum pecs_stream_format fmt)
{
	static struct run r;
	size_t step = 1;

	/* Long streams get a spread of sizes rather than every one (quadratic cost). */
	for (size_t chunk = 1; chunk <= v->stream_len; chunk += step) {
		if (v->stream_len > 4096 && chunk >= 64)
			step = chunk < 4096 ? 509 : 4093;
		decode(v, fmt, chunk, &r);
		check_run(v, &r, chunk);
	}
	decode(v, fmt, 0, &r);
	check_run(v, &r, 0);
	check_ring(v, &r);
}

static void test_fxt_vectors(void **state)
{
	(void)state;
	assert_true(pecs_vec_fxt_count >= 40);
	for (size_t i = 0; i < pecs_vec_fxt_count; i++) {
		const struct pecs_vec_stream *v = &pecs_vec_fxt[i];

		run_vector(v, PECS_STREAM_FXT);
		/* Bytes that cannot be markup must decode the same when detected. */
		if (v->stream_len == 0 ||
		    ref_stream_detect(v->stream, v->stream_len) != PECS_STREAM_MARKUP)
			run_vector(v, PECS_STREAM_DETECT);
	}
}

static void test_markup_vectors(void **state)
{
	(void)state;
	assert_true(pecs_vec_markup_count >= 30);
	for (size_t i = 0; i < pecs_vec_markup_count; i++) {
		run_vector(&pecs_vec_markup[i], PECS_STREAM_MARKUP);
		run_vector(&pecs_vec_markup[i], PECS_STREAM_DETECT);
	}
}

/* The malformed vectors together: at least 30, and the ones with samples before the
 * error really do deliver them (so "kept before error" is exercised, not vacuous). */
static void test_malformed_coverage(void **state)
{
	size_t bad = 0, kept = 0;

	(void)state;
	for (size_t i = 0; i < pecs_vec_fxt_count + pecs_vec_markup_count; i++) {
		const struct pecs_vec_stream *v = i < pecs_vec_fxt_count
							  ? &pecs_vec_fxt[i]
							  : &pecs_vec_markup[i - pecs_vec_fxt_count];

		if (!v->error_code)
			continue;
		bad++;
		kept += v->nr_samples > 0;
	}
	assert_true(bad >= 30);
	assert_true(kept >= 10);
}

static uint32_t rng_state = 0x9e3779b9u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static int same_run(const struct run *a, const struct run *b)
{
	/* Counters too, but bytes: how far a failing read got depends on its size. */
	if (a->n != b->n || a->ret != b->ret || a->err.code != b->err.code ||
	    a->err.offset != b->err.offset || a->stats.records != b->stats.records ||
	    a->stats.skipped != b->stats.skipped || a->stats.warnings != b->stats.warnings ||
	    a->stats.dropped_unmapped != b->stats.dropped_unmapped)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].pid != b->s[i].pid || a->s[i].tid != b->s[i].tid ||
		    a->s[i].time != b->s[i].time || a->s[i].nr != b->s[i].nr ||
		    memcmp(a->s[i].ips, b->s[i].ips, 8 * a->s[i].nr) != 0)
			return 0;
	return 1;
}

/* Corrupted vectors (bytes flipped, tails cut) must not crash, and must give the same
 * outcome whatever the chunking: the readers have no chunk-dependent paths. */
static void test_mutations_chunk_invariant(void **state)
{
	static uint8_t buf[1 << 16];
	static struct run whole, part;

	(void)state;
	for (size_t i = 0; i < pecs_vec_fxt_count + pecs_vec_markup_count; i++) {
		const struct pecs_vec_stream *v = i < pecs_vec_fxt_count
							  ? &pecs_vec_fxt[i]
							  : &pecs_vec_markup[i - pecs_vec_fxt_count];
		struct pecs_vec_stream m = *v;

		if (v->stream_len == 0 || v->stream_len > 4096)
			continue;
		for (int k = 0; k < 24; k++) {
			memcpy(buf, v->stream, v->stream_len);
			m.stream = buf;
			m.stream_len = v->stream_len;
			for (int f = 0; f < 1 + k % 3; f++)
				buf[rng() % m.stream_len] ^= (uint8_t)(1u << (rng() % 8));
			if (k % 4 == 3)
				m.stream_len = rng() % v->stream_len;
			m.nr_chunks = 0;
			decode(&m, PECS_STREAM_DETECT, m.stream_len ? m.stream_len : 1, &whole);
			for (size_t chunk = 1; chunk <= 9; chunk += 4) {
				decode(&m, PECS_STREAM_DETECT, chunk, &part);
				if (!same_run(&whole, &part))
					fail_msg("tcId %d mutation %d chunk %zu: outcome differs",
						 v->tc_id, k, chunk);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fxt_vectors),
		cmocka_unit_test(test_markup_vectors),
		cmocka_unit_test(test_malformed_coverage),
		cmocka_unit_test(test_mutations_chunk_invariant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
