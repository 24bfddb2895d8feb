/* The one constructor of an event: every field set here, from the attr open checked. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "ref/event/event.h"

struct ref_event *ref_event_new(struct ref_event_env *env, const struct pecs_attr *a,
				enum ref_kind kind, const struct ref_syscall_tp *tp, uint64_t id,
				const struct ref_event_task *t, int cpu)
{
	struct ref_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->env = env;
	ev->refs = 1;
	ev->fd = -1;
	ev->attr = *a;
	ev->kind = kind;
	ev->tp = *tp;
	ev->id = id;
	ev->pid = t->pid;
	ev->tid = t->pid == -1 ? -1 : t->tid;
	ev->same_process = t->same_process;
	ev->owner_tid = gettid();
	ev->cpu = cpu;
	ev->clock = (a->flags & PECS_ATTR_USE_CLOCKID) ? a->clockid : -1;
	ev->leader = ev;
	ev->period = a->sample_period;
	/* The clock PMUs turn a frequency into a fixed period at open and forget the
	 * frequency (perf_swevent_init_hrtimer(); measured: freq 1000 -> period 1e6). */
	if (ref_kind_is_clock(kind) && (a->flags & PECS_ATTR_FREQ) && a->sample_period) {
		ev->period = 1000000000ull / a->sample_period;
		ev->attr.sample_period = ev->period;
		ev->attr.flags &= ~PECS_ATTR_FREQ;
	}
	ev->last_period = ev->period;
	ev->proc_id = t->pid == -1 ? 0 : t->proc_tid;
	if (ref_event_source_init(&ev->tsrc, kind, a, ev->tid, t->proc_tid, t->same_process, 1) ||
	    ref_event_source_init(&ev->csrc, kind, a, ev->tid, t->proc_tid, t->same_process, 0)) {
		ref_event_source_fini(&ev->tsrc);
		ref_event_source_fini(&ev->csrc);
		free(ev);
		return NULL;
	}
	ev->t_last = ev->tsrc.last;
	ev->c_last = ev->csrc.last;
	ref_event_exec_arm(ev);
	return ev;
}
