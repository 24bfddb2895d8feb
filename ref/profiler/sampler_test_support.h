/* What the live sampler's tests share (sampler_test_support.c). */
#ifndef REF_PROFILER_SAMPLER_TEST_SUPPORT_H
#define REF_PROFILER_SAMPLER_TEST_SUPPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "pecs/profiler/sampler.h"
#include "pecs/profiler/session.h"

#define MAX 8192

struct kept {
	uint32_t pid, tid, cpu, nr;
	uint64_t time, period, ip0;
	bool loop_on_stack; /* some frame lies in [loop_lo, loop_hi) */
	uint16_t misc;
};

/* What sink() kept, since the last new_session(). */
extern struct kept kept[MAX];
extern uint64_t loop_lo, loop_hi;
extern atomic_int nr_kept; /* written by the sink on the collector thread */
extern _Atomic uint64_t lost_total;

int sink(void *ctx, const struct pecs_sample *s);
int lost(void *ctx, uint64_t nr);
uint64_t clock_ns(clockid_t id);

/* The loops samples must land in: spin reads the clock, burn makes no call at all. */
void pecs_sampler_test_spin(uint64_t cpu_ns);
void pecs_sampler_test_burn(uint64_t iterations);
void burn_ms(uint64_t ms);
void function_range(void *fn, uint64_t *start, uint64_t *end);

/* ThreadSanitizer does not run a handler when the signal arrives: it notes it and runs
 * it at its next interception point, from its own frames (measured: samples in
 * pthread_sigmask and libtsan, with garbage callers). Where a sample was taken is then
 * not where the thread spent its time, so those checks are left out, and said so. */
#if defined(__SANITIZE_THREAD__)
#define SIGNALS_DEFERRED 1
#else
#define SIGNALS_DEFERRED 0
#endif
bool check_placement(const char *what);

/* sampler.c's CATCH_UP_MAX: the most samples one signal writes. */
#if defined(__SANITIZE_THREAD__)
#define CATCH_UP_MAX 1024
#else
#define CATCH_UP_MAX 1
#endif

/* A sampler session feeding sink() and lost(); resets what they kept. */
struct ref_profiler_session *new_session(const struct ref_sampler_opts *so, unsigned poll_us);

/* A thread that burns CPU until stop is set; it publishes its tid first. */
struct spinner {
	_Atomic pid_t tid;
	atomic_int stop;
};
void *spin_thread(void *arg);

#endif /* REF_PROFILER_SAMPLER_TEST_SUPPORT_H */
