/* The reference engine behind the vtable: one fresh engine per case, so no case sees
 * another's ids, fds or rings. Every call is forwarded; the engine itself gives each
 * sampling event its live sampler when it first runs, unless the case installed a
 * scripted stream with set_profiler before that. */
#include <errno.h>
#include <poll.h>

#include "pecs/impl.h"
#include "pecs/profiler/attach.h"
#include "pecs/ref.h"

/* The context is the engine itself. */
static int ref_setup(void **ctx)
{
	struct ref_config cfg = { .size = sizeof(cfg), .profiler = ref_profiler_live() };
	struct ref_engine *e = ref_engine_new(&cfg);

	if (!e)
		return -errno;
	*ctx = e;
	return 0;
}

static void ref_teardown(void *ctx)
{
	ref_engine_free(ctx);
}

static struct ref_engine *E(void *ctx)
{
	return ctx;
}

static int ref_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	return ref_engine_open(E(ctx), attr, pid, cpu, group_fd, flags);
}

static int ref_close(void *ctx, int fd)
{
	return ref_engine_close(E(ctx), fd);
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
	return ref_profiler_attach_replay(E(ctx), fd, stream);
}

/* The engine is in this process: the case says what its thread did. */
static int ref_task_event(void *ctx, const struct pecs_task_event *te)
{
	return ref_engine_task_event(E(ctx), te);
}

static int ref_fcntl(void *ctx, int fd, int cmd, unsigned long arg, int sig_fd)
{
	return ref_engine_fcntl(E(ctx), fd, cmd, arg, sig_fd);
}

/* Exactly what the engine implements; docs/features.txt defines each name. */
static const char *const features[] = {
	"counting", "read.group", "read.lost", "ioctl.refresh", "ioctl.set_output",
	"ioctl.pause_output", "mmap", "mmap.overwrite", "mmap.vma", "poll", "policy", "pid.other",
	"engine.inject", "sampling", "profiler.replay", "profiler.drops", "prctl.perf_events", "tracepoint.syscalls",
	"fasync", NULL,
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
	.fcntl = ref_fcntl,
};

const struct pecs_impl *pecs_adapter(void)
{
	return &ref_impl;
}
