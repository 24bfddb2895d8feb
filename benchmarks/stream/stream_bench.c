/* Parsing throughput of the FXT and markup readers against memcpy of the same bytes in
 * the same run, so the ratio means something across machines. Times are the thread's
 * CPU time; parse and memcpy trials alternate and the figure is the median ratio.
 *
 *   bazel run -c opt //benchmarks/stream:stream_bench [-- MB [CHUNK [TRIALS]]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pecs/stream/decoder.h"
#include "pecs/stream/fxt_writer.h"
#include "pecs/stream/markup_writer.h"
#include "pecs/bench.h"

static uint64_t samples_seen;

static int count(void *ctx, const struct pecs_sample *s)
{
	(void)ctx;
	samples_seen += s->nr_ips;
	return 0;
}

/* Samples of 1..32 frames over a few threads, like a profiler's output. */
static size_t build(uint8_t *buf, size_t cap, enum pecs_stream_format fmt)
{
	uint64_t ips[32];
	size_t n = 0;
	ssize_t w;

	if (fmt == PECS_STREAM_FXT)
		n += ref_fxt_write_magic(buf, cap);
	for (uint64_t i = 0;; i++) {
		struct ref_fxt_who who = { 0, 1000 + i % 3, 2000 + i % 7 };
		size_t nr = 1 + i % 32;

		for (size_t k = 0; k < nr; k++)
			ips[k] = 0x7f0000400000ull + i * 64 + k * 4096;
		if (fmt == PECS_STREAM_FXT)
			w = ref_fxt_write_backtrace(buf + n, cap - n, &who, i * 1000, ips, nr);
		else
			w = ref_markup_write_sample((char *)buf + n, cap - n, who.pkoid, who.tkoid,
						    ips, nr);
		if (w < 0)
			return n;
		n += w;
	}
}

static double parse(const uint8_t *buf, size_t len, enum pecs_stream_format fmt, size_t chunk)
{
	struct ref_stream_target t = { .sink = count };
	struct ref_stream_decoder *d;
	double t0;

	if (ref_stream_decoder_new(&d, fmt, &t))
		abort();
	t0 = bench_cpu_s();
	for (size_t off = 0; off < len; off += chunk)
		if (ref_stream_decoder_feed(d, buf + off, len - off < chunk ? len - off : chunk))
			abort();
	if (ref_stream_decoder_finish(d))
		abort();
	t0 = bench_cpu_s() - t0;
	ref_stream_decoder_free(d);
	return t0;
}

static double copy(uint8_t *dst, const uint8_t *src, size_t len, size_t chunk)
{
	double t0 = bench_cpu_s();

	for (size_t off = 0; off < len; off += chunk)
		memcpy(dst + off, src + off, len - off < chunk ? len - off : chunk);
	__asm__ volatile("" : : "r"(dst) : "memory");
	return bench_cpu_s() - t0;
}

#define MAX_TRIALS 51

static void run(const char *name, enum pecs_stream_format fmt, size_t cap, size_t chunk,
		int trials)
{
	uint8_t *buf = malloc(cap), *dst = malloc(cap);
	double p[MAX_TRIALS], c[MAX_TRIALS], ratio[MAX_TRIALS];
	size_t len;

	if (!buf || !dst)
		abort();
	memset(dst, 1, cap);
	len = build(buf, cap, fmt);
	for (int r = 0; r < trials; r++) {
		p[r] = parse(buf, len, fmt, chunk);
		c[r] = copy(dst, buf, len, chunk);
		ratio[r] = c[r] / p[r];
	}
	printf("%-7s %8.1f MB  parse %9.1f MB/s  memcpy %9.1f MB/s  parse/memcpy %.3f  "
	       "(chunk %zu, median of %d)\n",
	       name, len / 1e6, len / 1e6 / bench_median(p, trials),
	       len / 1e6 / bench_median(c, trials), bench_median(ratio, trials), chunk, trials);
	free(buf);
	free(dst);
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	size_t chunk = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
	int trials = argc > 3 ? atoi(argv[3]) : 7;

	if (!mb || !chunk || trials < 1 || trials > MAX_TRIALS) {
		fprintf(stderr, "usage: %s [MB] [CHUNK] [TRIALS<=%d]\n", argv[0], MAX_TRIALS);
		return 2;
	}
	run("fxt", PECS_STREAM_FXT, mb << 20, chunk, trials);
	run("markup", PECS_STREAM_MARKUP, mb << 20, chunk, trials);
	printf("frames decoded: %llu\n", (unsigned long long)samples_seen);
	return 0;
}
