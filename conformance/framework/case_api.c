/* The calls a case makes: the implementation's entries with resource tracking, and small
 * helpers. Verdicts and leaving the case are in verdict.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "case_context.h"
#include "runner.h"

const struct pecs_impl *pecs_impl_of(struct pecs_t *t)
{
	return t->impl;
}

const struct pecs_host_facts *pecs_host(struct pecs_t *t)
{
	return t->facts;
}

int pecs_claims(struct pecs_t *t, const char *feature)
{
	const char *const *f = t->impl->features;
	for (; f && *f; f++)
		if (strcmp(*f, feature) == 0)
			return 1;
	return 0;
}

static void track_fd(struct pecs_t *t, int fd)
{
	if (t->nfds < PECS_MAX_TRACKED_FDS)
		t->fds[t->nfds++] = fd;
}

static void untrack_fd(struct pecs_t *t, int fd)
{
	for (size_t i = t->nfds; i-- > 0;) {
		if (t->fds[i] == fd) {
			t->fds[i] = t->fds[--t->nfds];
			return;
		}
	}
}

void pecs_checks_policy_refusal(struct pecs_t *t)
{
	t->checks_refusal = 1;
}

int pecs_open(struct pecs_t *t, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
	      unsigned long flags)
{
	int fd = t->impl->open(t->ctx, attr, pid, cpu, group_fd, flags);
	pecs_note_call(t, PECS_ENTRY_OPEN, fd, 0);
	if (fd >= 0)
		track_fd(t, fd);
	/* The implementation refuses every open to this caller by policy (the probe found
	 * it: Debian's perf_event_paranoid 3 without privilege), after it has checked the
	 * attr: an EACCES then says nothing of what the case asks, whatever it expected. */
	if ((fd == -EACCES || fd == -EPERM) && t->facts->unavailable[0] && !t->checks_refusal &&
	    t->facts->paranoid >= 3 && !t->facts->privileged && t->armed)
		pecs_end(t, PECS_ENV_SKIP, __FILE__, __LINE__, "%s (this open: %s)",
			 t->facts->unavailable, pecs_errname(-fd));
	return fd;
}

int pecs_open_safe(struct pecs_t *t, const char *file, int line, struct pecs_attr *attr,
		   pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	int fd = pecs_open(t, attr, pid, cpu, group_fd, flags);

	if (fd < 0)
		pecs_end(t, PECS_FAIL, file, line,
			 "perf_event_open(type %u, config %#llx, pid %d, cpu %d, group_fd %d, "
			 "flags %#lx) failed: %s", attr->type, (unsigned long long)attr->config,
			 (int)pid, cpu, group_fd, flags, pecs_retname(fd));
	return fd;
}

int pecs_close(struct pecs_t *t, int fd)
{
	int r = t->impl->close(t->ctx, fd);
	pecs_note_call(t, PECS_ENTRY_CLOSE, r, 0);
	if (r == 0)
		untrack_fd(t, fd);
	return r;
}

ssize_t pecs_read(struct pecs_t *t, int fd, void *buf, size_t count)
{
	ssize_t r = t->impl->read(t->ctx, fd, buf, count);
	pecs_note_call(t, PECS_ENTRY_READ, (long)r, 0);
	return r;
}

ssize_t pecs_write(struct pecs_t *t, int fd, const void *buf, size_t count)
{
	if (!PECS_IMPL_HAS(t->impl, write))
		return -ENOSYS;
	ssize_t r = t->impl->write(t->ctx, fd, buf, count);
	pecs_note_call(t, PECS_ENTRY_WRITE, (long)r, 0);
	return r;
}

int pecs_ioctl(struct pecs_t *t, int fd, unsigned long request, unsigned long arg)
{
	int r = t->impl->ioctl(t->ctx, fd, request, arg);
	pecs_note_call(t, PECS_ENTRY_IOCTL, r, request);
	return r;
}

int pecs_mmap(struct pecs_t *t, int fd, size_t length, int prot, int flags, off_t offset,
	      void **addr)
{
	int r = t->impl->mmap(t->ctx, fd, length, prot, flags, offset, addr);
	pecs_note_call(t, PECS_ENTRY_MMAP, r, 0);
	if (r == 0 && t->nmaps < PECS_MAX_TRACKED_MAPS) {
		t->maps[t->nmaps].addr = *addr;
		t->maps[t->nmaps].len = length;
		t->nmaps++;
	}
	return r;
}

int pecs_munmap(struct pecs_t *t, void *addr, size_t length)
{
	int r = t->impl->munmap(t->ctx, addr, length);
	pecs_note_call(t, PECS_ENTRY_MUNMAP, r, 0);
	if (r == 0) {
		for (size_t i = 0; i < t->nmaps; i++) {
			if (t->maps[i].addr == addr) {
				t->maps[i] = t->maps[--t->nmaps];
				break;
			}
		}
	}
	return r;
}

int pecs_poll(struct pecs_t *t, int fd, short events, int timeout_ms)
{
	int r = t->impl->poll(t->ctx, fd, events, timeout_ms);
	pecs_note_call(t, PECS_ENTRY_POLL, r, 0);
	return r;
}

int pecs_inject_sample(struct pecs_t *t, int fd, const struct pecs_sample *sample)
{
	if (!PECS_IMPL_HAS(t->impl, inject_sample))
		return -ENOSYS;
	return t->impl->inject_sample(t->ctx, fd, sample);
}

int pecs_set_profiler(struct pecs_t *t, int fd, const struct pecs_profiler_stream *stream)
{
	if (!PECS_IMPL_HAS(t->impl, set_profiler))
		return -ENOSYS;
	return t->impl->set_profiler(t->ctx, fd, stream);
}

int pecs_task_event(struct pecs_t *t, const struct pecs_task_event *te)
{
	if (!PECS_IMPL_HAS(t->impl, task_event))
		return -ENOSYS;
	return t->impl->task_event(t->ctx, te);
}

int pecs_fcntl(struct pecs_t *t, int fd, int cmd, unsigned long arg)
{
	if (!PECS_IMPL_HAS(t->impl, fcntl))
		return -ENOSYS;
	return t->impl->fcntl(t->ctx, fd, cmd, arg, fd);
}

void pecs_case_release(struct pecs_t *t)
{
	/* Unmap before closing: an fd's buffer outlives close() while mapped. */
	while (t->nmaps > 0) {
		t->nmaps--;
		t->impl->munmap(t->ctx, t->maps[t->nmaps].addr, t->maps[t->nmaps].len);
	}
	/* Members before leaders, so no close sees a group it does not expect. */
	while (t->nfds > 0)
		t->impl->close(t->ctx, t->fds[--t->nfds]);
}

void pecs_attr_counting(struct pecs_t *t, struct pecs_attr *attr, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PECS_TYPE_SOFTWARE;
	attr->size = t->facts->attr_size ? t->facts->attr_size : PECS_ATTR_SIZE_LATEST;
	if (attr->size > sizeof(*attr))
		attr->size = sizeof(*attr);
	attr->config = config;
	/* User-only keeps the event openable at perf_event_paranoid=2 without privilege. */
	attr->flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
}

void pecs_attr_sampling(struct pecs_t *t, struct pecs_attr *attr, uint64_t config,
			uint64_t period_ns, uint64_t sample_type)
{
	pecs_attr_counting(t, attr, config);
	attr->sample_period = period_ns;
	attr->sample_type = sample_type;
}

uint64_t pecs_clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

pid_t pecs_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

#define ERRNAME(e) \
	case e:    \
		return #e
const char *pecs_errname(int err)
{
	switch (err) {
		ERRNAME(EPERM); ERRNAME(ENOENT); ERRNAME(ESRCH); ERRNAME(EINTR); ERRNAME(EIO);
		ERRNAME(ENXIO); ERRNAME(E2BIG); ERRNAME(EBADF); ERRNAME(EAGAIN); ERRNAME(ENOMEM);
		ERRNAME(EACCES); ERRNAME(EFAULT); ERRNAME(EBUSY); ERRNAME(EEXIST); ERRNAME(ENODEV);
		ERRNAME(EINVAL); ERRNAME(EMFILE); ERRNAME(ENOTTY); ERRNAME(ENOSPC); ERRNAME(ESPIPE);
		ERRNAME(ERANGE); ERRNAME(ENOSYS); ERRNAME(EOVERFLOW); ERRNAME(EOPNOTSUPP);
		ERRNAME(ETIMEDOUT);
	}
	static __thread char buf[4][16];
	static __thread unsigned slot;
	char *b = buf[slot++ % 4];
	snprintf(b, sizeof(buf[0]), "errno %d", err);
	return b;
}
#undef ERRNAME

const char *pecs_retname(long long ret)
{
	static __thread char buf[8][32];
	static __thread unsigned slot;
	char *b = buf[slot++ % 8];
	if (ret < 0 && ret > -4096)
		snprintf(b, sizeof(buf[0]), "-%s", pecs_errname((int)-ret));
	else
		snprintf(b, sizeof(buf[0]), "%lld", ret);
	return b;
}

long pecs_memdiff(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

const char *pecs_hexdiff(const void *a, const void *b, size_t len, long off)
{
	static __thread char buf[2][160];
	static __thread unsigned slot;
	char *out = buf[slot++ % 2];
	const unsigned char *x = a, *y = b;
	size_t start = off > 8 ? (size_t)off - 8 : 0, end = (size_t)off + 8;
	if (end > len)
		end = len;
	int n = snprintf(out, sizeof(buf[0]), "got");
	for (size_t i = start; i < end && n < 70; i++)
		n += snprintf(out + n, sizeof(buf[0]) - (size_t)n, " %02x", x[i]);
	n += snprintf(out + n, sizeof(buf[0]) - (size_t)n, " / want");
	for (size_t i = start; i < end && n < 150; i++)
		n += snprintf(out + n, sizeof(buf[0]) - (size_t)n, " %02x", y[i]);
	return out;
}
