/* The reference engine behind the vtable: one fresh engine per case, so no case sees
 * another's ids, fds or rings. */
#include <errno.h>

#include "pecs/impl.h"
#include "pecs/ref.h"

static int ref_setup(void **ctx)
{
	struct ref_engine *e = ref_engine_new(NULL);
	if (!e)
		return -errno;
	*ctx = e;
	return 0;
}

static void ref_teardown(void *ctx)
{
	ref_engine_free(ctx);
}

static int ref_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	return ref_engine_open(ctx, attr, pid, cpu, group_fd, flags);
}

static int ref_close(void *ctx, int fd)
{
	return ref_engine_close(ctx, fd);
}

static ssize_t ref_read(void *ctx, int fd, void *buf, size_t count)
{
	return ref_engine_read(ctx, fd, buf, count);
}

static ssize_t ref_write(void *ctx, int fd, const void *buf, size_t count)
{
	return ref_engine_write(ctx, fd, buf, count);
}

static int ref_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	return ref_engine_ioctl(ctx, fd, request, arg);
}

static int ref_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		    void **addr)
{
	return ref_engine_mmap(ctx, fd, length, prot, flags, offset, addr);
}

static int ref_munmap(void *ctx, void *addr, size_t length)
{
	return ref_engine_munmap(ctx, addr, length);
}

static int ref_poll(void *ctx, int fd, short events, int timeout_ms)
{
	return ref_engine_poll(ctx, fd, events, timeout_ms);
}

static int ref_host_facts(void *ctx, struct pecs_host_facts *facts)
{
	return ref_engine_host_facts(ctx, facts);
}

static int ref_inject(void *ctx, int fd, const struct pecs_sample *s)
{
	return ref_engine_inject_sample(ctx, fd, s);
}

/* Exactly what the engine implements; docs/features.txt defines each name. */
static const char *const features[] = {
	"counting", "read.group", "read.lost", "ioctl.refresh", "ioctl.set_output",
	"ioctl.pause_output", "mmap", "mmap.overwrite", "poll", "policy", "pid.other",
	"engine.inject", NULL,
};

static const struct pecs_impl ref_impl = {
	.size = sizeof(struct pecs_impl),
	.name = "ref",
	.features = features,
	.setup = ref_setup,
	.teardown = ref_teardown,
	.open = ref_open,
	.close = ref_close,
	.read = ref_read,
	.ioctl = ref_ioctl,
	.mmap = ref_mmap,
	.munmap = ref_munmap,
	.poll = ref_poll,
	.host_facts = ref_host_facts,
	.write = ref_write,
	.inject_sample = ref_inject,
};

const struct pecs_impl *pecs_adapter(void)
{
	return &ref_impl;
}
