#define _GNU_SOURCE
/* A program that samples the child it started, as perf record does, and waits for it:
 * Linux takes the child's samples in its hrtimer interrupt, so the parent's wait sees
 * the child's exit and nothing before it, even with WUNTRACED. An implementation that
 * samples from outside with ptrace must keep its tracer's stops out of the program's
 * waits: Linux reports a ptrace stop to every thread of the tracer's process
 * (kernel/exit.c wait_consider_task()), and a wait that takes it leaves the child
 * stopped with nobody to resume it. A watchdog kills the child should that happen, so
 * the case ends either way. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS 1000000ull  /* 1 kHz, perf record's order */
#define BURN_NS 100000000ull  /* the child's CPU: ~100 samples */
#define WATCHDOG_MS 5000

struct watchdog {
	pid_t child;
	atomic_int done, fired;
};

static void *watch(void *arg)
{
	struct watchdog *w = arg;

	for (int ms = 0; ms < WATCHDOG_MS && !atomic_load(&w->done); ms++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (!atomic_load(&w->done)) {
		atomic_store(&w->fired, 1);
		kill(w->child, SIGKILL);
	}
	return NULL;
}

/* Forks a child that waits for a byte on go, burns BURN_NS of its CPU and exits 7. */
static pid_t start_child(struct pecs_t *t, int go[2])
{
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		PECS_BROKEN(t, "pipe2: %s", pecs_errname(errno));
	pid = fork();
	if (pid < 0)
		PECS_BROKEN(t, "fork: %s", pecs_errname(errno));
	if (pid == 0) {
		char b;

		while (read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		pecs_burn_user(BURN_NS);
		_exit(7);
	}
	return pid;
}

PECS_CASE("Required.Sampling.Unnoticed.ParentWaitSeesOnlyTheExit", "sampling,mmap,pid.other",
	  "SAMPLE-UNNOTICED-WAITPID")
{
	static struct watchdog w;
	struct pecs_attr a;
	struct pecs_ring r;
	pthread_t th;
	int go[2], status = 0, stops = 0, first_stop = 0, fd;
	pid_t got;

	memset(&w, 0, sizeof(w));
	w.child = start_child(t, go);
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	a.flags &= ~PECS_ATTR_DISABLED;
	fd = pecs_open(t, &a, w.child, -1, -1, 0);
	if (fd < 0) {
		kill(w.child, SIGKILL);
		waitpid(w.child, NULL, 0);
		PECS_CHECK_OK(t, fd, "a sampling event on the child %d", (int)w.child);
	}
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 16, PROT_READ | PROT_WRITE, &r));
	if (pthread_create(&th, NULL, watch, &w) != 0)
		PECS_BROKEN(t, "pthread_create failed");
	if (write(go[1], "g", 1) != 1)
		PECS_BROKEN(t, "waking the child: %s", pecs_errname(errno));
	/* perf record's wait: blocking, here with WUNTRACED too, as a job-control shell's. */
	for (;;) {
		got = waitpid(w.child, &status, WUNTRACED);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != w.child || !WIFSTOPPED(status))
			break;
		if (!stops++)
			first_stop = status;
	}
	atomic_store(&w.done, 1);
	pthread_join(th, NULL);
	close(go[0]);
	close(go[1]);
	PECS_CHECK(t, stops == 0, "the parent's waitpid(WUNTRACED) saw %d stops of its sampled "
		   "child (the first with status %#x)%s", stops, first_stop,
		   atomic_load(&w.fired) ? "; the child then stayed stopped until killed" : "");
	PECS_CHECK(t, got == w.child && WIFEXITED(status) && WEXITSTATUS(status) == 7,
		   "the parent's waitpid returned %d with status %#x, not the child's exit 7",
		   (int)got, status);
	PECS_CHECK(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE) > 0,
		   "no sample of the child's %llu ms of CPU", (unsigned long long)(BURN_NS / 1000000));
}
