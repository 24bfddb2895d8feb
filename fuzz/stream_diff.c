#include "stream_diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTRL_CHUNK 0x0fu
#define CTRL_MAP 0x10u
#define CTRL_NO_OBSERVER 0x20u
#define CTRL_REFUSE 0x40u

/* The vectors' koids, so mapped seeds decode as their vectors do. */
static const struct pecs_koid_map_entry koid_map[] = {
	{ 1001, 42 }, { 1002, 43 }, { 2001, 50 }, { 2002, 51 }, { 2003, 52 },
};

struct run_ctx {
	struct fuzz_outcome *out;
	size_t refuse_at; /* 1-based; 0 never */
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * elem);
	if (!p)
		abort();
	*cap = n;
	return p;
}

/* FNV-1a: touches every byte, so ASan sees a name pointer that is not what it claims. */
static uint64_t hash_bytes(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ len;
}

static void side(struct fuzz_outcome *o, const uint64_t *v, size_t n)
{
	o->side = grow(o->side, &o->cap_side, o->nr_side + n, sizeof(*o->side));
	memcpy(o->side + o->nr_side, v, n * sizeof(*v));
	o->nr_side += n;
}

static void on_kernel_object(void *ctx, uint64_t koid, uint8_t obj_type, const char *name,
			     size_t name_len)
{
	struct run_ctx *c = ctx;
	uint64_t v[] = { 1, koid, obj_type, hash_bytes(name, name_len) };

	side(c->out, v, 4);
}

static void on_module(void *ctx, uint64_t pkoid, uint32_t module_id, const char *name,
		      size_t name_len, const uint8_t *build_id, size_t build_id_len)
{
	struct run_ctx *c = ctx;
	uint64_t v[] = { 2, pkoid, module_id, hash_bytes(name, name_len),
			 hash_bytes(build_id, build_id_len) };

	side(c->out, v, 5);
}

static void on_mmap(void *ctx, uint64_t pkoid, uint32_t module_id, uint64_t start,
		    uint64_t range, uint64_t vaddr, uint32_t flags)
{
	struct run_ctx *c = ctx;
	uint64_t v[] = { 3, pkoid, module_id, start, range, vaddr, flags };

	side(c->out, v, 7);
}

static const struct ref_stream_observer observer = {
	.kernel_object = on_kernel_object,
	.module = on_module,
	.mmap = on_mmap,
};

static int sink(void *ctx, const struct pecs_sample *s)
{
	struct run_ctx *c = ctx;
	struct fuzz_outcome *o = c->out;
	struct pecs_sample *k;

	if (c->refuse_at && o->nr_samples + 1 == c->refuse_at)
		return -ENOBUFS;
	if (s->size != sizeof(*s) || s->nr_ips > REF_STREAM_MAX_FRAMES || (s->nr_ips && !s->ips))
		abort();
	o->samples = grow(o->samples, &o->cap_samples, o->nr_samples + 1, sizeof(*o->samples));
	o->ips = grow(o->ips, &o->cap_ips, o->nr_ips + s->nr_ips + 1, sizeof(*o->ips));
	k = &o->samples[o->nr_samples++];
	*k = *s;
	/* ips is rebuilt from nr_ips at compare time: the arrays move as they grow. */
	k->ips = NULL;
	if (s->nr_ips)
		memcpy(o->ips + o->nr_ips, s->ips, s->nr_ips * sizeof(*s->ips));
	o->nr_ips += s->nr_ips;
	return 0;
}

/* xorshift32: a chunk schedule that depends on the control byte and the length only. */
static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static size_t chunk_size(uint8_t ctrl, uint32_t *rnd)
{
	unsigned mode = ctrl & CTRL_CHUNK;
	uint32_t max;

	if (mode == 0)
		return 1;
	max = mode < 8 ? 17 : 1u << (mode - 4);
	return 1 + next_rand(rnd) % max;
}

/* Each chunk is pushed from its own exact-size copy, so a parser that reads past a push,
 * or keeps a pointer into it, meets ASan. */
static int feed_copy(const struct fuzz_parser *parser, void *p, const uint8_t *data,
		     size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	if (!copy)
		abort();
	memcpy(copy, data, len);
	ret = parser->feed(p, copy, len);
	free(copy);
	return ret;
}

void fuzz_stream_run(const struct fuzz_parser *parser, const void *arg, uint8_t ctrl,
		     const uint8_t *stream, size_t len, int chunked, struct fuzz_outcome *out)
{
	struct run_ctx c = { .out = out };
	struct ref_stream_target t = { .sink = sink, .sink_ctx = &c };
	uint32_t rnd = 0x9e3779b9u ^ ((uint32_t)ctrl << 24) ^ (uint32_t)len;
	void *p;
	int ret;

	memset(out, 0, sizeof(*out));
	if (ctrl & CTRL_MAP) {
		t.koids = koid_map;
		t.nr_koids = sizeof(koid_map) / sizeof(koid_map[0]);
	}
	if (!(ctrl & CTRL_NO_OBSERVER)) {
		t.observer = &observer;
		t.observer_ctx = &c;
	}
	if (ctrl & CTRL_REFUSE)
		c.refuse_at = (ctrl & 7u) + 1;
	ret = parser->create(&p, &t, arg);
	if (ret)
		abort();
	if (!chunked) {
		out->feed_ret = parser->feed(p, stream, len);
	} else {
		size_t off = 0;

		while (off < len && !out->feed_ret) {
			size_t n = chunk_size(ctrl, &rnd);

			if (n > len - off)
				n = len - off;
			out->feed_ret = feed_copy(parser, p, stream + off, n);
			off += n;
		}
		/* An error is sticky: the rest of the stream changes nothing. */
		if (out->feed_ret && off < len &&
		    feed_copy(parser, p, stream + off, len - off) != out->feed_ret) {
			fprintf(stderr, "pecs fuzz: %s: a push after error %d did not repeat it\n",
				parser->name, out->feed_ret);
			abort();
		}
	}
	out->finish_ret = parser->finish(p);
	parser->error(p, &out->err);
	parser->stats(p, &out->stats);
	parser->destroy(p);
}

static void describe(const struct fuzz_outcome *o, const char *label)
{
	fprintf(stderr,
		"  %s: feed %d finish %d error %s@%" PRIu64 " samples %zu side %zu bytes %" PRIu64
		" records %" PRIu64 " skipped %" PRIu64 " dropped %" PRIu64 " warnings %" PRIu64
		"\n",
		label, o->feed_ret, o->finish_ret, ref_stream_errc_name(o->err.code) ? ref_stream_errc_name(o->err.code) : "?",
		o->err.offset, o->nr_samples, o->nr_side, o->stats.bytes, o->stats.records,
		o->stats.skipped, o->stats.dropped_unmapped, o->stats.warnings);
}

static int same_samples(const struct fuzz_outcome *a, const struct fuzz_outcome *b)
{
	size_t ia = 0;

	if (a->nr_samples != b->nr_samples || a->nr_ips != b->nr_ips)
		return 0;
	for (size_t i = 0; i < a->nr_samples; i++) {
		const struct pecs_sample *x = &a->samples[i], *y = &b->samples[i];

		if (x->pid != y->pid || x->tid != y->tid || x->time != y->time ||
		    x->cpu != y->cpu || x->misc != y->misc || x->period != y->period ||
		    x->addr != y->addr || x->nr_ips != y->nr_ips)
			return 0;
		if (x->nr_ips &&
		    memcmp(a->ips + ia, b->ips + ia, x->nr_ips * sizeof(*a->ips)) != 0)
			return 0;
		ia += x->nr_ips;
	}
	return 1;
}

static int same_stats(const struct ref_stream_stats *a, const struct ref_stream_stats *b)
{
	return a->bytes == b->bytes && a->records == b->records && a->skipped == b->skipped &&
	       a->samples == b->samples && a->dropped_unmapped == b->dropped_unmapped &&
	       a->warnings == b->warnings;
}

void fuzz_outcome_require_same(const struct fuzz_outcome *a, const struct fuzz_outcome *b,
			       const char *what)
{
	const char *diff = NULL;

	if (!same_samples(a, b))
		diff = "samples";
	else if (a->nr_side != b->nr_side ||
		 (a->nr_side && memcmp(a->side, b->side, a->nr_side * sizeof(*a->side))))
		diff = "side records";
	else if (a->feed_ret != b->feed_ret || a->finish_ret != b->finish_ret)
		diff = "return values";
	else if (a->err.code != b->err.code || a->err.offset != b->err.offset)
		diff = "error";
	else if (a->stats.samples != a->nr_samples || b->stats.samples != b->nr_samples)
		diff = "sample counter";
	/* Counters of a stream that failed stop wherever the failing push left them. */
	else if (!a->err.code && !same_stats(&a->stats, &b->stats))
		diff = "counters";
	if (!diff)
		return;
	fprintf(stderr, "pecs fuzz: %s differ (%s)\n", diff, what);
	describe(a, "a");
	describe(b, "b");
	abort();
}

void fuzz_outcome_release(struct fuzz_outcome *o)
{
	free(o->samples);
	free(o->ips);
	free(o->side);
	memset(o, 0, sizeof(*o));
}

void fuzz_stream_check(const struct fuzz_parser *parser, const void *arg, const uint8_t *data,
		       size_t size)
{
	struct fuzz_outcome whole, chunks;
	char what[64];

	if (size == 0)
		return;
	fuzz_stream_run(parser, arg, data[0], data + 1, size - 1, 0, &whole);
	fuzz_stream_run(parser, arg, data[0], data + 1, size - 1, 1, &chunks);
	snprintf(what, sizeof(what), "%s: one push vs chunks, control 0x%02x", parser->name,
		 data[0]);
	fuzz_outcome_require_same(&whole, &chunks, what);
	fuzz_outcome_release(&whole);
	fuzz_outcome_release(&chunks);
}
