/* A process whose main thread leaves first: perf record's inherited event on a child
 * that makes a thread and then calls pthread_exit() in its main thread, so that the
 * process lives on in the thread while its leader is a zombie. The thread then maps a
 * file executable. kernel/events/core.c writes the MMAP record from the mapping task's
 * own context (perf_event_mmap(), inherited copy of the event), naming the process and
 * the thread, whatever became of the leader.
 *
 * An inherited per-task event (cpu -1) cannot be mapped, so the child is bound to the
 * CPU the case runs on and the event opened there, as record_pid_inherit.c does. The
 * records are read once the child is a zombie. Found by the mutation score (ref read
 * freed memory on this path); measured on 6.18 as root and uid 65534. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define MS 1000000ull
#define MAPPED "/bin/true" /* any executable file every uid may read */

/* What the thread reports once it mapped the file: its tid and the address. */
struct mapped {
	int32_t tid;
	uint64_t addr;
};

struct child_args {
	pid_t leader;
	int exe, out;
};

static int leader_gone(pid_t leader)
{
	char path[64], state = 0;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)leader, (int)leader);
	f = fopen(path, "re");
	if (!f)
		return 1;
	/* "pid (comm) S ...": the comm has no ')' here (the case's own binary name) */
	n = fscanf(f, "%*d (%*[^)]) %c", &state);
	fclose(f);
	return n == 1 && (state == 'Z' || state == 'X');
}

static void *thread_main(void *arg)
{
	const struct child_args *c = arg;
	struct mapped m = {.tid = (int32_t)syscall(SYS_gettid)};

	/* until the main thread has left: at most 2 s of CPU, burned in user space */
	for (int i = 0; i < 2000 && !leader_gone(c->leader); i++)
		pecs_burn_user(MS);
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, c->exe, 0);
	m.addr = p == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)p;
	if (write(c->out, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(3);
	/* some CPU time for a sampler that learns mappings at its samples */
	pecs_burn_user(20 * MS);
	/* The process ends here, the last thread. _exit: no atexit handler of the suite's
	 * process (a sanitizer's leak check, which cannot run under ptrace) runs in it. */
	_exit(0);
}

/* The child: bound to cpu, waits for the word, makes the thread and leaves. */
static void child_main(int cpu, int go, struct child_args *c)
{
	static pthread_t th;
	cpu_set_t set;
	char b;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || read(go, &b, 1) != 1)
		_exit(2);
	c->leader = getpid();
	if (pthread_create(&th, NULL, thread_main, c))
		_exit(2);
	pthread_exit(NULL);
}

static void kill_child(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	int status;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
}

static int read_mapped(int fd, struct mapped *m)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (poll(&p, 1, 20000) != 1)
		return -1;
	return read(fd, m, sizeof(*m)) == (ssize_t)sizeof(*m) ? 0 : -1;
}

PECS_CASE("Required.Record.PidTask.LeaderExitedThreadStillWritesMmap",
	  "mmap,sampling,pid.other", "RECORD-PID-LEADER-EXIT-MMAP")
{
	static pid_t pid;
	static struct pecs_ring r;
	static struct child_args args;
	const struct pecs_record_header *rec;
	char exe[PATH_MAX];
	int go[2], out[2], cpu = sched_getcpu(), found = 0, ret;
	struct pecs_attr a;
	struct mapped m;
	siginfo_t si;

	if (cpu < 0)
		PECS_ENV_SKIP(t, "sched_getcpu: %s", pecs_errname(errno));
	if (!realpath(MAPPED, exe))
		PECS_ENV_SKIP(t, "realpath %s: %s", MAPPED, pecs_errname(errno));
	args.exe = open(exe, O_RDONLY | O_CLOEXEC);
	if (args.exe < 0 || pipe2(go, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		PECS_BROKEN(t, "open or pipe: %s", pecs_errname(errno));
	args.out = out[1];
	pid = fork();
	if (pid < 0)
		PECS_BROKEN(t, "fork: %s", pecs_errname(errno));
	if (pid == 0)
		child_main(cpu, go[0], &args);
	pecs_defer(t, kill_child, &pid);
	close(go[0]);
	close(out[1]);
	close(args.exe);
	pecs_attr_sampling(t, &a, PECS_SW_CPU_CLOCK, MS, PECS_SAMPLE_TID | PECS_SAMPLE_TIME);
	a.flags |= PECS_ATTR_INHERIT | PECS_ATTR_MMAP | PECS_ATTR_COMM | PECS_ATTR_TASK |
		   PECS_ATTR_SAMPLE_ID_ALL;
	int fd = PECS_OPEN(t, &a, pid, cpu, -1, PECS_FLAG_FD_CLOEXEC);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 64, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	if (write(go[1], "g", 1) != 1 || read_mapped(out[0], &m))
		PECS_BROKEN(t, "the child %d did not report its mapping", (int)pid);
	close(go[1]);
	close(out[0]);
	PECS_CHECK(t, m.addr != 0, "the child's thread could not map %s", exe);
	pecs_wait_zombie(t, pid, &si);
	PECS_CHECK(t, si.si_code == CLD_EXITED && si.si_status == 0,
		   "the child ended with code %d status %d", si.si_code, si.si_status);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		uint32_t ids[2];
		uint64_t addr;
		const char *name = (const char *)(rec + 1) + 8 + 24;

		if (rec->type != PECS_RECORD_MMAP || rec->size < 8 + 8 + 24 + 8)
			continue;
		memcpy(ids, rec + 1, sizeof(ids));
		memcpy(&addr, (const uint8_t *)(rec + 1) + 8, sizeof(addr));
		if (addr != m.addr || strncmp(name, exe, rec->size - (8 + 8 + 24)))
			continue;
		PECS_CHECK(t, ids[0] == (uint32_t)pid && ids[1] == (uint32_t)m.tid,
			   "MMAP of %s: pid/tid %u/%u, expected %d/%d", exe, ids[0], ids[1],
			   (int)pid, (int)m.tid);
		found++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, found == 1, "%d MMAP records of %s at %#llx from the thread %d, "
		   "expected one", found, exe, (unsigned long long)m.addr, (int)m.tid);
}
