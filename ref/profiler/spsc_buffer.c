#include "spsc_buffer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int spsc_init(struct spsc_buffer *b, size_t cap)
{
	uint64_t c = 64;

	while (c < cap)
		c <<= 1;
	/* mmap rather than malloc: pages are touched here, not first in a signal handler. */
	b->data = mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);
	if (b->data == MAP_FAILED) {
		b->data = NULL;
		return -ENOMEM;
	}
	b->cap = c;
	b->head = b->tail = 0;
	return 0;
}

void spsc_destroy(struct spsc_buffer *b)
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

int spsc_push(struct spsc_buffer *b, const struct spsc_entry *e, const void *bytes)
{
	uint64_t head = b->head; /* only this side writes it */
	uint64_t tail = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	uint64_t need = sizeof(*e) + ((e->len + 7ull) & ~7ull);

	if (need > b->cap - (head - tail))
		return -ENOSPC;
	ring_put(b, head, e, sizeof(*e));
	ring_put(b, head + sizeof(*e), bytes, e->len);
	__atomic_store_n(&b->head, head + need, __ATOMIC_RELEASE);
	return 0;
}

int spsc_pop(struct spsc_buffer *b, struct spsc_entry *e, void *buf, size_t len)
{
	uint64_t tail = b->tail;
	uint64_t head = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);

	if (head == tail)
		return 0;
	ring_get(b, tail, e, sizeof(*e));
	ring_get(b, tail + sizeof(*e), buf, e->len < len ? e->len : len);
	__atomic_store_n(&b->tail, tail + sizeof(*e) + ((e->len + 7ull) & ~7ull), __ATOMIC_RELEASE);
	return 1;
}

void spsc_clear(struct spsc_buffer *b)
{
	b->head = b->tail = 0;
}
