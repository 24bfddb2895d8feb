/* The live sampler for real: a busy loop burns this thread's CPU time while a CPU-time
 * timer samples it; the samples' IPs must land in the loop's function, whose bounds come
 * from its unwind table entry (not from the sampler). sampler_signal_test.c has the
 * late, pending and racing signals. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <pthread.h>

#include "pecs/stream/decoder.h"
#include "sampler_test_support.h"

/* One signal writes a batch of samples with one stack (a late signal repeats it for
 * the periods it stands for, up to CATCH_UP_MAX), so where the thread was is judged
 * per moment, not per sample: a signal that a starved ticker sent late may land in the
 * enable or disable call, and its batch alone could outweigh the rest of a short run.
 * A moment is a run of consecutive samples with the same stack top and depth. */
static void check_moments(uint64_t lo, uint64_t hi)
{
	int moments = 0, inside = 0, on_stack = 0;

	for (int i = 0; i < nr_kept; i++) {
		if (i && kept[i].ip0 == kept[i - 1].ip0 && kept[i].nr == kept[i - 1].nr)
			continue;
		moments++;
		inside += kept[i].ip0 >= lo && kept[i].ip0 < hi;
		on_stack += kept[i].loop_on_stack;
	}
	print_message("%d samples, %d moments, %d inside the loop, %d with it on the stack\n",
		      nr_kept, moments, inside, on_stack);
	/* Two moments may fall in the calls around the loop: the first and last signal. */
	if ((inside + 2) * 10 < moments * 8)
		for (int i = 0, shown = 0; i < nr_kept && shown < 12; i++) {
			Dl_info di = { 0 };

			if (kept[i].ip0 >= lo && kept[i].ip0 < hi)
				continue;
			dladdr((void *)(uintptr_t)kept[i].ip0, &di);
			print_message("outside: #%d ip %#llx (%s+%#llx) frames %u loop on stack %d\n",
				      i, (unsigned long long)kept[i].ip0,
				      di.dli_sname ? di.dli_sname : "?",
				      (unsigned long long)(kept[i].ip0 - (uintptr_t)di.dli_saddr),
				      kept[i].nr, kept[i].loop_on_stack);
			shown++;
		}
	if ((inside + 2) * 10 < moments * 8)
		fail_msg("only %d of %d moments inside [%#llx, %#llx)", inside, moments,
			 (unsigned long long)lo, (unsigned long long)hi);
	if ((on_stack + 2) * 100 < moments * 95)
		fail_msg("the loop is on the stack at only %d of %d moments", on_stack, moments);
}

static void run_and_check(enum ref_profiler_task_kind kind, enum pecs_stream_format fmt)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct ref_profiler_enable en = {
		.period_ns = 1000000,
		.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER, .kind = kind,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(), .output = fmt,
	};
	struct ref_profiler_session_result res = { 0 };
	uint64_t lo, hi, t0, t1;
	int during;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	function_range((void *)pecs_sampler_test_burn, &lo, &hi);
	loop_lo = lo;
	loop_hi = hi;
	burn_ms(0);
	t0 = clock_ns(CLOCK_MONOTONIC);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	/* One sample per ms of this thread's CPU time; burn until enough have been
	 * collected, for at most 10 s of CPU (a busy machine may starve the thread). */
	for (int i = 0; i < 200 && atomic_load_explicit(&nr_kept, memory_order_acquire) < 60; i++)
		burn_ms(50);
	during = atomic_load_explicit(&nr_kept, memory_order_acquire);
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
	}
	if (!check_placement("samples inside the loop, callers unwound"))
		return;
	check_moments(lo, hi);
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
	struct ref_sampler_opts so = { .buffer_bytes = 64 };
	struct ref_profiler_session *s = new_session(&so, 0);
	struct ref_profiler_enable en = {
		.period_ns = 1000000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
		.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER,
	};
	struct ref_profiler_session_result res = { 0 };

	(void)state;
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	for (int i = 0; i < 200 && atomic_load_explicit(&lost_total, memory_order_acquire) < 10; i++)
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
		.period_ns = period, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	struct ref_profiler_session_result res = { 0 };
	uint64_t c0, cpu, expected, got;

	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(200000000ull);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	ref_profiler_session_free(s);
	expected = cpu / period;
	/* Every period is accounted for: a sample, a loss, or a period a late signal
	 * skipped. How many were skipped depends on the machine's load, so it is
	 * reported rather than bounded here (test_late_signal_is_bounded bounds it). */
	got = (uint64_t)nr_kept + lost_total + res.profiler.periods_skipped;
	print_message("period %llu ns: %llu ns of CPU, %d samples, %llu lost, %llu periods "
		      "skipped, at most %llu periods per signal\n",
		      (unsigned long long)period, (unsigned long long)cpu, nr_kept,
		      (unsigned long long)lost_total,
		      (unsigned long long)res.profiler.periods_skipped,
		      (unsigned long long)res.profiler.most_periods_per_signal);
	if (got * 10 < expected * 9 || got * 10 > expected * 11)
		fail_msg("%llu samples + lost + skipped for %llu ns of CPU at %llu ns",
			 (unsigned long long)got, (unsigned long long)cpu,
			 (unsigned long long)period);
	assert_int_equal(res.profiler.samples_collected, (uint64_t)nr_kept);
	assert_true(res.profiler.most_periods_per_signal >= 1);
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
		.period_ns = 100000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	struct ref_profiler_session_result res = { 0 };
	uint64_t c0, cpu, accounted;

	(void)state;
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(2000000ull);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	ref_profiler_session_free(s);
	/* Periods a starved ticker left to the disable's catch-up beyond the last few are
	 * skipped, not sampled; every one is still accounted for. */
	accounted = (uint64_t)nr_kept + lost_total + res.profiler.periods_skipped;
	assert_true(accounted >= 18);
	assert_true(accounted <= cpu / 100000);
	assert_true(nr_kept > 0);
}

static void test_refused_configurations(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0), *other;
	struct ref_profiler_enable en = {
		.period_ns = 1000000, .kind = REF_PROFILER_TASK_PROCESS,
		.pid = 1, .tid = 1,
	};
	struct ref_profiler_sampling cycles = { .period = 1000, .timebase = REF_PROFILER_CYCLES };
	struct ref_profiler_target me = { .kind = REF_PROFILER_TASK_THREAD, .koid = (uint64_t)gettid() };
	struct ref_profiler_config cfg = { .samplings = &cycles,
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

	/* Not refused: a second sampler on the same thread while the first runs
	 * (sampler_signal_test.c checks that both get their samples). */
	en.kind = REF_PROFILER_TASK_THREAD;
	en.pid = (uint64_t)getpid();
	en.tid = (uint64_t)gettid();
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	other = new_session(NULL, 0);
	assert_int_equal(ref_profiler_session_enable(other, &en), 0);
	assert_int_equal(ref_profiler_session_disable(s, NULL), 0);
	assert_int_equal(ref_profiler_session_disable(other, NULL), 0);
	ref_profiler_session_free(other);
	ref_profiler_session_free(s);
}

/* Another thread of this process as the target: its CPU time drives the timer and the
 * signal goes to it (SIGEV_THREAD_ID), so every sample names it. */
static void test_other_thread(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct spinner sp = { 0, 0 };
	struct ref_profiler_enable en = {
		.period_ns = 1000000, .kind = REF_PROFILER_TASK_THREAD,
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
	while (!atomic_load_explicit(&sp.tid, memory_order_acquire))
		nanosleep(&nap, NULL);
	en.tid = (uint64_t)sp.tid;
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	for (int i = 0; i < 500 && atomic_load_explicit(&nr_kept, memory_order_acquire) < 30; i++)
		nanosleep(&nap, NULL);
	assert_int_equal(ref_profiler_session_disable(s, NULL), 0);
	atomic_store_explicit(&sp.stop, 1, memory_order_release);
	pthread_join(t, NULL);
	ref_profiler_session_free(s);
	assert_true(nr_kept >= 30);
	for (int i = 0; i < nr_kept; i++) {
		assert_int_equal(kept[i].tid, sp.tid);
		assert_int_equal(kept[i].pid, getpid());
		inside += kept[i].ip0 >= lo && kept[i].ip0 < hi;
	}
	if (check_placement("samples of the other thread inside its loop") &&
	    inside * 10 < nr_kept * 8)
		fail_msg("only %d of %d samples inside [%#llx, %#llx)", inside, nr_kept,
			 (unsigned long long)lo, (unsigned long long)hi);
}

/* The FIDL-shaped surface without a session: read the sampler's stream in 3-byte
 * pieces after Stop until EOF; it must be one valid FXT stream. */
static void test_raw_stream_reads(void **state)
{
	struct ref_profiler *p;
	struct ref_profiler_sampling sm = { .period = 1000000, .timebase = REF_PROFILER_NANOSECONDS,
					    .callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER };
	struct ref_profiler_target tg = { .kind = REF_PROFILER_TASK_THREAD, .koid = (uint64_t)gettid() };
	struct ref_profiler_config cfg = { .samplings = &sm, .nr_samplings = 1,
					   .targets = &tg, .nr_targets = 1 };
	struct ref_profiler_result res = { 0 };
	struct ref_stream_target t = { .sink = sink };
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
