/* What the live sampler's tests share: a sink that keeps what it is given, loops to
 * burn CPU time in, and a session constructor. */
#define _GNU_SOURCE
#include "sampler_test_support.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

struct kept kept[MAX];
uint64_t loop_lo, loop_hi;
atomic_int nr_kept; /* written by the sink on the collector thread */
_Atomic uint64_t lost_total;

/* Two sessions running at once (a second sampler on one thread) each have a collector
 * thread delivering here. */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;

int sink(void *ctx, const struct pecs_sample *s)
{
	int i;

	(void)ctx;
	pthread_mutex_lock(&sink_lock);
	i = atomic_load_explicit(&nr_kept, memory_order_relaxed);
	if (i == MAX) {
		pthread_mutex_unlock(&sink_lock);
		return 0;
	}
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
	pthread_mutex_unlock(&sink_lock);
	return 0;
}

int lost(void *ctx, uint64_t nr)
{
	(void)ctx;
	atomic_fetch_add_explicit(&lost_total, nr, memory_order_release);
	return 0;
}

uint64_t clock_ns(clockid_t id)
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

bool check_placement(const char *what)
{
	if (SIGNALS_DEFERRED)
		print_message("not checked under TSan (signals deferred): %s\n", what);
	return !SIGNALS_DEFERRED;
}

static uint64_t burn_per_ms; /* iterations of the burn loop per ms of CPU, measured once */

void burn_ms(uint64_t ms)
{
	if (!burn_per_ms) {
		uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), dt;

		pecs_sampler_test_burn(20000000ull);
		dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		burn_per_ms = 20000000ull * 1000000ull / (dt ? dt : 1) + 1;
	}
	pecs_sampler_test_burn(ms * burn_per_ms);
}

void function_range(void *fn, uint64_t *start, uint64_t *end)
{
	unw_proc_info_t pi;

	assert_int_equal(unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)fn, &pi, NULL), 0);
	*start = pi.start_ip;
	*end = pi.end_ip;
	assert_true(*start <= (uint64_t)fn && (uint64_t)fn < *end);
}

struct ref_profiler_session *new_session(const struct ref_sampler_opts *so, unsigned poll_us)
{
	struct ref_profiler *p;
	struct ref_profiler_session *s;
	struct ref_profiler_session_opts opts = {
		.sink = sink, .lost = lost, .poll_us = poll_us,
	};

	assert_int_equal(ref_profiler_new_sampler(&p, so), 0);
	assert_int_equal(ref_profiler_session_new(&s, p, &opts), 0);
	nr_kept = 0;
	lost_total = 0;
	return s;
}

void *spin_thread(void *arg)
{
	struct spinner *sp = arg;

	atomic_store_explicit(&sp->tid, gettid(), memory_order_release);
	while (!atomic_load_explicit(&sp->stop, memory_order_acquire))
		burn_ms(10);
	return NULL;
}
