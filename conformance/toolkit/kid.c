/* The channel is one stream socket pair rather than two pipes: sent with MSG_NOSIGNAL, a
 * command to a child that died is a BROKEN case, not a SIGPIPE that kills the runner.
 * Both ends are close-on-exec, so an executed program holds none of it. */
#define _GNU_SOURCE
#include "pecs/toolkit/kid.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "pecs/toolkit/wait.h"

struct pecs_kid {
	pid_t pid;
	int fd; /* this process's end of the channel */
	int reaped;
};

int pecs_kid_xfer(int fd, void *buf, size_t n, int out)
{
	char *p = buf;

	while (n) {
		ssize_t r = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* ---- the child's side ---------------------------------------------------------- */

struct thread_arg {
	const struct pecs_kid_opts *o;
	volatile pid_t tid;
};

static void burn(const struct pecs_kid_opts *o)
{
	pecs_burn_user(o->burn_ns);
}

static void *burner(void *arg)
{
	struct thread_arg *a = arg;

	a->tid = pecs_gettid();
	burn(a->o);
	return NULL;
}

/* Whether /proc still lists this process's thread tid (0 without /proc). Asked of the one
 * thread, not of a count of threads: a sanitizer's runtime starts threads of its own. */
static int task_listed(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	return access(path, F_OK) == 0;
}

static void touch_pages(unsigned int pages)
{
	long page = sysconf(_SC_PAGESIZE);
	char *mem;

	if (!pages)
		return;
	mem = mmap(NULL, pages * (size_t)page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(3);
	/* one fault a page: no huge page may serve several */
	madvise(mem, pages * (size_t)page, MADV_NOHUGEPAGE);
	for (unsigned int i = 0; i < pages; i++)
		((volatile char *)mem)[i * page] = 1;
}

static pid_t new_thread(const struct pecs_kid_opts *o)
{
	struct thread_arg a = {.o = o};
	pthread_t th;

	if (pthread_create(&th, NULL, burner, &a) || pthread_join(th, NULL))
		_exit(2);
	/* pthread_join returns when the thread's tid is cleared, before its exit hands its
	 * counts to the parent event; once /proc no longer lists it that is done (a read in
	 * between, measured under strace, saw half the thread's time). Asleep, not yielding:
	 * under valgrind, which runs one thread at a time, a yielding loop kept the exiting
	 * thread waiting. At most 5 s: a verdict, never a hang. */
	for (int i = 0; i < 25000 && task_listed(a.tid); i++)
		nanosleep(&(struct timespec){0, 200000}, NULL);
	return a.tid;
}

static pid_t new_process(const struct pecs_kid_opts *o, int vforked)
{
	int status;
	pid_t p;

	if (vforked) {
		burn(o);
		p = vfork();
		if (p == 0)
			_exit(0);
	} else {
		p = fork();
		if (p == 0) {
			burn(o);
			touch_pages(o->pages);
			/* A sleep normally leaves the CPU (a context switch); not when its timer
			 * has fired before the task got to schedule() (a vCPU paused longer than
			 * the sleep: seen under emulation), which 1 ms makes rare. */
			for (unsigned int i = 0; i < o->sleeps; i++)
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			_exit(0);
		}
	}
	if (p < 0 || waitpid(p, &status, 0) != p)
		_exit(2);
	return p;
}

static int set_up(const struct pecs_kid_opts *o)
{
	cpu_set_t one;

	if (o->flags & PECS_KID_ON_CPU) {
		CPU_ZERO(&one);
		CPU_SET(o->cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return errno;
	}
	if ((o->flags & PECS_KID_AS_UID) &&
	    (setresgid(o->uid, o->uid, o->uid) || setresuid(o->uid, o->uid, o->uid)))
		return errno;
	return 0;
}

static void child_main(const struct pecs_kid_opts *o, int fd)
{
	int32_t answer = set_up(o);
	char c;

	if (pecs_kid_xfer(fd, &answer, sizeof(answer), 1) || answer)
		_exit(1);
	while (pecs_kid_xfer(fd, &c, 1, 0) == 0) {
		answer = 0;
		switch (c) {
		case PECS_KID_BURN:
			burn(o);
			break;
		case PECS_KID_THREAD:
			answer = new_thread(o);
			break;
		case PECS_KID_FORK:
		case PECS_KID_VFORK:
			answer = new_process(o, c == PECS_KID_VFORK);
			break;
		case PECS_KID_PAGES:
			touch_pages(o->pages);
			break;
		case PECS_KID_RENAME:
			if (prctl(PR_SET_NAME, "pecs-renamed", 0, 0, 0))
				_exit(2);
			break;
		case PECS_KID_EXEC:
			execl(o->exec_path, o->exec_path, (char *)NULL);
			_exit(127);
		default:
			_exit(0);
		}
		if (pecs_kid_xfer(fd, &answer, sizeof(answer), 1))
			break;
	}
	_exit(0);
}

/* ---- the case's side ----------------------------------------------------------- */

static void child_end(void *arg)
{
	struct pecs_kid *c = arg;
	int status;

	close(c->fd);
	if (!c->reaped) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
	}
	free(c);
}

#if defined(__SANITIZE_THREAD__)
/* This process's threads (/proc/self/stat's num_threads), 0 when unknown. */
static long threads_now(void)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "re");
	long n = 0;
	size_t got;

	if (!f)
		return 0;
	got = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[got] = 0;
	p = strrchr(buf, ')');
	/* After the comm: state is field 3, num_threads field 20. */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			"%*d %*d %ld", &n) != 1)
		n = 0;
	return n;
}

/* A thread the implementation made for an earlier case (ref's tracer of a child since
 * reaped, detaching on its own time) may still be ending when the next child is forked.
 * The child inherits no thread, but TSan's runtime keeps that one on its books there and
 * aborts the child's first pthread_create that reuses its stack ("dup thread with used
 * id"). Under TSan the fork therefore waits until this process is back to the threads
 * it had at its first child (TSan's own among them), 10 s at most. */
static void wait_for_threads_to_end(struct pecs_t *t, const char *file, int line)
{
	static long before;
	long n = threads_now();

	if (!before)
		before = n;
	/* In wall time: what is awaited is another thread's turn on a CPU. */
	for (int ms = 0; n > before && ms < 10000; ms++) {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		n = threads_now();
	}
	if (n > before)
		pecs_end(t, PECS_ENV_SKIP, file, line,
			 "%ld threads were alive after 10 s where the first child was forked "
			 "beside %ld, and under TSan a child forked beside a live thread cannot "
			 "start one of its own", n, before);
}
#else
static void wait_for_threads_to_end(struct pecs_t *t, const char *file, int line)
{
	(void)t;
	(void)file;
	(void)line;
}
#endif

int pecs_kid_start_at(struct pecs_t *t, const char *file, int line,
		      const struct pecs_kid_opts *o, struct pecs_kid **out)
{
	struct pecs_kid *c;
	int sv[2];
	int32_t err;

	wait_for_threads_to_end(t, file, line);
	c = calloc(1, sizeof(*c));
	if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		pecs_end(t, PECS_BROKEN, file, line, "pecs_kid_start: %s failed: %s",
			 c ? "socketpair(AF_UNIX, SOCK_STREAM)" : "calloc", pecs_errname(errno));
	c->pid = fork();
	if (c->pid < 0)
		pecs_end(t, PECS_BROKEN, file, line, "pecs_kid_start: fork() failed: %s",
			 pecs_errname(errno));
	if (c->pid == 0) {
		close(sv[0]);
		child_main(o, sv[1]);
	}
	close(sv[1]);
	c->fd = sv[0];
	pecs_defer(t, child_end, c);
	*out = c;
	if (pecs_kid_xfer(c->fd, &err, sizeof(err), 0))
		pecs_end(t, PECS_BROKEN, file, line, "pecs_kid_start: the child %d did not start",
			 (int)c->pid);
	return -err;
}

pid_t pecs_kid_pid(const struct pecs_kid *c)
{
	return c->pid;
}

pid_t pecs_kid_do_at(struct pecs_t *t, const char *file, int line, struct pecs_kid *c,
		     enum pecs_kid_cmd cmd)
{
	char b = (char)cmd;
	int32_t id = 0;
	int answered = cmd != PECS_KID_EXEC && cmd != PECS_KID_EXIT;

	if (pecs_kid_xfer(c->fd, &b, 1, 1) ||
	    (answered && pecs_kid_xfer(c->fd, &id, sizeof(id), 0)))
		pecs_end(t, PECS_BROKEN, file, line, "pecs_kid_do: the child %d did not do '%c'",
			 (int)c->pid, b);
	return id;
}

void pecs_kid_wait_zombie_at(struct pecs_t *t, const char *file, int line, struct pecs_kid *c,
			     siginfo_t *si)
{
	pecs_wait_zombie_at(t, file, line, c->pid, si);
}

void pecs_wait_zombie_at(struct pecs_t *t, const char *file, int line, pid_t pid, siginfo_t *si)
{
	for (;;) {
		memset(si, 0, sizeof(*si));
		if (waitid(P_PID, (id_t)pid, si, WEXITED | WNOWAIT)) {
			if (errno == EINTR)
				continue;
			pecs_end(t, PECS_BROKEN, file, line,
				 "pecs_wait_zombie: waitid(P_PID, %d, WEXITED | WNOWAIT) "
				 "failed: %s", (int)pid, pecs_errname(errno));
		}
		if (si->si_code != CLD_TRAPPED && si->si_code != CLD_STOPPED)
			return;
		nanosleep(&(struct timespec){0, 100000}, NULL);
	}
}

void pecs_kid_reap_at(struct pecs_t *t, const char *file, int line, struct pecs_kid *c,
		      struct rusage *ru)
{
	int status;

	/* A ptrace stop comes here too (see pecs_kid_wait_zombie()): only an exit reaps. */
	for (;;) {
		pid_t r = wait4(c->pid, &status, 0, ru);

		if (r == c->pid && !WIFSTOPPED(status))
			break;
		if (r < 0 && errno != EINTR)
			pecs_end(t, PECS_BROKEN, file, line,
				 "pecs_kid_reap: wait4(%d) failed: %s", (int)c->pid,
				 pecs_errname(errno));
	}
	c->reaped = 1;
}
