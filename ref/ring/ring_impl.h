/* The ring's state, shared by its writers (ring.c) and the holder's fast lane
 * (ring_reserve.c); nothing outside ref/ring includes this. */
#ifndef REF_RING_IMPL_H
#define REF_RING_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "pecs/abi.h"
#include "ref/ring/ring.h"
#include "ref/ring/ring_lock.h"

struct ref_ring {
	struct ring_lock lock;
	/* The thread in ref_ring_hold() (its ring_self()), else 0: it writes and queries
	 * without the lock. Only that thread stores its own token here, so a thread that
	 * reads its own token back is the holder, and any other thread reads something
	 * else. */
	uintptr_t holder;
	int memfd;
	size_t nr_pages;
	long page_size;
	size_t len;
	uint8_t *base; /* the engine's own read-write mapping */
	struct pecs_mmap_page *pg;
	uint8_t *data;
	uint64_t data_size;
	int overwrite, backward;

	/* As rb->head: the next free byte (forward) or the last written one (backward),
	 * published to pg->data_head once the record is in place. */
	uint64_t head;
	/* The holder's room: records up to here fit, as of its last reading of the tail
	 * (ref_ring_reserve()); 0 at each hold, so a hold starts with a fresh reading. */
	uint64_t room_end;
	uint64_t lost_pending; /* lost since the last LOST record: the next one's count */
	int paused;

	/* Wakeup accounting as the kernel keeps it: `wakeup` advances by the watermark
	 * when the head runs that far past it, and by one per wakeup_events samples; any
	 * change during a write makes a wakeup. */
	uint64_t watermark, wakeup;
	uint32_t wakeup_events, events;
	_Atomic int poll;

	uint8_t *scratch; /* a wrapping encoded record is built here */
	ref_ring_lost_fn lost_fn;
	void *lost_arg;
	void (*wakeup_fn)(void *arg);
	void *wakeup_arg;
};

#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
#define RING_HAVE_THREAD_POINTER 1
#endif
#endif

/* A token for this thread, unique among live threads: its thread pointer, one load
 * (pthread_self() is a call into libc, a tenth of a held 64 B write). */
static inline uintptr_t ring_self(void)
{
#ifdef RING_HAVE_THREAD_POINTER
	return (uintptr_t)__builtin_thread_pointer();
#else
	return (uintptr_t)pthread_self();
#endif
}

static inline int ring_held_here(const struct ref_ring *r)
{
	uintptr_t h = __atomic_load_n(&r->holder, __ATOMIC_RELAXED);

	return h && h == ring_self();
}

/* The lock for one call, unless this thread holds the ring already (ref_ring_hold()):
 * 1 when taken. The lock costs one atomic operation a call (ring_lock.h); a holder's
 * writes cost none. */
static inline int ring_lock(struct ref_ring *r)
{
	if (ring_held_here(r))
		return 0;
	ring_lock_take(&r->lock);
	return 1;
}

static inline void ring_unlock(struct ref_ring *r, int taken)
{
	if (taken)
		ring_lock_drop(&r->lock);
}

/* CIRC_SPACE: what the writer may fill without its head reaching the reader's tail.
 * One byte is always kept back so that head == tail means empty; with 8-byte records
 * that leaves data_size - 8 usable. */
static inline uint64_t circ_space(uint64_t head, uint64_t tail, uint64_t size)
{
	return (tail - (head + 1)) & (size - 1);
}

/* After a record's bytes are in place: the head moves, wakeups are counted and the
 * head published. */
static inline void ring_commit(struct ref_ring *r, uint64_t head, uint64_t fwd_head, int sample)
{
	uint64_t wakeup = r->wakeup;

	r->head = head;
	if (fwd_head - r->wakeup > r->watermark)
		r->wakeup += r->watermark;

	/* Only samples count towards wakeup_events, as only perf_output_sample() counts. */
	if (r->wakeup_events && sample && ++r->events >= r->wakeup_events) {
		r->events -= r->wakeup_events;
		r->wakeup++;
	}

	/* B: the record's bytes before the head that publishes them; pairs with the
	 * reader's acquire load of data_head. */
	__atomic_store_n(&r->pg->data_head, r->head, __ATOMIC_RELEASE);

	if (r->wakeup != wakeup) {
		atomic_store(&r->poll, EPOLLIN | EPOLLRDNORM);
		if (r->wakeup_fn)
			r->wakeup_fn(r->wakeup_arg);
	}
}

#endif /* REF_RING_IMPL_H */
