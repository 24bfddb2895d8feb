/* The interposer's routing, against the recording plugin (recorder.c): which calls reach
 * the implementation, with which of its fds and arguments, and which pass through to the
 * kernel untouched. The interposer's entries are linked into this binary, so they stand
 * in front of the C library's for the whole process, as LD_PRELOAD puts them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "interpose/tests/recorder.h"
#include "pecs/abi.h"
#include "pecs/interpose.h"
#include "pecs/task_event.h"

static const char *plugin_path;
static struct recorder_log *rec;

static int open_event(uint32_t type, int group_fd, unsigned long flags)
{
	struct pecs_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, flags);
}

/* The implementation's fd behind a real one, as the plugin saw it at its last read. */
static int impl_fd_of(int fd)
{
	uint64_t v = 0;

	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	return (int)(v - 0x1000u);
}

static void fd_kind(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, len - 1);
	assert_true(n > 0);
	buf[n] = 0;
}

static void open_gives_a_real_fd(void **state)
{
	char kind[128];
	int opens = rec->opens;
	int fd = open_event(1, -1, PECS_FLAG_FD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0 && fd < RECORDER_FIRST_FD);
	assert_int_equal(rec->opens, opens + 1);
	assert_int_equal(rec->open_group_fd, -1);
	assert_int_equal(rec->open_flags, PECS_FLAG_FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	fd_kind(fd, kind, sizeof(kind));
	assert_non_null(strstr(kind, "eventpoll"));
	assert_int_equal(impl_fd_of(fd), RECORDER_FIRST_FD + opens);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rec->close_fd, RECORDER_FIRST_FD + opens);
	/* without the flag the fd survives exec, as the kernel's does */
	fd = open_event(1, -1, 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
}

static void errors_come_back_as_errno(void **state)
{
	int before = dup(0);

	(void)state;
	close(before);
	errno = 0;
	assert_int_equal(open_event(99, -1, 0), -1);
	assert_int_equal(errno, ENOENT);
	/* no real fd was left behind: the lowest free number is still free */
	int after = dup(0);
	assert_int_equal(after, before);
	close(after);
}

static void group_fd_is_translated(void **state)
{
	int p[2];
	int leader = open_event(1, -1, 0);
	int member = open_event(1, leader, 0);

	(void)state;
	assert_int_equal(rec->open_group_fd, impl_fd_of(leader));
	assert_int_equal(pipe(p), 0);
	/* a real fd that is no event reaches the implementation as a number it never gave */
	int bad = open_event(1, p[0], 0);
	assert_int_equal(rec->open_group_fd, INT_MAX);
	close(bad);
	close(member);
	close(leader);
	close(p[0]);
	close(p[1]);
}

static void read_and_ioctl_route_events_only(void **state)
{
	int p[2], avail = 0;
	char c = 0;
	int a = open_event(1, -1, 0), b = open_event(1, -1, 0);

	(void)state;
	assert_int_equal(ioctl(a, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(rec->ioctl_fd, impl_fd_of(a));
	assert_int_equal(rec->ioctl_request, PECS_IOC_ENABLE);
	assert_int_equal(ioctl(a, PECS_IOC_SET_OUTPUT, b), 0);
	assert_int_equal(rec->ioctl_arg, (unsigned long)impl_fd_of(b));
	assert_int_equal(ioctl(a, PECS_IOC_SET_OUTPUT, -1), 0);
	assert_int_equal((long)rec->ioctl_arg, -1);
	/* a pipe: read and ioctl are the kernel's */
	int reads = rec->reads, ioctls = rec->ioctls;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(ioctl(p[0], FIONREAD, &avail), 0);
	assert_int_equal(avail, 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	assert_int_equal(rec->reads, reads);
	assert_int_equal(rec->ioctls, ioctls);
	close(p[0]);
	close(p[1]);
	close(a);
	close(b);
}

static void fcntl_async_commands_route_events_only(void **state)
{
	int a = open_event(1, -1, 0), n = rec->fcntls, fl;
	int p[2];

	(void)state;
	assert_int_equal(fcntl(a, F_SETSIG, 40), 0);
	assert_int_equal(rec->fcntls, n + 1);
	assert_int_equal(rec->fcntl_fd, impl_fd_of(a));
	assert_int_equal(rec->fcntl_cmd, F_SETSIG);
	assert_int_equal(rec->fcntl_arg, 40);
	assert_int_equal(rec->fcntl_sig_fd, a); /* si_fd names the program's fd */
	assert_int_equal(fcntl(a, F_GETOWN), -7);
	/* F_SETFL reaches both: O_NONBLOCK stays the real fd's, O_ASYNC is the event's. */
	assert_int_equal(fcntl(a, F_SETFL, O_NONBLOCK | O_ASYNC), 0);
	assert_int_equal(rec->fcntl_cmd, F_SETFL);
	assert_int_equal(rec->fcntl_arg, (unsigned long)(O_NONBLOCK | O_ASYNC));
	fl = (int)syscall(SYS_fcntl, a, F_GETFL);
	assert_true(fl & O_NONBLOCK);
	assert_false(fl & O_ASYNC);
	/* Others are the kernel's: F_GETFD on the event, anything on a pipe. */
	n = rec->fcntls;
	assert_int_equal(fcntl(a, F_GETFD), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[0], F_SETSIG, 40), 0);
	assert_int_equal(fcntl(p[0], F_GETSIG), 40);
	assert_int_equal(rec->fcntls, n);
	close(p[0]);
	close(p[1]);
	close(a);
}

static void dup_shares_the_event_until_the_last_close(void **state)
{
	int fd = open_event(1, -1, 0);
	int ifd = impl_fd_of(fd);
	int d = dup(fd);
	int c = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	int closes = rec->closes;

	(void)state;
	assert_true(d >= 0 && c >= 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rec->closes, closes);
	assert_int_equal(impl_fd_of(d), ifd);
	assert_int_equal(close(d), 0);
	assert_int_equal(rec->closes, closes);
	assert_int_equal(fcntl(c, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* dup2 onto the last fd of an event closes that event */
	int other = open_event(1, -1, 0);
	assert_int_equal(dup2(other, c), c);
	assert_int_equal(rec->closes, closes + 1);
	assert_int_equal(rec->close_fd, ifd);
	assert_int_equal(impl_fd_of(c), impl_fd_of(other));
	close(other);
	assert_int_equal(close(c), 0);
	assert_int_equal(rec->closes, closes + 2);
	/* the real fd is gone too: a second close is the kernel's EBADF */
	errno = 0;
	assert_int_equal(close(c), -1);
	assert_int_equal(errno, EBADF);
}

static void mmap_and_munmap_route_event_mappings(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open_event(1, -1, 0);
	int mmaps = rec->mmaps, munmaps = rec->munmaps;

	(void)state;
	void *ring = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(ring != MAP_FAILED);
	assert_int_equal(rec->mmaps, mmaps + 1);
	assert_int_equal(rec->mmap_fd, impl_fd_of(fd));
	void *anon = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	assert_int_equal(rec->mmaps, mmaps + 1);
	assert_int_equal(munmap(anon, page), 0);
	assert_int_equal(rec->munmaps, munmaps);
	assert_int_equal(munmap(ring, 2 * page), 0);
	assert_int_equal(rec->munmaps, munmaps + 1);
	assert_ptr_equal(rec->munmap_addr, ring);
	close(fd);
}

static void poll_asks_the_implementation_for_events(void **state)
{
	int p[2];
	int fd = open_event(1, -1, 0);
	struct pollfd one = {.fd = fd, .events = POLLIN};

	(void)state;
	rec->poll_answer = POLLIN;
	assert_int_equal(poll(&one, 1, 1234), 1);
	assert_int_equal(one.revents, POLLIN);
	assert_int_equal(rec->poll_timeout, 1234);
	assert_int_equal(rec->poll_fd, impl_fd_of(fd));
	/* a mixed set: the pipe is the kernel's to answer, the event the implementation's */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	rec->poll_answer = 0;
	struct pollfd set[2] = {{.fd = fd, .events = POLLIN}, {.fd = p[0], .events = POLLIN}};
	assert_int_equal(poll(set, 2, 0), 1);
	assert_int_equal(set[0].revents, 0);
	assert_int_equal(set[1].revents, POLLIN);
	assert_int_equal(set[0].fd, fd);
	rec->poll_answer = POLLIN;
	struct timespec zero = {0, 0};
	assert_int_equal(ppoll(set, 2, &zero, NULL), 2);
	assert_int_equal(set[0].revents, POLLIN);
	/* nothing ready anywhere: the timeout passes and poll says 0 */
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	rec->poll_answer = 0;
	assert_int_equal(poll(set, 2, 20), 0);
	close(p[0]);
	close(p[1]);
	close(fd);
}

/* PR_TASK_PERF_EVENTS_{DISABLE,ENABLE}, by the C library's prctl or through syscall(), is
 * told to the implementation between the call's enter and exit, on the calling thread
 * (it knows which thread opened each event); no ioctl is made for it. */
static void prctl_perf_events_are_told(void **state)
{
	int a = open_event(1, -1, 0), b = open_event(1, a, 0);
	int ioctls = rec->ioctls, n = rec->task_events;

	(void)state;
	assert_int_equal(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0), 0);
	assert_int_equal(rec->task_events, n + 3);
	assert_int_equal(rec->task_toggle, PECS_TASK_PERF_EVENTS_DISABLE);
	assert_int_equal(syscall(SYS_prctl, PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), 0);
	assert_int_equal(rec->task_events, n + 6);
	assert_int_equal(rec->task_toggle, PECS_TASK_PERF_EVENTS_ENABLE);
	assert_int_equal(rec->task_what, PECS_TASK_SYSCALL_EXIT);
	assert_int_equal(rec->ioctls, ioctls);
	/* another prctl is the kernel's alone */
	char name[32] = {0};
	assert_int_equal(prctl(PR_GET_NAME, name, 0, 0, 0), 0);
	assert_int_equal(rec->task_toggle, PECS_TASK_PERF_EVENTS_ENABLE);
	assert_int_equal(rec->task_events, n + 8);
	close(b);
	close(a);
}

/* getsid, getppid, getpgid and prctl (by their wrappers or through syscall()) are told
 * to the implementation around the real call while an event is open; other calls, and
 * any call while none is, are not. PR_SET_NAME adds the COMM between enter and exit. */
static void syscalls_are_told_while_events_are_open(void **state)
{
	char old[16] = {0};
	int n = rec->task_events, fd;
	pid_t ppid = getppid();

	(void)state;
	assert_int_equal(rec->task_events, n);
	fd = open_event(1, -1, 0);
	assert_int_equal(getppid(), ppid);
	assert_int_equal(rec->task_events, n + 2);
	assert_int_equal(rec->task_what, PECS_TASK_SYSCALL_EXIT);
	assert_int_equal(rec->task_nr, SYS_getppid);
	assert_int_equal(rec->task_ret, ppid);
	assert_int_equal(syscall(SYS_getpgid, (long)getpid()), getpgid(0));
	assert_int_equal(rec->task_events, n + 6);
	assert_int_equal(rec->task_nr, SYS_getpgid);
	syscall(SYS_gettid);
	getsid(0);
	assert_int_equal(rec->task_events, n + 8);
	assert_int_equal(rec->task_nr, SYS_getsid);
	/* a failing call's exit carries -errno, and errno survives the report */
	errno = 0;
	assert_int_equal(getsid(-1), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(rec->task_ret, -ESRCH);
	assert_int_equal(prctl(PR_GET_NAME, old, 0, 0, 0), 0);
	n = rec->task_events;
	assert_int_equal(prctl(PR_SET_NAME, "routed", 0, 0, 0), 0);
	assert_int_equal(rec->task_events, n + 3);
	assert_string_equal(rec->task_comm, "routed");
	assert_int_equal(rec->task_nr, SYS_prctl);
	prctl(PR_SET_NAME, old, 0, 0, 0);
	close(fd);
	n = rec->task_events;
	getppid();
	assert_int_equal(rec->task_events, n);
}

/* A blocking wait reads every event once before the reap; WNOHANG does not. */
static void a_blocking_wait_reads_the_events_first(void **state)
{
	int fd = open_event(1, -1, 0);
	int reads = rec->reads, status = 0;
	pid_t kid = fork();

	(void)state;
	if (kid == 0)
		_exit(7);
	assert_int_equal(waitpid(kid, &status, 0), kid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	assert_int_equal(rec->reads, reads + 1);
	kid = fork();
	if (kid == 0)
		_exit(0);
	while (waitpid(kid, &status, WNOHANG) == 0)
		;
	assert_int_equal(rec->reads, reads + 1);
	close(fd);
	/* with no event open, nothing is read */
	kid = fork();
	if (kid == 0)
		_exit(0);
	assert_int_equal(wait4(kid, &status, 0, NULL), kid);
	assert_int_equal(rec->reads, reads + 1);
}

static void other_syscalls_pass_through(void **state)
{
	(void)state;
	assert_int_equal(syscall(SYS_getpid), getpid());
	assert_int_equal(syscall(SYS_gettid), gettid());
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH/TO/librecorder.so\n", argv[0]);
		return 2;
	}
	plugin_path = argv[1];
	setenv(PECS_INTERPOSE_ENV, plugin_path, 1);
	void *so = dlopen(plugin_path, RTLD_NOW);
	if (!so) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	rec = ((struct recorder_log * (*)(void)) dlsym(so, "recorder_log"))();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_gives_a_real_fd),
		cmocka_unit_test(errors_come_back_as_errno),
		cmocka_unit_test(group_fd_is_translated),
		cmocka_unit_test(read_and_ioctl_route_events_only),
		cmocka_unit_test(fcntl_async_commands_route_events_only),
		cmocka_unit_test(dup_shares_the_event_until_the_last_close),
		cmocka_unit_test(mmap_and_munmap_route_event_mappings),
		cmocka_unit_test(poll_asks_the_implementation_for_events),
		cmocka_unit_test(prctl_perf_events_are_told),
		cmocka_unit_test(syscalls_are_told_while_events_are_open),
		cmocka_unit_test(a_blocking_wait_reads_the_events_first),
		cmocka_unit_test(other_syscalls_pass_through),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
