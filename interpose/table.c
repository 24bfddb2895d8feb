/* Which real fds are events, and the mappings made for them.
 *
 * Everything here is a fixed array in .bss and every update is an atomic operation, so a
 * lookup from a signal handler neither locks nor allocates, and a pass-through call (the
 * fd is not an event) costs one load. Arrays and not a hash: fds are small dense numbers,
 * and the pages of slots no fd reaches are never touched. */
#include <errno.h>
#include <stdatomic.h>

#include "interpose/interpose.h"

struct ip_event {
	atomic_int refs; /* real fds naming the event; 0: the slot is free */
	int impl_fd;
};

static atomic_int fd_slot[IP_MAX_FDS]; /* event index + 1, or 0 */
static atomic_int nevents;
static struct ip_event events[IP_MAX_EVENTS];

struct ip_map {
	_Atomic(void *) addr; /* where the program has it; NULL: the slot is free */
	void *impl_addr;      /* where the implementation mapped it (mremap may move it) */
	size_t len;
};

static struct ip_map maps[IP_MAX_MAPS];
static atomic_int nmaps; /* so munmap of memory that is not an event's costs one load */

static int slot_of(int fd)
{
	if (fd < 0 || fd >= IP_MAX_FDS)
		return -1;
	return atomic_load_explicit(&fd_slot[fd], memory_order_acquire) - 1;
}

int ip_table_impl_fd(int fd)
{
	int s = slot_of(fd);

	return s < 0 ? -1 : events[s].impl_fd;
}

int ip_table_add(int fd, int impl_fd)
{
	if (fd < 0 || fd >= IP_MAX_FDS)
		return -EMFILE;
	for (int i = 0; i < IP_MAX_EVENTS; i++) {
		int free_refs = 0;

		if (atomic_compare_exchange_strong(&events[i].refs, &free_refs, 1)) {
			events[i].impl_fd = impl_fd;
			atomic_fetch_add(&nevents, 1);
			atomic_store_explicit(&fd_slot[fd], i + 1, memory_order_release);
			return 0;
		}
	}
	return -EMFILE;
}

void ip_table_share(int fd, int from)
{
	int s = slot_of(from);

	if (s < 0 || fd < 0 || fd >= IP_MAX_FDS)
		return;
	atomic_fetch_add(&events[s].refs, 1);
	atomic_store_explicit(&fd_slot[fd], s + 1, memory_order_release);
}

int ip_table_drop(int fd)
{
	int s = slot_of(fd);

	if (s < 0)
		return -1;
	atomic_store_explicit(&fd_slot[fd], 0, memory_order_release);
	/* Read the fd before the slot can be taken again by another open. */
	int impl_fd = events[s].impl_fd;

	if (atomic_fetch_sub(&events[s].refs, 1) != 1)
		return -1;
	atomic_fetch_sub(&nevents, 1);
	return impl_fd;
}

void ip_table_each(void (*fn)(int impl_fd, void *arg), void *arg)
{
	for (int i = 0; i < IP_MAX_EVENTS; i++)
		if (atomic_load(&events[i].refs) > 0)
			fn(events[i].impl_fd, arg);
}

int ip_table_count(void)
{
	return atomic_load_explicit(&nevents, memory_order_acquire);
}

int ip_table_any(const struct pollfd *fds, nfds_t nfds)
{
	for (nfds_t i = 0; i < nfds; i++)
		if (slot_of(fds[i].fd) >= 0)
			return 1;
	return 0;
}

/* The slot is claimed by its address first and filled after: a reader that finds addr
 * before len is set sees len 0, an empty range, so lookups stay lock-free. */
int ip_map_add(void *addr, size_t len)
{
	for (int i = 0; i < IP_MAX_MAPS; i++) {
		void *none = NULL;

		if (atomic_compare_exchange_strong(&maps[i].addr, &none, addr)) {
			maps[i].impl_addr = addr;
			__atomic_store_n(&maps[i].len, len, __ATOMIC_RELEASE);
			atomic_fetch_add(&nmaps, 1);
			return 0;
		}
	}
	return -ENOMEM;
}

static int take_slot(int i, void **impl_addr, size_t *len)
{
	void *want = atomic_load(&maps[i].addr);

	if (!want)
		return 0;
	if (impl_addr)
		*impl_addr = maps[i].impl_addr;
	if (len)
		*len = __atomic_load_n(&maps[i].len, __ATOMIC_ACQUIRE);
	__atomic_store_n(&maps[i].len, 0, __ATOMIC_RELAXED);
	if (!atomic_compare_exchange_strong(&maps[i].addr, &want, NULL))
		return 0;
	atomic_fetch_sub(&nmaps, 1);
	return 1;
}

int ip_map_take(void *addr, void **impl_addr, size_t *len)
{
	if (!addr || atomic_load_explicit(&nmaps, memory_order_acquire) == 0)
		return 0;
	for (int i = 0; i < IP_MAX_MAPS; i++)
		if (atomic_load(&maps[i].addr) == addr)
			return take_slot(i, impl_addr, len);
	return 0;
}

int ip_map_in(void *addr, size_t len, void **start, size_t *mlen)
{
	uintptr_t a = (uintptr_t)addr;

	if (atomic_load_explicit(&nmaps, memory_order_acquire) == 0)
		return 0;
	for (int i = 0; i < IP_MAX_MAPS; i++) {
		uintptr_t m = (uintptr_t)atomic_load(&maps[i].addr);
		size_t l = __atomic_load_n(&maps[i].len, __ATOMIC_ACQUIRE);

		if (!m || m + l <= a || m >= a + len)
			continue;
		if (m < a || m + l > a + len)
			return -EINVAL;
		*start = (void *)m;
		*mlen = l;
		return 1;
	}
	return 0;
}

int ip_map_move(void *from, void *to)
{
	for (int i = 0; i < IP_MAX_MAPS; i++) {
		void *want = from;

		if (atomic_compare_exchange_strong(&maps[i].addr, &want, to))
			return 0;
	}
	return -ENOENT;
}
