/* A sample's way from an overflow to the ring: enabled state, REFRESH limit, the
 * SET_OUTPUT redirect, PAUSE_OUTPUT and lost accounting, as perf_event_overflow() and
 * perf_output_begin() handle them. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/opts.h"
#include "ref/event/event.h"
#include "ref/host/host.h"
#include "ref/record/record.h"
#include "ref/ring/ring.h"


void ref_event_record_desc(const struct ref_event *ev, struct ref_record_desc *d)
{
	*d = (struct ref_record_desc){
		.sample_type = ev->attr.sample_type,
		.read_format = ev->attr.read_format,
		.sample_id_all = (ev->attr.flags & PECS_ATTR_SAMPLE_ID_ALL) != 0,
		/* Linux: a group member's records carry its own id (the Starnix seed
		 * uses the leader's). Not inherited, so stream_id is the same id. */
		.id = ev->id,
		.stream_id = ev->id,
		.max_stack = ev->attr.sample_max_stack,
		/* With FREQ the attr holds a frequency, not a period; the profiler then
		 * reports each sample's own period. */
		.period = (ev->attr.flags & PECS_ATTR_FREQ) ? 0 : ev->last_period,
		.exclude_callchain_user = (ev->attr.flags & PECS_ATTR_EXCLUDE_CALLCHAIN_USER) != 0,
		.exclude_callchain_kernel =
			(ev->attr.flags & PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL) != 0,
		.regs_user = ev->attr.sample_regs_user,
		.regs_intr = ev->attr.sample_regs_intr,
		.stack_user = ev->attr.sample_stack_user,
	};
}

void ref_event_lost_locked(struct ref_event *ev, uint64_t nr)
{
	/* perf_output_begin() counts nothing without a ring or with no data pages. */
	if ((!ev->running && !ev->draining) || !ev->rb || ev->rb->nr_pages < 2)
		return;
	ev->lost += nr;
	ref_ring_count_lost(ev->rb->ring, nr);
}

/* The task facts a sample of a task event carries are looked up when the event is
 * enabled, not at each sample: a lookup costs system calls (and, when /proc belongs to
 * another pid namespace, a walk of /proc/self/task), and only CGROUP and CODE_PAGE_SIZE
 * need them. The task's /proc id never changes; its cgroup is taken as of the enable
 * (Linux reads it at the overflow: a task moved while its event runs keeps the old id
 * until the next enable). */
void ref_event_resolve_task(struct ref_event *ev)
{
	uint64_t id;

	if (ev->pid == -1 ||
	    !(ev->attr.sample_type & (PECS_SAMPLE_CGROUP | PECS_SAMPLE_CODE_PAGE_SIZE)))
		return;
	if (!ev->proc_id)
		ev->proc_id = ref_event_task_proc_id(ev->tid, ev->same_process);
	ev->cgroup = 0;
	if (ev->proc_id > 0 && (ev->attr.sample_type & PECS_SAMPLE_CGROUP) &&
	    !ref_host_cgroup_id(&ev->env->host, ev->proc_id, &id))
		ev->cgroup = id;
}

/* Linux reads these from `current` at the overflow: for a task event the event's task
 * (as resolved at enable), for a cpu-wide one whichever task the sample names. */
static void sample_task_fields(const struct ref_event *ev, const struct pecs_sample *s,
			       struct ref_record_desc *d)
{
	struct ref_host_cache *host = &ev->env->host;
	pid_t task = ev->pid == -1 ? (pid_t)s->tid : ev->proc_id;
	uint64_t id;

	if (task <= 0)
		return;
	if (d->sample_type & PECS_SAMPLE_CGROUP) {
		if (ev->pid != -1)
			d->cgroup = ev->cgroup;
		else if (!ref_host_cgroup_id(host, task, &id))
			d->cgroup = id;
	}
	if ((d->sample_type & PECS_SAMPLE_CODE_PAGE_SIZE) && s->nr_ips)
		d->code_page_size = ref_host_page_size(host, task, s->ips[0]);
}

/* The planned sample is handed through the ring so the record is built in place. */
static int encode_in_ring(void *arg, void *out, size_t len)
{
	ssize_t n = ref_record_encode_planned(arg, out, len);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EINVAL;
}

/* The members' values for PERF_SAMPLE_READ; NULL without it. */
static int sample_read_values(struct ref_event *ev, struct ref_read_values *rv,
			      struct ref_read_member **members)
{
	int err;

	if (!(ev->attr.sample_type & PECS_SAMPLE_READ))
		return 0;
	err = ref_event_read_values(ev, rv, members);
	if (err)
		return err;
	/* perf_output_read() times the values by the sampling event itself, where read(2)
	 * of a group uses the leader's (measured: a member opened later samples its own,
	 * shorter, time_enabled). */
	rv->time_enabled = ev->time_enabled;
	rv->time_running = ev->time_running;
	return 0;
}

static int write_sample(struct ref_event *ev, const struct pecs_sample *s)
{
	struct ref_read_values rv = {0};
	struct ref_read_member *members = NULL;
	struct ref_record_desc d;
	struct lost_cookie cookie = {ev, s};
	struct ref_record_plan plan;
	ssize_t size;
	int err;

	ref_event_record_desc(ev, &d);
	sample_task_fields(ev, s, &d);
	err = sample_read_values(ev, &rv, &members);
	if (err)
		return err;
	size = ref_record_plan_sample(&d, s, members ? &rv : NULL, &plan);
	if (size < 0) {
		free(members);
		return (int)size;
	}
	err = ref_ring_write_encoded(ev->rb->ring, (size_t)size, encode_in_ring, &plan, &cookie);
	free(members);
	if (err == -ENOSPC) {
		/* perf_output_begin(): no room or paused output, the event's lost count. */
		ev->lost++;
		return 0;
	}
	/* A one-page mapping has no data area: dropped without being counted (measured). */
	if (err == -ENODATA)
		return 0;
	/* Pollers wait under the engine lock, which a batch holds until its end: one
	 * wakeup there does for all its samples. */
	if (!err && ev->batch_ring)
		ev->batch_wrote = 1;
	else if (!err)
		pthread_cond_broadcast(&ev->env->wake);
	return err;
}

int ref_event_deliver_locked(struct ref_event *ev, const struct pecs_sample *s)
{
	struct pecs_sample sl;
	int err = 0;

	if (!ref_attr_is_sampling(&ev->attr))
		return -EINVAL;
	if (!ev->running && !ev->draining)
		return REF_DELIVER_OFF;
	/* The engine's own callers build the current version: no copy (nor zeroing of
	 * the copy) per sample. */
	if (!s || s->size != sizeof(sl)) {
		memset(&sl, 0, sizeof(sl));
		err = pecs_opts_load(&sl, sizeof(sl), s, PECS_OPTS_SIZE_TO(pecs_sample, ips));
		if (err)
			return err;
		s = &sl;
	}
	/* No buffer (never mapped, or unmapped): nowhere to write, nothing counted. */
	if (ev->rb)
		err = write_sample(ev, s);
	/* REFRESH: the overflow that uses up the limit still outputs its sample, then the
	 * event disables itself (__perf_event_overflow()). */
	if (ev->event_limit && --ev->event_limit == 0) {
		ref_event_set_on(ev, 0, NULL);
		ref_event_fasync_signal(ev, POLL_HUP);
	} else {
		/* Every overflow, whatever the ring's wakeup_events (__perf_event_overflow). */
		ref_event_fasync_signal(ev, POLL_IN);
	}
	return err;
}
