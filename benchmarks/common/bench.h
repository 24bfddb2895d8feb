/* What every benchmark here measures with: CPU time, not wall time, because these
 * machines are shared and a preempted trial must not read as a slow one; and the median
 * of interleaved trials, because one noisy trial must not move the figure. */
#ifndef PECS_BENCH_H
#define PECS_BENCH_H

/* This thread's CPU time, in seconds. */
double bench_cpu_s(void);

/* The median of v[0..n) (the mean of the middle two when n is even). Sorts v in place. */
double bench_median(double *v, int n);

#endif
