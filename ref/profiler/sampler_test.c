/* The live sampler for real: a busy loop burns this thread's CPU time while a CPU-time
 * timer samples it; the samples' IPs must land in the loop's function, whose bounds come
 * from its unwind table entry (not from the sampler). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

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
static atomic_int nr_kept; /* written by the sink on the collector thread */
static _Atomic uint64_t lost_total;

static int sink(void *ctx, const struct pecs_sample *s)
{
	int i = atomic_load_explicit(&nr_kept, memory_order_relaxed);

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
	atomic_store_explicit(&nr_kept, i + 1, memory_order_release);
	return 0;
}

static int lost(void *ctx, uint64_t nr)
{
	(void)ctx;
	atomic_fetch_add_explicit(&lost_total, nr, memory_order_release);
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
 * there would suggest, and the clock read above is one. Not instrumented by a
 * sanitizer either: its checks are calls out of the loop, where the CPU time (and so
 * the samples) would then go. The volatile is only there to keep the loop. */
__attribute__((noinline, no_sanitize("address", "thread", "undefined"))) void
pecs_sampler_test_burn(uint64_t iterations)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < iterations; i++)
		x += i;
}

/* ThreadSanitizer does not run a handler when the signal arrives: it notes it and runs
 * it at its next interception point, from its own frames (measured: samples in
 * pthread_sigmask and libtsan, with garbage callers). Where a sample was taken is then
 * not where the thread spent its time, so those checks are left out, and said so. */
#if defined(__SANITIZE_THREAD__)
#define SIGNALS_DEFERRED 1
#else
#define SIGNALS_DEFERRED 0
#endif

static bool check_placement(const char *what)
{
	if (SIGNALS_DEFERRED)
		print_message("not checked under TSan (signals deferred): %s\n", what);
	return !SIGNALS_DEFERRED;
}

/* sampler.c's CATCH_UP_MAX: the most samples one signal writes. */
#define CATCH_UP_MAX 32

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
		inside += kept[i].ip0 >= lo && kept[i].ip0 < hi;
		on_stack += kept[i].loop_on_stack;
	}
	if (!check_placement("samples inside the loop, callers unwound"))
		return;
	if (inside * 10 < nr_kept * 8)
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
		.size = sizeof(en), .period_ns = 100000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	struct ref_profiler_session_result res = { .size = sizeof(res) };
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

/* The ticker's signal held back (blocked on the target) for ~200 periods is one late
 * signal, as a starved ticker thread gives: it must turn into a few samples, not 200,
 * and the rest must show as skipped periods, not as lost samples. */
static void test_late_signal_is_bounded(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 100000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	struct ref_profiler_session_result res = { .size = sizeof(res) };
	sigset_t prof, old;
	uint64_t c0, cpu, accounted, t_unblock;
	int at_unblock;

	(void)state;
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &prof, &old), 0);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(20000000ull);
	/* The samples the late signal writes are dated back from its own moment. */
	t_unblock = clock_ns(CLOCK_MONOTONIC);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	/* Handled before pthread_sigmask returned: a pending signal an unblock uncovers
	 * is delivered on the way out of the system call (under TSan, at its next
	 * interceptor). The flush delivers it, and may add one more signal's worth (its
	 * kick, or the ticker's next), hence two batches at most. Then a few ms more of
	 * normal ticking, so the bound is seen not to stop the ticker. */
	assert_int_equal(ref_profiler_session_flush(s), 0);
	at_unblock = atomic_load_explicit(&nr_kept, memory_order_acquire);
	pecs_sampler_test_spin(20000000ull);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	ref_profiler_session_free(s);

	print_message("blocked 20 ms at 100 us: %d samples at the unblock, %d in all, %llu "
		      "skipped, at most %llu periods per signal\n",
		      at_unblock, nr_kept, (unsigned long long)res.profiler.periods_skipped,
		      (unsigned long long)res.profiler.most_periods_per_signal);
	assert_true(res.profiler.most_periods_per_signal >= 150);
	assert_int_equal(res.profiler.dropped_buffer_full, 0);
	assert_int_equal(lost_total, 0);
	/* Under TSan the sampler does not cap (every signal is late there, sampler.c). */
	if (!check_placement("the catch-up bound"))
		return;
	/* At most a few samples for the held-back moment, none of them lost; the rest are
	 * paid later where the thread was preempted, or skipped (load decides which). */
	assert_true(at_unblock >= 1 && at_unblock <= 2 * CATCH_UP_MAX);
	for (int i = 0; i < nr_kept; i++)
		if (kept[i].time <= t_unblock)
			assert_true(i < 2 * CATCH_UP_MAX);
	/* Samples stay at least a period apart in time, paid or not. */
	for (int i = 1; i < nr_kept; i++)
		if (kept[i].time - kept[i - 1].time < 100000 / 2)
			fail_msg("samples %d and %d are %llu ns apart", i - 1, i,
				 (unsigned long long)(kept[i].time - kept[i - 1].time));
	/* The ticker went on after the late signal: the 20 ms after it gave more than the
	 * stop's own catch-up could (a loaded machine may still skip many of them). */
	assert_true(nr_kept - at_unblock > CATCH_UP_MAX);
	accounted = (uint64_t)nr_kept + res.profiler.periods_skipped;
	assert_true(accounted <= cpu / 100000);
	/* Under TSan the stop's kick runs after the sampler is no longer active. */
	if (check_placement("the periods after the last signal taken by the stop"))
		assert_true(accounted * 10 >= cpu / 100000 * 9);
}

/* A signal of one run still pending when the next run starts (held back on the
 * target, as a busy machine may hold it) must neither crash the handler nor leave the
 * new run's ticker waiting for a take: its own first signal is merged into the pending
 * one (SIGPROF does not queue twice). */
static void test_signal_pending_across_restart(void **state)
{
	struct ref_profiler_session *s = new_session(NULL, 0);
	struct ref_profiler_enable en = {
		.size = sizeof(en), .period_ns = 100000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)gettid(),
	};
	struct ref_profiler_session_result res = { .size = sizeof(res) };
	sigset_t prof, old, pending;
	uint64_t c0, cpu;

	(void)state;
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &prof, &old), 0);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(2000000ull);
	assert_int_equal(ref_profiler_session_disable(s, NULL), 0);
	assert_int_equal(sigpending(&pending), 0);
	assert_true(sigismember(&pending, SIGPROF));
	nr_kept = 0;
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	assert_int_equal(ref_profiler_session_enable(s, &en), 0);
	pecs_sampler_test_spin(2000000ull);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	pecs_sampler_test_spin(20000000ull);
	assert_int_equal(ref_profiler_session_disable(s, &res), 0);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	ref_profiler_session_free(s);
	print_message("restart with a signal pending: %d samples, %llu skipped over %llu ns\n",
		      nr_kept, (unsigned long long)res.profiler.periods_skipped,
		      (unsigned long long)cpu);
	/* The second run ticked on after the stale signal. A ticker left waiting would
	 * give two batches at most: the stale signal's and the stop's catch-up. */
	if (nr_kept <= 2 * CATCH_UP_MAX)
		fail_msg("%d samples: the ticker stopped after the stale signal", nr_kept);
	assert_true((uint64_t)nr_kept + res.profiler.periods_skipped <= cpu / 100000);
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
	_Atomic pid_t tid;
	atomic_int stop;
};

static void *spin_thread(void *arg)
{
	struct spinner *sp = arg;

	atomic_store_explicit(&sp->tid, gettid(), memory_order_release);
	while (!atomic_load_explicit(&sp->stop, memory_order_acquire))
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

struct restarter {
	struct ref_profiler_session *s;
	struct ref_profiler_enable en;
	atomic_int stop;
	atomic_int flush_failed;
};

/* Flushes from another thread while the main thread enables and disables: the engine
 * calls flush without its own lock, so a flush may meet a session half started. */
static void *flush_loop(void *arg)
{
	struct restarter *r = arg;

	while (!atomic_load_explicit(&r->stop, memory_order_acquire))
		if (ref_profiler_session_flush(r->s) != 0)
			atomic_store_explicit(&r->flush_failed, 1, memory_order_relaxed);
	return NULL;
}

/* Many short runs at the shortest period against a thread that keeps running, so
 * signals of one run are in flight while it stops and the next starts, with flushes
 * from a third thread. The handler must never see a ticker being set up (a period of
 * 0 divides by zero; under TSan, a handler reading a field start writes after
 * publishing the sampler is reported). */
static void test_rapid_restarts(void **state)
{
	struct spinner sp = { 0, 0 };
	struct restarter r = { 0 };
	struct timespec nap = { 0, 200000 };
	pthread_t spin, flusher;
	int runs_with_samples = 0;

	(void)state;
	burn_ms(0);
	r.s = new_session(NULL, 0);
	assert_int_equal(pthread_create(&spin, NULL, spin_thread, &sp), 0);
	while (!atomic_load_explicit(&sp.tid, memory_order_acquire))
		nanosleep(&nap, NULL);
	r.en = (struct ref_profiler_enable){
		.size = sizeof(r.en), .period_ns = 10000, .kind = REF_PROFILER_TASK_THREAD,
		.pid = (uint64_t)getpid(), .tid = (uint64_t)sp.tid,
		.callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER,
	};
	assert_int_equal(pthread_create(&flusher, NULL, flush_loop, &r), 0);
	for (int i = 0; i < 300; i++) {
		struct ref_profiler_session_result res = { .size = sizeof(res) };

		assert_int_equal(ref_profiler_session_enable(r.s, &r.en), 0);
		nanosleep(&nap, NULL);
		assert_int_equal(ref_profiler_session_disable(r.s, &res), 0);
		assert_int_equal(res.error.code, REF_STREAM_OK);
		assert_true(res.profiler.samples_repeated <= res.profiler.samples_collected);
		runs_with_samples += res.profiler.samples_collected > 0;
	}
	atomic_store_explicit(&r.stop, 1, memory_order_release);
	pthread_join(flusher, NULL);
	assert_int_equal(atomic_load(&r.flush_failed), 0);
	atomic_store_explicit(&sp.stop, 1, memory_order_release);
	pthread_join(spin, NULL);
	ref_profiler_session_free(r.s);
	print_message("300 runs of 200 us: %d with samples, %d samples\n", runs_with_samples,
		      nr_kept);
	/* The sampler still works after all that: most runs saw the spinning thread. */
	assert_true(runs_with_samples > 0);
	for (int i = 0; i < nr_kept; i++)
		assert_int_equal(kept[i].tid, sp.tid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_fxt),
		cmocka_unit_test(test_process_markup),
		cmocka_unit_test(test_full_buffer_drops),
		cmocka_unit_test(test_count_follows_cpu_time),
		cmocka_unit_test(test_short_burst),
		cmocka_unit_test(test_late_signal_is_bounded),
		cmocka_unit_test(test_signal_pending_across_restart),
		cmocka_unit_test(test_refused_configurations),
		cmocka_unit_test(test_other_thread),
		cmocka_unit_test(test_raw_stream_reads),
		cmocka_unit_test(test_rapid_restarts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
