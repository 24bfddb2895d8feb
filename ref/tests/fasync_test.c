/* ref_engine_fcntl(): the owner of an O_ASYNC event gets a signal at each injected
 * overflow, with the number the caller gave as si_fd, POLL_HUP at IOC_REFRESH's last,
 * and none once the event is off or its fd closed. The engine here has no profiler and
 * so no threads: the signal, blocked, waits for sigtimedwait. What Linux does is checked
 * by the conformance cases (Required.Fasync.*) against both. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "helpers.h"

#define SIG_FD 77 /* the number a host (the interposer) knows the event by */

static int inject(int fd)
{
	uint64_t ips[1] = {0x1000};
	struct pecs_sample s = {.size = sizeof(s), .pid = 10, .tid = 11, .nr_ips = 1, .ips = ips};

	return ref_engine_inject_sample(E, fd, &s);
}

/* The signal pending for this process, or 0 when none is. */
static int take(int signo, siginfo_t *si)
{
	sigset_t set;
	struct timespec zero = {0, 0};

	sigemptyset(&set);
	sigaddset(&set, signo);
	return sigtimedwait(&set, si, &zero) == signo ? signo : 0;
}

static int open_async(int signo)
{
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	int fd;

	a.flags |= PECS_ATTR_DISABLED;
	fd = ref_engine_open(E, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETOWN, (unsigned long)getpid(), SIG_FD), 0);
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETSIG, (unsigned long)signo, SIG_FD), 0);
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETFL, O_ASYNC, SIG_FD), 0);
	return fd;
}

static void test_each_overflow_signals(void **state)
{
	int signo = SIGRTMIN + 3, fd = open_async(signo);
	siginfo_t si;

	(void)state;
	assert_int_equal(inject(fd), 0); /* off: no overflow, no signal */
	assert_int_equal(take(signo, &si), 0);
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(inject(fd), 0);
	assert_int_equal(inject(fd), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(take(signo, &si), signo);
		assert_int_equal(si.si_code, POLL_IN);
		assert_int_equal(si.si_band, POLLIN | POLLRDNORM);
		assert_int_equal(si.si_fd, SIG_FD);
	}
	assert_int_equal(take(signo, &si), 0);
	/* Cleared O_ASYNC: nothing. */
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETFL, 0, SIG_FD), 0);
	assert_int_equal(inject(fd), 0);
	assert_int_equal(take(signo, &si), 0);
	ref_engine_close(E, fd);
}

static void test_refresh_last_is_hup(void **state)
{
	int signo = SIGRTMIN + 3, fd = open_async(signo);
	siginfo_t si;

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_REFRESH, 2), 0);
	assert_int_equal(inject(fd), 0);
	assert_int_equal(inject(fd), 0);
	assert_int_equal(inject(fd), 0); /* disabled by then */
	assert_int_equal(take(signo, &si), signo);
	assert_int_equal(si.si_code, POLL_IN);
	assert_int_equal(take(signo, &si), signo);
	assert_int_equal(si.si_code, POLL_HUP);
	assert_int_equal(si.si_band, POLLHUP | POLLERR);
	assert_int_equal(take(signo, &si), 0);
	ref_engine_close(E, fd);
}

/* A plain SIGIO carries SI_KERNEL and nothing else; SIGSYS's own codes make SI_SIGIO. */
static void test_plain_and_specific(void **state)
{
	int fd = open_async(0);
	siginfo_t si;

	(void)state;
	assert_int_equal(ref_engine_ioctl(E, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(inject(fd), 0);
	assert_int_equal(take(SIGIO, &si), SIGIO);
	assert_int_equal(si.si_code, SI_KERNEL);
	assert_int_equal(si.si_fd, 0);
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETSIG, SIGSYS, SIG_FD), 0);
	assert_int_equal(inject(fd), 0);
	assert_int_equal(take(SIGSYS, &si), SIGSYS);
	assert_int_equal(si.si_code, SI_SIGIO);
	assert_int_equal(si.si_fd, SIG_FD);
	ref_engine_close(E, fd);
}

static void test_errnos(void **state)
{
	int fd = open_async(SIGRTMIN);

	(void)state;
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETSIG, 65, fd), -EINVAL);
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETFL, O_DIRECT, fd), -EINVAL);
	assert_int_equal(ref_engine_fcntl(E, fd, F_SETOWN_EX, 0, fd), -EFAULT);
	assert_int_equal(ref_engine_fcntl(E, fd, F_DUPFD, 0, fd), -EINVAL);
	assert_int_equal(ref_engine_fcntl(E, 4999, F_GETFL, 0, 4999), -EBADF);
	assert_int_equal(ref_engine_fcntl(E, fd, F_GETFL, 0, fd), O_RDWR | O_ASYNC);
	ref_engine_close(E, fd);
}

static int setup(void **state)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 3);
	sigaddset(&set, SIGIO);
	sigaddset(&set, SIGSYS);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return setup_root(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_overflow_signals),
		cmocka_unit_test(test_refresh_last_is_hup),
		cmocka_unit_test(test_plain_and_specific),
		cmocka_unit_test(test_errnos),
	};
	return cmocka_run_group_tests(tests, setup, teardown_engine);
}
