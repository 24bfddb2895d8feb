/* The delivery batch's fast lane (ref/event/event_batch.c) against the general path: the
 * same FXT stream, in the same pushes, goes into two engines' events, one through
 * delivery batches (the glue's way, where a planned layout writes straight into the
 * ring) and one a sample at a time (ref_event_deliver_sample(), the encoder's plan and
 * the ring's general write). After every push the two rings must hold the same bytes
 * and heads, over many sample_types, max_stacks and ring shapes: small rings that wrap
 * and fill (LOST records), profiler drops, overwrite and backward rings, wakeup_events
 * and watermarks (poll(2) after every push), PAUSE_OUTPUT and REFRESH, and the types
 * the lane must decline (CODE_PAGE_SIZE, a cpu-wide CGROUP). */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "pecs/ref.h"
#include "ref/event/profiler_seam.h"
#include "pecs/stream/decoder.h"
#include "pecs/stream/fxt_writer.h"
#include "ref/event/event.h"

#define PG 4096

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const struct pecs_koid_map_entry koids[] = {
	{ 1000, 100 }, { 1001, 101 }, { 2000, 200 }, { 2001, 201 }, { 2002, 202 },
};

/* One engine with one event, fed either way. */
struct side {
	struct ref_engine *e;
	struct ref_event *ev;
	struct ref_stream_decoder *dec;
	int fd, batched;
	void *map;
	size_t len;
	int planned; /* batches whose layout was planned */
};

static int on_start(void *priv, struct ref_event *ev)
{
	((struct side *)priv)->ev = ev;
	return 0;
}

static void on_stop(void *priv, struct ref_event *ev)
{
	(void)priv;
	(void)ev;
}

static void on_release(void *priv)
{
	(void)priv;
}

static const struct ref_sampler_ops ops = {
	.start = on_start, .stop = on_stop, .release = on_release,
};

static int sink(void *ctx, const struct pecs_sample *s)
{
	struct side *sd = ctx;
	int ret = sd->batched ? ref_event_deliver_batched(sd->ev, s)
			      : ref_event_deliver_sample(sd->ev, s);

	return ret < 0 ? ret : 0;
}

struct shape {
	uint64_t sample_type;
	uint32_t max_stack;
	int id_all, cpu_wide, backward, overwrite;
	size_t data_pages;
	uint32_t wakeup_events, watermark; /* at most one of them */
};

/* 0 when the engine refused the attr (then the other must refuse it too). */
static int side_open(struct side *sd, const struct shape *sh, int batched)
{
	struct ref_policy p = {
		.size = sizeof(p), .paranoid = -1,
		.caps = REF_CAP_MASK(REF_CAP_PERFMON) | REF_CAP_MASK(REF_CAP_IPC_LOCK),
	};
	struct ref_config c = { .size = sizeof(c), .policy = &p, .ncpus = 2, .page_size = PG,
				.max_stack = 127 };
	struct pecs_attr a = { .type = PECS_TYPE_SOFTWARE, .size = sizeof(a),
			       .config = PECS_SW_TASK_CLOCK, .sample_period = 1000,
			       .sample_type = sh->sample_type,
			       .read_format = PECS_FORMAT_ID | PECS_FORMAT_LOST,
			       .sample_max_stack = (uint16_t)sh->max_stack,
			       .flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL };
	struct ref_stream_target t = { .sink = sink, .sink_ctx = sd,
				       .koids = koids,
				       .nr_koids = sizeof(koids) / sizeof(koids[0]) };

	memset(sd, 0, sizeof(*sd));
	sd->batched = batched;
	if (sh->id_all)
		a.flags |= PECS_ATTR_SAMPLE_ID_ALL;
	if (sh->backward)
		a.flags |= PECS_ATTR_WRITE_BACKWARD;
	a.wakeup_events = sh->wakeup_events;
	if (sh->watermark) {
		a.flags |= PECS_ATTR_WATERMARK;
		a.wakeup_events = sh->watermark;
	}
	sd->e = ref_engine_new(&c);
	assert_non_null(sd->e);
	sd->fd = ref_engine_open(sd->e, &a, sh->cpu_wide ? -1 : 0, sh->cpu_wide ? 0 : -1, -1, 0);
	if (sd->fd < 0) {
		ref_engine_free(sd->e);
		return 0;
	}
	sd->len = (1 + sh->data_pages) * PG;
	assert_int_equal(ref_engine_mmap(sd->e, sd->fd, sd->len,
					 PROT_READ | (sh->overwrite ? 0 : PROT_WRITE), MAP_SHARED,
					 0, &sd->map),
			 0);
	assert_int_equal(ref_engine_attach_sampler(sd->e, sd->fd, &ops, sd), 0);
	assert_int_equal(ref_stream_decoder_new(&sd->dec, PECS_STREAM_FXT, &t), 0);
	assert_int_equal(ref_engine_ioctl(sd->e, sd->fd, PECS_IOC_ENABLE, 0), 0);
	assert_non_null(sd->ev);
	return 1;
}

static void side_feed(struct side *sd, const uint8_t *p, size_t n)
{
	if (sd->batched) {
		ref_event_deliver_begin(sd->ev);
		sd->planned += sd->ev->batch_laid_out;
	}
	assert_int_equal(ref_stream_decoder_feed(sd->dec, p, n), 0);
	if (sd->batched)
		ref_event_deliver_end(sd->ev);
}

static void side_close(struct side *sd)
{
	ref_stream_decoder_free(sd->dec);
	ref_engine_munmap(sd->e, sd->map, sd->len);
	ref_engine_close(sd->e, sd->fd);
	ref_engine_free(sd->e);
}

static void same_ring(const struct side *a, const struct side *b)
{
	const struct pecs_mmap_page *ma = a->map, *mb = b->map;

	assert_int_equal(ma->data_head, mb->data_head);
	assert_memory_equal((const uint8_t *)a->map + PG, (const uint8_t *)b->map + PG,
			    a->len - PG);
}

/* read(2) with ID|LOST: value (the task clock: differs), id, lost. */
static void same_lost(const struct side *a, const struct side *b)
{
	uint64_t ra[3], rb[3];

	assert_int_equal(ref_engine_read(a->e, a->fd, ra, sizeof(ra)), sizeof(ra));
	assert_int_equal(ref_engine_read(b->e, b->fd, rb, sizeof(rb)), sizeof(rb));
	assert_int_equal(ra[1], rb[1]);
	assert_int_equal(ra[2], rb[2]);
}

/* Backtraces of 0..140 frames (past max_stack 127), inline koids and thread refs, some
 * koids unmapped (dropped), with an init record and a thread record among them. */
static size_t build(uint8_t *buf, size_t cap)
{
	static uint64_t ips[140];
	size_t n = 0;
	ssize_t w;

	n += (size_t)ref_fxt_write_magic(buf, cap);
	n += (size_t)ref_fxt_write_init(buf + n, cap - n, 1000000000ull);
	n += (size_t)ref_fxt_write_thread(buf + n, cap - n, 3, 1001, 2002);
	for (uint64_t i = 0;; i++) {
		struct ref_fxt_who who = { 0, 1000 + i % 2, 2000 + i % 4 };
		size_t frames = next() % 8 ? next() % 40 : next() % 141;

		if (i % 5 == 0)
			who.thread_ref = 3;
		for (size_t k = 0; k < frames; k++)
			ips[k] = next();
		w = ref_fxt_write_backtrace(buf + n, cap - n, &who, i * 977, ips, frames);
		if (w < 0)
			return n;
		n += (size_t)w;
	}
}

static void both_ioctl(struct side *a, struct side *b, unsigned long req, unsigned long arg)
{
	assert_int_equal(ref_engine_ioctl(a->e, a->fd, req, arg), 0);
	assert_int_equal(ref_engine_ioctl(b->e, b->fd, req, arg), 0);
}

/* 0 when the engines refused the attr. */
static int run_shape(const struct shape *sh, const uint8_t *stream, size_t len, int *fast)
{
	struct side a, b;
	int oa = side_open(&a, sh, 1), ob = side_open(&b, sh, 0);
	size_t off = 0;

	assert_int_equal(oa, ob);
	if (!oa)
		return 0;
	while (off < len) {
		size_t n = 1 + next() % 3000;
		uint64_t r = next();

		if (n > len - off)
			n = len - off;
		side_feed(&a, stream + off, n);
		side_feed(&b, stream + off, n);
		off += n;
		same_ring(&a, &b);
		/* The wakeups (wakeup_events, the watermark) came at the same records. */
		assert_int_equal(ref_engine_poll(a.e, a.fd, POLLIN, 0),
				 ref_engine_poll(b.e, b.fd, POLLIN, 0));
		if (r % 10 == 0) {
			uint64_t drops = 1 + r % 3;

			assert_int_equal(ref_event_deliver_lost(a.ev, drops), 0);
			assert_int_equal(ref_event_deliver_lost(b.ev, drops), 0);
		}
		/* PAUSE_OUTPUT on and off, and now and then a REFRESH limit (the event
		 * turns itself off once it is used up, until the next ENABLE). */
		if (r % 9 < 2)
			both_ioctl(&a, &b, PECS_IOC_PAUSE_OUTPUT, r % 9 == 0);
		if (r % 23 == 4)
			both_ioctl(&a, &b, PECS_IOC_REFRESH, 1 + r % 40);
		else if (r % 23 == 5)
			both_ioctl(&a, &b, PECS_IOC_ENABLE, 0);
		/* A reader that keeps up half the time: the small rings fill and wrap. */
		if ((r >> 8) % 2 && !sh->overwrite) {
			struct pecs_mmap_page *ma = a.map, *mb = b.map;

			ma->data_tail = ma->data_head;
			mb->data_tail = mb->data_head;
		}
	}
	assert_int_equal(ref_engine_ioctl(a.e, a.fd, PECS_IOC_DISABLE, 0), 0);
	assert_int_equal(ref_engine_ioctl(b.e, b.fd, PECS_IOC_DISABLE, 0), 0);
	same_ring(&a, &b);
	same_lost(&a, &b);
	*fast += a.planned > 0;
	side_close(&a);
	side_close(&b);
	return 1;
}

/* Everything but READ (its values are each engine's own clock readings). */
#define TYPES ((PECS_SAMPLE_MAX - 1) & ~PECS_SAMPLE_READ)

static void batched_equals_general(void **state)
{
	static uint8_t stream[96 * 1024];
	static const uint32_t stacks[] = { 0, 1, 3, 127 };
	static const size_t pages[] = { 1, 2, 4, 16 };
	size_t len = build(stream, sizeof(stream));
	int fast = 0, ran = 0;

	(void)state;
	for (int i = 0; i < 160; i++) {
		struct shape sh = {
			.sample_type = next() & TYPES,
			.max_stack = stacks[next() % 4],
			.id_all = (int)(next() & 1),
			.cpu_wide = next() % 8 == 0,
			.backward = next() % 8 == 0,
			.overwrite = next() % 8 == 0,
			.data_pages = pages[next() % 4],
		};
		uint64_t w = next() % 4;

		if (w == 1)
			sh.wakeup_events = 1 + (uint32_t)(next() % 5);
		else if (w == 2)
			sh.watermark = 64 + (uint32_t)(next() % 4096);

		/* Mostly the fields the lane takes, and the usual profile. */
		if (i % 3 == 0)
			sh.sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |
					 PECS_SAMPLE_PERIOD | PECS_SAMPLE_CALLCHAIN;
		else if (i % 3 == 1)
			sh.sample_type &= ~(PECS_SAMPLE_CODE_PAGE_SIZE | PECS_SAMPLE_BRANCH_STACK |
					    PECS_SAMPLE_REGS_USER | PECS_SAMPLE_STACK_USER |
					    PECS_SAMPLE_REGS_INTR | PECS_SAMPLE_AUX);
		if (i % 16 == 5)
			sh.sample_type |= PECS_SAMPLE_CGROUP, sh.cpu_wide = 1;
		if (i % 16 == 7)
			sh.sample_type |= PECS_SAMPLE_CODE_PAGE_SIZE;
		ran += run_shape(&sh, stream, len, &fast);
	}
	/* The lane was taken often and declined often: both sides were compared. */
	assert_true(ran > 80);
	assert_true(fast > 50);
	assert_true(ran - fast > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batched_equals_general),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
