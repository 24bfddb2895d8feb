/* The inherited copies of an event that the exec changes, in the processes its task
 * forks (perf_event_init_task() copies an inherit event into each; the copy keeps the
 * attr, enable_on_exec and remove_on_exec with it). Each copy acts at its own process's
 * exec, as the event at its task's: an enable_on_exec copy of a disabled event turns on
 * there (inherit_event() makes it OFF, as its parent), a remove_on_exec copy stops there;
 * at the process's exit perf_event_exit_task() adds what the copy counted to the event.
 *
 * ref follows those processes with the task's tracer (event_trace.c: PTRACE_O_TRACEFORK,
 * the exec and exit stops) and reads each one's counters at its exec and at its exit:
 * - an enable_on_exec copy adds the span between the two to the event (its count, and its
 *   CPU time to the event's times), while the event itself waits for its own exec (once
 *   it runs, the children it waits for count whole, from /proc, as before);
 * - a remove_on_exec copy's span after the exec is taken off what the process will bring
 *   when it is waited for (its whole life, in its parent's /proc children fields).
 * Counters with a unit (REF_UNIT_*): task clocks and page faults; a copy's switches and
 * migrations are not followed. */
#include "ref/event/event.h"
#include "ref/event/event_trace.h"

struct copy_reading {
	uint64_t ns, faults;
};

static void read_task(const struct ref_trace_task *k, struct copy_reading *r)
{
	uint64_t mn = 0, mj = 0;

	r->ns = ref_trace_cpu_ns(k);
	ref_host_stat_field(k->pid, k->tid, 10, &mn, NULL);
	ref_host_stat_field(k->pid, k->tid, 12, &mj, NULL);
	r->faults = mn + mj;
}

static uint64_t by_unit(const struct ref_source *s, const struct copy_reading *r)
{
	int unit = ref_event_source_unit(s);

	return unit == REF_UNIT_NS ? r->ns : unit == REF_UNIT_FAULTS ? r->faults : 0;
}

static int copied_with_exec(const struct ref_event *ev)
{
	return (ev->attr.flags & PECS_ATTR_INHERIT) && (ev->exec.armed || ev->exec.remove);
}

void ref_trace_copy_exec(struct ref_tracer *t, struct ref_trace_task *k)
{
	struct copy_reading r;

	(void)t;
	if (!k->followed || k->copy_exec)
		return;
	read_task(k, &r);
	k->copy_exec = 1;
	k->at_exec_ns = r.ns;
	k->at_exec_faults = r.faults;
}

void ref_trace_copy_exit(struct ref_tracer *t, struct ref_trace_task *k)
{
	struct copy_reading end, at = {k->at_exec_ns, k->at_exec_faults}, span;

	if (!k->followed || !k->copy_exec)
		return;
	read_task(k, &end);
	span.ns = end.ns > at.ns ? end.ns - at.ns : 0;
	span.faults = end.faults > at.faults ? end.faults - at.faults : 0;
	for (size_t i = 0; i < t->nr; i++) {
		struct ref_event *ev = t->evs[i];

		if (!copied_with_exec(ev))
			continue;
		if (ev->exec.armed) {
			ev->count += by_unit(&ev->csrc, &span);
			ev->time_enabled += span.ns;
			ev->time_running += span.ns;
		} else if (ev->csrc.children) {
			ev->csrc.child_base += by_unit(&ev->csrc, &span);
			if (ev->tsrc.children)
				ev->tsrc.child_base += span.ns;
		}
	}
}
