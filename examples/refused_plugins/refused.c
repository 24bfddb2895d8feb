/* Vtables the plugin loader must refuse, one per build (-DREFUSED_<KIND>):
 *   SMALL     size below the first version's mandatory entries
 *   TRAILING  larger than the suite's struct, with a non-zero byte past it
 *   NOSYMBOL  no pecs_plugin_impl at all
 */
#include <errno.h>
#include <stdint.h>

#include "pecs/impl.h"

static int r_setup(void **ctx)
{
	*ctx = NULL;
	return 0;
}

static void r_teardown(void *ctx)
{
	(void)ctx;
}

static int r_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	(void)ctx, (void)attr, (void)pid, (void)cpu, (void)group_fd, (void)flags;
	return -ENOSYS;
}

static int r_close(void *ctx, int fd)
{
	(void)ctx, (void)fd;
	return -EBADF;
}

static ssize_t r_read(void *ctx, int fd, void *buf, size_t count)
{
	(void)ctx, (void)fd, (void)buf, (void)count;
	return -EBADF;
}

static int r_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx, (void)fd, (void)request, (void)arg;
	return -EBADF;
}

static int r_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		  void **addr)
{
	(void)ctx, (void)fd, (void)length, (void)prot, (void)flags, (void)offset, (void)addr;
	return -EBADF;
}

static int r_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx, (void)addr, (void)length;
	return -EINVAL;
}

static int r_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)ctx, (void)fd, (void)events, (void)timeout_ms;
	return -EBADF;
}

/* A newer suite's vtable: one entry this suite has never heard of. */
static struct {
	struct pecs_impl impl;
	void (*from_the_future)(void);
} vtable = {
	.impl = {
		.name = "refused",
		.setup = r_setup,
		.teardown = r_teardown,
		.open = r_open,
		.close = r_close,
		.read = r_read,
		.ioctl = r_ioctl,
		.mmap = r_mmap,
		.munmap = r_munmap,
		.poll = r_poll,
	},
};

static __attribute__((unused)) void future_entry(void)
{
}

#ifndef REFUSED_NOSYMBOL
const struct pecs_impl *pecs_plugin_impl(void);

const struct pecs_impl *pecs_plugin_impl(void)
{
#if defined(REFUSED_SMALL)
	vtable.impl.size = offsetof(struct pecs_impl, open);
#elif defined(REFUSED_TRAILING)
	vtable.impl.size = sizeof(vtable);
	vtable.from_the_future = future_entry;
#endif
	return &vtable.impl;
}
#else
/* Exported under a near-miss name, as a typo would be. */
const struct pecs_impl *pecs_plugin_vtable(void);

const struct pecs_impl *pecs_plugin_vtable(void)
{
	vtable.impl.size = sizeof(struct pecs_impl);
	(void)future_entry;
	return &vtable.impl;
}
#endif
