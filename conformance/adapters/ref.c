/* The reference engine behind the vtable: one fresh engine per case, so no case sees
 * another's ids, fds or rings.
 *
 * Each sampling event gets a profiler session, as Starnix gives each one a
 * fuchsia.cpu.profiler session: the live sampler (timer signals and libunwind), unless the
 * case installs a scripted stream with set_profiler first. The choice waits until the
 * event is first enabled, since set_profiler comes after open. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "pecs/impl.h"
#include "pecs/profiler/attach.h"
#include "pecs/ref.h"

#define MAX_PENDING 64

struct ref_ctx {
	struct ref_engine *engine;
	int pending[MAX_PENDING]; /* sampling fds with no profiler chosen yet */
	size_t npending;
};

static int ref_setup(void **ctx)
{
	struct ref_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->engine = ref_engine_new(NULL);
	if (!c->engine) {
		int err = errno;
		free(c);
		return -err;
	}
	*ctx = c;
	return 0;
}

static void ref_teardown(void *ctx)
{
	struct ref_ctx *c = ctx;
	ref_engine_free(c->engine);
	free(c);
}

static struct ref_engine *E(void *ctx)
{
	return ((struct ref_ctx *)ctx)->engine;
}

static int take_pending(struct ref_ctx *c, int fd)
{
	for (size_t i = 0; i < c->npending; i++) {
		if (c->pending[i] == fd) {
			c->pending[i] = c->pending[--c->npending];
			return 1;
		}
	}
	return 0;
}

/* Gives every sampling event still without a profiler the live sampler. */
static void attach_live_samplers(struct ref_ctx *c)
{
	while (c->npending > 0) {
		int fd = c->pending[--c->npending];
		/* A failure leaves the event without samples, which the cases then see. */
		ref_profiler_attach_sampler(c->engine, fd, NULL, PECS_STREAM_FXT);
	}
}

static int ref_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	struct ref_ctx *c = ctx;
	int fd = ref_engine_open(c->engine, attr, pid, cpu, group_fd, flags);
	if (fd >= 0 && attr->sample_period != 0 && c->npending < MAX_PENDING) {
		c->pending[c->npending++] = fd;
		if (!(attr->flags & PECS_ATTR_DISABLED))
			attach_live_samplers(c);
	}
	return fd;
}

static int ref_close(void *ctx, int fd)
{
	int r = ref_engine_close(E(ctx), fd);
	if (r == 0)
		take_pending(ctx, fd);
	return r;
}

static ssize_t ref_read(void *ctx, int fd, void *buf, size_t count)
{
	return ref_engine_read(E(ctx), fd, buf, count);
}

static ssize_t ref_write(void *ctx, int fd, const void *buf, size_t count)
{
	return ref_engine_write(E(ctx), fd, buf, count);
}

static int ref_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	if (request == PECS_IOC_ENABLE || request == PECS_IOC_REFRESH)
		attach_live_samplers(ctx);
	return ref_engine_ioctl(E(ctx), fd, request, arg);
}

static int ref_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		    void **addr)
{
	return ref_engine_mmap(E(ctx), fd, length, prot, flags, offset, addr);
}

static int ref_munmap(void *ctx, void *addr, size_t length)
{
	return ref_engine_munmap(E(ctx), addr, length);
}

/* poll(2) reports an fd that is not open in revents, not as an error. */
static int ref_poll(void *ctx, int fd, short events, int timeout_ms)
{
	int r = ref_engine_poll(E(ctx), fd, events, timeout_ms);
	return r == -EBADF ? POLLNVAL : r;
}

static int ref_host_facts(void *ctx, struct pecs_host_facts *facts)
{
	return ref_engine_host_facts(E(ctx), facts);
}

static int ref_inject(void *ctx, int fd, const struct pecs_sample *s)
{
	return ref_engine_inject_sample(E(ctx), fd, s);
}

static int ref_set_profiler(void *ctx, int fd, const struct pecs_profiler_stream *stream)
{
	if (!take_pending(ctx, fd))
		return -EBUSY; /* not a sampling event, or its profiler already runs */
	return ref_profiler_attach_replay(E(ctx), fd, stream);
}

/* The engine is in this process: the case says what its thread did. */
static int ref_task_event(void *ctx, const struct pecs_task_event *te)
{
	return ref_engine_task_event(E(ctx), te);
}

/* Exactly what the engine implements; docs/features.txt defines each name. */
static const char *const features[] = {
	"counting", "read.group", "read.lost", "ioctl.refresh", "ioctl.set_output",
	"ioctl.pause_output", "mmap", "mmap.overwrite", "poll", "policy", "pid.other",
	"engine.inject", "sampling", "profiler.replay", "profiler.drops", "tracepoint.syscalls", NULL,
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
	.set_profiler = ref_set_profiler,
	.task_event = ref_task_event,
};

const struct pecs_impl *pecs_adapter(void)
{
	return &ref_impl;
}
