/* What the ring's tests share: the kernel's metadata page offsets, a record pattern and
 * a reader's view of a mapping. */
#ifndef REF_RING_TEST_SUPPORT_H
#define REF_RING_TEST_SUPPORT_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ref/record/record.h"
#include "ref/ring/ring.h"


static long page;

static inline uint64_t rd64(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)base + off, sizeof(v));
	return v;
}

static inline uint32_t rd32(const void *base, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)base + off, sizeof(v));
	return v;
}

/* Byte offsets measured on the kernel (MMAP-PAGE-LAYOUT), not taken from our struct. */
enum {
	OFF_VERSION = 0, OFF_COMPAT = 4, OFF_LOCK = 8, OFF_INDEX = 12, OFF_OFFSET = 16,
	OFF_TIME_ENABLED = 24, OFF_TIME_RUNNING = 32, OFF_CAPS = 40, OFF_PMC_WIDTH = 48,
	OFF_SIZE = 72, OFF_DATA_HEAD = 1024, OFF_DATA_TAIL = 1032, OFF_DATA_OFFSET = 1040,
	OFF_DATA_SIZE = 1048, OFF_AUX_HEAD = 1056, OFF_AUX_SIZE = 1080,
};

/* A record of len bytes: header, then a 64-bit sequence number and a byte pattern
 * derived from it, so any misplaced or torn byte shows. */
static inline void make_record(uint8_t *rec, uint32_t type, size_t len, uint64_t seq)
{
	uint32_t w0 = type, w1 = (uint32_t)len << 16;
	size_t i;

	memcpy(rec, &w0, 4);
	memcpy(rec + 4, &w1, 4);
	if (len >= 16)
		memcpy(rec + 8, &seq, 8);
	for (i = 16; i < len; i++)
		rec[i] = (uint8_t)(seq * 31 + i);
}

struct view {
	uint8_t *base, *data;
	uint64_t size;
};

static inline struct view map_view(struct ref_ring *r, int prot)
{
	struct view v;
	void *p;

	assert_int_equal(ref_ring_map(r, prot, &p), 0);
	v.base = p;
	v.data = v.base + rd64(p, OFF_DATA_OFFSET);
	v.size = rd64(p, OFF_DATA_SIZE);
	return v;
}

static inline uint64_t view_head(const struct view *v)
{
	return __atomic_load_n((uint64_t *)(v->base + OFF_DATA_HEAD), __ATOMIC_ACQUIRE);
}

static inline void view_set_tail(const struct view *v, uint64_t tail)
{
	__atomic_store_n((uint64_t *)(v->base + OFF_DATA_TAIL), tail, __ATOMIC_RELEASE);
}

/* Copies len bytes from ring position pos, joining the two halves of a wrapped record. */
static inline void view_copy(const struct view *v, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (v->size - 1));
	size_t first = v->size - off < len ? v->size - off : len;

	memcpy(dst, v->data + off, first);
	memcpy((uint8_t *)dst + first, v->data, len - first);
}

static inline int setup(void **state)
{
	(void)state;
	page = sysconf(_SC_PAGESIZE);
	return 0;
}


#endif /* REF_RING_TEST_SUPPORT_H */
