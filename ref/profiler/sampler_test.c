/* The live sampler for real: a busy loop burns this thread's CPU time while a CPU-time
 * timer samples it; the samples' IPs must land in the loop's function, whose bounds come
 * from its unwind table entry (not from the sampler). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "pecs/profiler/sampler.h"
#include "pecs/profiler/session.h"
#include "pecs/stream/decoder.h"

#define MAX 8192

struct kept {
	uint32_t pid, tid, cpu, nr;
	uint64_t time, period, ip0;
	bool loop_on_stack; /* some frame lies in [loop_lo, loop_hi) */
	uint16_t misc;
};

static struct kept kept[MAX];
static uint64_t loop_lo, loop_hi;
static int nr_kept;
static uint64_t lost_total;

static int sink(void *ctx, const struct pecs_sample *s)
{
	int i = __atomic_load_n(&nr_kept, __ATOMIC_RELAXED);

	(void)ctx;
	if (i == MAX)
		return 0;
	kept[i].pid = s->pid;
	kept[i].tid = s->tid;
	kept[i].cpu = s->cpu;
	kept[i].nr = s->nr_ips;
	kept[i].time = s->time;
	kept[i].period = s->period;
	kept[i].misc = s->misc;
	kept[i].ip0 = s->nr_ips ? s->ips[0] : 0;
	kept[i].loop_on_stack = false;
	for (uint64_t k = 0; k < s->nr_ips; k++)
		kept[i].loop_on_stack |= s->ips[k] >= loop_lo && s->ips[k] < loop_hi;
	__atomic_store_n(&nr_kept, i + 1, __ATOMIC_RELEASE);
	return 0;
}

static int lost(void *ctx, uint64_t nr)
{
	(void)ctx;
	__atomic_add_fetch(&lost_total, nr, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* The loop the samples must land in. Long inner runs keep clock reads rare. */
__attribute__((noinline)) void pecs_sampler_test_spin(uint64_t cpu_ns)
{
	volatile uint64_t x = 0;
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200000; i++)
			x += i;
}

/* The loop the in-loop checks sample: no system call inside, because a busy machine
 * delivers the timer signal at a system call's exit far more often than CPU time spent
 * there would suggest, and the clock read above is one. */
__attribute__((noinline)) void pecs_sampler_test_burn(uint64_t iterations)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < iterations; i++)
		x += i;
}

static uint64_t burn_per_ms; /* iterations of the burn loop per ms of CPU, measured once */

static void burn_ms(uint64_t ms)
{
	if (!burn_per_ms) {
		uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), dt;

		pecs_sampler_test_burn(20000000ull);
		dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		burn_per_ms = 20000000ull * 1000000ull / (dt ? dt : 1) + 1;
	}
	pecs_sampler_test_burn(ms * burn_per_ms);
}

static void function_range(void *fn, uint64_t *start, uint64_t *end)
{
	unw_proc_info_t pi;

	assert_int_equal(unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)fn, &pi, NULL), 0);
	*start = pi.start_ip;
	*end = pi.end_ip;
	assert_true(*start <= (uint64_t)fn && (uint64_t)fn < *end);
}

static struct ref_profiler_session *new_session(const struct ref_sampler_opts *so, unsigned poll_us)
{
	struct ref_profiler *p;
	struct ref_profiler_session *s;
	struct ref_profiler_session_opts opts = {
		.size = sizeof(opts), .sink = sink, .lost = lost, .poll_us = poll_us,
	};

	assert_int_equal(ref_profiler_new_sampler(&p, so), 0);
	assert_int_equal(ref_profiler_session_new(&s, p, &opts), 0);
	nr_kept = 0;
	lost_total = 0;
	return s;
}

static void run_and_check(enum ref_profiler_task_kind kind, enum pecs_stream_format fmt)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 1000000,
		.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER, .kind = kind,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(), .output = fmt,
	};
	struct ref_profiler_session_result res = { .size = sizeof(res) };
	uint64_t lo, hi, t0, t1;
	int inside = 0, on_stack = 0, during;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	function_range((void *)pecs_sampler_test_burn, &lo, &hi);
	loop_lo = lo;
	loop_hi = hi;
	burn_ms(0);
	t0 = clock_ns(CLOCK_MONOTONIC);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	/* One sample per ms of this thread's CPU time; burn until enough have been
	 * collected, for at most 10 s of CPU (a busy machine may starve the thread). */
	for (int i = 0; i < 200 && __atomic_load_n(&nr_kept, __ATOMIC_ACQUIRE) < 60; i++)
		burn_ms(50);
	during = __atomic_load_n(&nr_kept, __ATOMIC_ACQUIRE);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	t1 = clock_ns(CLOCK_MONOTONIC);
	ref_profiler_session_free(s);

	assert_true(nr_kept >= 40);
	assert_true(during > 0); /* the collector drained while enabled */
	assert_int_equal(res.error.code, REF_STREAM_OK);
	assert_int_equal(res.format, fmt);
	assert_true(res.stream.samples == (uint64_t)nr_kept);
	assert_true(res.profiler.samples_collected == (uint64_t)nr_kept);
	assert_int_equal(res.profiler.dropped_buffer_full, 0);
	/* Repeated stacks are counted; each batch ends with a stack of its own moment, so
	 * not every sample is a repeat (how many are depends on the machine's load). */
	if (res.profiler.samples_repeated >= res.profiler.samples_collected)
		fail_msg("%llu of %llu samples repeat another's stack",
			 (unsigned long long)res.profiler.samples_repeated,
			 (unsigned long long)res.profiler.samples_collected);
	assert_true(res.profiler.max_sample_time_us >= res.profiler.min_sample_time_us);
	for (int i = 0; i < nr_kept; i++) {
		assert_int_equal(kept[i].pid, getpid());
		assert_int_equal(kept[i].tid, gettid());
		assert_int_equal(kept[i].misc, PECS_MISC_USER);
		/* 0: the event, not the profiler, says what PERF_SAMPLE_PERIOD is. */
		assert_true(kept[i].period == 0);
		assert_true(kept[i].cpu < (uint32_t)ncpu);
		assert_true(kept[i].time >= t0 && kept[i].time <= t1);
		if (i)
			assert_true(kept[i].time >= kept[i - 1].time);
		inside += kept[i].ip0 >= lo && kept[i].ip0 < hi;
		on_stack += kept[i].loop_on_stack;
	}
	if (inside * 10 < nr_kept * 8)
		fail_msg("only %d of %d samples inside [%#llx, %#llx)", inside, nr_kept,
			 (unsigned long long)lo, (unsigned long long)hi);
	assert_true(on_stack >= nr_kept * 95 / 100);
	for (int i = 0; i < nr_kept; i++)
		assert_true(kept[i].nr >= 2); /* the loop's callers were unwound too */
}

static void test_thread_fxt(void **state)
{
	(void)state;
	run_and_check(REF_PROFILER_TASK_THREAD, PECS_STREAM_FXT);
}

static void test_process_markup(void **state)
{
	(void)state;
	run_and_check(REF_PROFILER_TASK_PROCESS, PECS_STREAM_MARKUP);
}

/* A buffer too small for any sample: every sample is dropped and reported as lost,
 * memory stays bounded, and nothing half-written reaches the sink. */
static void test_full_buffer_drops(void **state)
{
	struct ref_sampler_opts so = { .size = sizeof(so), .buffer_bytes = 64 };
	struct ref_profiler_session *s = new_session(&so, 0);
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 1000000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
		.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER,
	};
	struct ref_profiler_session_result res = { .size = sizeof(res) };

	(void)state;
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	for (int i = 0; i < 200 && __atomic_load_n(&lost_total, __ATOMIC_ACQUIRE) < 10; i++)
		pecs_sampler_test_spin(50000000ull);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	ref_profiler_session_free(s);
	assert_int_equal(nr_kept, 0);
	assert_true(res.profiler.dropped_buffer_full >= 10);
	assert_true(lost_total == res.profiler.dropped_buffer_full);
	assert_int_equal(res.error.code, REF_STREAM_OK); /* the header alone is a valid stream */
}

/* Periods shorter than a scheduler tick (4 ms here, where POSIX CPU-time timers would
 * give one signal per tick): the count follows CPU time / period within 10%, with
 * strictly increasing times. */
static void check_count(uint64_t period)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = period, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	struct ref_profiler_session_result res = { .size = sizeof(res) };
	uint64_t c0, cpu, expected, got;

	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(200000000ull);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	ref_profiler_session_free(s);
	expected = cpu / period;
	got = (uint64_t)nr_kept + lost_total;
	if (got * 10 < expected * 9 || got * 10 > expected * 11)
		fail_msg("%llu samples for %llu ns of CPU at %llu ns", (unsigned long long)got,
			 (unsigned long long)cpu, (unsigned long long)period);
	for (int i = 1; i < nr_kept; i++)
		assert_true(kept[i].time > kept[i - 1].time);
}

static void test_count_follows_cpu_time(void **state)
{
	(void)state;
	check_count(100000);
	check_count(1000000);
}

/* A burst shorter than a tick still gets its samples, and disable on the target thread
 * catches up the periods the ticker had not signalled yet: 2 ms at 100 us. */
static void test_short_burst(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 100000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	uint64_t c0, cpu;

	(void)state;
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(2000000ull);
	assert_int_equal(ref_profiler_session_disable(s, NULL), 0);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	ref_profiler_session_free(s);
	assert_true((uint64_t)nr_kept + lost_total >= 18);
	assert_true((uint64_t)nr_kept + lost_total <= cpu / 100000);
}

static void test_refused_configurations(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0), *other;
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 1000000, .kind = REF_PROFILER_TASK_PROCESS,
		.pid = 1, .tid = 1,
	};
	struct ref_profiler_sampling cycles = { 1000, REF_PROFILER_CYCLES, 0 };
	struct ref_profiler_target me = { REF_PROFILER_TASK_THREAD, (uint64_t)gettid(), 0 };
	struct ref_profiler_config cfg = { .size = sizeof(cfg), .samplings = &cycles,
					   .nr_samplings = 1, .targets = &me, .nr_targets = 1 };
	struct ref_profiler *p = ref_profiler_session_profiler(s);

	(void)state;
	/* Another process: libunwind cannot unwind it from here. */
	assert_int_equal(ref_profiler_session_enable(s, &en), -EINVAL);
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_INVALID_CONFIGURATION);
	en.kind = REF_PROFILER_TASK_THREAD;
	en.tid = 0x7ffffff0; /* no such thread */
	assert_int_equal(ref_profiler_session_enable(s, &en), -EINVAL);
	en.kind = REF_PROFILER_TASK_SYSTEM_WIDE;
	assert_int_equal(ref_profiler_session_enable(s, &en), -EINVAL);
	assert_int_equal(ref_profiler_configure(p, &cfg), -EINVAL); /* CYCLES: no PMU here */
	assert_int_equal(ref_profiler_fidl_error(p), REF_PROFILER_INVALID_CONFIGURATION);

	/* One sampler per process: the second start is BAD_STATE. */
	en.kind = REF_PROFILER_TASK_THREAD;
	en.pid = (uint64_t)getpid();
	en.tid = (uint64_t)gettid();
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	other = new_session(NULL, 0);
	assert_int_equal(ref_profiler_session_enable(other, &en), -EBUSY);
	assert_int_equal(ref_profiler_fidl_error(ref_profiler_session_profiler(other)),
			 REF_PROFILER_BAD_STATE);
	assert_int_equal(ref_profiler_session_disable(s, NULL), 0);
	assert_int_equal(ref_profiler_session_enable(other, &en), 0);
	assert_int_equal(ref_profiler_session_disable(other, NULL), 0);
	ref_profiler_session_free(other);
	ref_profiler_session_free(s);
}

struct spinner {
	pid_t tid;
	int stop;
};

static void *spin_thread(void *arg)
{
	struct spinner *sp = arg;

	__atomic_store_n(&sp->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE))
		burn_ms(10);
	return NULL;
}

/* Another thread of this process as the target: its CPU time drives the timer and the
 * signal goes to it (SIGEV_THREAD_ID), so every sample names it. */
static void test_other_thread(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct spinner sp = { 0, 0 };
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 1000000, .kind = REF_PROFILER_TASK_THREAD,
		.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER, .pid = (uint64_t)getpid(),
	};
	struct timespec nap = { 0, 10000000 };
	pthread_t t;
	uint64_t lo, hi;
	int inside = 0;

	(void)state;
	function_range((void *)pecs_sampler_test_burn, &lo, &hi);
	loop_lo = lo;
	loop_hi = hi;
	burn_ms(0);
	assert_int_equal(pthread_create(&t, NULL, spin_thread, &sp), 0);
	while (!__atomic_load_n(&sp.tid, __ATOMIC_ACQUIRE))
		nanosleep(&nap, NULL);
	en.tid = (uint64_t)sp.tid;
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	for (int i = 0; i < 500 && __atomic_load_n(&nr_kept, __ATOMIC_ACQUIRE) < 30; i++)
		nanosleep(&nap, NULL);
	assert_int_equal(ref_profiler_session_disable(s, NULL), 0);
	__atomic_store_n(&sp.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ref_profiler_session_free(s);
	assert_true(nr_kept >= 30);
	for (int i = 0; i < nr_kept; i++) {
		assert_int_equal(kept[i].tid, sp.tid);
		assert_int_equal(kept[i].pid, getpid());
		inside += kept[i].ip0 >= lo && kept[i].ip0 < hi;
	}
	if (inside * 10 < nr_kept * 8)
		fail_msg("only %d of %d samples inside [%#llx, %#llx)", inside, nr_kept,
			 (unsigned long long)lo, (unsigned long long)hi);
}

/* The FIDL-shaped surface without a session: read the sampler's stream in 3-byte
 * pieces after Stop until EOF; it must be one valid FXT stream. */
static void test_raw_stream_reads(void **state)
{
	struct ref_profiler *p;
	struct ref_profiler_sampling sm = { 1000000, REF_PROFILER_NANOSECONDS,
					    REF_PROFILER_CALLGRAPH_FRAME_POINTER };
	struct ref_profiler_target tg = { REF_PROFILER_TASK_THREAD, (uint64_t)gettid(), 0 };
	struct ref_profiler_config cfg = { .size = sizeof(cfg), .samplings = &sm, .nr_samplings = 1,
					   .targets = &tg, .nr_targets = 1 };
	struct ref_profiler_result res = { .size = sizeof(res) };
	struct ref_stream_target t = { .size = sizeof(t), .sink = sink };
	struct ref_stream_decoder *d;
	uint8_t b[3], first[8];
	size_t total = 0;
	ssize_t n;

	(void)state;
	nr_kept = 0;
	assert_int_equal(ref_profiler_new_sampler(&p, NULL), 0);
	assert_int_equal(ref_profiler_configure(p, &cfg), 0);
	assert_int_equal(ref_profiler_start(p, NULL), 0);
	pecs_sampler_test_spin(100000000ull);
	assert_int_equal(ref_profiler_stop(p, &res), 0);
	assert_true(res.samples_collected > 0);
	assert_int_equal(ref_stream_decoder_new(&d, PECS_STREAM_DETECT, &t), 0);
	while ((n = ref_profiler_read(p, b, sizeof(b))) > 0) {
		if (total < sizeof(first))
			memcpy(first + total, b, (size_t)n < sizeof(first) - total ? (size_t)n
									: sizeof(first) - total);
		total += n;
		assert_int_equal(ref_stream_decoder_feed(d, b, n), 0);
	}
	assert_int_equal(n, -EPIPE);
	assert_int_equal(ref_stream_decoder_finish(d), 0);
	assert_int_equal(ref_stream_decoder_format(d), PECS_STREAM_FXT);
	assert_memory_equal(first, "\x10\x00\x04\x46\x78\x54\x16\x00", 8);
	ref_stream_decoder_free(d);
	assert_true((uint64_t)nr_kept == res.samples_collected);
	assert_int_equal(ref_profiler_reset(p), 0);
	ref_profiler_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_fxt),
		cmocka_unit_test(test_process_markup),
		cmocka_unit_test(test_full_buffer_drops),
		cmocka_unit_test(test_count_follows_cpu_time),
		cmocka_unit_test(test_short_burst),
		cmocka_unit_test(test_refused_configurations),
		cmocka_unit_test(test_other_thread),
		cmocka_unit_test(test_raw_stream_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
