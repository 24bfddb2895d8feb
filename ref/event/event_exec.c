/* enable_on_exec on another process: the event turns on when its task executes a new
 * program (perf_event_enable_on_exec() on Linux, at execve).
 *
 * From outside, the exec is seen as a change of the task's program: the file behind
 * /proc/<pid>/exe, or, once the task has died and its mm is gone (a zombie has no exe
 * link), its comm. The change is looked for at each sync while the event waits. The
 * interval between the last sync before the exec and the sync that sees it counts as
 * enabled: a launcher (perf stat, the suite's cases) opens the event while its child is
 * blocked waiting for the word to exec, so that interval holds the child's wake-up and
 * the execve only (measured on this kernel: a blocked fork child of 1.2 ms and 17 faults
 * moves neither counter while it waits). A program that executes itself under the same
 * file and comm is not seen to exec; its event then stays off.
 *
 * Page faults from /proc count a few more than Linux's page-faults event: min_flt also
 * counts the faults get_user_pages() takes for the kernel (execve copying the new
 * program's arguments and environment), which the event, raised only for faults with
 * registers, does not (measured: 78 against 62 for a run of sh, 16 at the exec). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/event/event.h"

static int read_exe(pid_t pid, dev_t *dev, ino_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st))
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

void ref_event_exec_arm(struct ref_event *ev)
{
	struct ref_exec_mark *m = &ev->exec;

	memset(m, 0, sizeof(*m));
	if (ev->pid <= 0 || ev->same_process || ev->proc_id <= 0)
		return;
	if ((ev->attr.flags & PECS_ATTR_ENABLE_ON_EXEC) && (ev->attr.flags & PECS_ATTR_DISABLED)) {
		if (ref_host_stat_comm(ev->proc_id, m->comm, sizeof(m->comm)))
			return;
		m->has_exe = read_exe(ev->proc_id, &m->dev, &m->ino) == 0;
		m->armed = 1;
	}
	/* A sampling event on another process is sampled from outside, and needs the exec
	 * seen as it happens. */
	ref_event_trace_add(ev);
}

static int exec_seen(const struct ref_exec_mark *m, pid_t pid)
{
	char comm[sizeof(m->comm)];
	dev_t dev;
	ino_t ino;

	if (m->has_exe && read_exe(pid, &dev, &ino) == 0)
		return dev != m->dev || ino != m->ino;
	return ref_host_stat_comm(pid, comm, sizeof(comm)) == 0 && strcmp(comm, m->comm) != 0;
}

/* Turns ev on once its task executed; a leader's turn decides its members' running. */
void ref_event_exec_check(struct ref_event *ev)
{
	if (!ev->exec.armed || !exec_seen(&ev->exec, ev->proc_id))
		return;
	ev->exec.armed = 0;
	ev->on = 1;
	ref_event_schedule(ev, NULL);
}
