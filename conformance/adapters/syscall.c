/* The real kernel, through its syscalls: the oracle every case must pass against first.
 * This is the one place where the -1/errno convention becomes -errno. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
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

static int sys_setup(void **ctx)
{
	*ctx = NULL; /* the kernel keeps all the state */
	return 0;
}

static void sys_teardown(void *ctx)
{
	(void)ctx;
}

static int sys_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	(void)ctx;
	return (int)ret(syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags));
}

static int sys_close(void *ctx, int fd)
{
	(void)ctx;
	return (int)ret(close(fd));
}

static ssize_t sys_read(void *ctx, int fd, void *buf, size_t count)
{
	(void)ctx;
	return ret(read(fd, buf, count));
}

static ssize_t sys_write(void *ctx, int fd, const void *buf, size_t count)
{
	(void)ctx;
	return ret(write(fd, buf, count));
}

static int sys_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	return (int)ret(ioctl(fd, request, arg));
}

static int sys_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		    void **addr)
{
	(void)ctx;
	void *p = mmap(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) ? *addr : NULL, length, prot,
		       flags, fd, offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

static int sys_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	return (int)ret(munmap(addr, length));
}

static int sys_poll(void *ctx, int fd, short events, int timeout_ms)
{
	(void)ctx;
	struct pollfd p = {.fd = fd, .events = events};
	int r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return -errno;
	return r == 0 ? 0 : p.revents;
}

/* The kernel tells its attr size when refused a larger one: E2BIG writes it back. */
static uint32_t probe_attr_size(void)
{
	static unsigned char buf[4096];
	memset(buf, 0, sizeof(buf));
	struct pecs_attr *a = (struct pecs_attr *)buf;
	a->type = PECS_TYPE_SOFTWARE;
	a->config = PECS_SW_DUMMY;
	a->size = sizeof(buf);
	a->flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	buf[sizeof(buf) - 1] = 1;
	long fd = syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		return PECS_ATTR_SIZE_LATEST;
	}
	return errno == E2BIG && a->size >= PECS_ATTR_SIZE_VER0 ? a->size : PECS_ATTR_SIZE_LATEST;
}

/* A host that refuses even a user-only task-clock counter refuses everything the suite
 * would ask; saying so once beats 200 failures that all mean the same thing. ENOSYS is not
 * such a refusal: a system without the call is what the suite is there to report. */
static void probe_available(struct pecs_host_facts *facts)
{
	struct pecs_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PECS_TYPE_SOFTWARE;
	a.config = PECS_SW_TASK_CLOCK;
	a.size = PECS_ATTR_SIZE_VER0;
	a.flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		return;
	}
	if (errno != EACCES && errno != EPERM)
		return;
	if (facts->paranoid >= 3 && !facts->privileged)
		snprintf(facts->unavailable, sizeof(facts->unavailable),
			 "perf_event_paranoid=%d: this kernel refuses perf_event_open to "
			 "unprivileged users", facts->paranoid);
	else
		snprintf(facts->unavailable, sizeof(facts->unavailable),
			 "perf_event_open refused (%s) for a user-only task clock although "
			 "perf_event_paranoid=%d allows it: a seccomp filter or security module "
			 "blocks it", errno == EACCES ? "EACCES" : "EPERM", facts->paranoid);
}

static int sys_host_facts(void *ctx, struct pecs_host_facts *facts)
{
	(void)ctx;
	/* The suite's defaults already read this host's sysctls and capabilities. */
	facts->attr_size = probe_attr_size();
	probe_available(facts);
	return 0;
}

/* The kernel saw the system call or the new name itself. */
static int sys_task_event(void *ctx, const struct pecs_task_event *te)
{
	(void)ctx;
	(void)te;
	return 0;
}

/* glibc's fcntl, not the raw call: its F_GETOWN reads a process group's owner through
 * F_GETOWN_EX, where the raw call's -pgrp can look like an error. */
static int sys_fcntl(void *ctx, int fd, int cmd, unsigned long arg, int sig_fd)
{
	(void)ctx;
	(void)sig_fd; /* the kernel's si_fd is the fd itself */
	int r = fcntl(fd, cmd, arg);

	return cmd == F_GETOWN && r != -1 ? r : (int)ret(r);
}

static const char *const features[] = {
	"counting", "read.group", "read.lost", "ioctl.refresh", "ioctl.set_output",
	"ioctl.pause_output", "mmap", "mmap.overwrite", "mmap.vma", "poll", "sampling", "policy",
	"pid.other", "prctl.perf_events", "tracepoint.syscalls", "fasync", NULL,
};

static const struct pecs_impl syscall_impl = {
	.size = sizeof(struct pecs_impl),
	.name = "syscall",
	.features = features,
	.setup = sys_setup,
	.teardown = sys_teardown,
	.open = sys_open,
	.close = sys_close,
	.read = sys_read,
	.ioctl = sys_ioctl,
	.mmap = sys_mmap,
	.munmap = sys_munmap,
	.poll = sys_poll,
	.host_facts = sys_host_facts,
	.write = sys_write,
	.task_event = sys_task_event,
	.fcntl = sys_fcntl,
};

const struct pecs_impl *pecs_adapter(void)
{
	return &syscall_impl;
}
