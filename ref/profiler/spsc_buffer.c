#include "spsc_buffer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PREFAULT_BYTES (16u << 10)

int ref_spsc_init(struct spsc_buffer *b, size_t cap)
{
	uint64_t c = 64;

	while (c < cap)
		c <<= 1;
	b->data = mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->data == MAP_FAILED) {
		b->data = NULL;
		return -ENOMEM;
	}
	/* The first pages are touched here, not first in a signal handler. Populating all
	 * of a large buffer (8 MiB for the engine's events) cost more than most sessions
	 * that use it (measured: 60% of a conformance case that enables an event per
	 * vector; 256 KiB still cost 60%); the rest faults in as the queue first reaches
	 * it, a minor fault per page, once per buffer. */
	memset(b->data, 0, c < PREFAULT_BYTES ? c : PREFAULT_BYTES);
	b->cap = c;
	atomic_init(&b->head, 0);
	atomic_init(&b->tail, 0);
	return 0;
}

void ref_spsc_destroy(struct spsc_buffer *b)
{
	if (b->data)
		munmap(b->data, b->cap);
	b->data = NULL;
}

/* Copies into the ring at logical position pos, wrapping at the end. */
static void ring_put(struct spsc_buffer *b, uint64_t pos, const void *src, size_t n)
{
	size_t at = pos & (b->cap - 1), first = b->cap - at < n ? b->cap - at : n;

	memcpy(b->data + at, src, first);
	memcpy(b->data, (const uint8_t *)src + first, n - first);
}

static void ring_get(const struct spsc_buffer *b, uint64_t pos, void *dst, size_t n)
{
	size_t at = pos & (b->cap - 1), first = b->cap - at < n ? b->cap - at : n;

	memcpy(dst, b->data + at, first);
	memcpy((uint8_t *)dst + first, b->data, n - first);
}

int ref_spsc_push(struct spsc_buffer *b, const struct spsc_entry *e, const void *bytes)
{
	uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed); /* ours */
	/* Acquire: the consumer's reads of the bytes it frees come before our writes. */
	uint64_t tail = atomic_load_explicit(&b->tail, memory_order_acquire);
	uint64_t need = sizeof(*e) + ((e->len + 7ull) & ~7ull);

	if (need > b->cap - (head - tail))
		return -ENOSPC;
	ring_put(b, head, e, sizeof(*e));
	ring_put(b, head + sizeof(*e), bytes, e->len);
	/* Release: the entry's bytes are written before the consumer can see them. */
	atomic_store_explicit(&b->head, head + need, memory_order_release);
	return 0;
}

int ref_spsc_pop(struct spsc_buffer *b, struct spsc_entry *e, void *buf, size_t len)
{
	uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed); /* ours */
	uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);

	if (head == tail)
		return 0;
	ring_get(b, tail, e, sizeof(*e));
	ring_get(b, tail + sizeof(*e), buf, e->len < len ? e->len : len);
	atomic_store_explicit(&b->tail, tail + sizeof(*e) + ((e->len + 7ull) & ~7ull),
			      memory_order_release);
	return 1;
}

uint64_t ref_spsc_mark(const struct spsc_buffer *b)
{
	return atomic_load_explicit(&b->head, memory_order_acquire);
}

int ref_spsc_passed(const struct spsc_buffer *b, uint64_t mark)
{
	return atomic_load_explicit(&b->tail, memory_order_relaxed) >= mark;
}

void ref_spsc_clear(struct spsc_buffer *b)
{
	atomic_store_explicit(&b->head, 0, memory_order_relaxed);
	atomic_store_explicit(&b->tail, 0, memory_order_relaxed);
}
