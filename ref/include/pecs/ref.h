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
struct ref_event;
struct ref_sampler_ops;

/* Where a sampling event's samples come from when nobody attached a profiler to it
 * (ref_engine_attach_sampler()) before it first ran. The engine asks once per event,
 * without its lock held, the first time the event is scheduled in; a Starnix kernel
 * likewise opens a profiler session for each sampling event itself. attach fills *ops
 * and *priv as ref_engine_attach_sampler() takes them and returns 0, or returns a
 * negative errno: the event then counts but writes no samples, as an event whose PMU
 * could not start, and is not asked about again. */
struct ref_profiler_provider {
	size_t size;
	int (*attach)(void *arg, struct ref_event *ev, struct ref_sampler_ops *ops, void **priv);
	void *arg;
};

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

/* A profiler that feeds one event with live samples (the sampler and replay profilers
 * in ref/profiler implement it). start runs when the event becomes enabled, stop when
 * it is disabled (before the disable returns, so stop may still deliver the samples it
 * has buffered), release when the event goes away. None of them runs under the engine
 * lock; samples come back through ref_event_deliver_sample() (ref/event/event_deliver.c).
 * An event that disables itself (REFRESH limit reached) does not call stop: delivery
 * then returns REF_DELIVER_OFF and drops the sample. */
struct ref_sampler_ops {
	size_t size;
	int (*start)(void *priv, struct ref_event *ev);
	void (*stop)(void *priv, struct ref_event *ev);
	void (*release)(void *priv);
	/* Optional: delivers every sample taken so far before it returns. Linux writes a
	 * sample at the overflow itself, so a call made after it sees it; a profiler that
	 * hands samples over later is flushed first by the calls that depend on them:
	 * read(2) (counts, LOST), poll(2), and the RESET, REFRESH, PERIOD, SET_OUTPUT and
	 * PAUSE_OUTPUT ioctls (each applies to later samples only). Not under the engine
	 * lock; it may run while the event is disabled, and then has nothing to do. */
	void (*flush)(void *priv, struct ref_event *ev);
	/* Optional: the running event's period changed (IOC_PERIOD); the profiler re-reads
	 * ref_event_get_info(). Linux's hrtimer takes the new period from its next
	 * expiry. Called after the ioctl, not under the engine lock. */
	void (*reconfigure)(void *priv, struct ref_event *ev);
};
/* -EBUSY when the event already has a profiler (attached, or provided when it first
 * ran), -EINVAL for a counting event, -EBADF for an unknown fd. */
int ref_engine_attach_sampler(struct ref_engine *e, int fd, const struct ref_sampler_ops *ops,
			      void *priv);

/* What a profiler needs to know about the event it feeds. */
struct ref_event_info {
	size_t size;
	uint64_t id;
	uint64_t period;    /* sampling period (clock events: ns; freq already converted) */
	uint64_t sample_type;
	pid_t pid, tid;     /* target task; pid -1 for a cpu-wide event */
	int cpu;
	uint32_t max_stack; /* attr.sample_max_stack as open resolved it */
	uint32_t type;      /* attr.type and attr.config: which event it is */
	uint64_t config;
};
int ref_event_get_info(struct ref_event *ev, struct ref_event_info *info);

/* Delivers one sample from a live profiler; same rules as ref_engine_inject_sample().
 * Returns 0 when written or counted lost, REF_DELIVER_OFF when the event is disabled
 * (sample dropped), or a negative errno. */
#define REF_DELIVER_OFF 1
int ref_event_deliver_sample(struct ref_event *ev, const struct pecs_sample *s);
/* A batch of samples under one taking of the engine lock: between begin and end the
 * caller delivers with ref_event_deliver_batched() only (same rules and returns as
 * ref_event_deliver_sample()) and makes no other engine call. */
void ref_event_deliver_begin(struct ref_event *ev);
int ref_event_deliver_batched(struct ref_event *ev, const struct pecs_sample *s);
void ref_event_deliver_end(struct ref_event *ev);

/* nr samples the profiler took but could not keep (its own buffer was full): lost, as
 * perf_output_begin() counts a sample that finds no room. They add to the event's LOST
 * (read(2)) and go out in the next PERF_RECORD_LOST of its ring. Ignored, as on Linux,
 * while the event is off or has no ring with data pages. 0 or a negative errno. */
int ref_event_deliver_lost(struct ref_event *ev, uint64_t nr);

#endif /* PECS_REF_H */
