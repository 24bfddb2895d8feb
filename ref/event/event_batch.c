/* A delivery batch's fast lane: while the engine lock and the ring are held, nothing
 * that shapes a sample's record can change (attr, period, cgroup, REFRESH limit, the
 * ring's owner), so the record's layout is planned once at the batch's start and each
 * sample that fits it is stored straight into space the ring reserves. Anything else
 * (a LOST record owed, a full or wrapping ring, a sample the layout does not take)
 * goes the general way, ref_event_deliver_locked(), which writes the same bytes. */
#include "ref/event/event.h"
#include "ref/record/record.h"
#include "ref/ring/ring.h"

void ref_event_batch_plan(struct ref_event *ev)
{
	struct ref_record_desc d;
	uint64_t st = ev->attr.sample_type;

	ev->batch_laid_out = 0;
	/* The general path's per-sample duties: a REFRESH count, a cpu-wide event's
	 * per-task lookups, an injected (stopped) event, an event not running. */
	if (!ev->batch_ring || ev->event_limit || ev->injected ||
	    !ref_attr_is_sampling(&ev->attr) || (!ev->running && !ev->draining) ||
	    (ev->pid == -1 && (st & (PECS_SAMPLE_CGROUP | PECS_SAMPLE_CODE_PAGE_SIZE))))
		return;
	ref_event_record_desc(ev, &d);
	/* As sample_task_fields() (event_sample.c) fills it for a task event. */
	if ((st & PECS_SAMPLE_CGROUP) && ev->proc_id > 0)
		d.cgroup = ev->cgroup;
	ev->batch_laid_out = ref_record_layout_plan(&d, &ev->batch_layout) == 0;
}

int ref_event_batch_write(struct ref_event *ev, const struct pecs_sample *s)
{
	const struct ref_record_layout *l = &ev->batch_layout;
	uint32_t keep;
	size_t size;
	void *at;

	if (!ev->batch_laid_out || ev->lost_unrecorded || !s || !ref_record_layout_fits(s))
		return 0;
	keep = ref_record_layout_keep(l, s);
	size = ref_record_layout_size(l, keep);
	at = ref_ring_reserve(ev->batch_ring, size);
	if (!at)
		return 0;
	ref_record_layout_encode(l, s, keep, size, at);
	ref_ring_commit(ev->batch_ring, size);
	ev->batch_wrote = 1;
	return 1;
}
