/* What every benchmark here measures with: CPU time, not wall time, because these
 * machines are shared and a preempted trial must not read as a slow one; and the median
 * of interleaved trials, because one noisy trial must not move the figure. */
#ifndef PECS_BENCH_H
#define PECS_BENCH_H

#include <stdint.h>
#include <time.h>

/* This thread's CPU time, in seconds. */
double bench_cpu_s(void);

/* Clock c (CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID, ...), in nanoseconds. */
uint64_t bench_clock_ns(clockid_t c);

/* The median of v[0..n) (the mean of the middle two when n is even). Sorts v in place. */
double bench_median(double *v, int n);

#endif
