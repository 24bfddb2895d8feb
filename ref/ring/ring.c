/* The perf ring buffer after kernel/events/ring_buffer.c (Linux 6.12). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/abi.h"
#include "ref/ring/ring.h"
#include "ref/ring/ring_impl.h"

/* Room for the largest LOST record: header, id, lost and a full sample_id_all trailer. */
#define LOST_RECORD_MAX 128

static int is_pow2(size_t n)
{
	return n && !(n & (n - 1));
}

static void page_init(struct ref_ring *r)
{
	struct pecs_mmap_page *pg = r->pg;

	/* The engine has no PMU counter to rdpmc and publishes no clock conversion, so it
	 * offers neither cap_user_rdpmc nor cap_user_time*; it does promise the modern
	 * meaning of bit 0, which is what cap_bit0_is_deprecated says. A kernel without a
	 * PMU reports the same bits for the same reasons. */
	pg->capabilities = PECS_CAP_BIT0_IS_DEPRECATED;
	/* The kernel's size: everything before the reserved area, i.e. what it fills in. */
	pg->size = offsetof(struct pecs_mmap_page, reserved);
	pg->data_offset = (uint64_t)r->page_size;
	pg->data_size = r->data_size;
}

int ref_ring_create(struct ref_ring **out, size_t nr_pages, long page_size, int overwrite)
{
	struct ref_ring_opts o = {
		.nr_pages = nr_pages,
		.page_size = page_size,
		.overwrite = overwrite,
	};

	return ref_ring_create_opts(out, &o);
}

int ref_ring_create_opts(struct ref_ring **out, const struct ref_ring_opts *opts)
{
	struct ref_ring_opts o;
	struct ref_ring *r;
	int err;

	if (!out || !opts)
		return -EINVAL;
	o = *opts;
	if (!o.page_size)
		o.page_size = sysconf(_SC_PAGESIZE);
	if (o.page_size < (long)sizeof(struct pecs_mmap_page) || !is_pow2((size_t)o.page_size) ||
	    !o.nr_pages || (o.nr_pages > 1 && !is_pow2(o.nr_pages - 1)) ||
	    o.nr_pages > SIZE_MAX / (size_t)o.page_size)
		return -EINVAL;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->nr_pages = o.nr_pages;
	r->page_size = o.page_size;
	r->len = o.nr_pages * (size_t)o.page_size;
	r->data_size = (uint64_t)(o.nr_pages - 1) * (uint64_t)o.page_size;
	r->overwrite = !!o.overwrite;
	r->backward = !!o.backward;
	r->wakeup_events = o.watermark ? 0 : o.wakeup_events;
	r->watermark = o.watermark && o.wakeup_watermark ? o.wakeup_watermark : 0;
	if (r->watermark > r->data_size)
		r->watermark = r->data_size;
	if (!r->watermark)
		r->watermark = r->data_size / 2;
	/* A ring without data pages is paused for good: output finds no room and, unlike a
	 * full ring, counts nothing as lost. */
	r->paused = r->data_size == 0;

	r->memfd = memfd_create("pecs-ref-ring", MFD_CLOEXEC);
	if (r->memfd < 0) {
		err = -errno;
		goto err_free;
	}
	if (ftruncate(r->memfd, (off_t)r->len) < 0) {
		err = -errno;
		goto err_close;
	}
	/* The kernel allocates a ring's pages at mmap(2); populating them here likewise
	 * keeps page faults out of the writes. */
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       r->memfd, 0);
	if (r->base == MAP_FAILED) {
		err = -errno;
		goto err_close;
	}
	r->pg = (struct pecs_mmap_page *)r->base;
	r->data = r->base + r->page_size;
	page_init(r);
	*out = r;
	return 0;

err_close:
	close(r->memfd);
err_free:
	free(r);
	return err;
}

void ref_ring_hold(struct ref_ring *r)
{
	ring_lock_take(&r->lock);
	__atomic_store_n(&r->holder, ring_self(), __ATOMIC_RELAXED);
	r->room_end = 0;
}

void ref_ring_release(struct ref_ring *r)
{
	__atomic_store_n(&r->holder, (uintptr_t)0, __ATOMIC_RELAXED);
	ring_lock_drop(&r->lock);
}

void ref_ring_destroy(struct ref_ring *r)
{
	if (!r)
		return;
	/* Mappings handed out stay valid: each holds the memfd's memory on its own, as a
	 * perf mapping outlives close() of its fd. */
	munmap(r->base, r->len);
	close(r->memfd);
	free(r->scratch);
	free(r);
}

int ref_ring_map(struct ref_ring *r, int prot, void **addr)
{
	return ref_ring_map_at(r, prot, NULL, 0, addr);
}

int ref_ring_map_at(struct ref_ring *r, int prot, void *want, int fixed, void **addr)
{
	void *p;

	if (!r || !addr)
		return -EINVAL;
	p = mmap(want, r->len, prot, MAP_SHARED | (fixed & (MAP_FIXED | MAP_FIXED_NOREPLACE)),
		 r->memfd, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* perf_mmap() marks its vma VM_DONTCOPY: a child of fork(2) has no ring. Without
	 * the mark the mapping goes, rather than a child keeping what the kernel's never
	 * has. */
	if (madvise(p, r->len, MADV_DONTFORK)) {
		int err = -errno;

		munmap(p, r->len);
		return err;
	}
	*addr = p;
	return 0;
}

int ref_ring_unmap(struct ref_ring *r, void *addr)
{
	if (!r || !addr)
		return -EINVAL;
	return munmap(addr, r->len) ? -errno : 0;
}

size_t ref_ring_len(const struct ref_ring *r)
{
	return r->len;
}

uint64_t ref_ring_data_size(const struct ref_ring *r)
{
	return r->data_size;
}

/* Copies len bytes into the data area at byte position pos, splitting the copy where it
 * passes the end of the area: records run on from offset 0 with no padding. A record
 * longer than an overwrite ring laps it, keeping only its tail, as the kernel's page
 * walk in __output_copy() does. */
static void data_copy(struct ref_ring *r, uint64_t pos, const void *src, size_t len)
{
	const uint8_t *p = src;

	while (len) {
		size_t off = (size_t)(pos & (r->data_size - 1));
		size_t n = r->data_size - off;

		if (n > len)
			n = len;
		memcpy(r->data + off, p, n);
		p += n;
		pos += n;
		len -= n;
	}
}

static size_t lost_encode(struct ref_ring *r, const void *cookie, uint8_t *buf)
{
	ssize_t n;

	if (r->lost_fn) {
		n = r->lost_fn(r->lost_arg, cookie, r->lost_pending, buf, LOST_RECORD_MAX);
		if (n >= 24 && n <= LOST_RECORD_MAX && !(n & 7))
			return (size_t)n;
	}
	{
		/* Without an encoder (or if it fails) the count still reaches the reader. */
		uint32_t hdr[2] = { PECS_RECORD_LOST, 24u << 16 };
		uint64_t body[2] = { 0, r->lost_pending };

		memcpy(buf, hdr, sizeof(hdr));
		memcpy(buf + 8, body, sizeof(body));
		return 24;
	}
}

static int record_is_sample(const void *rec)
{
	uint32_t type;

	memcpy(&type, rec, sizeof(type));
	return type == PECS_RECORD_SAMPLE;
}

/* Where a record's bytes come from: a finished record, or an encoder that writes it
 * straight into the data area when it lies there in one piece. */
struct ring_src {
	const void *rec;
	ref_ring_encode_fn encode;
	void *ctx;
};

/* Puts the record at pos and says whether it is a sample. An encoder writes in place
 * unless the record wraps (or laps an overwrite ring); then it goes through a buffer
 * of the largest record's size, made at the first wrap and kept. */
static int src_copy(struct ref_ring *r, uint64_t pos, const struct ring_src *src, size_t len,
		    int *sample)
{
	size_t off = (size_t)(pos & (r->data_size - 1));
	int err;

	if (!src->encode) {
		if (len <= r->data_size - off)
			memcpy(r->data + off, src->rec, len);
		else
			data_copy(r, pos, src->rec, len);
		*sample = record_is_sample(src->rec);
		return 0;
	}
	if (len <= r->data_size - off) {
		err = src->encode(src->ctx, r->data + off, len);
		*sample = !err && record_is_sample(r->data + off);
		return err;
	}
	if (!r->scratch) {
		r->scratch = malloc(UINT16_MAX + 1);
		if (!r->scratch)
			return -ENOMEM;
	}
	err = src->encode(src->ctx, r->scratch, len);
	if (err)
		return err;
	data_copy(r, pos, r->scratch, len);
	*sample = record_is_sample(r->scratch);
	return 0;
}

/* A record that cannot be written: output paused (counted lost) or no data pages. */
static int ring_refuse(struct ref_ring *r)
{
	if (!r->data_size)
		return -ENODATA;
	r->lost_pending++;
	return -ENOSPC;
}

/* Any write: paused output, a LOST record first when records were lost, backward rings,
 * a record that wraps. Kept out of line: inlined into the usual write, its LOST buffer
 * and stack protector were that write's frame, a fifth of a 64 B record's time. */
static __attribute__((noinline, cold)) int ring_write_general(struct ref_ring *r, const struct ring_src *src, size_t len,
			      const void *cookie)
{
	uint8_t lost_rec[LOST_RECORD_MAX];
	size_t lost_len = 0;
	uint64_t tail, total, pos, head, fwd_head;
	int err, sample;

	if (r->paused)
		return ring_refuse(r);
	if (r->lost_pending)
		lost_len = lost_encode(r, cookie, lost_rec);
	total = lost_len + len;

	/* A: the tail load comes before any data store (acquire stands in for the
	 * kernel's control dependency); pairs with the reader's tail store. */
	tail = __atomic_load_n(&r->pg->data_tail, __ATOMIC_ACQUIRE);
	if (!r->overwrite) {
		uint64_t space = r->backward ? circ_space(tail, r->head, r->data_size)
					     : circ_space(r->head, tail, r->data_size);

		if (space < total) {
			r->lost_pending++;
			return -ENOSPC;
		}
	}
	if (r->backward) {
		head = r->head - total;
		pos = head;
		fwd_head = -head;
	} else {
		pos = r->head;
		head = r->head + total;
		fwd_head = head;
	}
	/* An encoder that fails leaves head, and so what a reader sees, as it was. */
	if (lost_len)
		data_copy(r, pos, lost_rec, lost_len);
	err = src_copy(r, pos + lost_len, src, len, &sample);
	if (err)
		return err;
	if (lost_len)
		r->lost_pending = 0;
	ring_commit(r, head, fwd_head, sample);
	return 0;
}

/* The usual write apart from the general one: forward, no LOST record owed, the record
 * in one piece. A 64-byte record's bookkeeping must cost about what its copy does. */
static inline int ring_write_locked(struct ref_ring *r, const struct ring_src *src,
				    size_t len, const void *cookie)
{
	uint64_t head = r->head, tail;
	size_t off = (size_t)(head & (r->data_size - 1));
	uint8_t *at = r->data + off;
	int err;

	if (r->paused || r->lost_pending || r->backward || len > r->data_size - off)
		return ring_write_general(r, src, len, cookie);
	/* A: as in ring_write_general(). */
	tail = __atomic_load_n(&r->pg->data_tail, __ATOMIC_ACQUIRE);
	if (!r->overwrite && circ_space(head, tail, r->data_size) < len) {
		r->lost_pending++;
		return -ENOSPC;
	}
	if (src->encode) {
		err = src->encode(src->ctx, at, len);
		if (err)
			return err;
	} else {
		memcpy(at, src->rec, len);
	}
	ring_commit(r, head + len, head + len, record_is_sample(at));
	return 0;
}

int ref_ring_write_with(struct ref_ring *r, const void *rec, size_t len, const void *cookie)
{
	struct ring_src src = { .rec = rec };
	uint16_t hsize;
	int ret, taken;

	if (!r || !rec || len < sizeof(struct pecs_record_header) || len & 7 || len > UINT16_MAX)
		return -EINVAL;
	memcpy(&hsize, (const uint8_t *)rec + 6, sizeof(hsize));
	if (hsize != len)
		return -EINVAL;
	taken = ring_lock(r);
	ret = ring_write_locked(r, &src, len, cookie);
	ring_unlock(r, taken);
	return ret;
}

int ref_ring_write_encoded(struct ref_ring *r, size_t len, ref_ring_encode_fn encode,
			   void *ctx, const void *cookie)
{
	struct ring_src src = { .encode = encode, .ctx = ctx };
	int ret, taken;

	if (!r || !encode || len < sizeof(struct pecs_record_header) || len & 7 ||
	    len > UINT16_MAX)
		return -EINVAL;
	taken = ring_lock(r);
	ret = ring_write_locked(r, &src, len, cookie);
	ring_unlock(r, taken);
	return ret;
}

int ref_ring_write(struct ref_ring *r, const void *rec, size_t len)
{
	return ref_ring_write_with(r, rec, len, NULL);
}

void ref_ring_set_lost_fn(struct ref_ring *r, ref_ring_lost_fn fn, void *arg)
{
	int taken = ring_lock(r);

	r->lost_fn = fn;
	r->lost_arg = arg;
	ring_unlock(r, taken);
}

void ref_ring_set_wakeup_fn(struct ref_ring *r, void (*fn)(void *arg), void *arg)
{
	int taken = ring_lock(r);

	r->wakeup_fn = fn;
	r->wakeup_arg = arg;
	ring_unlock(r, taken);
}

void ref_ring_count_lost(struct ref_ring *r, uint64_t nr)
{
	int taken = ring_lock(r);

	if (r->data_size)
		r->lost_pending += nr;
	ring_unlock(r, taken);
}

uint64_t ref_ring_pending_lost(const struct ref_ring *r)
{
	uint64_t v;

	int taken = ring_lock((struct ref_ring *)r);

	v = r->lost_pending;
	ring_unlock((struct ref_ring *)r, taken);
	return v;
}

void ref_ring_set_paused(struct ref_ring *r, int paused)
{
	int taken = ring_lock(r);

	/* rb_toggle_paused(): a ring without data pages cannot be resumed. */
	r->paused = paused || !r->data_size;
	ring_unlock(r, taken);
}

int ref_ring_poll(struct ref_ring *r)
{
	return atomic_exchange(&r->poll, 0);
}

int ref_ring_readable(const struct ref_ring *r)
{
	return atomic_load(&((struct ref_ring *)r)->poll) != 0;
}

/* The writer half of the page's seqlock: readers retry while lock is odd or changed.
 * The kernel orders the odd lock before the field stores with a barrier; here each field
 * store is a release (userpage_set()), which orders it after the odd lock just as well and
 * is a protocol ThreadSanitizer can follow (gcc refuses thread fences under it). A reader
 * that loads a field with acquire and sees a new value is then bound to see lock moved. */
static void userpage_begin(struct ref_ring *r)
{
	uint32_t seq = __atomic_load_n(&r->pg->lock, __ATOMIC_RELAXED);

	__atomic_store_n(&r->pg->lock, seq + 1, __ATOMIC_RELAXED);
}

#define userpage_set(field, v) __atomic_store_n(&r->pg->field, (v), __ATOMIC_RELEASE)

static void userpage_end(struct ref_ring *r)
{
	uint32_t seq = __atomic_load_n(&r->pg->lock, __ATOMIC_RELAXED);

	__atomic_store_n(&r->pg->lock, seq + 1, __ATOMIC_RELEASE);
}

void ref_ring_update_times(struct ref_ring *r, uint64_t enabled, uint64_t running)
{
	int taken = ring_lock(r);

	userpage_begin(r);
	userpage_set(time_enabled, enabled);
	userpage_set(time_running, running);
	userpage_end(r);
	ring_unlock(r, taken);
}

void ref_ring_update_userpage(struct ref_ring *r, int64_t count, uint64_t enabled,
			      uint64_t running)
{
	int taken = ring_lock(r);

	userpage_begin(r);
	/* index stays 0 (nothing to rdpmc), so offset is the whole count. */
	userpage_set(offset, count);
	userpage_set(time_enabled, enabled);
	userpage_set(time_running, running);
	userpage_end(r);
	ring_unlock(r, taken);
}

uint64_t ref_ring_head(const struct ref_ring *r)
{
	return __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
}

uint64_t ref_ring_tail(const struct ref_ring *r)
{
	return __atomic_load_n(&r->pg->data_tail, __ATOMIC_ACQUIRE);
}
