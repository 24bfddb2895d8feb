/* An event on another thread of the caller's process, without inherit, sees that thread
 * only: the syscall tracepoints and the COMM record of the thread that makes the calls go
 * to the events of its own context (perf_tp_event() runs the events scheduled on the CPU
 * with the calling task; perf_iterate_sb() the caller's context and the cpu-wide
 * side-band events, and a task event is never one of those: is_sb_event()). Found by the
 * mutation score; measured on 6.18 as root. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/task.h"
#include "pecs/toolkit/thread.h"

#define CALLS 5

static void finish_spinner(void *arg)
{
	pecs_spinner_finish(arg);
}

static pid_t start_sibling(struct pecs_t *t, struct pecs_spinner *s)
{
	int err = pecs_spinner_start(s);

	if (err)
		PECS_BROKEN(t, "a second thread: %s", pecs_retname(err));
	pecs_defer(t, finish_spinner, s);
	return s->tid;
}

static void unsupported_without_task_event(struct pecs_t *t, long r)
{
	if (r == -ENOSYS)
		PECS_UNSUPPORTED(t, "the implementation has no task_event entry");
}

/* sys_enter_getppid on the sibling counts nothing of this thread's calls; the same event
 * on this thread counts each of them. */
PECS_CASE("Required.Open.Tracepoint.SiblingThreadSeesNotTheCaller",
	  "counting,tracepoint.syscalls", "TP-SYSCALL-OTHER-THREAD")
{
	static const uint64_t no_args[6];
	static struct pecs_spinner s;
	struct pecs_attr a;
	uint64_t id = 0, v[2] = {~0ull, ~0ull};
	uint32_t nargs;
	int err = pecs_tracefs_syscall("sys_enter_getppid", &id, &nargs), fd[2];

	if (err == -EACCES)
		PECS_ENV_SKIP(t, "no readable tracefs: the syscalls:* ids are not known here");
	if (err)
		PECS_ENV_SKIP(t, "tracefs has no syscalls:sys_enter_getppid (%s)",
			      pecs_retname(err));
	pid_t sibling = start_sibling(t, &s);
	pecs_attr_counting(t, &a, id);
	a.type = PECS_TYPE_TRACEPOINT;
	fd[0] = PECS_OPEN(t, &a, sibling, -1, -1, 0);
	fd[1] = PECS_OPEN(t, &a, 0, -1, -1, 0);
	for (int i = 0; i < 2; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	for (int i = 0; i < CALLS; i++) {
		long r = pecs_task_syscall(t, SYS_getppid, no_args);

		unsupported_without_task_event(t, r);
		PECS_CHECK(t, r > 0, "getppid: %s", pecs_retname((int)r));
	}
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
		PECS_CHECK_EQ(t, pecs_read(t, fd[i], &v[i], sizeof(v[i])), 8);
	}
	PECS_CHECK(t, v[0] == 0 && v[1] == CALLS,
		   "after %d calls on this thread: the sibling's event counted %llu, this "
		   "thread's %llu", CALLS, (unsigned long long)v[0], (unsigned long long)v[1]);
}

static char old_name[16];

static void restore_name(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, old_name, 0, 0, 0);
}

/* A COMM event on the sibling gets no record when this thread renames itself; one on
 * this thread gets one per name. */
PECS_CASE("Required.Record.Comm.SiblingThreadSeesNotTheCaller", "mmap,tracepoint.syscalls",
	  "REC-COMM-OTHER-THREAD")
{
	static struct pecs_spinner s;
	struct pecs_attr a;
	struct pecs_ring r[2];
	int fd[2], n[2];

	PECS_CHECK_OK(t, prctl(PR_GET_NAME, old_name, 0, 0, 0) ? -errno : 0);
	pecs_defer(t, restore_name, NULL);
	pid_t sibling = start_sibling(t, &s);
	pecs_attr_counting(t, &a, PECS_SW_DUMMY);
	a.flags |= PECS_ATTR_COMM;
	a.sample_type = PECS_SAMPLE_TID;
	fd[0] = PECS_OPEN(t, &a, sibling, -1, -1, 0);
	fd[1] = PECS_OPEN(t, &a, 0, -1, -1, 0);
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_OK(t, pecs_ring_map(t, fd[i], 8, PROT_READ | PROT_WRITE, &r[i]));
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	}
	for (int i = 0; i < 2; i++) {
		int ret = pecs_task_set_name(t, i ? "pecs-sib-b" : "pecs-sib-a");

		unsupported_without_task_event(t, ret);
		PECS_CHECK_OK(t, ret);
	}
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
		n[i] = pecs_ring_count(&r[i], PECS_RECORD_COMM);
		PECS_CHECK(t, n[i] >= 0, "ring %d: %s", i, pecs_retname(n[i]));
	}
	PECS_CHECK(t, n[0] == 0 && n[1] == 2,
		   "after 2 renames of this thread: %d COMM records on the sibling's event, %d "
		   "on this thread's", n[0], n[1]);
}
