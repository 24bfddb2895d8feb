/* A plugin that forwards every call to this kernel, with one regression on demand: with
 * PECS_BREAK_RESET=1 in its environment, PERF_EVENT_IOC_RESET answers EINVAL. Two runs of
 * it, with and without, are what `pecs_harness diff` is for: the diff must name the cases
 * that reset a counter, and nothing else. With PECS_HANG_FACTS=1 its host_facts never
 * returns, as an emulator whose first perf_event_open blocks: the runner's --timeout must
 * end the startup. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pecs/impl.h"

static long ret(long r)
{
	return r < 0 ? -errno : r;
}

static int rb_setup(void **ctx)
{
	*ctx = NULL;
	return 0;
}

static void rb_teardown(void *ctx)
{
	(void)ctx;
}

static int rb_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		   unsigned long flags)
{
	(void)ctx;
	return (int)ret(syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags));
}

static int rb_close(void *ctx, int fd)
{
	(void)ctx;
	return (int)ret(close(fd));
}

static ssize_t rb_read(void *ctx, int fd, void *buf, size_t count)
{
	(void)ctx;
	return ret(read(fd, buf, count));
}

static ssize_t rb_write(void *ctx, int fd, const void *buf, size_t count)
{
	(void)ctx;
	return ret(write(fd, buf, count));
}

static int rb_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	const char *broken = getenv("PECS_BREAK_RESET");
	/* The kernel ignores the upper half of the request; so does the break. */
	if (broken && strcmp(broken, "1") == 0 && (unsigned)request == PECS_IOC_RESET)
		return -EINVAL;
	return (int)ret(ioctl(fd, request, arg));
}

static int rb_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		   void **addr)
{
	(void)ctx;
	void *p = mmap(NULL, length, prot, flags, fd, offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

static int rb_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	return (int)ret(munmap(addr, length));
}

static int rb_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)ctx;
	struct pollfd p = {.fd = fd, .events = events};
	int r = poll(&p, 1, timeout_ms);
	return r < 0 ? -errno : r == 0 ? 0 : p.revents;
}

static int rb_host_facts(void *ctx, struct pecs_host_facts *facts)
{
	(void)ctx;
	(void)facts; /* the suite's defaults read this host, which is the one forwarded to */
	const char *hang = getenv("PECS_HANG_FACTS");
	while (hang && strcmp(hang, "1") == 0)
		pause();
	return 0;
}

static const char *const features[] = {
	"counting", "read.group", "read.lost", "ioctl.refresh", "ioctl.set_output",
	"ioctl.pause_output", "mmap", "mmap.overwrite", "poll", "sampling", "policy",
	"pid.other", NULL,
};

static const struct pecs_impl reset_break = {
	.size = sizeof(struct pecs_impl),
	.name = "reset_break",
	.features = features,
	.setup = rb_setup,
	.teardown = rb_teardown,
	.open = rb_open,
	.close = rb_close,
	.read = rb_read,
	.ioctl = rb_ioctl,
	.mmap = rb_mmap,
	.munmap = rb_munmap,
	.poll = rb_poll,
	.host_facts = rb_host_facts,
	.write = rb_write,
};

const struct pecs_impl *pecs_plugin_impl(void)
{
	return &reset_break;
}
