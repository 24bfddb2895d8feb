/* Is the live sampler exact on a busy machine? The kernel and ref sample the same
 * CPU-bound loop, in turn, while LOAD busy processes of this benchmark's own keep every
 * core taken, for cpu-clock and task-clock, at 1, 4 and 10 kHz, by period and by
 * frequency, on one thread and on four (each thread its own event on itself).
 *
 *   bazel run -c opt //benchmarks/sampler:accuracy_bench [-- TRIALS [LOOP_MS [LOAD]]]
 *
 * Per configuration, as medians over the trials, against the sampled threads' own CPU
 * time (CLOCK_THREAD_CPUTIME_ID, summed over the threads):
 * - samples: the samples in the rings over CPU / period (by period) or CPU x frequency
 *   (by frequency): 1.000 is one sample per period of CPU;
 * - periods: the sum of the samples' PERF_SAMPLE_PERIOD over the CPU in ns, the share
 *   of the CPU the samples stand for;
 * - ref/kernel: ref's samples figure over the kernel's of the same trial;
 * - lost and throttle: LOST records' counts and THROTTLE records, over all trials.
 * The busy processes are ended by their pid when the benchmark ends, and by an alarm
 * should it not. */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pecs/profiler/attach.h"
#include "pecs/profiler/sampler.h"
#include "pecs/ref.h"
#include "pecs/bench.h"

#define PG 4096
#define DATA_PAGES 512 /* 2 MiB a thread: a run's samples, read after it */
#define MAX_TRIALS 21
#define MAX_THREADS 4
#define MAX_LOAD 16

static const uint64_t SAMPLE_TYPE = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				    PERF_SAMPLE_PERIOD;

struct config {
	uint64_t clock;   /* PERF_COUNT_SW_CPU_CLOCK or _TASK_CLOCK */
	unsigned hz;
	int freq;         /* by frequency rather than by period */
	int threads;
};

/* What one thread's run gave. */
struct tally {
	uint64_t cpu_ns, samples, period_sum, lost, throttles;
};

static volatile uint64_t sink;

static __attribute__((noinline)) void burn(uint64_t cpu_ns)
{
	uint64_t end = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns, x = 1;

	while (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
	sink = x;
}

/* Walks a ring after the run: samples (ip, pid/tid, time, period), LOST and THROTTLE. */
static void count(const uint8_t *map, struct tally *t)
{
	const struct perf_event_mmap_page *pg = (const void *)map;
	const uint8_t *data = map + PG;
	const uint64_t mask = (uint64_t)DATA_PAGES * PG - 1;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = 0;

	while (tail < head) {
		const struct perf_event_header *h = (const void *)(data + (tail & mask));
		const uint64_t *body = (const uint64_t *)(h + 1);

		if (h->size < sizeof(*h) || (tail & mask) + h->size > mask + 1)
			break; /* a record that wraps: the ring was too small for the run */
		if (h->type == PERF_RECORD_SAMPLE) {
			t->samples++;
			t->period_sum += body[3];
		} else if (h->type == PERF_RECORD_LOST) {
			t->lost += body[1];
		} else if (h->type == PERF_RECORD_THROTTLE) {
			t->throttles++;
		}
		tail += h->size;
	}
}

/* One implementation's open/enable/disable/close, so a thread's run is the same code
 * for both. */
struct side {
	const char *name;
	struct ref_engine *e; /* NULL: the kernel */
};

static int side_open(struct side *s, const struct config *c, void **map)
{
	size_t len = (1 + DATA_PAGES) * PG;
	int fd;

	if (!s->e) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.size = sizeof(a);
		a.config = c->clock;
		a.sample_period = c->freq ? c->hz : 1000000000u / c->hz;
		a.freq = c->freq;
		a.sample_type = SAMPLE_TYPE;
		a.disabled = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		*map = fd < 0 ? MAP_FAILED
			      : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		return fd < 0 || *map == MAP_FAILED ? -1 : fd;
	}
	struct pecs_attr a = {
		.type = PECS_TYPE_SOFTWARE, .size = sizeof(a), .config = c->clock,
		.sample_period = c->freq ? c->hz : 1000000000u / c->hz,
		.sample_type = SAMPLE_TYPE,
		.flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV |
			 (c->freq ? PECS_ATTR_FREQ : 0),
	};
	fd = ref_engine_open(s->e, &a, 0, -1, -1, 0);
	if (fd < 0 || ref_engine_mmap(s->e, fd, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0, map))
		return -1;
	return fd;
}

static void side_ioctl(struct side *s, int fd, unsigned long req)
{
	if (s->e)
		ref_engine_ioctl(s->e, fd, req, 0);
	else
		ioctl(fd, req, 0);
}

static void side_close(struct side *s, int fd, void *map)
{
	size_t len = (1 + DATA_PAGES) * PG;

	if (s->e) {
		ref_engine_munmap(s->e, map, len);
		ref_engine_close(s->e, fd);
	} else {
		munmap(map, len);
		close(fd);
	}
}

struct job {
	struct side *side;
	const struct config *c;
	uint64_t burn_ns;
	pthread_barrier_t *start;
	struct tally t;
	int failed;
};

static void *thread_run(void *arg)
{
	struct job *j = arg;
	void *map;
	int fd = side_open(j->side, j->c, &map);
	uint64_t t0;

	pthread_barrier_wait(j->start);
	if (fd < 0) {
		j->failed = 1;
		return NULL;
	}
	t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	side_ioctl(j->side, fd, PERF_EVENT_IOC_ENABLE);
	burn(j->burn_ns);
	side_ioctl(j->side, fd, PERF_EVENT_IOC_DISABLE);
	j->t.cpu_ns = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	count(map, &j->t);
	side_close(j->side, fd, map);
	return NULL;
}

/* One run of a configuration on one side: the threads' tallies summed. */
static int run(struct side *s, const struct config *c, uint64_t burn_ns, struct tally *sum)
{
	pthread_t th[MAX_THREADS];
	struct job jobs[MAX_THREADS];
	pthread_barrier_t start;
	int failed = 0;

	memset(sum, 0, sizeof(*sum));
	pthread_barrier_init(&start, NULL, (unsigned)c->threads);
	for (int i = 0; i < c->threads; i++) {
		jobs[i] = (struct job){ .side = s, .c = c, .burn_ns = burn_ns, .start = &start };
		pthread_create(&th[i], NULL, thread_run, &jobs[i]);
	}
	for (int i = 0; i < c->threads; i++) {
		pthread_join(th[i], NULL);
		failed |= jobs[i].failed;
		sum->cpu_ns += jobs[i].t.cpu_ns;
		sum->samples += jobs[i].t.samples;
		sum->period_sum += jobs[i].t.period_sum;
		sum->lost += jobs[i].t.lost;
		sum->throttles += jobs[i].t.throttles;
	}
	pthread_barrier_destroy(&start);
	return failed ? -1 : 0;
}

/* Samples per period of CPU: 1.0 is exact. */
static double samples_ratio(const struct config *c, const struct tally *t)
{
	double expected = (double)t->cpu_ns * c->hz / 1e9;

	return expected > 0 ? (double)t->samples / expected : 0;
}

static pid_t load[MAX_LOAD];
static int nr_load;

static void start_load(int n, unsigned seconds)
{
	for (nr_load = 0; nr_load < n && nr_load < MAX_LOAD; nr_load++) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			alarm(seconds); /* bounded even should the benchmark die first */
			for (;;)
				__asm__ volatile("");
		}
		load[nr_load] = pid;
	}
}

static void stop_load(void)
{
	for (int i = 0; i < nr_load; i++) {
		kill(load[i], SIGKILL);
		waitpid(load[i], NULL, 0);
	}
}

struct figures {
	double kernel[MAX_TRIALS], ref[MAX_TRIALS], kperiods[MAX_TRIALS], rperiods[MAX_TRIALS];
	double ratio[MAX_TRIALS];
	uint64_t klost, rlost, kthrottle, rthrottle;
};

static void print_config(const struct config *c, struct figures *f, int trials)
{
	printf("%-10s %5u Hz %-6s %d thr  %8.3f %8.3f  %8.3f %8.3f  %8.3f  %llu/%llu %llu/%llu\n",
	       c->clock == PERF_COUNT_SW_CPU_CLOCK ? "cpu-clock" : "task-clock", c->hz,
	       c->freq ? "freq" : "period", c->threads, bench_median(f->kernel, trials),
	       bench_median(f->ref, trials), bench_median(f->kperiods, trials),
	       bench_median(f->rperiods, trials), bench_median(f->ratio, trials),
	       (unsigned long long)f->klost, (unsigned long long)f->rlost,
	       (unsigned long long)f->kthrottle, (unsigned long long)f->rthrottle);
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 3;
	unsigned ms = argc > 2 ? (unsigned)atoi(argv[2]) : 200;
	int nload = argc > 3 ? atoi(argv[3]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
	static const uint64_t clocks[] = { PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK };
	static const unsigned rates[] = { 1000, 4000, 10000 };
	struct ref_policy p = {
		.size = sizeof(p), .paranoid = -1,
		.caps = REF_CAP_MASK(REF_CAP_PERFMON) | REF_CAP_MASK(REF_CAP_IPC_LOCK),
	};
	struct ref_config rc = { .size = sizeof(rc), .policy = &p, .page_size = PG,
				 .profiler = ref_profiler_live() };
	struct side kernel = { "kernel", NULL }, ref = { "ref", ref_engine_new(&rc) };

	if (trials < 1 || trials > MAX_TRIALS || ms < 20 || nload < 0 || nload > MAX_LOAD ||
	    !ref.e) {
		fprintf(stderr, "usage: %s [TRIALS<=%d] [LOOP_MS>=20] [LOAD<=%d]\n", argv[0],
			MAX_TRIALS, MAX_LOAD);
		return 2;
	}
	start_load(nload, 3600);
	printf("%d busy processes; %u ms of CPU per thread per run; medians of %d trials\n",
	       nr_load, ms, trials);
	printf("%-10s %8s %-6s %5s  %8s %8s  %8s %8s  %8s  %s\n", "event", "rate", "mode", "",
	       "samples:", "", "periods:", "", "ref/", "lost     throttle");
	printf("%-10s %8s %-6s %5s  %8s %8s  %8s %8s  %8s  %s\n", "", "", "", "", "kernel", "ref",
	       "kernel", "ref", "kernel", "kernel/ref");
	for (size_t ci = 0; ci < 2; ci++)
		for (size_t ri = 0; ri < 3; ri++)
			for (int freq = 0; freq < 2; freq++)
				for (int threads = 1; threads <= MAX_THREADS; threads += 3) {
					struct config c = { clocks[ci], rates[ri], freq, threads };
					struct figures f;

					memset(&f, 0, sizeof(f));
					for (int t = 0; t < trials; t++) {
						struct tally k, r;

						/* Interleaved: each trial runs both sides. */
						if (run(&kernel, &c, ms * 1000000ull, &k) ||
						    run(&ref, &c, ms * 1000000ull, &r)) {
							fprintf(stderr, "open failed\n");
							stop_load();
							return 1;
						}
						f.kernel[t] = samples_ratio(&c, &k);
						f.ref[t] = samples_ratio(&c, &r);
						f.kperiods[t] = (double)k.period_sum / (double)k.cpu_ns;
						f.rperiods[t] = (double)r.period_sum / (double)r.cpu_ns;
						f.ratio[t] = f.kernel[t] > 0 ? f.ref[t] / f.kernel[t] : 0;
						f.klost += k.lost;
						f.rlost += r.lost;
						f.kthrottle += k.throttles;
						f.rthrottle += r.throttles;
					}
					print_config(&c, &f, trials);
				}
	stop_load();
	ref_engine_free(ref.e);
	return 0;
}
