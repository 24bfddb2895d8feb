/* The markup reader's word-at-a-time path (markup_scan.h) against byte-at-a-time
 * references, and the reader fed a stream in one push (where that path reads most
 * lines) against the same stream a byte a push (where it reads none): near-valid lines,
 * generated, must give the same samples, verdict, error offset and counters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "markup_scan.h"
#include "pecs/stream/markup_reader.h"

static uint32_t seed = 0x9e3779b9u;

static uint32_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Bytes a line is made of, and the ones next to them that a word trick could confuse. */
static const char near[] = "0123456789abcdefABCDEFgGxX:}{/@`\n\r \t\x80\xb0\xc1\xe1\xff";

static char any_byte(void)
{
	return rnd() % 2 ? "0123456789abcdefABCDEF"[rnd() % 22] : near[rnd() % (sizeof(near) - 1)];
}

static void test_hex16(void **state)
{
	(void)state;
	for (int i = 0; i < 300000; i++) {
		char b[16];
		uint64_t ref = 0, v1, v2;
		unsigned mask = 0, m1, m2, h;

		for (int k = 0; k < 16; k++) {
			b[k] = rnd() % 8 ? "0123456789abcdefABCDEF"[rnd() % 22] : any_byte();
			if (hexval((unsigned char)b[k]) >= 0)
				mask |= 1u << k;
		}
		for (h = 0; h < 16 && (mask >> h & 1); h++)
			ref = ref << 4 | (unsigned)hexval((unsigned char)b[h]);
		m1 = markup_scan_hex16(b, &v1);
		m2 = markup_scan_hex16_words(b, &v2);
		assert_int_equal(m1, mask);
		assert_int_equal(m2, mask);
		if (h) {
			assert_true(v1 >> (4 * (16 - h)) == ref);
			assert_true(v2 >> (4 * (16 - h)) == ref);
		}
	}
}

static void test_id(void **state)
{
	(void)state;
	for (int i = 0; i < 300000; i++) {
		char b[16];
		size_t n = 0, want = 0;
		uint64_t v = 0, ref = 0;

		for (int k = 0; k < 16; k++)
			b[k] = rnd() % 3 ? (char)('0' + rnd() % 10) : any_byte();
		/* the reference: 1 to 8 digits, then the newline */
		while (want < 8 && b[want] >= '0' && b[want] <= '9')
			ref = ref * 10 + (uint64_t)(b[want++] - '0');
		if (!want || b[want] != '\n')
			want = 0;
		else
			want++;
		n = markup_scan_id(b, &v);
		assert_int_equal(n, want);
		if (n)
			assert_true(v == ref);
	}
}

/* The grammar markup_scan_frame() must accept, byte by byte: "{{{bt:" NR ":0x", 1 to 16
 * hex digits, ":pc", ":ra" or nothing, "}}}\n". */
static size_t frame_ref(const char *p, unsigned nr, uint64_t *addr)
{
	char head[16];
	int k = snprintf(head, sizeof(head), "{{{bt:%u:0x", nr), h = 0;
	uint64_t v = 0;

	if (memcmp(p, head, (size_t)k) != 0)
		return 0;
	p += k;
	while (h < 16 && hexval((unsigned char)p[h]) >= 0)
		v = v << 4 | (unsigned)hexval((unsigned char)p[h++]);
	if (!h)
		return 0;
	*addr = v;
	if (!memcmp(p + h, ":pc}}}\n", 7) || !memcmp(p + h, ":ra}}}\n", 7))
		return (size_t)(k + h + 7);
	if (!memcmp(p + h, "}}}\n", 4))
		return (size_t)(k + h + 4);
	return 0;
}

/* A frame line, often well formed, for index nr (or another). */
static size_t gen_frame(char *o, unsigned nr)
{
	static const char *const tails[] = { "}}}", ":pc}}}", ":ra}}}", ":PC}}}", ":rb}}}",
					     "}}", "}}}}", ":pc:ra}}}", "}}} " };
	unsigned idx = rnd() % 8 ? nr : rnd() % 2 ? rnd() % 300 : 999999999u;
	size_t n = (size_t)sprintf(o, "{{{bt:%s%u:0%c", rnd() % 30 ? "" : "0", idx,
				   rnd() % 20 ? 'x' : 'X');
	unsigned digits = rnd() % 10 ? 1 + rnd() % 16 : rnd() % 19;

	for (unsigned k = 0; k < digits; k++)
		o[n++] = "0123456789abcdefABCDEF"[rnd() % (rnd() % 4 ? 16 : 22)];
	n += (size_t)sprintf(o + n, "%s\n", tails[rnd() % 4 ? rnd() % 3 : rnd() % 9]);
	if (rnd() % 12 == 0)
		o[rnd() % n] = any_byte();
	return n;
}

static void test_frame(void **state)
{
	(void)state;
	for (int i = 0; i < 300000; i++) {
		char b[96];
		unsigned nr = rnd() % 4 ? rnd() % 12 : rnd() % 255;
		uint64_t a1 = 0, a2 = 0;
		size_t n;

		memset(b, 0, sizeof(b));
		n = gen_frame(b, nr);
		for (size_t k = n; k < sizeof(b); k++)
			b[k] = any_byte();
		n = markup_scan_frame(b, &ms_idx[nr], &a1);
		assert_int_equal(n, frame_ref(b, nr, &a2));
		if (n)
			assert_true(a1 == a2);
	}
}

/* A stream of blocks of near-valid lines: ids, frames, now and then another line. */
static size_t gen_stream(char *o, size_t cap)
{
	size_t n = 0;

	while (n + 200 < cap) {
		unsigned frames = rnd() % 40, r = rnd() % 64;

		if (r == 0) {
			n += (size_t)sprintf(o + n, "{{{reset}}}\n");
		} else if (r == 1) {
			n += (size_t)sprintf(o + n, "{{{module:1:libc.so:elf:%s}}}\n",
					     rnd() % 2 ? "abcd" : "abc");
		} else if (r == 2) {
			n += (size_t)sprintf(o + n, "%s\n", rnd() % 2 ? "  " : "\r");
		} else if (r == 3) {
			for (unsigned k = rnd() % 60; k; k--)
				o[n++] = any_byte();
			o[n++] = '\n';
		}
		/* a block without its pid line ends the stream: now and then */
		if (rnd() % 64)
			n += (size_t)sprintf(o + n, "%u\n", rnd() % 16 ? 1000 + rnd() % 3 : rnd());
		n += (size_t)sprintf(o + n, rnd() % 16 ? "%u\n" : "%u \n", 2000 + rnd() % 7);
		for (unsigned f = 0; f < frames && n + 100 < cap; f++) {
			if (rnd() % 200) {
				n += (size_t)sprintf(o + n, "{{{bt:%u:0x%llx%s}}}\n", f,
						     (unsigned long long)rnd() << (rnd() % 32),
						     f ? ":ra" : ":pc");
			} else {
				n += gen_frame(o + n, f);
			}
		}
	}
	return n;
}

struct outcome {
	int ret;
	size_t samples, refuse_at;
	uint64_t hash;
	struct ref_stream_error err;
	struct ref_stream_stats stats;
};

static int sink(void *ctx, const struct pecs_sample *s)
{
	struct outcome *o = ctx;
	uint64_t h = o->hash ^ s->pid ^ (uint64_t)s->tid << 32;

	if (o->refuse_at && o->samples + 1 == o->refuse_at)
		return -ENOBUFS;
	for (uint32_t i = 0; i < s->nr_ips; i++)
		h = (h ^ s->ips[i]) * 0x100000001b3ull;
	o->hash = (h ^ s->nr_ips) * 0x100000001b3ull;
	o->samples++;
	return 0;
}

static void run(const char *b, size_t len, size_t chunk, struct outcome *o)
{
	struct ref_stream_target t = { .sink = sink, .sink_ctx = o };
	struct ref_markup_reader *r;

	assert_int_equal(ref_markup_reader_new(&r, &t), 0);
	for (size_t off = 0; off < len && !o->ret; off += chunk) {
		/* each push from its own exact copy, so reading past one is seen */
		size_t n = len - off < chunk ? len - off : chunk;
		char *copy = malloc(n);

		assert_non_null(copy);
		memcpy(copy, b + off, n);
		o->ret = ref_markup_reader_feed(r, copy, n);
		free(copy);
	}
	if (!o->ret)
		o->ret = ref_markup_reader_finish(r);
	ref_markup_reader_error(r, &o->err);
	ref_markup_reader_stats(r, &o->stats);
	ref_markup_reader_free(r);
}

static void test_stream(void **state)
{
	static char b[8192];

	(void)state;
	for (int i = 0; i < 600; i++) {
		size_t len = gen_stream(b, 512 + rnd() % (sizeof(b) - 512));
		size_t refuse = rnd() % 4 ? 0 : 1 + rnd() % 20;
		struct outcome whole = { .refuse_at = refuse }, bytes = { .refuse_at = refuse },
			       some = { .refuse_at = refuse };

		run(b, len, len, &whole);
		run(b, len, 1, &bytes);
		run(b, len, 1 + rnd() % 300, &some);
		for (int k = 0; k < 2; k++) {
			const struct outcome *o = k ? &some : &bytes;

			assert_int_equal(o->ret, whole.ret);
			assert_int_equal(o->samples, whole.samples);
			assert_true(o->hash == whole.hash);
			assert_int_equal(o->err.code, whole.err.code);
			assert_true(o->err.offset == whole.err.offset);
			/* After an error, bytes counts what the pushes handed over, which
			 * depends on where they were cut (as fuzz/stream_diff.c allows). */
			if (!whole.err.code)
				assert_true(o->stats.bytes == whole.stats.bytes);
			assert_true(o->stats.records == whole.stats.records);
			assert_true(o->stats.skipped == whole.stats.skipped);
			assert_true(o->stats.samples == whole.stats.samples);
			assert_true(o->stats.dropped_unmapped == whole.stats.dropped_unmapped);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex16),
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
