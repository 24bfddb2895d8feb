/* A plain program, built without the interposer, that opens events the way tools do
 * (syscall(), read, dup, mmap, poll). interpose_test.sh runs it under
 * LD_PRELOAD=libpecs_interpose.so with PECS_IMPL=ref and with PECS_IMPL=kernel, and it
 * checks the answers each gives alike plus which one served it: the fd's kind in /proc.
 * Exit status 0 when every check holds; the failing check is printed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pecs/abi.h"

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "probe: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                             \
		}                                                            \
	} while (0)

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

static void burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * i;
}

static int open_sw(uint64_t config, uint64_t period)
{
	struct pecs_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PECS_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = period;
	a.sample_type = period ? PECS_SAMPLE_IP | PECS_SAMPLE_TID : 0;
	a.wakeup_events = 1;
	a.flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PECS_FLAG_FD_CLOEXEC);
}

static void counting(const char *kind)
{
	char path[64], link[128] = {0};
	uint64_t v = 0;
	int fd = open_sw(PECS_SW_TASK_CLOCK, 0);

	CHECK(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK(readlink(path, link, sizeof(link) - 1) > 0);
	if (!strstr(link, kind)) {
		fprintf(stderr, "probe: event fd is %s, not %s\n", link, kind);
		exit(1);
	}
	uint64_t t0 = thread_cpu_ns();
	burn(20 * 1000000ull);
	uint64_t burned = thread_cpu_ns() - t0;
	int d = dup(fd);
	CHECK(d >= 0 && close(fd) == 0);
	CHECK(read(d, &v, sizeof(v)) == sizeof(v));
	/* the task clock covers the CPU time burned since the open, less the clocks' own
	 * granularity: the suite's cases allow 10% */
	if (v < burned * 9 / 10) {
		fprintf(stderr, "probe: task clock %llu ns after %llu ns burned\n",
			(unsigned long long)v, (unsigned long long)burned);
		exit(1);
	}
	CHECK(close(d) == 0);
}

/* prctl(PR_TASK_PERF_EVENTS_DISABLE) stops the events this thread opened, by the C
 * library's prctl and by syscall(); _ENABLE starts them again. */
static void task_prctl(void)
{
	uint64_t a = 0, b = 0;
	int fd = open_sw(PECS_SW_TASK_CLOCK, 0);

	CHECK(fd >= 0);
	for (int door = 0; door < 2; door++) {
		CHECK((door ? syscall(SYS_prctl, PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0)
			    : prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0)) == 0);
		CHECK(read(fd, &a, sizeof(a)) == sizeof(a));
		burn(5 * 1000000ull);
		CHECK(read(fd, &b, sizeof(b)) == sizeof(b) && b == a);
		CHECK(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0) == 0);
		burn(5 * 1000000ull);
		CHECK(read(fd, &b, sizeof(b)) == sizeof(b) && b > a);
	}
	CHECK(close(fd) == 0);
}

static void sampling(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open_sw(PECS_SW_CPU_CLOCK, 1000000);

	CHECK(fd >= 0);
	void *ring = mmap(NULL, 9 * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(ring != MAP_FAILED);
	volatile struct pecs_mmap_page *meta = ring;
	/* A budget of CPU time, not wall time: under load the samples come as slowly as
	 * the thread runs. */
	uint64_t end = thread_cpu_ns() + 5000000000ull;
	while (meta->data_head == 0 && thread_cpu_ns() < end)
		burn(1000000);
	CHECK(meta->data_head > 0);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 1 && (p.revents & POLLIN));
	CHECK(munmap(ring, 9 * (size_t)page) == 0);
	CHECK(close(fd) == 0);
}

/* The ring's mapping answers as a perf mapping does (conformance/cases/mmap_vma.c): not
 * grown, shrunk or cut by the program's own calls, moved whole, not inherited by fork,
 * and its implementation told when it goes. */
static void ring_vma(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 3 * page;
	int fd = open_sw(PECS_SW_CPU_CLOCK, 1000000000), status; /* no sample comes */
	struct pollfd p = {.fd = fd, .events = POLLIN};

	CHECK(fd >= 0);
	uint8_t *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(ring != MAP_FAILED);
	CHECK(mremap(ring, len, 2 * len, MREMAP_MAYMOVE) == MAP_FAILED && errno == EFAULT);
	CHECK(mremap(ring, len, page, 0) == MAP_FAILED && errno == EINVAL);
	CHECK(munmap(ring + page, page) == -1 && errno == EINVAL);
	CHECK(mmap(ring + page, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		   0) == MAP_FAILED && errno == EINVAL);
	pid_t kid = fork();
	if (kid == 0) {
		unsigned char v[4];
		_exit(mincore(ring, len, v) == 0);
	}
	CHECK(kid > 0 && waitpid(kid, &status, 0) == kid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	uint8_t *area = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(area != MAP_FAILED);
	uint8_t *moved = mremap(ring, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, area);
	CHECK(moved == area);
	CHECK(((volatile struct pecs_mmap_page *)moved)->data_size == 2 * page);
	CHECK(poll(&p, 1, 0) == 0);
	CHECK(munmap(moved, len) == 0);
	CHECK(poll(&p, 1, 0) == 1 && (p.revents & POLLHUP));
	/* Mapped over whole, the ring goes as by munmap. */
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(ring != MAP_FAILED);
	CHECK(mmap(ring, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == ring);
	CHECK(poll(&p, 1, 0) == 1 && (p.revents & POLLHUP));
	CHECK(munmap(ring, len) == 0 && munmap(area, 2 * len) == 0);
	CHECK(close(fd) == 0);
}

/* As perf runs its workload: a child forked first waits, the host opens an event on it,
 * then the child executes a shell. The interposer must not be in that shell's
 * LD_PRELOAD (interpose/env.c). */
static void host(void)
{
	int go[2];
	char c = 0;
	int status;

	CHECK(pipe(go) == 0);
	pid_t child = fork();

	CHECK(child >= 0);
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		execlp("sh", "sh", "-c",
		       "case \"$LD_PRELOAD\" in *libpecs_interpose*) "
		       "echo \"probe: the workload has LD_PRELOAD=$LD_PRELOAD\" >&2; exit 1;; esac",
		       (char *)NULL);
		_exit(4);
	}
	close(go[0]);
	int fd = open_sw(PECS_SW_TASK_CLOCK, 0);

	CHECK(fd >= 0);
	CHECK(write(go[1], &c, 1) == 1);
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(close(fd) == 0);
}

/* A program that samples the child it started, as perf record does, and waits for it
 * with a blocking waitpid(WUNTRACED): it gets the child's exit and no stop before it.
 * ref samples the child with ptrace from a thread of this process, whose stops Linux
 * reports to this wait too; the interposer's waits leave them to that thread. A stop
 * taken here would leave the child stopped for good: the alarm ends the probe then. */
static void child_wait(void)
{
	struct pecs_attr a;
	int go[2], status = 0, fd;
	pid_t kid, got;
	char b = 'g';
	void *ring;

	CHECK(pipe(go) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		while (read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		burn(100000000ull);
		_exit(7);
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PECS_TYPE_SOFTWARE;
	a.config = PECS_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	a.flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	fd = (int)syscall(SYS_perf_event_open, &a, kid, -1, -1, PECS_FLAG_FD_CLOEXEC);
	CHECK(fd >= 0);
	ring = mmap(NULL, 17 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(ring != MAP_FAILED);
	alarm(30);
	CHECK(write(go[1], &b, 1) == 1);
	do
		got = waitpid(kid, &status, WUNTRACED);
	while (got < 0 && errno == EINTR);
	if (got == kid && WIFSTOPPED(status))
		fprintf(stderr, "probe: the parent's waitpid got a stop, status %#x\n", status);
	CHECK(got == kid && WIFEXITED(status) && WEXITSTATUS(status) == 7);
	alarm(0);
	CHECK(((const struct pecs_mmap_page *)ring)->data_head > 0);
	CHECK(munmap(ring, 17 * 4096) == 0);
	CHECK(close(fd) == 0);
	close(go[0]);
	close(go[1]);
}

/* Atomic: the process's signal may be taken by any of its threads (the engine's too). */
static _Atomic int async_code, async_fd, async_band, async_seen;

static void on_async(int signo, siginfo_t *si, void *uc)
{
	(void)signo;
	(void)uc;
	async_code = si->si_code;
	async_fd = si->si_fd;
	async_band = (int)si->si_band;
	async_seen++;
}

/* O_ASYNC on a sampling event: the signal F_SETSIG names comes with si_fd the program's
 * own fd (under ref, not the engine's number), POLL_IN and its band. */
static void async_notify(void)
{
	struct sigaction sa;
	int fd = open_sw(PECS_SW_CPU_CLOCK, 1000000);

	CHECK(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_async;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	CHECK(sigaction(SIGRTMIN, &sa, NULL) == 0);
	CHECK(fcntl(fd, F_SETOWN, getpid()) == 0 && fcntl(fd, F_GETOWN) == getpid());
	CHECK(fcntl(fd, F_SETSIG, SIGRTMIN) == 0 && fcntl(fd, F_GETSIG) == SIGRTMIN);
	CHECK(fcntl(fd, F_SETSIG, 65) == -1 && errno == EINVAL);
	CHECK(fcntl(fd, F_SETFL, O_ASYNC) == 0 && (fcntl(fd, F_GETFL) & O_ASYNC));
	uint64_t end = thread_cpu_ns() + 5000000000ull;
	while (!async_seen && thread_cpu_ns() < end)
		burn(1000000);
	CHECK(fcntl(fd, F_SETFL, 0) == 0);
	CHECK(async_seen > 0);
	CHECK(async_code == POLL_IN && async_fd == fd && async_band == (POLLIN | POLLRDNORM));
	CHECK(close(fd) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s eventpoll|perf_event|host|childwait\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "childwait") == 0) {
		child_wait();
		printf("probe: ok (childwait)\n");
		return 0;
	}
	if (strcmp(argv[1], "host") == 0) {
		host();
		printf("probe: ok (host)\n");
		return 0;
	}
	counting(argv[1]);
	sampling();
	ring_vma();
	task_prctl();
	async_notify();
	printf("probe: ok (%s)\n", argv[1]);
	return 0;
}
