/* The pecs reference engine: perf_event_open(2) and the calls on its fds, implemented
 * in user space the way Linux 6.12+ behaves for the software events it supports.
 *
 * One struct ref_engine holds all state (events, ids, fds, rings), so tests can run
 * several side by side. Every call returns a value or a negative errno, as the kernel's
 * own syscall layer does; the one exception is ref_engine_new(), which returns the
 * engine or NULL with errno set, as an allocator does. Event fds are engine-local
 * numbers starting at ref_config.first_fd (1000 by default) so they cannot be mistaken
 * for real fds.
 *
 * All calls are thread-safe: one mutex per engine serialises them. Mappings returned by
 * ref_engine_mmap() are real shared memory; a reader thread follows data_head there
 * without taking any engine lock.
 *
 * This is the API users of the engine call; how a profiler plugs into an event is
 * ref's own business (ref/event/profiler_seam.h).
 */
#ifndef PECS_REF_H
#define PECS_REF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/abi.h"
#include "pecs/host_facts.h"
#include "pecs/sample.h"
#include "pecs/task_event.h"

/* Capability bits as numbered by <linux/capability.h>, kept as a mask (1ull << n). */
#define REF_CAP_IPC_LOCK 14
#define REF_CAP_SYS_ADMIN 21
#define REF_CAP_PERFMON 38
#define REF_CAP_MASK(n) (1ull << (n))

/* LSM-style hooks the engine consults after the paranoid/capability rules, as
 * security_perf_event_{open,read,write}() do on Linux; a set bit denies with EACCES. */
#define REF_LSM_DENY_OPEN (1u << 0)   /* perf_event_open itself */
#define REF_LSM_DENY_CPU (1u << 1)    /* cpu-wide events */
#define REF_LSM_DENY_KERNEL (1u << 2) /* events that see kernel state */
#define REF_LSM_DENY_READ (1u << 3)   /* read(2) and mmap(2) */
#define REF_LSM_DENY_WRITE (1u << 4)  /* ioctl(2) */

/* Who is calling: what perf_event_paranoid and the caller's credentials say. */
struct ref_policy {
	size_t size;       /* sizeof(struct ref_policy) as the caller built it */
	int paranoid;      /* kernel.perf_event_paranoid: -1..2; 3 and above deny all (Debian) */
	uint64_t caps;     /* effective capabilities, REF_CAP_MASK() bits */
	uid_t uid;         /* compared with a target task's uids for pid > 0 */
	uint32_t lsm_deny; /* REF_LSM_DENY_* */
};

/* Fills p from the host: /proc/sys/kernel/perf_event_paranoid, capget(2), getuid(2). */
int ref_policy_from_host(struct ref_policy *p);

/* Engine configuration. Zero fields take the host's value (or the default named). */
struct ref_config {
	size_t size;            /* sizeof(struct ref_config) as the caller built it */
	const struct ref_policy *policy; /* NULL: ref_policy_from_host() */
	int ncpus;              /* 0: online CPUs */
	long page_size;         /* 0: sysconf(_SC_PAGESIZE) */
	int max_stack;          /* 0: kernel.perf_event_max_stack */
	int max_sample_rate;    /* 0: kernel.perf_event_max_sample_rate */
	int mlock_kb;           /* 0: kernel.perf_event_mlock_kb */
	uint64_t first_id;      /* 0: 1 */
	int first_fd;           /* 0: 1000 */
	/* Feeds the sampling events no caller attached a profiler to; NULL: they get
	 * injected samples only. */
	const struct ref_profiler_provider *profiler;
};

struct ref_engine;
/* Feeds the sampling events nobody attached a profiler to (ref/profiler's
 * ref_profiler_live() is one); defined with the profiler seam, ref/event/profiler_seam.h. */
struct ref_profiler_provider;

/* NULL with errno set on failure (EINVAL for a bad config, ENOMEM). */
struct ref_engine *ref_engine_new(const struct ref_config *cfg);
/* Releases every event and mapping the engine still holds. */
void ref_engine_free(struct ref_engine *e);

/* perf_event_open(2). attr points at attr->size bytes (at most 4096) the caller owns;
 * like the kernel, the engine writes the size it knows back on E2BIG. */
int ref_engine_open(struct ref_engine *e, struct pecs_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned long flags);
int ref_engine_close(struct ref_engine *e, int fd);
ssize_t ref_engine_read(struct ref_engine *e, int fd, void *buf, size_t count);
ssize_t ref_engine_write(struct ref_engine *e, int fd, const void *buf, size_t count);
/* arg is a pointer value for ID, PERIOD, SET_FILTER, QUERY_BPF and MODIFY_ATTRIBUTES,
 * an engine fd (or -1) for SET_OUTPUT, a real process fd for SET_BPF. */
int ref_engine_ioctl(struct ref_engine *e, int fd, unsigned long request, unsigned long arg);
/* fcntl(2)'s asynchronous notification on an event: F_GETFL/F_SETFL (O_ASYNC),
 * F_GETOWN(_EX)/F_SETOWN(_EX) (the _EX forms take a struct f_owner_ex pointer),
 * F_GETSIG/F_SETSIG. Once O_ASYNC and an owner are set, each overflow signals the owner
 * as Linux does, with si_fd sig_fd: the number the program knows fd by (fd itself,
 * unless the caller hands out numbers of its own). Other commands are EINVAL. */
int ref_engine_fcntl(struct ref_engine *e, int fd, int cmd, unsigned long arg, int sig_fd);
/* With MAP_FIXED or MAP_FIXED_NOREPLACE in flags, *addr is where the ring goes, as
 * mmap(2)'s addr; else it is only written. munmap refuses (EINVAL) a range that cuts a
 * ring's mapping, as perf_mmap_may_split() does. */
int ref_engine_mmap(struct ref_engine *e, int fd, size_t length, int prot, int flags,
		    off_t offset, void **addr);
int ref_engine_munmap(struct ref_engine *e, void *addr, size_t length);
/* Returns revents (POLLIN, POLLHUP) or -errno; waits up to timeout_ms (-1: forever). */
int ref_engine_poll(struct ref_engine *e, int fd, short events, int timeout_ms);

/* Hands one decoded sample to a sampling event, as an overflow would: honours the
 * enabled state, PAUSE_OUTPUT, REFRESH, SET_OUTPUT and wakeups. 0 when handled
 * (written, counted lost or dropped because the event is off); -EINVAL for a counting
 * event; -EBADF for an unknown fd. From the first injection on, the event is the
 * caller's to drive: samples and losses its profiler delivers are dropped, so what
 * reaches the ring is exactly what was injected. */
int ref_engine_inject_sample(struct ref_engine *e, int fd, const struct pecs_sample *s);

/* The calling thread did what te says (entered or left a system call, took a new
 * name): the syscalls:* tracepoint events that see the thread count it and sample it,
 * and events with attr.comm get PERF_RECORD_COMM, as Linux raises them itself. An engine
 * in the caller's process cannot see the caller's system calls; its host (the
 * interposer, a test) says. 0, or -EINVAL for a te it cannot read. */
int ref_engine_task_event(struct ref_engine *e, const struct pecs_task_event *te);

/* The limits and privileges the engine runs with. */
int ref_engine_host_facts(struct ref_engine *e, struct pecs_host_facts *facts);

#endif /* PECS_REF_H */
