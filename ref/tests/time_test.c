/* Counts and times come from real clocks: RESET keeps times, disabled events freeze,
 * never-enabled events read 0, and a count follows the CPU time actually spent. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "helpers.h"

#define MS 1000000ull
#define RF_TIMES (PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING)

static int open_cfg(uint64_t cfg, pid_t pid, int cpu, uint64_t flags)
{
	struct pecs_attr a = attr_counting(cfg);
	int fd;

	a.read_format = RF_TIMES;
	a.flags |= flags;
	fd = ref_engine_open(E, &a, pid, cpu, -1, 0);
	assert_true(fd >= 0);
	return fd;
}

static void rd(int fd, uint64_t v[3])
{
	assert_int_equal(ref_engine_read(E, fd, v, 24), 24);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void test_never_enabled(void **state)
{
	int fd = open_cfg(PECS_SW_TASK_CLOCK, 0, -1, PECS_ATTR_DISABLED);
	uint64_t v[3];

	(void)state;
	burn_cpu_ms(5);
	rd(fd, v);
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 0);
	assert_int_equal(v[2], 0);
	ref_engine_close(E, fd);
}

static void test_count_is_cpu_time(void **state)
{
	int t = open_cfg(PECS_SW_TASK_CLOCK, 0, -1, 0), c = open_cfg(PECS_SW_CPU_CLOCK, 0, -1, 0);
	uint64_t vt[3], vc[3];

	(void)state;
	burn_cpu_ms(20);
	rd(t, vt);
	rd(c, vc);
	assert_true(vt[0] >= 15 * MS);
	assert_true(vc[0] >= 15 * MS);
	/* sleeping costs no CPU: neither the count nor a task's times move much */
	sleep_ms(50);
	{
		uint64_t w[3];

		rd(t, w);
		assert_true(w[0] - vt[0] < 10 * MS);
		assert_true(w[1] - vt[1] < 10 * MS);
		/* a software event always runs while enabled */
		assert_int_equal(w[1], w[2]);
	}
	ref_engine_close(E, c);
	ref_engine_close(E, t);
}

static void test_frozen_and_reset(void **state)
{
	int fd = open_cfg(PECS_SW_TASK_CLOCK, 0, -1, 0);
	uint64_t a[3], b[3];

	(void)state;
	burn_cpu_ms(5);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_DISABLE, 0), 0);
	rd(fd, a);
	burn_cpu_ms(5);
	rd(fd, b);
	assert_memory_equal(a, b, sizeof(a));
	/* RESET zeroes the count only */
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_RESET, 0), 0);
	rd(fd, b);
	assert_int_equal(b[0], 0);
	assert_int_equal(b[1], a[1]);
	assert_int_equal(b[2], a[2]);
	/* ENABLE twice is ENABLE once; counting resumes from 0 */
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	burn_cpu_ms(5);
	rd(fd, b);
	assert_true(b[0] >= 3 * MS && b[0] < a[1] + 10 * MS);
	assert_true(b[1] > a[1]);
	/* RESET while enabled restarts at 0 and keeps counting */
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_RESET, 0), 0);
	rd(fd, a);
	assert_true(a[0] < 2 * MS);
	assert_true(a[1] >= b[1]);
	ref_engine_close(E, fd);
}

static void test_cpu_wide_wall_time(void **state)
{
	int fd = open_cfg(PECS_SW_CPU_CLOCK, -1, 0, 0);
	uint64_t v[3];

	(void)state;
	sleep_ms(30);
	rd(fd, v);
	/* a CPU is there whether this thread runs or not */
	assert_true(v[0] >= 25 * MS);
	assert_true(v[1] >= 25 * MS);
	ref_engine_close(E, fd);
}

static void test_page_faults(void **state)
{
	int all = open_cfg(PECS_SW_PAGE_FAULTS, 0, -1, 0), mn = open_cfg(PECS_SW_PAGE_FAULTS_MIN, 0, -1, 0);
	int mj = open_cfg(PECS_SW_PAGE_FAULTS_MAJ, 0, -1, 0);
	uint64_t va[3], vn[3], vj[3];
	char *p = mmap(NULL, 256 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	for (int i = 0; i < 256; i++)
		p[i * 4096] = 1;
	/* read the parts first: faults between the reads only add to the total */
	rd(mn, vn);
	rd(mj, vj);
	rd(all, va);
	assert_true(va[0] >= 256);
	assert_true(vn[0] >= 256);
	assert_true(va[0] >= vn[0] + vj[0]);
	assert_true(vj[0] < 256);
	munmap(p, 256 * 4096);
	ref_engine_close(E, mj);
	ref_engine_close(E, mn);
	ref_engine_close(E, all);
}

/* Switches are raised with kernel registers: invisible with exclude_kernel (measured). */
static void test_context_switches(void **state)
{
	int user = open_cfg(PECS_SW_CONTEXT_SWITCHES, 0, -1, 0);
	struct pecs_attr a = attr_counting(PECS_SW_CONTEXT_SWITCHES);
	uint64_t v[3], w;
	int kern;

	(void)state;
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	kern = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_true(kern >= 0);
	for (int i = 0; i < 5; i++)
		sleep_ms(1);
	rd(user, v);
	assert_int_equal(v[0], 0);
	assert_int_equal(ref_engine_read(E, kern, &w, 8), 8);
	assert_true(w >= 5);
	ref_engine_close(E, kern);
	ref_engine_close(E, user);
}

static void test_zero_counters(void **state)
{
	/* CGROUP_SWITCHES too: user-only, it never sees the scheduler's kernel-side raise */
	static const uint64_t cfgs[] = {PECS_SW_DUMMY, PECS_SW_BPF_OUTPUT, PECS_SW_ALIGNMENT_FAULTS,
					PECS_SW_EMULATION_FAULTS, PECS_SW_CGROUP_SWITCHES};

	(void)state;
	for (int i = 0; i < 5; i++) {
		int fd = open_cfg(cfgs[i], 0, -1, 0);
		uint64_t v[3];

		burn_cpu_ms(2);
		rd(fd, v);
		assert_int_equal(v[0], 0);
		assert_true(v[1] > 0); /* but enabled time runs */
		ref_engine_close(E, fd);
	}
}

/* Shared with the thread: release on store, acquire on load. */
struct spinner {
	atomic_int stop;
	_Atomic pid_t tid;
};

static void *spin(void *arg)
{
	struct spinner *s = arg;

	atomic_store_explicit(&s->tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	while (!atomic_load_explicit(&s->stop, memory_order_acquire))
		;
	return NULL;
}

/* Sleeps until fd counts at least want, failing after 5 s: a busy machine may give
 * the target little CPU, but it must get some. */
static void wait_count(int fd, uint64_t want)
{
	uint64_t v[3] = {0};

	for (int i = 0; i < 250 && v[0] < want; i++) {
		sleep_ms(20);
		rd(fd, v);
	}
	assert_true(v[0] >= want);
}

/* pid > 0 names one thread: here another thread of this process, then a child. */
static void test_other_targets(void **state)
{
	struct spinner s = {0, 0};
	pthread_t th;
	uint64_t v[3];
	pid_t child, tid;
	int fd;

	(void)state;
	pthread_create(&th, NULL, spin, &s);
	while (!(tid = atomic_load_explicit(&s.tid, memory_order_acquire)))
		;
	fd = open_cfg(PECS_SW_TASK_CLOCK, tid, -1, 0);
	/* it spins while this thread sleeps */
	wait_count(fd, 10 * MS);
	atomic_store_explicit(&s.stop, 1, memory_order_release);
	pthread_join(th, NULL);
	/* a finished thread's count stays where it was */
	rd(fd, v);
	sleep_ms(5);
	{
		uint64_t w[3];

		rd(fd, w);
		assert_int_equal(v[0], w[0]);
	}
	ref_engine_close(E, fd);

	child = fork();
	if (!child) {
		for (;;)
			;
	}
	fd = open_cfg(PECS_SW_TASK_CLOCK, child, -1, 0);
	wait_count(fd, 10 * MS);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ref_engine_close(E, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_enabled),
		cmocka_unit_test(test_count_is_cpu_time),
		cmocka_unit_test(test_frozen_and_reset),
		cmocka_unit_test(test_cpu_wide_wall_time),
		cmocka_unit_test(test_page_faults),
		cmocka_unit_test(test_context_switches),
		cmocka_unit_test(test_zero_counters),
		cmocka_unit_test(test_other_targets),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_engine);
}
