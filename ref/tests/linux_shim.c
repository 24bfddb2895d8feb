/* The engine's API answered by the running kernel instead of the engine.
 *
 * Linked in place of //ref:ref, the same unit tests run against Linux, so every
 * expectation they hold about the ABI is checked against the oracle. The tests read
 * PECS_ON_LINUX to skip the engine's documented divergences and the engine-only
 * entry points (inject_sample). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/ref.h"

struct ref_engine {
	int unused;
};

/* Tests written for a caller without CAP_PERFMON define this symbol. */
extern const int pecs_shim_unprivileged __attribute__((weak));

/* A cpu-wide event tells the two callers apart: root with CAP_PERFMON opens it, an
 * unprivileged caller at paranoid >= 1 gets EACCES. A test runs only where the kernel
 * gives it the caller it was written for (sandboxes usually give the unprivileged one). */
__attribute__((constructor)) static void on_linux(void)
{
	struct pecs_attr a = {.size = sizeof(a), .type = PECS_TYPE_SOFTWARE,
			      .config = PECS_SW_CPU_CLOCK};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	int privileged = fd >= 0;
	int want_unpriv = &pecs_shim_unprivileged != NULL;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = -2;

	if (fd >= 0)
		close(fd);
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -2;
		fclose(f);
	}
	if (privileged == want_unpriv || (want_unpriv && paranoid != 2)) {
		fprintf(stderr, "linux_shim: this kernel does not give the caller the test "
				"expects (%s, paranoid %d); skipped\n",
			privileged ? "privileged" : "unprivileged", paranoid);
		exit(0);
	}
	setenv("PECS_ON_LINUX", "1", 1);
}

static int ret(long r)
{
	return r < 0 ? -errno : (int)r;
}

struct ref_engine *ref_engine_new(const struct ref_config *cfg)
{
	(void)cfg;
	return calloc(1, sizeof(struct ref_engine));
}

void ref_engine_free(struct ref_engine *e)
{
	free(e);
}

int ref_engine_open(struct ref_engine *e, struct pecs_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned long flags)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags), n;

	(void)e;
	if (fd < 0)
		return -errno;
	/* Tests expect fds from 1000 up, as the engine gives them. */
	n = fcntl(fd, F_DUPFD_CLOEXEC, 1000);
	close(fd);
	return ret(n);
}

int ref_engine_close(struct ref_engine *e, int fd)
{
	(void)e;
	return ret(close(fd));
}

ssize_t ref_engine_read(struct ref_engine *e, int fd, void *buf, size_t count)
{
	ssize_t r = read(fd, buf, count);

	(void)e;
	return r < 0 ? -errno : r;
}

ssize_t ref_engine_write(struct ref_engine *e, int fd, const void *buf, size_t count)
{
	ssize_t r = write(fd, buf, count);

	(void)e;
	return r < 0 ? -errno : r;
}

int ref_engine_ioctl(struct ref_engine *e, int fd, unsigned long request, unsigned long arg)
{
	(void)e;
	return ret(ioctl(fd, request, arg));
}

int ref_engine_mmap(struct ref_engine *e, int fd, size_t length, int prot, int flags,
		    off_t offset, void **addr)
{
	void *p = mmap(NULL, length, prot, flags, fd, offset);

	(void)e;
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

int ref_engine_munmap(struct ref_engine *e, void *addr, size_t length)
{
	(void)e;
	return ret(munmap(addr, length));
}

int ref_engine_poll(struct ref_engine *e, int fd, short events, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = events};
	int r = poll(&p, 1, timeout_ms);

	(void)e;
	return r < 0 ? -errno : p.revents;
}

/* Linux cannot be handed a sample. */
int ref_engine_inject_sample(struct ref_engine *e, int fd, const struct pecs_sample *s)
{
	(void)e;
	(void)fd;
	(void)s;
	return -ENOSYS;
}
