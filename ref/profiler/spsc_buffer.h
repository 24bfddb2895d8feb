/* A lock-free byte queue for one producer and one consumer, sized once. The producer
 * may be a signal handler: push() takes no locks, makes no calls and never waits; when
 * an entry does not fit it fails and the caller counts the loss.
 *
 * Entries are {u32 len, u32 cpu, u64 time, bytes padded to 8}. head and tail only grow;
 * the producer owns head, the consumer tail; each publishes with a release store and
 * reads the other's with an acquire load.
 */
#ifndef REF_PROFILER_SPSC_BUFFER_H
#define REF_PROFILER_SPSC_BUFFER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct spsc_buffer {
	uint8_t *data;
	uint64_t cap; /* a power of two */
	_Atomic uint64_t head;
	_Atomic uint64_t tail;
};

struct spsc_entry {
	uint32_t len;
	uint32_t cpu;
	uint64_t time;
};

int ref_spsc_init(struct spsc_buffer *b, size_t cap);
void ref_spsc_destroy(struct spsc_buffer *b);
/* 0, or -ENOSPC (nothing written). Producer side only. */
int ref_spsc_push(struct spsc_buffer *b, const struct spsc_entry *e, const void *bytes);
/* Takes the next entry: its header into *e, its bytes (at most len; the rest is
 * discarded) into buf. 1 when an entry was taken, 0 when empty. Consumer side only. */
int ref_spsc_pop(struct spsc_buffer *b, struct spsc_entry *e, void *buf, size_t len);
/* Where the producer has written up to now; ref_spsc_passed() then tells the consumer
 * it has taken every entry written before that. Consumer side only. */
uint64_t ref_spsc_mark(const struct spsc_buffer *b);
int ref_spsc_passed(const struct spsc_buffer *b, uint64_t mark);
/* Empties the queue. Neither side may be running. */
void ref_spsc_clear(struct spsc_buffer *b);

#endif /* REF_PROFILER_SPSC_BUFFER_H */
