/* What an exec of another process's task does to its events (perf_event_exec() on Linux,
 * in begin_new_exec()): an enable_on_exec event turns on there (perf_event_enable_on_exec())
 * and a remove_on_exec one stops there for good (perf_event_remove_on_exec(): the event
 * is left in its EXIT state, its fd readable, its count and times frozen, an ENABLE
 * ignored).
 *
 * The exec is seen at its moment by the task's tracer (event_trace.c: PTRACE_O_TRACEEXEC
 * stops the task as the exec returns), which syncs the events there, so what the task
 * did before counts by the state it had then: nothing for an enable_on_exec event, all
 * of it for a remove_on_exec one. The stop comes after the new program is loaded,
 * perf_event_exec() before: the loading (tens of microseconds, a few faults of the
 * kernel writing the new stack) falls on the other side (measured with perf stat --
 * /bin/true: docs/ref-engine-notes.md "exec").
 *
 * Where the task cannot be traced (another tracer holds it, or ptrace is refused), the
 * exec is seen as a change of the task's program at each sync while the event waits:
 * the file behind /proc/<pid>/exe, or, once the task has died and its mm is gone (a
 * zombie has no exe link), its comm. The interval between the last sync before the exec
 * and the sync that sees it then counts as after the exec. A program that executes
 * itself under the same file and comm is not seen to exec that way.
 *
 * Page faults from /proc count a few more than Linux's page-faults event: min_flt also
 * counts the faults get_user_pages() takes for the kernel (execve copying the new
 * program's arguments and environment), which the event, raised only for faults with
 * registers, does not. Those come before the exec's stop, so they fall before an
 * enable_on_exec event starts. */
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
	m->armed = (ev->attr.flags & PECS_ATTR_ENABLE_ON_EXEC) &&
		   (ev->attr.flags & PECS_ATTR_DISABLED);
	m->remove = (ev->attr.flags & PECS_ATTR_REMOVE_ON_EXEC) != 0;
	if ((m->armed || m->remove) &&
	    ref_host_stat_comm(ev->proc_id, m->comm, sizeof(m->comm)) == 0)
		m->has_exe = read_exe(ev->proc_id, &m->dev, &m->ino) == 0;
	else
		m->armed = m->remove = 0;
	/* A sampling event on another process is sampled from outside, and needs the exec
	 * seen as it happens; so does an event the exec changes. */
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

/* How much of the source's reading at the exec stop the kernel counted after the exec
 * started its events (m). */
static uint64_t past_moment(const struct ref_source *s, const struct ref_exec_moment *m)
{
	int unit = ref_event_source_unit(s);

	return unit == REF_UNIT_NS ? m->ns : unit == REF_UNIT_FAULTS ? m->faults : 0;
}

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* An event that starts running at the exec counts from the moment, not from the stop. */
static void count_from(struct ref_event *ev, const struct ref_exec_moment *m)
{
	ev->t_last = less(ev->t_last, past_moment(&ev->tsrc, m));
	ev->c_last = less(ev->c_last, past_moment(&ev->csrc, m));
}

/* One that stops there gives back what the stop counted past it. */
static void count_to(struct ref_event *ev, const struct ref_exec_moment *m)
{
	uint64_t t = past_moment(&ev->tsrc, m);

	ev->count = less(ev->count, past_moment(&ev->csrc, m));
	ev->time_enabled = less(ev->time_enabled, t);
	ev->time_running = less(ev->time_running, t);
}

/* The exec's turn: enable_on_exec on, remove_on_exec off for good. A leader's turn
 * decides its members' running. m is NULL for an exec seen late, by a sync. */
static void exec_apply(struct ref_event *ev, const struct ref_exec_moment *m)
{
	if (ev->exec.armed) {
		ev->exec.armed = 0;
		ev->on = 1;
		if (m && ev->leader == ev) {
			for (uint32_t i = 0; i <= ev->nr_siblings; i++) {
				struct ref_event *e = i ? ev->siblings[i - 1] : ev;

				if (e->on)
					count_from(e, m);
			}
		} else if (m && ev->leader->on) {
			count_from(ev, m);
		}
	}
	if (ev->exec.remove) {
		ev->exec.remove = 0;
		ev->exec.removed = 1;
		if (m && ev->running)
			count_to(ev, m);
		ev->on = 0;
	}
	ref_event_schedule(ev, NULL);
}

void ref_event_exec_check(struct ref_event *ev)
{
	if ((!ev->exec.armed && !ev->exec.remove) || ev->exec.traced ||
	    !exec_seen(&ev->exec, ev->proc_id))
		return;
	exec_apply(ev, NULL);
}

void ref_event_exec_now(struct ref_event *ev, const struct ref_exec_moment *m)
{
	if (!ev->exec.armed && !ev->exec.remove)
		return;
	/* What came before counts by the state the group was in. */
	if (ev->leader == ev)
		ref_event_sync_group(ev);
	else
		ref_event_sync(ev);
	exec_apply(ev, m);
}
