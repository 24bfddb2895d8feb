/* The reference engine's perf ring buffer: a metadata page (struct pecs_mmap_page at the
 * kernel's offsets) followed by 2^n data pages, kept in a memfd so that every mmap(2) the
 * engine hands out shares the same bytes, as mappings of one perf fd do on Linux.
 *
 * The writer follows kernel/events/ring_buffer.c: load data_tail (acquire), copy the
 * record (split at the end of the data area, no padding), then store data_head (release).
 * data_head is a free-running 64-bit byte count, never masked in the page.
 *
 * Functions return 0 or a negative errno unless said otherwise. Writers are serialized
 * by a lock inside the ring (events sharing a ring via SET_OUTPUT may write from several
 * threads); readers use the mapping alone, lock-free, as perf readers do.
 *
 * Additions to the brief's interface (every original name keeps its meaning):
 *  - ref_ring_create_opts(): more options (write_backward, wakeup accounting).
 *  - ref_ring_set_lost_fn()/ref_ring_write_with(): the engine encodes the LOST record
 *    (it knows the id and the sample_id_all trailer); the ring decides when it goes out.
 *  - ref_ring_write_encoded(): the record is encoded in place in the data area.
 *  - ref_ring_write() returns -ENODATA when the ring has no data pages (1-page mapping):
 *    the record is dropped and NOT counted as lost, as on Linux.
 *  - ref_ring_poll()/ref_ring_readable(): EPOLLIN once per wakeup, kernel rules;
 *    ref_ring_set_wakeup_fn(): told on each wakeup (to wake a poller or raise SIGIO).
 *  - ref_ring_update_userpage(): also sets `offset` (the count), as the kernel does.
 *  - ref_ring_head()/ref_ring_tail()/ref_ring_data_size()/ref_ring_pending_lost().
 *  - ref_ring_count_lost(): losses that happened before the ring (a profiler's buffer).
 */
#ifndef REF_RING_H
#define REF_RING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ref_ring;

/* Built by the engine this ring is linked into: no size, fields are added. */
struct ref_ring_opts {
	size_t nr_pages;         /* 1 + 2^n, the mapping length in pages */
	long page_size;          /* 0: sysconf(_SC_PAGESIZE) */
	int overwrite;           /* read-only mapping: data_tail is ignored */
	int backward;            /* attr.write_backward: head counts down from 0 */
	uint32_t wakeup_events;  /* attr.wakeup_events: a wakeup every N samples; 0: none */
	int watermark;           /* attr.watermark */
	uint32_t wakeup_watermark; /* attr.wakeup_watermark in bytes; 0: half the data area */
};

int ref_ring_create(struct ref_ring **out, size_t nr_pages /* 1+2^n */, long page_size,
		    int overwrite);
int ref_ring_create_opts(struct ref_ring **out, const struct ref_ring_opts *opts);
void ref_ring_destroy(struct ref_ring *r);

/* A new MAP_SHARED mapping of the whole ring (metadata page and data), prot as given.
 * The ring does not judge prot or length: the engine applies mmap(2)'s rules (EPERM for
 * PROT_EXEC, overwrite = mapping without PROT_WRITE, decided at the first mapping). */
int ref_ring_map(struct ref_ring *r, int prot, void **addr);
/* The same at want when fixed holds MAP_FIXED or MAP_FIXED_NOREPLACE (mmap(2)'s answers:
 * EINVAL unaligned, EEXIST taken), else want is a hint. Either way the mapping is not
 * inherited across fork(2), as perf_mmap()'s VM_DONTCOPY. */
int ref_ring_map_at(struct ref_ring *r, int prot, void *want, int fixed, void **addr);
int ref_ring_unmap(struct ref_ring *r, void *addr);
/* Bytes of a full mapping: nr_pages * page_size. */
size_t ref_ring_len(const struct ref_ring *r);
uint64_t ref_ring_data_size(const struct ref_ring *r);

/* Appends one record (len a multiple of 8, the header's size field equal to len).
 * 0 written; -ENOSPC did not fit or output is paused: counted as lost; -ENODATA no data
 * pages: dropped, not counted; -EINVAL bad length. */
int ref_ring_write(struct ref_ring *r, const void *rec, size_t len);

/* Encodes the PERF_RECORD_LOST that goes out before the next record once records have
 * been lost. cookie is what the writer passed to ref_ring_write_with() (NULL from
 * ref_ring_write()), so the record can carry the writing event's id and trailer.
 * Returns the record's length or a negative errno. Without a callback the ring writes
 * a bare 24-byte record with id 0. The callback runs with the ring's lock held: it must
 * not call back into the ring. */
typedef ssize_t (*ref_ring_lost_fn)(void *arg, const void *cookie, uint64_t lost, void *out,
				    size_t cap);
void ref_ring_set_lost_fn(struct ref_ring *r, ref_ring_lost_fn fn, void *arg);
int ref_ring_write_with(struct ref_ring *r, const void *rec, size_t len, const void *cookie);
/* As ref_ring_write_with(), but the record of len bytes is written by encode(ctx, out,
 * len) straight into the data area (into a buffer, then copied, when it would wrap), so
 * a record is built once, where the reader finds it. encode returns 0 once out holds the
 * whole record with its header's size equal to len, or a negative errno, which is
 * returned and leaves the ring unchanged. It runs under the ring's lock. */
typedef int (*ref_ring_encode_fn)(void *ctx, void *out, size_t len);
int ref_ring_write_encoded(struct ref_ring *r, size_t len, ref_ring_encode_fn encode,
			   void *ctx, const void *cookie);

/* For the thread holding the ring (ref_ring_hold()): the room at the head where
 * records can be written one after another, in one piece, without the general write's
 * checks per record: *room bytes up to the end of the data area and the reader's tail,
 * at least min. NULL when the next record needs the general write (output paused, a
 * LOST record owed, a backward ring, the record would wrap, or too little room, which
 * that write then counts); nothing is counted or moved. The tail is read again only
 * when the room known from the last reading is too small: it only grows while a
 * reader consumes. The holder writes samples there (each header's size set), then
 * ref_ring_advance() over the bytes written, before any other call on the ring. */
void *ref_ring_window(struct ref_ring *r, size_t min, size_t *room);
/* The samples in the len bytes at the head are written: each is accounted (wakeups)
 * and published as a write of it would be. */
void ref_ring_advance(struct ref_ring *r, size_t len);

/* Lost records not yet reported by a LOST record in the ring: the ring's own refusals
 * (no room, paused) and those counted in. What read()'s PECS_FORMAT_LOST reports is
 * the event's count, not the ring's, as the kernel keeps lost_samples per event. */
uint64_t ref_ring_pending_lost(const struct ref_ring *r);
/* nr records lost before they reached the ring (a profiler's own buffer was full): the
 * next LOST record reports them with the ring's own, as rb->lost does. Nothing is
 * counted in a ring without data pages. */
void ref_ring_count_lost(struct ref_ring *r, uint64_t nr);

/* PERF_EVENT_IOC_PAUSE_OUTPUT: while paused every record is counted lost. */
void ref_ring_set_paused(struct ref_ring *r, int paused);

/* poll(2): ref_ring_poll() returns EPOLLIN|EPOLLRDNORM once per wakeup (and clears it), else 0;
 * ref_ring_readable() tells whether a wakeup is pending without clearing it. */
int ref_ring_poll(struct ref_ring *r);
int ref_ring_readable(const struct ref_ring *r);
/* Called (with the ring's write lock held: do not write to the ring from it) each time
 * a record makes a wakeup pending. */
void ref_ring_set_wakeup_fn(struct ref_ring *r, void (*fn)(void *arg), void *arg);

/* Holds the write lock across several writes (a batch of samples) by one thread, whose
 * writes and other calls on the ring then skip the lock (no atomic operation each);
 * other threads wait until ref_ring_release(). Not nested: one hold per ring at a time. */
void ref_ring_hold(struct ref_ring *r);
void ref_ring_release(struct ref_ring *r);

/* Seqlock updates of the metadata page: lock is odd while they run, +2 each; each field
 * is stored with release, so a reader loads lock (acquire), the fields (acquire), then
 * lock again, and retries if it was odd or moved. A new ring has lock 0; the kernel
 * updates the page once when it is first mapped, so the engine should call one of these
 * after its first ref_ring_map(). */
void ref_ring_update_times(struct ref_ring *r, uint64_t enabled, uint64_t running);
void ref_ring_update_userpage(struct ref_ring *r, int64_t count, uint64_t enabled,
			      uint64_t running);

uint64_t ref_ring_head(const struct ref_ring *r);
uint64_t ref_ring_tail(const struct ref_ring *r);

#endif /* REF_RING_H */
