/* Open and close of an N-event group on the reference engine: a leader and N-1 members
 * of task-clock on this thread, enabled at open, then every fd closed in the order
 * opened. Prints N and the CPU seconds (median of the trials) of each half; the cost
 * per event should stay flat as N grows.
 *
 *   bazel run -c opt //benchmarks/pipeline:group_bench [-- TRIALS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pecs/ref.h"
#include "pecs/bench.h"

#define MAX_N 2047
#define MAX_TRIALS 21

static struct ref_engine *new_engine(void)
{
	struct ref_policy p = { .size = sizeof(p), .paranoid = -1,
				.caps = REF_CAP_MASK(REF_CAP_PERFMON) };
	struct ref_config c = { .size = sizeof(c), .policy = &p };
	struct ref_engine *e = ref_engine_new(&c);

	if (!e)
		abort();
	return e;
}

static void run(int n, double *open_s, double *close_s)
{
	static int fds[MAX_N];
	struct ref_engine *e = new_engine();
	struct pecs_attr a;
	double t;

	memset(&a, 0, sizeof(a));
	a.type = PECS_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PECS_SW_TASK_CLOCK;
	/* No GROUP read: its 16 KiB read limit would stop the group at 1023 members. */
	t = bench_cpu_s();
	for (int i = 0; i < n; i++) {
		fds[i] = ref_engine_open(e, &a, 0, -1, i ? fds[0] : -1, 0);
		if (fds[i] < 0) {
			fprintf(stderr, "open %d of %d: %d\n", i, n, fds[i]);
			exit(1);
		}
	}
	*open_s = bench_cpu_s() - t;
	t = bench_cpu_s();
	for (int i = 0; i < n; i++)
		ref_engine_close(e, fds[i]);
	*close_s = bench_cpu_s() - t;
	ref_engine_free(e);
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 128, 256, 512, 1024, 2047 };
	int trials = argc > 1 ? atoi(argv[1]) : 5;
	double o[MAX_TRIALS], c[MAX_TRIALS];

	if (trials < 1 || trials > MAX_TRIALS) {
		fprintf(stderr, "usage: %s [TRIALS<=%d]\n", argv[0], MAX_TRIALS);
		return 2;
	}
	printf("%6s %12s %12s %14s\n", "N", "open s", "close s", "us per event");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int t = 0; t < trials; t++)
			run(sizes[k], &o[t], &c[t]);
		double mo = bench_median(o, trials), mc = bench_median(c, trials);

		printf("%6d %12.6f %12.6f %14.2f\n", sizes[k], mo, mc, (mo + mc) * 1e6 / sizes[k]);
	}
	return 0;
}
