/* Throughput of ref_ring_write() against plain memcpy of the same bytes.
 *
 * For 64-byte and 1 KiB records, writes into a 1+64-page overwrite ring (no reader, so
 * only the writer's cost shows) and copies the same records into a buffer of the same
 * size at the same running offsets. Prints records/s, bytes/s and ring/memcpy ratio,
 * for writes that each take the ring's lock and for writes under one held lock.
 * Times are the thread's CPU time; ring and memcpy runs alternate, and the ratio is the
 * median of TRIALS pairs. Not a test: figures depend on the machine.
 * Usage: ring_bench [seconds-per-run [TRIALS]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pecs/abi.h"
#include "ref/ring/ring.h"
#include "pecs/bench.h"

#define DATA_PAGES 64
#define PAGE 4096

static void make_record(uint8_t *rec, size_t len)
{
	uint32_t w0 = PECS_RECORD_SAMPLE, w1 = (uint32_t)len << 16;
	size_t i;

	memcpy(rec, &w0, 4);
	memcpy(rec + 4, &w1, 4);
	for (i = 8; i < len; i++)
		rec[i] = (uint8_t)i;
}

/* Records per second over at least `secs`, checking the clock every 4096 writes. With
 * `held`, each 4096 writes run under one ref_ring_hold(), as the engine's delivery
 * batches write; else each write takes the ring's lock. */
static double bench_ring(size_t len, double secs, int held)
{
	struct ref_ring *r;
	uint8_t rec[1024];
	uint64_t n = 0;
	double t0, t;
	int err = ref_ring_create(&r, 1 + DATA_PAGES, PAGE, 1);

	if (err) {
		fprintf(stderr, "ref_ring_create: %s\n", strerror(-err));
		exit(1);
	}
	make_record(rec, len);
	t0 = bench_cpu_s();
	do {
		if (held)
			ref_ring_hold(r);
		for (int i = 0; i < 4096; i++) {
			if (ref_ring_write(r, rec, len)) {
				fprintf(stderr, "ref_ring_write failed\n");
				exit(1);
			}
		}
		if (held)
			ref_ring_release(r);
		n += 4096;
		t = bench_cpu_s();
	} while (t - t0 < secs);
	ref_ring_destroy(r);
	return (double)n / (t - t0);
}

/* The same bytes into a same-sized area, wrapping the same way, with plain memcpy. */
static double bench_memcpy(size_t len, double secs)
{
	const size_t size = DATA_PAGES * PAGE;
	uint8_t *area = aligned_alloc(PAGE, size), rec[1024];
	uint64_t n = 0, pos = 0;
	double t0, t;

	memset(area, 0, size);
	make_record(rec, len);
	t0 = bench_cpu_s();
	do {
		for (int i = 0; i < 4096; i++) {
			size_t off = pos & (size - 1), first = size - off < len ? size - off : len;

			memcpy(area + off, rec, first);
			memcpy(area, rec + first, len - first);
			pos += len;
			__asm__ volatile("" : : "r"(area) : "memory");
		}
		n += 4096;
		t = bench_cpu_s();
	} while (t - t0 < secs);
	free(area);
	return (double)n / (t - t0);
}

#define MAX_TRIALS 21

int main(int argc, char **argv)
{
	static const size_t lens[] = { 64, 1024 };
	static const char *const how[] = { "locked", "held" };
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	int trials = argc > 2 ? atoi(argv[2]) : 5;
	double rr[MAX_TRIALS], mr[MAX_TRIALS], ratio[MAX_TRIALS];

	if (secs <= 0)
		secs = 1.0;
	if (trials < 1 || trials > MAX_TRIALS)
		trials = 5;
	printf("%-8s %-7s %14s %14s %14s %14s %8s\n", "record", "writes", "ring rec/s",
	       "ring MB/s", "memcpy rec/s", "memcpy MB/s", "ratio");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int held = 0; held < 2; held++) {
			for (int t = 0; t < trials; t++) {
				rr[t] = bench_ring(lens[i], secs, held);
				mr[t] = bench_memcpy(lens[i], secs);
				ratio[t] = rr[t] / mr[t];
			}
			double mrr = bench_median(rr, trials), mmr = bench_median(mr, trials);

			printf("%-8zu %-7s %14.0f %14.1f %14.0f %14.1f %8.2f\n", lens[i],
			       how[held], mrr, mrr * (double)lens[i] / 1e6, mmr,
			       mmr * (double)lens[i] / 1e6, bench_median(ratio, trials));
		}
	}
	printf("ratio = ring throughput / memcpy throughput (1.00 = no overhead), median of %d\n"
	       "locked: each write takes the ring's lock (an atomic operation); held: 4096\n"
	       "writes under one ref_ring_hold(), as the engine's delivery batches write\n",
	       trials);
	return 0;
}
