/* mmap/munmap of an event's ring, and poll/ppoll over sets that hold events.
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
#include <sys/mman.h>
#include <time.h>

#include "interpose/interpose.h"

#define SLICE_MS 5

/* glibc 2.36 declares poll's and ppoll's set write-only (access attribute), which is not
 * so: poll reads fd and events. Reading them here is right, whatever the header says. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo, const sigset_t *mask);

static void *map_event(int ifd, size_t len, int prot, int flags, off_t off)
{
	void *ctx, *out = NULL;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);
	int r = impl->mmap(ctx, ifd, len, prot, flags, off, &out);

	if (r < 0) {
		errno = -r;
		return MAP_FAILED;
	}
	if (ip_map_add(out, len) < 0) {
		impl->munmap(ctx, out, len);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return out;
}

/* The hint addr is not passed on: the seam's mmap places the ring itself. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int ifd = ip_table_impl_fd(fd);

	return ifd < 0 ? ip_real()->mmap(addr, len, prot, flags, fd, off)
		       : map_event(ifd, len, prot, flags, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int ifd = ip_table_impl_fd(fd);

	return ifd < 0 ? ip_real()->mmap64(addr, len, prot, flags, fd, off)
		       : map_event(ifd, len, prot, flags, off);
}

int munmap(void *addr, size_t len)
{
	/* Taken out first: the implementation's own munmap of the ring comes back here and
	 * must then pass through. */
	if (!ip_map_take(addr))
		return ip_real()->munmap(addr, len);
	void *ctx;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);
	int r = impl->munmap(ctx, addr, len);

	if (r < 0) {
		ip_map_add(addr, len);
		errno = -r;
		return -1;
	}
	return 0;
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
