/* The profiler pipeline end to end against memcpy of the same stream bytes: a replay
 * session feeds an FXT or markup stream through the decoder and the engine's encoder
 * into a sampling event's ring, which a reader thread drains as perf(1) would.
 *
 *   bazel run -c opt //benchmarks/pipeline:pipeline_bench [-- MB [TRIALS [cgroup]]]
 *
 * "cgroup" adds PERF_SAMPLE_CGROUP, whose task lookup (a walk of /proc/self/task when
 * /proc belongs to another pid namespace: run it under `unshare -pf`) is made at enable.
 *
 * Each trial times ENABLE + DISABLE (the replay is read at DISABLE) in the feeding
 * thread's CPU time, and memcpy of the stream in the same chunks in the same thread,
 * interleaved, after one untimed pass of each; the figure is the median ratio. Samples
 * the reader did not see (the ring was full) are printed: a run that lost any
 * understates the work. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pecs/profiler/attach.h"
#include "pecs/ref.h"
#include "pecs/stream/fxt_writer.h"
#include "pecs/stream/markup_writer.h"
#include "pecs/bench.h"

#define PG 4096
#define DATA_PAGES 8192 /* 32 MiB: the whole output fits, a late reader loses nothing */
#define CHUNK 16384 /* what the session reads at a time */
#define MAX_TRIALS 51

static uint64_t sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |
				    PECS_SAMPLE_PERIOD | PECS_SAMPLE_CALLCHAIN;

/* Samples of 1..32 frames over 3 processes and 7 threads, as stream_bench builds. */
static size_t build(uint8_t *buf, size_t cap, enum pecs_stream_format fmt, uint64_t *nr)
{
	uint64_t ips[32];
	size_t n = 0;
	ssize_t w;

	*nr = 0;
	if (fmt == PECS_STREAM_FXT)
		n += (size_t)ref_fxt_write_magic(buf, cap);
	for (uint64_t i = 0;; i++) {
		struct ref_fxt_who who = { 0, 1000 + i % 3, 2000 + i % 7 };
		size_t k, frames = 1 + i % 32;

		for (k = 0; k < frames; k++)
			ips[k] = 0x7f0000400000ull + i * 64 + k * 4096;
		if (fmt == PECS_STREAM_FXT)
			w = ref_fxt_write_backtrace(buf + n, cap - n, &who, i * 1000, ips, frames);
		else
			w = ref_markup_write_sample((char *)buf + n, cap - n, who.pkoid, who.tkoid,
						    ips, frames);
		if (w < 0)
			return n;
		n += (size_t)w;
		++*nr;
	}
}

struct reader {
	volatile struct pecs_mmap_page *meta;
	const uint8_t *data;
	atomic_int stop;
	uint64_t samples, lost, bytes, sum;
};

/* Follows data_head as perf(1) does, and touches each record's first word. */
static void *drain(void *arg)
{
	struct reader *r = arg;
	const uint64_t mask = (uint64_t)DATA_PAGES * PG - 1;

	for (;;) {
		uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->meta->data_tail;
		int stopping = atomic_load(&r->stop);

		if (head == tail) {
			if (stopping)
				return NULL;
			sched_yield();
			continue;
		}
		while (tail < head) {
			const struct pecs_record_header *h =
				(const void *)(r->data + (tail & mask));

			if (h->type == PECS_RECORD_SAMPLE)
				r->samples++;
			else if (h->type == PECS_RECORD_LOST)
				r->lost += ((const uint64_t *)h)[2];
			r->sum += ((const uint64_t *)h)[1];
			r->bytes += h->size;
			tail += h->size;
		}
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
}

static struct ref_engine *new_engine(void)
{
	struct ref_policy p = {
		.size = sizeof(p), .paranoid = -1,
		.caps = REF_CAP_MASK(REF_CAP_PERFMON) | REF_CAP_MASK(REF_CAP_IPC_LOCK),
	};
	struct ref_config c = { .size = sizeof(c), .policy = &p, .page_size = PG,
				.max_stack = 127 };
	struct ref_engine *e = ref_engine_new(&c);

	if (!e)
		abort();
	return e;
}

static const struct pecs_koid_map_entry koids[] = {
	{ 1000, 100 }, { 1001, 101 }, { 1002, 102 },
	{ 2000, 200 }, { 2001, 201 }, { 2002, 202 }, { 2003, 203 },
	{ 2004, 204 }, { 2005, 205 }, { 2006, 206 },
};

/* A sampling event with the stream attached, its ring mapped and drained by a reader
 * thread, kept across trials: a ring in use has had its pages written before (the
 * first write to a page costs far more here than the record), and so has memcpy's
 * destination. */
struct pipe {
	struct ref_engine *e;
	int fd;
	void *map;
	pthread_t th;
	struct reader r;
};

static void pipe_open(struct pipe *p, const uint8_t *buf, size_t len,
		      enum pecs_stream_format fmt)
{
	struct pecs_profiler_stream st = {
		.size = sizeof(st), .format = fmt, .data = buf, .len = len, .chunk = CHUNK,
		.koids = koids, .nr_koids = sizeof(koids) / sizeof(koids[0]),
	};
	struct pecs_attr a = { .type = PECS_TYPE_SOFTWARE, .size = sizeof(a),
			       .config = PECS_SW_TASK_CLOCK, .sample_period = 100000,
			       .sample_type = sample_type,
			       .flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL };

	p->e = new_engine();
	p->fd = ref_engine_open(p->e, &a, 0, -1, -1, 0);
	if (p->fd < 0 || ref_engine_mmap(p->e, p->fd, (1 + DATA_PAGES) * PG,
					 PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p->map) ||
	    ref_profiler_attach_replay(p->e, p->fd, &st))
		abort();
	p->r.meta = p->map;
	p->r.data = (const uint8_t *)p->map + PG;
	if (pthread_create(&p->th, NULL, drain, &p->r))
		abort();
}

static void pipe_close(struct pipe *p)
{
	atomic_store(&p->r.stop, 1);
	pthread_join(p->th, NULL);
	ref_engine_munmap(p->e, p->map, (1 + DATA_PAGES) * PG);
	ref_engine_close(p->e, p->fd);
	ref_engine_free(p->e);
}

/* Each ENABLE replays the whole stream, read at DISABLE; returns the feeding thread's
 * CPU time, and adds the samples the reader has not seen once it caught up to *lost. */
static double pipeline(struct pipe *p, uint64_t want, uint64_t *lost)
{
	uint64_t before = p->r.samples, head;
	double t = bench_cpu_s();

	if (ref_engine_ioctl(p->e, p->fd, PECS_IOC_ENABLE, 0) ||
	    ref_engine_ioctl(p->e, p->fd, PECS_IOC_DISABLE, 0))
		abort();
	t = bench_cpu_s() - t;
	head = __atomic_load_n(&p->r.meta->data_head, __ATOMIC_ACQUIRE);
	while (__atomic_load_n(&p->r.meta->data_tail, __ATOMIC_ACQUIRE) != head)
		sched_yield();
	/* A LOST record goes out only ahead of a later record: count what was not seen. */
	*lost += want - (p->r.samples - before);
	return t;
}

static double copy(uint8_t *dst, const uint8_t *src, size_t len)
{
	double t = bench_cpu_s();

	for (size_t off = 0; off < len; off += CHUNK)
		memcpy(dst + off, src + off, len - off < CHUNK ? len - off : CHUNK);
	__asm__ volatile("" : : "r"(dst) : "memory");
	return bench_cpu_s() - t;
}

struct input {
	const char *name;
	enum pecs_stream_format fmt;
	uint8_t *buf;
	size_t len;
	uint64_t samples, lost;
	struct pipe p;
	double pipe[MAX_TRIALS], copy[MAX_TRIALS], ratio[MAX_TRIALS];
};

int main(int argc, char **argv)
{
	size_t cap = (argc > 1 ? strtoul(argv[1], NULL, 0) : 16) << 20;
	int trials = argc > 2 ? atoi(argv[2]) : 7;
	struct input in[2] = { { .name = "fxt", .fmt = PECS_STREAM_FXT },
			       { .name = "markup", .fmt = PECS_STREAM_MARKUP } };
	uint8_t *dst = malloc(cap);

	if (argc > 3 && !strcmp(argv[3], "cgroup"))
		sample_type |= PECS_SAMPLE_CGROUP;
	if (!cap || trials < 1 || trials > MAX_TRIALS || !dst) {
		fprintf(stderr, "usage: %s [MB] [TRIALS<=%d] [cgroup]\n", argv[0], MAX_TRIALS);
		return 2;
	}
	memset(dst, 1, cap);
	for (int i = 0; i < 2; i++) {
		in[i].buf = malloc(cap);
		if (!in[i].buf)
			abort();
		in[i].len = build(in[i].buf, cap, in[i].fmt, &in[i].samples);
		pipe_open(&in[i].p, in[i].buf, in[i].len, in[i].fmt);
		/* Warm-up: the ring's pages and memcpy's destination written once. */
		pipeline(&in[i].p, in[i].samples, &in[i].lost);
		copy(dst, in[i].buf, in[i].len);
		in[i].lost = 0;
	}
	for (int t = 0; t < trials; t++) {
		for (int i = 0; i < 2; i++) {
			in[i].pipe[t] = pipeline(&in[i].p, in[i].samples, &in[i].lost);
			in[i].copy[t] = copy(dst, in[i].buf, in[i].len);
			in[i].ratio[t] = in[i].copy[t] / in[i].pipe[t];
		}
	}
	for (int i = 0; i < 2; i++) {
		pipe_close(&in[i].p);
	}
	for (int i = 0; i < 2; i++) {
		double p = bench_median(in[i].pipe, trials), c = bench_median(in[i].copy, trials);
		double ratio = bench_median(in[i].ratio, trials);

		printf("%-6s %6.1f MB %8llu samples  pipeline %7.1f MB/s %6.1f ns/sample  "
		       "memcpy %8.1f MB/s  pipeline/memcpy %.3f  (median of %d, lost %llu)\n",
		       in[i].name, in[i].len / 1e6, (unsigned long long)in[i].samples,
		       in[i].len / 1e6 / p, p * 1e9 / (double)in[i].samples, in[i].len / 1e6 / c,
		       ratio, trials, (unsigned long long)in[i].lost);
	}
	return 0;
}
