/* A plugin that answers every call simply and logs it (recorder.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "interpose/tests/recorder.h"
#include "pecs/impl.h"

static struct recorder_log rec;

struct recorder_log *recorder_log(void)
{
	return &rec;
}

static int r_setup(void **ctx)
{
	*ctx = &rec;
	return 0;
}

static void r_teardown(void *ctx)
{
	(void)ctx;
}

static int r_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	(void)ctx;
	if (attr->type == 99)
		return -ENOENT; /* lets a test see an error come back as -1/errno */
	rec.open_type = attr->type;
	rec.open_pid = pid;
	rec.open_cpu = cpu;
	rec.open_group_fd = group_fd;
	rec.open_flags = flags;
	return RECORDER_FIRST_FD + rec.opens++;
}

static int r_close(void *ctx, int fd)
{
	(void)ctx;
	rec.closes++;
	rec.close_fd = fd;
	return 0;
}

static ssize_t r_read(void *ctx, int fd, void *buf, size_t count)
{
	uint64_t v = 0x1000u + (unsigned)fd;

	(void)ctx;
	rec.reads++;
	rec.read_fd = fd;
	if (count < sizeof(v))
		return -ENOSPC;
	memcpy(buf, &v, sizeof(v));
	return sizeof(v);
}

static int r_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	rec.ioctls++;
	rec.ioctl_fd = fd;
	rec.ioctl_request = request;
	rec.ioctl_arg = arg;
	return 0;
}

static int r_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		  void **addr)
{
	(void)ctx;
	(void)flags;
	(void)offset;
	void *p = mmap(NULL, length, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	rec.mmaps++;
	rec.mmap_fd = fd;
	*addr = p;
	return 0;
}

static int r_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	rec.munmaps++;
	rec.munmap_addr = addr;
	return munmap(addr, length) ? -errno : 0;
}

static int r_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)ctx;
	rec.polls++;
	rec.poll_fd = fd;
	rec.poll_timeout = timeout_ms;
	return rec.poll_answer & events;
}

static int r_task_event(void *ctx, const struct pecs_task_event *te)
{
	(void)ctx;
	rec.task_events++;
	rec.task_what = te->what;
	rec.task_nr = te->nr;
	rec.task_arg0 = te->args[0];
	rec.task_ret = te->ret;
	if (te->what == PECS_TASK_PERF_EVENTS_DISABLE || te->what == PECS_TASK_PERF_EVENTS_ENABLE)
		rec.task_toggle = te->what;
	if (te->comm)
		strncpy(rec.task_comm, te->comm, sizeof(rec.task_comm) - 1);
	return 0;
}

static int r_fcntl(void *ctx, int fd, int cmd, unsigned long arg, int sig_fd)
{
	(void)ctx;
	rec.fcntls++;
	rec.fcntl_fd = fd;
	rec.fcntl_cmd = cmd;
	rec.fcntl_arg = arg;
	rec.fcntl_sig_fd = sig_fd;
	return cmd == F_GETOWN ? -7 : 0; /* a process group, to see it is not an error */
}

static const char *const features[] = {"counting", "tracepoint.syscalls", "fasync", NULL};

static const struct pecs_impl recorder = {
	.size = sizeof(struct pecs_impl),
	.name = "recorder",
	.features = features,
	.setup = r_setup,
	.teardown = r_teardown,
	.open = r_open,
	.close = r_close,
	.read = r_read,
	.ioctl = r_ioctl,
	.mmap = r_mmap,
	.munmap = r_munmap,
	.poll = r_poll,
	.task_event = r_task_event,
	.fcntl = r_fcntl,
};

const struct pecs_impl *pecs_plugin_impl(void)
{
	return &recorder;
}
