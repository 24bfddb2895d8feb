/* The metadata page (struct perf_event_mmap_page) of a fresh software event.
 *
 * Fields are read at the offsets the mmap_page vectors give (source: the UAPI header),
 * not through the struct in abi.h, so a layout slip on either side shows up. Values come
 * from perf_event_init_userpage()/perf_event_update_userpage() and were measured here;
 * host-dependent words (capabilities' time bits) are only checked for consistency.
 */
#include <string.h>
#include <sys/mman.h>

#include "pecs/vectors.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define DATA_PAGES 2

/* The vector for field `name`, or NULL. */
static const struct pecs_vec_layout *field(const char *name)
{
	for (size_t i = 0; i < pecs_vec_mmap_page_count; i++)
		if (pecs_vec_mmap_page[i].size && !strcmp(pecs_vec_mmap_page[i].name, name))
			return &pecs_vec_mmap_page[i];
	return NULL;
}

/* Reads `name` from the page as the unsigned integer of the vector's size. */
static int get(const void *page, const char *name, uint64_t *v)
{
	const struct pecs_vec_layout *f = field(name);
	uint8_t b[8] = {0};

	if (!f || f->size > 8 || f->offset + f->size > 4096)
		return -ENOENT;
	memcpy(b, (const uint8_t *)page + f->offset, f->size);
	memcpy(v, b, 8); /* little-endian: the low bytes are the field */
	return 0;
}

#define GET(t, page, name)                                                           \
	({                                                                           \
		uint64_t v_ = 0;                                                     \
		PECS_CHECK((t), get((page), (name), &v_) == 0,                       \
			   "no usable mmap_page vector for %s", (name));             \
		v_;                                                                  \
	})

static int map_fresh(struct pecs_t *t, struct pecs_ring *r)
{
	struct pecs_attr a;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	fd = pecs_open(t, &a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	return pecs_ring_map(t, fd, DATA_PAGES, PROT_READ | PROT_WRITE, r);
}

PECS_CASE("Required.Mmap.Page.FreshValuesAtVectorOffsets", "mmap",
	  "MMAP-PAGE-LAYOUT,MMAP-PAGE-FRESH")
{
	const long page = pecs_host(t)->page_size;
	struct pecs_ring r;

	PECS_CHECK_OK(t, map_fresh(t, &r));
	PECS_CHECK_EQ(t, GET(t, r.meta, "version"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "compat_version"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "lock") % 2, 0);
	/* No hardware counter behind a software event: nothing for rdpmc. */
	PECS_CHECK_EQ(t, GET(t, r.meta, "index"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "data_offset"), page);
	PECS_CHECK_EQ(t, GET(t, r.meta, "data_size"), DATA_PAGES * page);
	PECS_CHECK_EQ(t, GET(t, r.meta, "data_head"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "data_tail"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "aux_head"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "aux_tail"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "aux_offset"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "aux_size"), 0);
	/* Never enabled. */
	PECS_CHECK_EQ(t, GET(t, r.meta, "time_enabled"), 0);
	PECS_CHECK_EQ(t, GET(t, r.meta, "time_running"), 0);
}

/* `size` says how much of the page before __reserved the writer fills in. */
PECS_CASE("Required.Mmap.Page.SizeCoversKnownFields", "mmap", "MMAP-PAGE-SIZE")
{
	const struct pecs_vec_layout *res = field("__reserved"), *head = field("data_head");
	struct pecs_ring r;
	uint64_t size;

	PECS_CHECK(t, res && head, "no mmap_page vectors for __reserved and data_head");
	PECS_CHECK_OK(t, map_fresh(t, &r));
	size = GET(t, r.meta, "size");
	PECS_CHECK(t, size >= res->offset && size < head->offset && size % 8 == 0,
		   "size %llu, expected at least %u (the fields up to __reserved)",
		   (unsigned long long)size, res->offset);
}

PECS_CASE("Required.Mmap.Page.ReservedBytesZero", "mmap", "MMAP-PAGE-RESERVED-ZERO")
{
	static const char *const reserved[] = {"__reserved_1", "__reserved"};
	static const uint8_t zero[1024];
	struct pecs_ring r;

	PECS_CHECK_OK(t, map_fresh(t, &r));
	for (size_t i = 0; i < 2; i++) {
		const struct pecs_vec_layout *f = field(reserved[i]);

		PECS_CHECK(t, f != NULL && f->size <= sizeof(zero), "no mmap_page vector for %s",
			   reserved[i]);
		PECS_CHECK_MEM(t, (const uint8_t *)r.meta + f->offset, zero, f->size);
	}
}

/* capabilities: the exact word is the host's (time bits depend on the clocksource), but
 * its bits must agree with each other and with a software event. */
PECS_CASE("Required.Mmap.Page.CapabilitiesConsistent", "mmap", "MMAP-PAGE-CAPS")
{
	struct pecs_ring r;
	uint64_t caps;

	PECS_CHECK_OK(t, map_fresh(t, &r));
	caps = GET(t, r.meta, "capabilities");
	PECS_CHECK(t, !(caps & ~0x3full), "reserved capability bits set: 0x%llx",
		   (unsigned long long)caps);
	PECS_CHECK(t, !(caps & PECS_CAP_BIT0), "cap_bit0 is set (it is always 0): 0x%llx",
		   (unsigned long long)caps);
	PECS_CHECK(t, caps & PECS_CAP_BIT0_IS_DEPRECATED,
		   "cap_bit0_is_deprecated is clear: 0x%llx", (unsigned long long)caps);
	PECS_CHECK(t, !(caps & PECS_CAP_USER_RDPMC),
		   "cap_user_rdpmc set for a software event: 0x%llx", (unsigned long long)caps);
	if (caps & (PECS_CAP_USER_TIME_ZERO | PECS_CAP_USER_TIME_SHORT))
		PECS_CHECK(t, caps & PECS_CAP_USER_TIME,
			   "time_zero/time_short without cap_user_time: 0x%llx",
			   (unsigned long long)caps);
	if (caps & PECS_CAP_USER_TIME)
		PECS_CHECK(t, GET(t, r.meta, "time_mult") != 0,
			   "cap_user_time with time_mult 0");
}

/* The seqlock: readers retry while it is odd; after an enable/disable round it is even
 * again and the times it guards have moved. */
PECS_CASE("Required.Mmap.Page.LockEvenAfterUpdates", "mmap,counting", "MMAP-PAGE-LOCK")
{
	struct pecs_ring r;
	struct pecs_attr a;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, DATA_PAGES, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(1000 * 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, GET(t, r.meta, "lock") % 2, 0);
	PECS_CHECK(t, GET(t, r.meta, "time_enabled") > 0, "time_enabled still 0 after running");
}
