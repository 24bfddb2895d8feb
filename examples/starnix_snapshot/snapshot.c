/* A divergent implementation, on purpose: perf_event_open(2) as the Starnix snapshot in
 * one snapshot of Starnix's perf_event code behaves (the one that reads FXT or text),
 * rebuilt from its documented behaviour as an in-process plugin. It is the suite's worked example of validating
 * another implementation: conformance/expectations/starnix_snapshot.txt lists every case it
 * fails, each with the Fuchsia bug that tracks the gap.
 *
 * What it does differently from Linux, by design:
 *  - read(): the count is a stub that rises by one per read while enabled; TIME_ENABLED
 *    and TIME_RUNNING are the same number; PERF_FORMAT_LOST adds no bytes;
 *  - open(): PERF_FORMAT_GROUP and pid > 0 (any pid other than -1 and 0) give ENOSYS;
 *    attr.size, flags, cpu, reserved bits and configs are not checked; a group_fd that is
 *    open but no leader gives EINVAL;
 *  - samples of a member carry its leader's id; the record's misc says KERNEL;
 *  - ioctl(): ENABLE, DISABLE and RESET only (PERF_IOC_FLAG_GROUP ignored); the nine
 *    others ENOSYS; anything else ENOTTY. The request is matched as a u32. write() ENOSYS;
 *  - mmap(): any non-zero length; the metadata page is hard-coded (version 1, compat 2,
 *    index 3, offset 19337, capabilities 30) with data_size from the first length;
 *  - the profiler stream is collected only at DISABLE; text is parsed piece by piece, so a
 *    line split across reads is lost (collect.c).
 * poll() is not part of the snapshot: it answers ENOSYS and the feature is not claimed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "snapshot.h"

struct snap_ctx {
	struct snap_event **events; /* indexed by fd */
	size_t cap;
};

/* Ids are global to the "kernel", like the snapshot's generator. */
static uint64_t next_id = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct snap_event *lookup(struct snap_ctx *c, int fd)
{
	return fd >= 0 && (size_t)fd < c->cap ? c->events[fd] : NULL;
}

/* Copies into caller memory without faulting: a bad pointer is EFAULT, as in a kernel. */
static int copy_out(void *dst, const void *src, size_t n)
{
	struct iovec local = {.iov_base = (void *)src, .iov_len = n};
	struct iovec remote = {.iov_base = dst, .iov_len = n};
	ssize_t r = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	return r == (ssize_t)n ? 0 : -EFAULT;
}

static int copy_in(void *dst, const void *src, size_t n)
{
	struct iovec local = {.iov_base = dst, .iov_len = n};
	struct iovec remote = {.iov_base = (void *)src, .iov_len = n};
	ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	return r == (ssize_t)n ? 0 : -EFAULT;
}

static int snap_setup(void **ctx)
{
	struct snap_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*ctx = c;
	return 0;
}

static void free_event(struct snap_event *ev)
{
	close(ev->fd);
	free(ev->stream);
	free(ev);
}

static void snap_teardown(void *ctx)
{
	struct snap_ctx *c = ctx;
	for (size_t i = 0; i < c->cap; i++)
		if (c->events[i])
			free_event(c->events[i]);
	free(c->events);
	free(c);
}

static int track(struct snap_ctx *c, struct snap_event *ev)
{
	if ((size_t)ev->fd >= c->cap) {
		size_t cap = c->cap ? c->cap : 64;
		while (cap <= (size_t)ev->fd)
			cap *= 2;
		struct snap_event **grown = realloc(c->events, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + c->cap, 0, (cap - c->cap) * sizeof(*grown));
		c->events = grown;
		c->cap = cap;
	}
	c->events[ev->fd] = ev;
	return 0;
}

static int snap_open(void *ctx, struct pecs_attr *uattr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	struct snap_ctx *c = ctx;
	struct pecs_attr attr;
	(void)flags; /* not looked at */
	/* The whole struct is read whatever attr.size says: no E2BIG, no size write-back. */
	if (!uattr || copy_in(&attr, uattr, sizeof(attr)) < 0)
		return -EFAULT;
	if (pid == -1 && cpu == -1)
		return -EINVAL;
	if (pid != -1 && pid != 0)
		return -ENOSYS; /* fxbug.dev/409621963 */
	if (attr.type > PECS_TYPE_BREAKPOINT)
		return -EINVAL; /* the type must convert to the snapshot's event-type enum */

	struct snap_event *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->attr = attr;
	ev->disabled = (attr.flags & PECS_ATTR_DISABLED) != 0;
	if ((attr.read_format & (PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING)) &&
	    !ev->disabled)
		ev->enabled_at = now_ns();
	ev->id = next_id++;
	int err = 0;
	if (group_fd == -1) {
		ev->sample_id = ev->id;
		ev->leader = 1;
	} else if (fcntl(group_fd, F_GETFD) < 0) {
		err = -EBADF;
	} else if (!lookup(c, group_fd) || !lookup(c, group_fd)->leader) {
		err = -EINVAL; /* an open file that is not a leader the snapshot knows */
	} else {
		ev->sample_id = lookup(c, group_fd)->id;
	}
	if (!err && (attr.read_format & PECS_FORMAT_GROUP))
		err = -ENOSYS; /* fxbug.dev/402238049 */
	if (err) {
		free(ev);
		return err;
	}
	ev->fd = memfd_create("[perf_event]", MFD_CLOEXEC);
	if (ev->fd < 0 || ftruncate(ev->fd, SNAP_VMO_SIZE) < 0 || track(c, ev) < 0) {
		if (ev->fd >= 0)
			close(ev->fd);
		free(ev);
		return -EMFILE;
	}
	return ev->fd;
}

static int snap_close(void *ctx, int fd)
{
	struct snap_ctx *c = ctx;
	struct snap_event *ev = lookup(c, fd);
	if (!ev)
		return -EBADF;
	c->events[fd] = NULL;
	free_event(ev);
	return 0;
}

static ssize_t snap_read(void *ctx, int fd, void *buf, size_t count)
{
	struct snap_event *ev = lookup(ctx, fd);
	if (!ev)
		return -EBADF;
	uint64_t out[4], total = ev->time_total;
	size_t n = 0;
	if (!ev->disabled) {
		ev->value++; /* fxbug.dev/402938671: the value is a stub */
		total += now_ns() - ev->enabled_at;
	}
	out[n++] = ev->value;
	uint64_t rf = ev->attr.read_format;
	if (rf & PECS_FORMAT_TOTAL_TIME_ENABLED)
		out[n++] = total; /* the same number as TIME_RUNNING */
	if (rf & PECS_FORMAT_TOTAL_TIME_RUNNING)
		out[n++] = total;
	if (rf & PECS_FORMAT_ID)
		out[n++] = ev->id;
	/* PERF_FORMAT_LOST is accepted but adds nothing: fxbug.dev/402260383 */
	size_t len = n * sizeof(out[0]);
	if (count < len)
		return -ENOSPC;
	int err = copy_out(buf, out, len);
	return err < 0 ? err : (ssize_t)len;
}

static ssize_t snap_write(void *ctx, int fd, const void *buf, size_t count)
{
	(void)buf;
	(void)count;
	if (!lookup(ctx, fd))
		return -EBADF;
	return -ENOSYS; /* fxbug.dev/394960158 */
}

static int is_sampling(const struct snap_event *ev)
{
	return !(ev->attr.flags & PECS_ATTR_FREQ) && ev->attr.sample_period != 0;
}

static int snap_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct snap_event *ev = lookup(ctx, fd);
	(void)arg; /* PERF_IOC_FLAG_GROUP is not implemented: fxbug.dev/405463320 */
	if (!ev)
		return -EBADF;
	switch ((uint32_t)request) {
	case (uint32_t)PECS_IOC_ENABLE:
		if (ev->disabled) {
			ev->disabled = 0;
			ev->enabled_at = now_ns();
		}
		if (is_sampling(ev))
			ev->session = 1;
		return 0;
	case (uint32_t)PECS_IOC_DISABLE:
		if (!ev->disabled) {
			ev->disabled = 1;
			ev->time_total += now_ns() - ev->enabled_at;
		}
		if (is_sampling(ev) && ev->session) {
			ev->session = 0;
			/* Collection errors are only logged by the snapshot; DISABLE still succeeds. */
			snap_collect(ev, sysconf(_SC_PAGESIZE));
		}
		return 0;
	case (uint32_t)PECS_IOC_RESET:
		ev->value = 0;
		return 0;
	case (uint32_t)PECS_IOC_REFRESH:
	case (uint32_t)PECS_IOC_PERIOD:
	case (uint32_t)PECS_IOC_SET_OUTPUT:
	case (uint32_t)PECS_IOC_SET_FILTER:
	case (uint32_t)PECS_IOC_ID:
	case (uint32_t)PECS_IOC_SET_BPF:
	case (uint32_t)PECS_IOC_PAUSE_OUTPUT:
	case (uint32_t)PECS_IOC_MODIFY_ATTRIBUTES:
	case (uint32_t)PECS_IOC_QUERY_BPF:
		return -ENOSYS; /* fxbug.dev/404941053 */
	default:
		return -ENOTTY;
	}
}

/* The metadata page the snapshot writes at the first mmap(), constants and all. */
static void write_metadata(struct snap_event *ev, size_t length, long page_size)
{
	struct pecs_mmap_page m;
	memset(&m, 0, sizeof(m));
	m.version = 1;
	m.compat_version = 2;
	m.index = 3;
	m.offset = 19337;
	m.capabilities = 30;
	m.data_offset = (uint64_t)page_size;
	m.data_size = (uint64_t)length - (uint64_t)page_size; /* wraps below one page */
	if (pwrite(ev->fd, &m, sizeof(m), 0) != (ssize_t)sizeof(m))
		return;
	ev->mapped = 1;
}

static int snap_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		     void **addr)
{
	struct snap_event *ev = lookup(ctx, fd);
	if (!ev)
		return -EBADF;
	if (length == 0)
		return -EINVAL;
	long page = sysconf(_SC_PAGESIZE);
	if (!ev->mapped)
		write_metadata(ev, length, page);
	/* Our stand-in for the memory object grows so that touching a long mapping does not
	 * fault; records still stop at SNAP_VMO_SIZE (collect.c). */
	off_t want = offset + (off_t)length;
	if (want > (off_t)SNAP_VMO_SIZE && ftruncate(ev->fd, want) < 0)
		return -ENOMEM;
	void *p = mmap(NULL, length, prot, flags, ev->fd, offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

static int snap_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	return munmap(addr, length) < 0 ? -errno : 0;
}

static int snap_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)events;
	(void)timeout_ms;
	return lookup(ctx, fd) ? -ENOSYS : -EBADF;
}

static int snap_set_profiler(void *ctx, int fd, const struct pecs_profiler_stream *s)
{
	struct snap_event *ev = lookup(ctx, fd);
	if (!ev)
		return -EBADF;
	if (!s || (s->len && !s->data))
		return -EINVAL;
	/* The snapshot starts a profiler session only for events with a fixed sample period,
	 * so a stream for any other event could never be read. */
	if (!is_sampling(ev))
		return -EINVAL;
	uint8_t *copy = malloc(s->len ? s->len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s->data, s->len);
	free(ev->stream);
	ev->stream = copy;
	ev->stream_len = s->len;
	ev->stream_chunk = s->chunk;
	/* Snapshot A maps no koids: the profiler's koids become pid and tid as they are. */
	return 0;
}

static const char *const features[] = {
	"counting", "read.group", "read.lost", "mmap", "pid.other", "profiler.replay", NULL,
};

static const struct pecs_impl snapshot_impl = {
	.size = sizeof(struct pecs_impl),
	.name = "starnix_snapshot",
	.features = features,
	.setup = snap_setup,
	.teardown = snap_teardown,
	.open = snap_open,
	.close = snap_close,
	.read = snap_read,
	.ioctl = snap_ioctl,
	.mmap = snap_mmap,
	.munmap = snap_munmap,
	.poll = snap_poll,
	.write = snap_write,
	.set_profiler = snap_set_profiler,
};

const struct pecs_impl *pecs_plugin_impl(void);

const struct pecs_impl *pecs_plugin_impl(void)
{
	return &snapshot_impl;
}
