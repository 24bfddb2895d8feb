/* The entries the interposer defines, but for mmap and poll (mem_poll.c) and prctl
 * (prctl.c): each asks
 * whether its fd is an event and passes straight through when not.
 *
 * Variadic entries (syscall, ioctl, fcntl, prctl) forward the most arguments their calls
 * take, read as longs: on the ABIs Linux runs on, an argument the caller did not pass is
 * a register or stack slot read and never used. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/interpose.h"

/* A number no implementation hands out, for a real fd that is not an event where an
 * event is wanted: the implementation then answers EBADF at the point of its own check
 * order where Linux does (perf_fget_light() gives EBADF for any fd not an event). */
#define NOT_AN_EVENT INT_MAX

ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
int fcntl64(int fd, int cmd, ...);

/* Converts the implementation's -errno once, at the boundary. */
static long ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static int event_arg(int fd)
{
	if (fd == -1)
		return -1;
	int ifd = ip_table_impl_fd(fd);

	return ifd >= 0 ? ifd : NOT_AN_EVENT;
}

/* Closes the implementation's event once no real fd names it any more. */
static void release(int fd)
{
	int ifd = ip_table_drop(fd);
	void *ctx;
	int err;
	const struct pecs_impl *impl = ifd >= 0 ? ip_impl(&ctx, &err) : NULL;

	if (impl)
		impl->close(ctx, ifd);
}

static long open_event(struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags)
{
	void *ctx;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	ip_env_opened();
	if (!impl && !err)
		return ip_real()->syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	if (!impl)
		return ret(-err);
	int ifd = impl->open(ctx, attr, pid, cpu, event_arg(group_fd), flags);

	if (ifd < 0)
		return ret(ifd);
	/* The event's own fd: a real one, so the fd limit, numbering, dup and CLOEXEC are
	 * the kernel's. An empty epoll instance because poll(2) never finds it ready for
	 * anything: in a set with other fds it stays quiet while the implementation
	 * answers for the event (mem_poll.c). */
	int fd = epoll_create1(flags & PECS_FLAG_FD_CLOEXEC ? EPOLL_CLOEXEC : 0);

	if (fd < 0) {
		int e = errno;

		impl->close(ctx, ifd);
		return ret(-e);
	}
	int r = ip_table_add(fd, ifd);

	if (r < 0) {
		ip_real()->close(fd);
		impl->close(ctx, ifd);
		return ret(r);
	}
	return fd;
}

long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open)
		return open_event((struct pecs_attr *)a[0], (pid_t)a[1], (int)a[2], (int)a[3],
				  (unsigned long)a[4]);
	/* prctl's options that reach the implementation are prctl.c's, by either door. */
	if (nr == SYS_prctl)
		return prctl((int)a[0], a[1], a[2], a[3], a[4]);
	if (!ip_task_reported(nr))
		return ip_real()->syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	struct ip_task_call c;

	ip_task_enter(&c, nr, (const unsigned long *)a, __builtin_return_address(0));
	return ip_task_exit(&c, ip_real()->syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	int ifd = ip_table_impl_fd(fd);

	if (ifd < 0)
		return ip_real()->ioctl(fd, request, arg);
	void *ctx;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	if (request == PECS_IOC_SET_OUTPUT)
		arg = (unsigned long)(long)event_arg((int)arg);
	return (int)ret(impl->ioctl(ctx, ifd, request, arg));
}

static ssize_t read_event(int ifd, void *buf, size_t n)
{
	void *ctx;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	return ret(impl->read(ctx, ifd, buf, n));
}

ssize_t read(int fd, void *buf, size_t n)
{
	int ifd = ip_table_impl_fd(fd);

	return ifd < 0 ? ip_real()->read(fd, buf, n) : read_event(ifd, buf, n);
}

/* _FORTIFY_SOURCE turns read() into this when the buffer's size is known. */
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen)
{
	int ifd = ip_table_impl_fd(fd);

	if (ifd < 0 || nbytes > buflen) /* the C library's own check aborts */
		return ip_real()->read_chk(fd, buf, nbytes, buflen);
	return read_event(ifd, buf, nbytes);
}

int close(int fd)
{
	if (ip_table_impl_fd(fd) < 0)
		return ip_real()->close(fd);
	/* Forget it before its number is free for another open to take. */
	int ifd = ip_table_drop(fd);
	int r = ip_real()->close(fd);

	if (ifd >= 0) {
		void *ctx;
		int err;
		const struct pecs_impl *impl = ip_impl(&ctx, &err);

		impl->close(ctx, ifd);
	}
	return r;
}

int dup(int fd)
{
	int r = ip_real()->dup(fd);

	if (r >= 0 && ip_table_impl_fd(fd) >= 0)
		ip_table_share(r, fd);
	return r;
}

/* dup2 and dup3 close newfd first when it is open; if it was an event, that is one
 * real fd fewer naming it. */
static int dup_onto(int oldfd, int newfd, int r)
{
	if (r < 0 || oldfd == newfd)
		return r;
	if (ip_table_impl_fd(newfd) >= 0)
		release(newfd);
	if (ip_table_impl_fd(oldfd) >= 0)
		ip_table_share(newfd, oldfd);
	return r;
}

int dup2(int oldfd, int newfd)
{
	return dup_onto(oldfd, newfd, ip_real()->dup2(oldfd, newfd));
}

int dup3(int oldfd, int newfd, int flags)
{
	return dup_onto(oldfd, newfd, ip_real()->dup3(oldfd, newfd, flags));
}

/* The commands an event's asynchronous notification reads. The real fd is an epoll
 * instance, which has no fasync of its own: set there, O_ASYNC would signal nobody. */
static int async_cmd(int cmd)
{
	return cmd == F_GETFL || cmd == F_SETFL || cmd == F_GETOWN || cmd == F_SETOWN ||
	       cmd == F_GETOWN_EX || cmd == F_SETOWN_EX || cmd == F_GETSIG || cmd == F_SETSIG;
}

/* To the implementation, with the program's number for si_fd. F_SETFL also reaches the
 * real fd first, so the flags the kernel keeps for it (O_NONBLOCK) stay the program's.
 * F_GETOWN's -pgrp is a value, not an error. -1 when the implementation has no fcntl. */
static int fcntl_event(int (*real)(int, int, ...), int fd, int ifd, int cmd,
		       unsigned long arg, int *out)
{
	void *ctx;
	int err;
	const struct pecs_impl *impl = ip_impl(&ctx, &err);

	if (!impl || !PECS_IMPL_HAS(impl, fcntl))
		return -1;
	if (cmd == F_SETFL && real(fd, cmd, arg & ~(unsigned long)O_ASYNC) < 0) {
		*out = -1;
		return 0;
	}
	int r = impl->fcntl(ctx, ifd, cmd, arg, fd);

	*out = cmd == F_GETOWN ? r : (int)ret(r);
	return 0;
}

static int fcntl_any(int (*real)(int, int, ...), int fd, int cmd, unsigned long arg)
{
	int ifd = ip_table_impl_fd(fd), out;

	if (ifd >= 0 && async_cmd(cmd) && fcntl_event(real, fd, ifd, cmd, arg, &out) == 0)
		return out;
	int r = real(fd, cmd, arg);

	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && ip_table_impl_fd(fd) >= 0)
		ip_table_share(r, fd);
	return r;
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	return fcntl_any(ip_real()->fcntl, fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	return fcntl_any(ip_real()->fcntl64, fd, cmd, arg);
}
