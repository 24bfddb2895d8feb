/* The live sampler's overhead against the kernel's: the same CPU-bound loop, 11 calls
 * deep, run unsampled, under a kernel task-clock event and under ref's (its live
 * sampler), each sampling with callchains at 1 kHz and at 10 kHz into a ring read after
 * the run.
 *
 *   bazel run -c opt //benchmarks/sampler:sampler_bench [-- TRIALS [LOOP_MS]]
 *
 * Each trial runs every mode once, in turn (interleaved), and times the loop in the
 * thread's CPU time and the whole process's (which adds ref's ticker and collector
 * threads, or nothing for the kernel, whose work runs in the sampled thread's
 * interrupts). Printed, as medians over the trials: each mode's thread and process CPU
 * over the unsampled run's, ref's overhead over the kernel's, the samples taken against
 * the thread's CPU time divided by the period, and the share of samples whose ip and
 * callchain repeat the previous sample's. */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pecs/profiler/attach.h"
#include "pecs/profiler/sampler.h"
#include "pecs/ref.h"
#include "pecs/bench.h"

#define PG 4096
#define DATA_PAGES 2048 /* 8 MiB: a whole run's samples, read after it */
#define MAX_TRIALS 51
#define DEPTH 11

enum mode { NONE, KERNEL_1K, REF_1K, KERNEL_10K, REF_10K, NR_MODES };

static const char *const names[NR_MODES] = { "unsampled", "kernel 1 kHz", "ref 1 kHz",
					     "kernel 10 kHz", "ref 10 kHz" };
static const uint64_t periods[NR_MODES] = { 0, 1000000, 1000000, 100000, 100000 };

static uint64_t sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_CALLCHAIN;

static volatile uint64_t sink;

/* The leaf: arithmetic the compiler cannot fold, unrolled so that the ip a sample
 * lands on is one of a few hundred, as in code that does not spin on one line. */
static __attribute__((noinline)) uint64_t leaf(uint64_t x)
{
#pragma GCC unroll 128
	for (int i = 0; i < 2048; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
	return x;
}

static __attribute__((noinline)) uint64_t nest(int depth, uint64_t x)
{
	uint64_t r = depth ? nest(depth - 1, x + 1) : leaf(x);

	__asm__ volatile("" : "+r"(r)); /* no tail call: each level keeps its frame */
	return r;
}

/* The same work every run: main -> run_mode -> loop -> nest x9 -> leaf puts the leaf
 * 11 frames under main. */
static __attribute__((noinline)) void loop(uint64_t calls)
{
	uint64_t x = 1;

	for (uint64_t i = 0; i < calls; i++)
		x = nest(DEPTH - 3, x + i);
	sink = x;
}

/* How many calls take about ms of this thread's CPU time, unsampled. */
static uint64_t calibrate(unsigned ms)
{
	uint64_t calls = 1000, t;

	for (;;) {
		t = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		loop(calls);
		t = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t;
		if (t >= 20000000u)
			return (uint64_t)((double)calls * ms * 1e6 / (double)t);
		calls *= 4;
	}
}

struct run {
	double thread, process; /* seconds */
	uint64_t samples, repeats, lost;
};

/* Walks the ring's records: samples, lost ones, and those whose ip and callchain are
 * the previous sample's. */
static void count(const uint8_t *map, struct run *r)
{
	const struct perf_event_mmap_page *pg = (const void *)map;
	const uint8_t *data = map + PG, *prev = NULL;
	const uint64_t mask = (uint64_t)DATA_PAGES * PG - 1;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = 0;
	size_t prev_len = 0;

	while (tail < head) {
		const struct perf_event_header *h = (const void *)(data + (tail & mask));
		/* ip, pid/tid, time, then nr and the callchain. */
		const uint8_t *body = (const uint8_t *)(h + 1);

		if (tail + h->size > head || (tail & mask) + h->size > mask + 1)
			break; /* a record that wraps: the ring was not read while running */
		if (h->type == PERF_RECORD_SAMPLE) {
			size_t len = h->size - sizeof(*h);
			const uint8_t *key = body;

			r->samples++;
			/* The key: the ip, and the callchain after nr; not pid/tid or time. */
			if (prev && prev_len == len && !memcmp(prev, key, 8) &&
			    !memcmp(prev + 24, key + 24, len - 24))
				r->repeats++;
			prev = key;
			prev_len = len;
		} else if (h->type == PERF_RECORD_LOST) {
			r->lost += ((const uint64_t *)body)[1];
		}
		tail += h->size;
	}
}

static struct perf_event_attr attr_for(uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period;
	a.sample_type = sample_type;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return a;
}

static void run_kernel(uint64_t period, uint64_t calls, struct run *r)
{
	struct perf_event_attr a = attr_for(period);
	size_t len = (1 + DATA_PAGES) * PG;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	void *map;
	uint64_t t0, p0;

	if (fd < 0) {
		perror("perf_event_open");
		exit(1);
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	p0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	loop(calls);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	r->thread = (double)(bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e-9;
	r->process = (double)(bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p0) * 1e-9;
	count(map, r);
	munmap(map, len);
	close(fd);
}

static void run_ref(uint64_t period, uint64_t calls, struct run *r)
{
	struct ref_policy p = {
		.size = sizeof(p), .paranoid = -1,
		.caps = REF_CAP_MASK(REF_CAP_PERFMON) | REF_CAP_MASK(REF_CAP_IPC_LOCK),
	};
	struct ref_config c = { .size = sizeof(c), .policy = &p, .page_size = PG,
				.max_stack = 127 };
	struct pecs_attr a = { .type = PECS_TYPE_SOFTWARE, .size = sizeof(a),
			       .config = PECS_SW_TASK_CLOCK, .sample_period = period,
			       .sample_type = sample_type,
			       .flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL |
					PECS_ATTR_EXCLUDE_HV };
	struct ref_engine *e = ref_engine_new(&c);
	size_t len = (1 + DATA_PAGES) * PG;
	void *map;
	uint64_t t0, p0;
	int fd;

	if (!e)
		abort();
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	if (fd < 0 || ref_engine_mmap(e, fd, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &map) ||
	    ref_profiler_attach_sampler(e, fd, NULL, PECS_STREAM_FXT))
		abort();
	t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	p0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0);
	loop(calls);
	ref_engine_ioctl(e, fd, PECS_IOC_DISABLE, 0);
	r->thread = (double)(bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e-9;
	r->process = (double)(bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p0) * 1e-9;
	count(map, r);
	ref_engine_munmap(e, map, len);
	ref_engine_close(e, fd);
	ref_engine_free(e);
}

static void run_mode(enum mode m, uint64_t calls, struct run *r)
{
	memset(r, 0, sizeof(*r));
	switch (m) {
	case NONE: {
		uint64_t t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t p0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);

		loop(calls);
		r->thread = (double)(bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e-9;
		r->process = (double)(bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p0) * 1e-9;
		break;
	}
	case KERNEL_1K:
	case KERNEL_10K:
		run_kernel(periods[m], calls, r);
		break;
	default:
		run_ref(periods[m], calls, r);
		break;
	}
}

/* Per mode and trial: the figures the summary takes medians of. */
struct figures {
	double thread[MAX_TRIALS], process[MAX_TRIALS], rate[MAX_TRIALS], repeats[MAX_TRIALS];
	uint64_t lost;
};

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 7;
	unsigned ms = argc > 2 ? (unsigned)atoi(argv[2]) : 300;
	static struct figures f[NR_MODES];
	uint64_t calls;

	if (trials < 1 || trials > MAX_TRIALS || ms < 10) {
		fprintf(stderr, "usage: %s [TRIALS<=%d] [LOOP_MS>=10]\n", argv[0], MAX_TRIALS);
		return 2;
	}
	calls = calibrate(ms);
	for (int t = -1; t < trials; t++) { /* trial -1 warms up and is not counted */
		struct run r[NR_MODES];

		for (int m = 0; m < NR_MODES; m++)
			run_mode((enum mode)m, calls, &r[m]);
		if (t < 0)
			continue;
		for (int m = 0; m < NR_MODES; m++) {
			f[m].thread[t] = r[m].thread / r[NONE].thread;
			f[m].process[t] = r[m].process / r[NONE].process;
			f[m].rate[t] = periods[m] ? (double)r[m].samples /
						    (r[m].thread * 1e9 / (double)periods[m])
						  : 0;
			f[m].repeats[t] = r[m].samples ? (double)r[m].repeats / (double)r[m].samples
						       : 0;
			f[m].lost += r[m].lost;
		}
	}
	printf("%-14s %10s %10s %14s %10s  (medians of %d trials, %u ms of loop each)\n", "mode",
	       "thread", "process", "samples/(cpu/period)", "repeats", trials, ms);
	for (int m = 0; m < NR_MODES; m++)
		printf("%-14s %9.3fx %9.3fx %14.3f %9.1f%%  lost %llu\n", names[m],
		       bench_median(f[m].thread, trials), bench_median(f[m].process, trials),
		       bench_median(f[m].rate, trials), 100 * bench_median(f[m].repeats, trials),
		       (unsigned long long)f[m].lost);
	/* Over the medians: a trial's kernel overhead can be 0 within the noise. */
	for (int m = REF_1K; m <= REF_10K; m += REF_10K - REF_1K) {
		double k = bench_median(f[m - 1].process, trials) - 1, r = bench_median(f[m].process, trials) - 1;

		printf("%s: process CPU +%.1f%%, the kernel's +%.1f%%: %.2fx the kernel's "
		       "overhead\n", names[m], 100 * r, 100 * k, k > 0 ? r / k : 0);
	}
	return 0;
}
