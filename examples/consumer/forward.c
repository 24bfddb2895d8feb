/* An implementation under test, as another project would write one: a plugin that hands
 * every call to this host's kernel. It claims only part of what the kernel does (no
 * sampling, no ring), so the suite counts those cases UNSUPPORTED, and it has no write
 * entry: the one case that needs write(2) fails, which forward.txt lists with its reason.
 * Entries return a value or -errno, the seam's convention. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pecs/impl.h"

/* -1/errno, as libc returns it, to the seam's -errno. */
static long neg_errno(long r)
{
	return r == -1 ? -errno : r;
}

static int fwd_setup(void **ctx)
{
	*ctx = NULL; /* each event lives in the kernel; nothing to keep per case */
	return 0;
}

static void fwd_teardown(void *ctx)
{
	(void)ctx;
}

static int fwd_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	(void)ctx;
	return (int)neg_errno(syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags));
}

static int fwd_close(void *ctx, int fd)
{
	(void)ctx;
	return (int)neg_errno(close(fd));
}

static ssize_t fwd_read(void *ctx, int fd, void *buf, size_t count)
{
	(void)ctx;
	return neg_errno(read(fd, buf, count));
}

static int fwd_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	return (int)neg_errno(ioctl(fd, request, arg));
}

/* Not claimed (no "mmap" feature), but mandatory: the kernel's answer is still the right one
 * for the cases that map without needing the ring. */
static int fwd_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		    void **addr)
{
	(void)ctx;
	void *p = mmap(NULL, length, prot, flags, fd, offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

static int fwd_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	return (int)neg_errno(munmap(addr, length));
}

static int fwd_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)ctx;
	struct pollfd pfd = {.fd = fd, .events = events};
	int n = poll(&pfd, 1, timeout_ms);
	if (n < 0)
		return -errno;
	return n ? pfd.revents : 0;
}

static const char *const claimed[] = {"counting", "read.group", "ioctl.refresh", "poll", NULL};

const struct pecs_impl *pecs_plugin_impl(void)
{
	static const struct pecs_impl impl = {
		.size = sizeof(struct pecs_impl),
		.name = "forward",
		.features = claimed,
		.setup = fwd_setup,
		.teardown = fwd_teardown,
		.open = fwd_open,
		.close = fwd_close,
		.read = fwd_read,
		.ioctl = fwd_ioctl,
		.mmap = fwd_mmap,
		.munmap = fwd_munmap,
		.poll = fwd_poll,
	};
	return &impl;
}
