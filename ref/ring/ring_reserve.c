/* The holder's fast lane: a record reserved in one piece at the head and committed
 * once written, without the general write's checks per record (ring.c). */
#include <pthread.h>

#include "ref/ring/ring.h"
#include "ref/ring/ring_impl.h"

void *ref_ring_reserve(struct ref_ring *r, size_t len)
{
	uint64_t head = r->head, tail;
	size_t off = (size_t)(head & (r->data_size - 1));

	if (r->paused || r->lost_pending || r->backward || len > r->data_size - off ||
	    !pthread_equal(r->holder, pthread_self()))
		return NULL;
	if (!r->overwrite && head + len > r->room_end) {
		/* A: as in ring_write_general(); an older reading is as good for the
		 * bytes it freed. */
		tail = __atomic_load_n(&r->pg->data_tail, __ATOMIC_ACQUIRE);
		r->room_end = head + circ_space(head, tail, r->data_size);
		if (head + len > r->room_end)
			return NULL;
	}
	return r->data + off;
}

void ref_ring_commit(struct ref_ring *r, size_t len)
{
	ring_commit(r, r->head + len, r->head + len, 1);
}
