/* The kernel's counting events, through a plugin that dereferences NULL in one entry:
 * write(), which only the write-refusal case calls. That case dies; the runner (with
 * --isolate) must report CRASH for it and carry on with the rest. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "pecs/impl.h"

static long ret(long r)
{
	return r < 0 ? -errno : r;
}

static int c_setup(void **ctx)
{
	*ctx = NULL;
	return 0;
}

static void c_teardown(void *ctx)
{
	(void)ctx;
}

static int c_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	(void)ctx;
	return (int)ret(syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags));
}

static int c_close(void *ctx, int fd)
{
	(void)ctx;
	return (int)ret(close(fd));
}

static ssize_t c_read(void *ctx, int fd, void *buf, size_t count)
{
	(void)ctx;
	return ret(read(fd, buf, count));
}

static int c_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	return (int)ret(ioctl(fd, request, arg));
}

static ssize_t c_write(void *ctx, int fd, const void *buf, size_t count)
{
	(void)ctx, (void)buf;
	/* volatile: the compiler must not reason the fault away */
	volatile size_t *nowhere = (volatile size_t *)0;
	*nowhere = count + (size_t)fd;
	return -EINVAL;
}

static int c_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		  void **addr)
{
	(void)ctx, (void)fd, (void)length, (void)prot, (void)flags, (void)offset, (void)addr;
	return -ENODEV;
}

static int c_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx, (void)addr, (void)length;
	return -EINVAL;
}

static int c_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)ctx;
	struct pollfd p = {.fd = fd, .events = events};
	int r = poll(&p, 1, timeout_ms);
	return r < 0 ? -errno : r == 0 ? 0 : p.revents;
}

static const char *const features[] = {"counting", NULL};

static const struct pecs_impl crashy_impl = {
	.size = sizeof(struct pecs_impl),
	.name = "crashy",
	.features = features,
	.setup = c_setup,
	.teardown = c_teardown,
	.open = c_open,
	.close = c_close,
	.read = c_read,
	.ioctl = c_ioctl,
	.mmap = c_mmap,
	.munmap = c_munmap,
	.poll = c_poll,
	.write = c_write,
};

const struct pecs_impl *pecs_plugin_impl(void);

const struct pecs_impl *pecs_plugin_impl(void)
{
	return &crashy_impl;
}
