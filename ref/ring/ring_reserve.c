/* The holder's fast lane: records written one after another into a window at the
 * head and accounted afterwards, without the general write's checks per record
 * (ring.c). */
#include <pthread.h>
#include <string.h>

#include "ref/ring/ring.h"
#include "ref/ring/ring_impl.h"

void *ref_ring_window(struct ref_ring *r, size_t min, size_t *room)
{
	uint64_t head = r->head, tail;
	size_t off = (size_t)(head & (r->data_size - 1));
	size_t to_end = r->data_size - off;

	*room = 0;
	if (r->paused || r->lost_pending || r->backward || min > to_end || !ring_held_here(r))
		return NULL;
	if (!r->overwrite && head + min > r->room_end) {
		/* A: as in ring_write_general(); an older reading is as good for the
		 * bytes it freed. */
		tail = __atomic_load_n(&r->pg->data_tail, __ATOMIC_ACQUIRE);
		r->room_end = head + circ_space(head, tail, r->data_size);
		if (head + min > r->room_end)
			return NULL;
	}
	*room = r->overwrite || r->room_end - head > to_end ? to_end : (size_t)(r->room_end - head);
	return r->data + off;
}

void ref_ring_advance(struct ref_ring *r, size_t len)
{
	uint64_t end = r->head + len;

	/* No record of the window makes a wakeup (the head stays within the watermark and
	 * samples are not counted): the records go out at once, with the state a commit
	 * of each would have left. Reading each record's size back was a tenth of a
	 * sample's way into the ring. */
	if (!r->wakeup_events && end - r->wakeup <= r->watermark) {
		if (len)
			ring_commit(r, end, end, 1);
		return;
	}
	/* Record by record, as the writes would have: a wakeup is due at the record
	 * that makes it, with the records before it published. */
	while (r->head < end) {
		uint16_t size;

		memcpy(&size, r->data + (r->head & (r->data_size - 1)) + 6, sizeof(size));
		if (!size)
			break;
		ring_commit(r, r->head + size, r->head + size, 1);
	}
}
