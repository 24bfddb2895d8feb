/* Finding the task behind a pid, in the caller's pid namespace.
 *
 * /proc may belong to another pid namespace than the caller (Bazel's sandbox mounts the
 * host's): clocks and kill(2) take namespace ids, so they decide; /proc is used only
 * through an id translated for it. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ref/event/event.h"

clockid_t ref_event_thread_clock(pid_t tid)
{
	/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): the kernel takes it for any thread of
	 * the caller's thread group, and for no other. */
	return (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
}

static int in_my_group(pid_t tid)
{
	struct timespec ts;

	return clock_gettime(ref_event_thread_clock(tid), &ts) == 0;
}

int ref_event_task_find(pid_t pid, pid_t *tid, int *same_process)
{
	if (pid == 0) {
		*tid = (pid_t)syscall(SYS_gettid);
		*same_process = 1;
		return 0;
	}
	/* PID_MAX_LIMIT: no task has a larger id (and the clock encoding needs it). */
	if (pid < 0 || pid > 4 * 1024 * 1024)
		return -ESRCH;
	*tid = pid;
	*same_process = in_my_group(pid);
	if (*same_process)
		return 0;
	/* A zombie still answers kill(); find_get_context refuses it (PF_EXITING). */
	if ((kill(pid, 0) == 0 || errno == EPERM) && !ref_event_task_exited(pid, 0))
		return 0;
	return -ESRCH;
}

/* 1 when /proc shows the caller's own pid namespace. */
static int proc_is_mine(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return atoi(buf) == getpid();
}

/* The id of one of our own threads as /proc names it: the first NSpid field of the
 * thread whose last NSpid field is tid. */
static pid_t own_thread_proc_id(pid_t tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	pid_t found = -1;

	if (!d)
		return -1;
	while (found < 0 && (de = readdir(d))) {
		char path[300], buf[4096], *p;
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		p = strstr(buf, "NSpid:");
		if (p) {
			char *eol = strchr(p, '\n'), *last;

			if (eol)
				*eol = 0;
			last = strrchr(p, '\t');
			if (last && atoi(last + 1) == tid)
				found = atoi(de->d_name);
		}
	}
	closedir(d);
	return found;
}

pid_t ref_event_task_proc_id(pid_t tid, int same_process)
{
	if (proc_is_mine())
		return tid;
	return same_process ? own_thread_proc_id(tid) : -1;
}

/* 1 when /proc shows the task as a zombie (or gone), 0 when alive, -1 when /proc cannot
 * name it (another pid namespace). */
static int proc_says_exited(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;
	pid_t pid = ref_event_task_proc_id(tid, 0);

	if (pid < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && (p[2] == 'Z' || p[2] == 'X');
}

int ref_event_task_exited(pid_t tid, int same_process)
{
	siginfo_t info;
	int r;

	if (same_process)
		return !in_my_group(tid);
	if (kill(tid, 0) && errno == ESRCH)
		return 1;
	/* A zombie still answers kill(): its events went at exit. */
	r = proc_says_exited(tid);
	if (r >= 0)
		return r;
	/* Without our /proc, only our own children can be seen dead: WNOWAIT leaves a
	 * zombie child for its parent to reap. */
	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, (id_t)tid, &info, WEXITED | WNOHANG | WNOWAIT) == 0)
		return info.si_pid == tid;
	return 0;
}
