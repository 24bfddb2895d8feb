/* mmap/munmap/mremap of an event's ring, and poll/ppoll over sets that hold events.
 *
 * The ring's mapping keeps a perf mapping's rules whoever made it: the program's own
 * mremap, munmap and MAP_FIXED mmap that would grow or cut it get the kernel's errno, and
 * those that unmap or move it whole reach the implementation (its munmap), since a ring
 * an implementation made in this process is ordinary memory to the kernel.
 *
 * The implementation's poll answers for one event at a time (struct pecs_impl), and the
 * kernel's poll knows nothing of the implementation's rings, so a set mixing events with
 * other fds is polled in slices: the whole set by the kernel for at most SLICE_MS (an
 * event's real fd is an empty epoll instance, which the kernel never finds ready), then
 * every event by the implementation without waiting, until something is ready or the
 * timeout passes. A set of
 * one event waits in the implementation's own poll, which wakes at the watermark. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "interpose/interpose.h"

#define SLICE_MS 5

/* glibc 2.36 declares poll's and ppoll's set write-only (access attribute), which is not
 * so: poll reads fd and events. Reading them here is right, whatever the header says. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...);
int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo, const sigset_t *mask);

#define FIXED_FLAGS (MAP_FIXED | MAP_FIXED_NOREPLACE)

static size_t page_up(size_t len)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return (len + page - 1) & ~(page - 1);
}

/* Set while the implementation unmaps a mapping the program moved (mremap): its munmap
 * of the address it knows goes to where the program has it now. */
static __thread struct {
	void *from, *to;
} moved;

/* The implementation's munmap of one event mapping, taken out of the table. */
static int unmap_event(void *user, size_t len)
{
	void *ctx, *impl_addr = user;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	if (!ip_map_take(user, &impl_addr, &len))
		return 0;
	moved.from = impl_addr != user ? impl_addr : NULL;
	moved.to = user;
	int r = impl->munmap(ctx, impl_addr, len);

	moved.from = NULL;
	if (r < 0)
		ip_map_add(user, len);
	return r;
}

/* Makes room for a mapping at [addr, addr+len) as the kernel's unmap of the range would:
 * -EINVAL when it cuts an event's mapping (perf_mmap_may_split), else the events'
 * mappings it holds whole are closed by their implementation. Returns how many. */
static int clear_range(void *addr, size_t len)
{
	void *start;
	size_t mlen;
	int n = 0, in;

	if (ip_map_in(addr, len, &start, &mlen) < 0)
		return -EINVAL;
	while ((in = ip_map_in(addr, len, &start, &mlen)) == 1) {
		int r = unmap_event(start, mlen);

		if (r < 0)
			return r;
		n++;
	}
	return in < 0 ? -EINVAL : n;
}

static void *map_event(void *addr, size_t len, int prot, int flags, int ifd, off_t off)
{
	void *ctx, *out = addr, *start;
	size_t mlen;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	/* A fixed ring may replace rings whole but not cut one (the kernel's order: the
	 * range is unmapped before perf_mmap sees the file). */
	if ((flags & FIXED_FLAGS) && ip_map_in(addr, page_up(len), &start, &mlen) < 0) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	int r = impl->mmap(ctx, ifd, len, prot, flags, off, &out);

	if (r < 0) {
		errno = -r;
		return MAP_FAILED;
	}
	/* The implementation closed the rings its fixed mapping replaced. */
	while ((flags & MAP_FIXED) && ip_map_in(out, page_up(len), &start, &mlen) == 1)
		ip_map_take(start, NULL, NULL);
	if (ip_map_add(out, page_up(len)) < 0) {
		impl->munmap(ctx, out, len);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return out;
}

/* Anything mapped with MAP_FIXED over an event's mapping unmaps it first, and may not
 * cut it. */
static int fixed_over_events(void *addr, size_t len, int flags)
{
	int r = (flags & MAP_FIXED) ? clear_range(addr, page_up(len)) : 0;

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int ifd = ip_table_impl_fd(fd);

	if (ifd >= 0)
		return map_event(addr, len, prot, flags, ifd, off);
	return fixed_over_events(addr, len, flags) ? MAP_FAILED
						   : ip_real()->mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int ifd = ip_table_impl_fd(fd);

	if (ifd >= 0)
		return map_event(addr, len, prot, flags, ifd, off);
	return fixed_over_events(addr, len, flags) ? MAP_FAILED
						   : ip_real()->mmap64(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	void *start;
	size_t mlen;

	/* The implementation's own munmap of a ring comes back here: it passes through,
	 * to where the program moved the ring if it did. */
	if (moved.from && addr == moved.from)
		return ip_real()->munmap(moved.to, len);
	int in = ip_map_in(addr, page_up(len), &start, &mlen);

	if (in == 0)
		return ip_real()->munmap(addr, len);
	int exact = in == 1 && start == addr && mlen == page_up(len);
	int r = clear_range(addr, page_up(len));

	if (r < 0) {
		errno = -r;
		return -1;
	}
	/* A range wider than the rings it held: the rest is the program's. */
	return exact ? 0 : ip_real()->munmap(addr, len);
}

/* A perf mapping is VM_DONTEXPAND and refuses a split: growing it is EFAULT
 * (vma_to_resize), shrinking it EINVAL, the same length in place a no-op, and a move of
 * the whole mapping is the kernel's to make, which the implementation is not told of:
 * the table remembers where the implementation has it. */
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *to = NULL, *start;
	size_t mlen;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		to = va_arg(ap, void *);
		va_end(ap);
	}
	int in = ip_map_in(old, page_up(old_len ? old_len : 1), &start, &mlen);

	if (in == 0)
		return ip_real()->mremap(old, old_len, new_len, flags, to);
	int err = 0;

	if (page_up(new_len) > page_up(old_len))
		err = EFAULT;
	else if (page_up(new_len) < page_up(old_len) || (flags & MREMAP_DONTUNMAP))
		err = EINVAL;
	else if (!(flags & MREMAP_FIXED))
		return old;
	else if (in < 0 || start != old || mlen != page_up(old_len))
		err = EINVAL;
	if (err) {
		errno = err;
		return MAP_FAILED;
	}
	void *p = ip_real()->mremap(old, old_len, new_len, flags, to);

	if (p != MAP_FAILED)
		ip_map_move(old, p);
	return p;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Asks the implementation about each event of fds without waiting; the count of those
 * with something to report. */
static int poll_each_event(struct pollfd *fds, nfds_t nfds, const struct pecs_impl *impl,
			   void *ctx)
{
	int ready = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		int ifd = ip_table_impl_fd(fds[i].fd);

		if (ifd < 0)
			continue;
		int rv = impl->poll(ctx, ifd, fds[i].events, 0);

		fds[i].revents = (short)(rv < 0 ? POLLNVAL
						: rv & (fds[i].events | POLLERR | POLLHUP | POLLNVAL));
		ready += fds[i].revents != 0;
	}
	return ready;
}

int ip_poll_events(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	void *ctx;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	if (nfds == 1) {
		int r = impl->poll(ctx, ip_table_impl_fd(fds[0].fd), fds[0].events, timeout_ms);

		if (r < 0) {
			errno = -r;
			return -1;
		}
		fds[0].revents = (short)r;
		return r != 0;
	}
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	for (int wait_ms = 0;;) {
		int r = ip_real()->poll(fds, nfds, wait_ms);

		if (r < 0)
			return -1;
		r += poll_each_event(fds, nfds, impl, ctx);
		long long left = deadline < 0 ? SLICE_MS : deadline - now_ms();

		if (r > 0 || left <= 0)
			return r;
		wait_ms = left < SLICE_MS ? (int)left : SLICE_MS;
	}
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	if (!ip_table_any(fds, nfds))
		return ip_real()->poll(fds, nfds, timeout_ms);
	return ip_poll_events(fds, nfds, timeout_ms);
}

/* The mask is swapped around the wait rather than with it: a signal that the mask holds
 * back and that arrives just before the swap is delivered before the wait, not during. */
int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo, const sigset_t *mask)
{
	if (!ip_table_any(fds, nfds))
		return ip_real()->ppoll(fds, nfds, tmo, mask);
	int timeout_ms = tmo ? (int)(tmo->tv_sec * 1000 + (tmo->tv_nsec + 999999) / 1000000) : -1;
	sigset_t old;

	if (mask)
		pthread_sigmask(SIG_SETMASK, mask, &old);
	int r = ip_poll_events(fds, nfds, timeout_ms);
	int e = errno;

	if (mask)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return r;
}
