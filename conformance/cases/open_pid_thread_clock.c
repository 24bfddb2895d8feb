/* An event on another process's pid names one thread, the main one, not the process:
 * find_lively_task_by_vpid() takes the task with that id, and its context holds the
 * event. A child whose main thread sleeps while a second thread, made before the open,
 * burns CPU: the main thread's task-clock stays near 0 and its cpu-clock takes no sample,
 * while events on the burning thread's own id count and sample its time (the control
 * that the burn happened where the events could see it). With inherit the event follows
 * the threads made after the open only (perf_event_init_task() at the clone), so the one
 * made before still does not count. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define MS 1000000ull
#define BURN_NS (50 * MS)
#define PERIOD_NS MS
/* The sleeping thread's own time over the burn: its wake-ups only, a few microseconds
 * (measured here: 0 to 39 us, as root and as uid 65534). A tenth of the burn is far from
 * both that and the burn. */
#define ASLEEP_MAX_NS (BURN_NS / 10)

/* The child: a main thread asleep in pause() and a worker made before any open. */
struct sibling {
	pid_t pid, worker;
	int fd; /* this process's end of the channel to the worker */
};

/* The worker: sends its tid, then burns BURN_NS for each byte it gets and answers it.
 * The channel's end takes the whole child with it. */
static void *worker(void *arg)
{
	int fd = *(int *)arg;
	int32_t tid = pecs_gettid();
	char b;

	if (pecs_kid_xfer(fd, &tid, sizeof(tid), 1))
		_exit(1);
	while (pecs_kid_xfer(fd, &b, 1, 0) == 0) {
		pecs_burn_user(BURN_NS);
		if (pecs_kid_xfer(fd, &b, 1, 1))
			break;
	}
	_exit(0);
}

static void sibling_end(void *arg)
{
	struct sibling *s = arg;
	int status;

	close(s->fd);
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &status, 0);
}

static void sibling_start(struct pecs_t *t, struct sibling *s)
{
	static int child_fd;
	int sv[2];
	int32_t tid = 0;
	pthread_t th;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		PECS_BROKEN(t, "socketpair: %s", pecs_errname(errno));
	s->pid = fork();
	if (s->pid < 0)
		PECS_BROKEN(t, "fork: %s", pecs_errname(errno));
	if (s->pid == 0) {
		close(sv[0]);
		child_fd = sv[1];
		if (pthread_create(&th, NULL, worker, &child_fd))
			_exit(1);
		for (;;)
			pause();
	}
	close(sv[1]);
	s->fd = sv[0];
	pecs_defer(t, sibling_end, s);
	if (pecs_kid_xfer(s->fd, &tid, sizeof(tid), 0) || tid <= 0)
		PECS_BROKEN(t, "the child %d did not start its thread", (int)s->pid);
	s->worker = tid;
}

static void sibling_burn(struct pecs_t *t, struct sibling *s)
{
	char b = 'b';

	if (pecs_kid_xfer(s->fd, &b, 1, 1) || pecs_kid_xfer(s->fd, &b, 1, 0))
		PECS_BROKEN(t, "the child %d's thread did not burn", (int)s->pid);
}

/* The task-clock of the main thread (inherit or not) and of the worker over one burn. */
static void count_burn(struct pecs_t *t, int inherit)
{
	static struct sibling s;
	struct pecs_attr a;
	uint64_t main_ns = 0, worker_ns = 0;
	int main_fd, worker_fd;

	sibling_start(t, &s);
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.flags &= ~PECS_ATTR_DISABLED;
	worker_fd = pecs_open(t, &a, s.worker, -1, -1, 0);
	PECS_CHECK_OK(t, worker_fd, "an event on the child's thread %d", (int)s.worker);
	if (inherit)
		a.flags |= PECS_ATTR_INHERIT;
	main_fd = pecs_open(t, &a, s.pid, -1, -1, 0);
	PECS_CHECK_OK(t, main_fd, "an event on the child %d", (int)s.pid);
	sibling_burn(t, &s);
	PECS_CHECK_OK(t, pecs_event_value(t, worker_fd, &worker_ns));
	PECS_CHECK_OK(t, pecs_event_value(t, main_fd, &main_ns));
	PECS_CHECK(t, worker_ns >= BURN_NS / 4,
		   "the burning thread's own event counted %llu ns of its %llu ms",
		   (unsigned long long)worker_ns, (unsigned long long)(BURN_NS / MS));
	PECS_CHECK(t, main_ns < ASLEEP_MAX_NS,
		   "the sleeping main thread's event%s counted %llu ns while the other thread "
		   "burned %llu ms (the thread's own time is expected, near 0)",
		   inherit ? " (inherit)" : "", (unsigned long long)main_ns,
		   (unsigned long long)(BURN_NS / MS));
}

PECS_CASE("Required.Open.PidTask.MainThreadCountsItsOwnClock", "pid.other",
	  "OPEN-PID-THREAD-CLOCK")
{
	count_burn(t, 0);
}

PECS_CASE("Required.Open.PidTask.InheritSkipsTheThreadsMadeBefore", "pid.other",
	  "OPEN-PID-INHERIT-LATER-THREADS")
{
	count_burn(t, 1);
}

/* cpu-clock sampling of the main thread: its clock does not move, so no period ends. */
PECS_CASE("Required.Record.PidTask.MainThreadSamplesItsOwnClock", "mmap,sampling,pid.other",
	  "RECORD-PID-THREAD-CLOCK")
{
	static struct sibling s;
	static struct pecs_ring main_ring, worker_ring;
	struct pecs_attr a;
	int main_fd, worker_fd, main_n, worker_n;

	sibling_start(t, &s);
	pecs_attr_sampling(t, &a, PECS_SW_CPU_CLOCK, PERIOD_NS, PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	a.flags &= ~PECS_ATTR_DISABLED;
	worker_fd = pecs_open(t, &a, s.worker, -1, -1, 0);
	PECS_CHECK_OK(t, worker_fd, "an event on the child's thread %d", (int)s.worker);
	PECS_CHECK_OK(t, pecs_ring_map(t, worker_fd, 16, PROT_READ | PROT_WRITE, &worker_ring));
	main_fd = pecs_open(t, &a, s.pid, -1, -1, 0);
	PECS_CHECK_OK(t, main_fd, "an event on the child %d", (int)s.pid);
	PECS_CHECK_OK(t, pecs_ring_map(t, main_fd, 16, PROT_READ | PROT_WRITE, &main_ring));
	sibling_burn(t, &s);
	/* An implementation that samples from outside may write a little after the burn:
	 * the worker's samples are awaited, and by then the main thread's are in too. */
	/* A tenth: the kernel itself gave 7 and 11 of 50 with the cores busy (in the 6.1
	 * guest, and under strace); the main thread's none is the point. */
	worker_n = pecs_ring_wait(&worker_ring, PECS_RECORD_SAMPLE, (int)(BURN_NS / PERIOD_NS / 10),
				  2000);
	main_n = pecs_ring_count(&main_ring, PECS_RECORD_SAMPLE);
	PECS_CHECK(t, worker_n >= (int)(BURN_NS / PERIOD_NS / 10),
		   "the burning thread's own event took %d samples of its %llu periods", worker_n,
		   (unsigned long long)(BURN_NS / PERIOD_NS));
	PECS_CHECK(t, main_n == 0,
		   "the sleeping main thread's event took %d samples while the other thread "
		   "burned %llu periods (none expected)", main_n,
		   (unsigned long long)(BURN_NS / PERIOD_NS));
}
