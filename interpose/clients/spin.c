/* The workload the real-client checks run perf on: CPU-bound in one hot function
 * (spin_hot, called through spin_work, so a profiler's callchain has callers to show),
 * after touching a number of fresh pages. At exit it prints its own CPU time and page
 * faults from getrusage(), so a check compares perf's counts with the program's own
 * account from the same run, not with another run's.
 *
 *   spin [ITERATIONS_MILLIONS [PAGES]]      defaults: 300, 4096 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t spin_hot(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static void spin_work(long millions)
{
	uint64_t x = 1;

	for (long m = 0; m < millions; m++)
		x = spin_hot(x, 1000000);
	sink = x;
}

static void touch_pages(long pages)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *mem = malloc((size_t)(pages * page));

	if (!mem)
		exit(1);
	for (long i = 0; i < pages; i++)
		mem[i * page] = 1;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 300;
	long pages = argc > 2 ? atol(argv[2]) : 4096;
	struct rusage ru;

	touch_pages(pages);
	spin_work(millions);
	getrusage(RUSAGE_SELF, &ru);
	printf("spin: cpu_ns=%llu faults=%ld\n",
	       (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
		       (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull,
	       ru.ru_minflt + ru.ru_majflt);
	return 0;
}
