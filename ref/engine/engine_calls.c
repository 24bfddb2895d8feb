/* The public calls: flush the live samples they depend on (engine_flush.c), take the
 * engine lock, find the fd, run the event code, then run any profiler hooks it queued
 * with the lock dropped. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pecs/opts.h"
#include "ref/engine/engine.h"

int ref_engine_open(struct ref_engine *e, struct pecs_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned long flags)
{
	int ret;

	pthread_mutex_lock(&e->env.lock);
	ret = ref_engine_open_locked(e, attr, pid, cpu, group_fd, flags);
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

int ref_engine_close(struct ref_engine *e, int fd)
{
	struct ref_defer d = {0};
	struct ref_event *ev;

	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	if (!ev) {
		pthread_mutex_unlock(&e->env.lock);
		return -EBADF;
	}
	ref_engine_fd_remove(e, fd);
	ev->fd = -1;
	/* A mapping keeps the event alive and writing, as it keeps the file open. */
	ref_event_put(ev, &d);
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	return 0;
}

ssize_t ref_engine_read(struct ref_engine *e, int fd, void *buf, size_t count)
{
	struct ref_event *ev;
	ssize_t ret;

	ref_engine_flush_for_read(e, fd);
	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	ret = ev ? ref_event_read(ev, buf, count) : -EBADF;
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

ssize_t ref_engine_write(struct ref_engine *e, int fd, const void *buf, size_t count)
{
	struct ref_event *ev;

	(void)buf;
	(void)count;
	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	pthread_mutex_unlock(&e->env.lock);
	/* perf fds have no write method: vfs_write() answers EINVAL. */
	return ev ? -EINVAL : -EBADF;
}

int ref_engine_ioctl(struct ref_engine *e, int fd, unsigned long request, unsigned long arg)
{
	struct ref_defer d = {0};
	struct ref_event *ev;
	int ret;

	ref_engine_flush_for_ioctl(e, fd, request, arg);
	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	ret = ev ? ref_event_ioctl(ev, request, arg, &d) : -EBADF;
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

int ref_engine_fcntl(struct ref_engine *e, int fd, int cmd, unsigned long arg, int sig_fd)
{
	struct ref_event *ev;
	int ret;

	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	ret = ev ? ref_event_fcntl(ev, cmd, arg, sig_fd) : -EBADF;
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

/* The mmap flags do_mmap() lets through MAP_SHARED_VALIDATE on a file without
 * FOP_MMAP_SYNC (include/linux/mman.h LEGACY_MAP_MASK, x86's values): any other bit,
 * MAP_SYNC among them, is EOPNOTSUPP there and silently dropped by MAP_SHARED. */
#define LEGACY_MAP_MASK                                                                  \
	(0x01ul | 0x02ul | 0x10ul | 0x20ul | 0x40ul | 0x80ul | 0x100ul | 0x800ul |        \
	 0x1000ul | 0x2000ul | 0x4000ul | 0x8000ul | 0x10000ul | 0x20000ul | 0x40000ul |   \
	 0x4000000ul | (21ul << 26) | (30ul << 26))

/* Whether the host lets this process map len bytes, asked with a mapping of the length
 * given back at once. PROT_NONE with MAP_NORESERVE asks for room only, as
 * get_unmapped_area() looks for it: a length past TASK_SIZE, or one no gap is wide enough
 * for, has none. A private writable mapping is also charged to the commit limit
 * (mmap_region(): accountable_mapping(), the overcommit policy). */
static int vm_host_allows(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, len);
	return 1;
}

/* What ksys_mmap_pgoff() and do_mmap() (mm/mmap.c) refuse before the file's mmap sees
 * the call, in their order. The anonymous-inode mount of perf fds is noexec. */
static int vm_check(long ps, size_t length, int prot, int flags, off_t offset)
{
	uint64_t pgoff = (uint64_t)offset / (uint64_t)ps;
	size_t len = (length + (size_t)ps - 1) & ~((size_t)ps - 1);

	if (flags & MAP_HUGETLB)
		return -EINVAL;
	if (!length)
		return -EINVAL;
	if (!len)
		return -ENOMEM;
	if (pgoff + len / (size_t)ps < pgoff)
		return -EOVERFLOW;
	if (!vm_host_allows(len, PROT_NONE, MAP_NORESERVE))
		return -ENOMEM;
	/* file_mmap_ok(): an anonymous inode may map up to ULONG_MAX */
	if (pgoff > (UINT64_MAX - len) / (uint64_t)ps)
		return -EOVERFLOW;
	switch (flags & MAP_TYPE) {
	case MAP_SHARED_VALIDATE:
		if ((unsigned long)flags & ~LEGACY_MAP_MASK)
			return -EOPNOTSUPP;
		/* fall through */
	case MAP_SHARED:
	case MAP_PRIVATE:
		if (prot & PROT_EXEC)
			return -EPERM;
		break;
	default:
		return -EINVAL;
	}
	if ((flags & MAP_TYPE) == MAP_PRIVATE && (prot & PROT_WRITE) && !(flags & MAP_NORESERVE) &&
	    !vm_host_allows(len, PROT_READ | PROT_WRITE, 0))
		return -ENOMEM;
	return 0;
}

int ref_engine_mmap(struct ref_engine *e, int fd, size_t length, int prot, int flags,
		    off_t offset, void **addr)
{
	struct ref_defer d = {0};
	long ps = e->env.lim.page_size;
	struct ref_event *ev;
	int ret;

	/* x86's mmap() refuses an offset off a page boundary before it looks at the fd
	 * (arch/x86/kernel/sys_x86_64.c). */
	if (offset & (ps - 1))
		return -EINVAL;
	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	ret = ev ? vm_check(ps, length, prot, flags, offset) : -EBADF;
	if (!ret)
		ret = ref_event_mmap(ev, length, prot, flags, offset, addr, &d);
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

int ref_engine_munmap(struct ref_engine *e, void *addr, size_t length)
{
	struct ref_defer d = {0};
	int ret;

	pthread_mutex_lock(&e->env.lock);
	ret = ref_event_munmap_locked(&e->env, addr, length, &d);
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

static void deadline_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int ref_engine_poll(struct ref_engine *e, int fd, short events, int timeout_ms)
{
	struct timespec deadline;
	struct ref_event *ev;
	int ret;

	if (timeout_ms > 0)
		deadline_after(&deadline, timeout_ms);
	ref_engine_flush_ring(e, fd);
	pthread_mutex_lock(&e->env.lock);
	for (;;) {
		ev = ref_engine_fd_lookup(e, fd);
		if (!ev) {
			ret = -EBADF;
			break;
		}
		/* POLLHUP and POLLERR are reported whether asked for or not. */
		ret = ref_event_poll_locked(ev) & (events | POLLHUP | POLLERR);
		if (ret || !timeout_ms)
			break;
		if (timeout_ms < 0) {
			pthread_cond_wait(&e->env.wake, &e->env.lock);
		} else if (pthread_cond_timedwait(&e->env.wake, &e->env.lock, &deadline) ==
			   ETIMEDOUT) {
			ev = ref_engine_fd_lookup(e, fd);
			ret = ev ? ref_event_poll_locked(ev) & (events | POLLHUP | POLLERR) : -EBADF;
			break;
		}
	}
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

int ref_engine_inject_sample(struct ref_engine *e, int fd, const struct pecs_sample *s)
{
	struct ref_event *ev;
	int ret;

	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	ret = ev ? ref_event_deliver_locked(ev, s) : -EBADF;
	if (ret >= 0)
		ev->injected = 1;
	pthread_mutex_unlock(&e->env.lock);
	return ret == REF_DELIVER_OFF ? 0 : ret;
}

int ref_engine_attach_sampler(struct ref_engine *e, int fd, const struct ref_sampler_ops *ops,
			      void *priv)
{
	struct ref_defer d = {0};
	struct ref_event *ev;
	int ret;

	if (!ops)
		return -EINVAL;
	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	ret = ev ? ref_event_attach_sampler(ev, ops, priv, &d) : -EBADF;
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	return ret;
}

/* perf_event_task_enable/disable(): the events the calling thread created (its
 * perf_event_list, left at close), each as IOC_ENABLE/DISABLE without the group flag,
 * with no policy check. The caller is the thread running this call. */
static int task_perf_events(struct ref_engine *e, int on)
{
	struct ref_defer d = {0};
	pid_t me = gettid();

	pthread_mutex_lock(&e->env.lock);
	for (size_t i = 0; i < e->nr_fds; i++) {
		struct ref_event *ev = e->fds[i];

		if (ev && ev->owner_tid == me)
			(on ? ref_event_enable : ref_event_disable)(ev, &d);
	}
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	return 0;
}

int ref_engine_task_event(struct ref_engine *e, const struct pecs_task_event *te)
{
	struct pecs_task_event mine;
	struct pecs_sample who = { .size = sizeof(who) };
	struct timespec ts;
	int cpu = sched_getcpu();
	int err = pecs_opts_load(&mine, sizeof(mine), te,
				 PECS_OPTS_SIZE_TO(pecs_task_event, comm));

	if (err)
		return err;
	if (mine.what < PECS_TASK_SYSCALL_ENTER || mine.what > PECS_TASK_PERF_EVENTS_ENABLE)
		return -EINVAL;
	if (mine.what >= PECS_TASK_PERF_EVENTS_DISABLE)
		return task_perf_events(e, mine.what == PECS_TASK_PERF_EVENTS_ENABLE);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	who.pid = (uint32_t)getpid();
	who.tid = (uint32_t)gettid();
	who.time = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	who.cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	pthread_mutex_lock(&e->env.lock);
	for (size_t i = 0; i < e->nr_fds; i++)
		if (e->fds[i])
			ref_event_task_event(e->fds[i], &mine, &who);
	pthread_mutex_unlock(&e->env.lock);
	return 0;
}
