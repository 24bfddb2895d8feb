/* Delivery batches (ref_event_deliver_begin/_batched/_end, ref.h): a profiler's samples
 * under one taking of the engine lock and of the ring's. And their fast lane: while both
 * are held, nothing that shapes a sample's record can change (attr, period, cgroup,
 * REFRESH limit, the ring's owner), so the record's layout is planned once at the
 * batch's start and each sample that fits it is stored straight into a window of the
 * ring's data area, the records accounted by the ring when the window is handed back.
 * Anything else (a LOST record owed, a full or wrapping ring, a sample the layout does
 * not take) goes the general way, ref_event_deliver_locked(), which writes the same
 * bytes. */
#include <pthread.h>

#include "ref/event/event.h"
#include "ref/record/sample_layout.h"
#include "ref/ring/ring.h"

static void batch_plan(struct ref_event *ev)
{
	struct ref_record_desc d;
	uint64_t st = ev->attr.sample_type;

	ev->batch_laid_out = 0;
	ev->batch_at = NULL;
	ev->batch_room = ev->batch_used = 0;
	/* The general path's per-sample duties: a REFRESH count, an overflow's signal, a
	 * cpu-wide event's per-task lookups, an injected (stopped) event, an event not
	 * running. */
	if (!ev->batch_ring || ev->event_limit || ev->injected || ref_event_fasync_armed(ev) ||
	    !ref_attr_is_sampling(&ev->attr) || (!ev->running && !ev->draining) ||
	    (ev->pid == -1 && (st & (PECS_SAMPLE_CGROUP | PECS_SAMPLE_CODE_PAGE_SIZE))))
		return;
	ref_event_record_desc(ev, &d);
	/* As sample_task_fields() (event_sample.c) fills it for a task event. */
	if ((st & PECS_SAMPLE_CGROUP) && ev->proc_id > 0)
		d.cgroup = ev->cgroup;
	ev->batch_laid_out = ref_record_layout_plan(&d, &ev->batch_layout) == 0;
}

/* The samples written into the window go out (accounted and published by the ring). */
static void batch_flush(struct ref_event *ev)
{
	if (ev->batch_used)
		ref_ring_advance(ev->batch_ring, ev->batch_used);
	ev->batch_at = NULL;
	ev->batch_room = ev->batch_used = 0;
}

static int batch_write(struct ref_event *ev, const struct pecs_sample *s)
{
	const struct ref_record_layout *l = &ev->batch_layout;
	uint32_t keep;
	size_t size;

	if (!ev->batch_laid_out || !s || !ref_record_layout_fits(s))
		return 0;
	keep = ref_record_layout_keep(l, s);
	size = ref_record_layout_size(l, keep);
	if (size > ev->batch_room - ev->batch_used) {
		/* A record goes where the general write would put it: the window is
		 * handed back first, then a new one asked for at the new head. */
		batch_flush(ev);
		ev->batch_at = ref_ring_window(ev->batch_ring, size, &ev->batch_room);
		if (!ev->batch_at)
			return 0;
	}
	ref_record_layout_encode(l, s, keep, size, ev->batch_at + ev->batch_used);
	ev->batch_used += size;
	ev->batch_wrote = 1;
	return 1;
}

/* A batch also holds the ring's own lock, which each write would otherwise take and
 * drop: with the engine lock held nothing can unmap or redirect the ring meanwhile. */
void ref_event_deliver_begin(struct ref_event *ev)
{
	pthread_mutex_lock(&ev->env->lock);
	ev->batch_ring = ev->rb ? ev->rb->ring : NULL;
	if (ev->batch_ring)
		ref_ring_hold(ev->batch_ring);
	batch_plan(ev);
}

int ref_event_deliver_batched(struct ref_event *ev, const struct pecs_sample *s)
{
	if (batch_write(ev, s))
		return 0;
	batch_flush(ev);
	return ev->injected ? REF_DELIVER_OFF : ref_event_deliver_locked(ev, s);
}

void ref_event_deliver_end(struct ref_event *ev)
{
	batch_flush(ev);
	if (ev->batch_ring)
		ref_ring_release(ev->batch_ring);
	ev->batch_ring = NULL;
	ev->batch_laid_out = 0;
	if (ev->batch_wrote)
		pthread_cond_broadcast(&ev->env->wake);
	ev->batch_wrote = 0;
	pthread_mutex_unlock(&ev->env->lock);
}
