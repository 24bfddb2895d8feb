/* The seam between the suite and an implementation of perf_event_open(2).
 *
 * An implementation fills a struct pecs_impl. Every entry returns a value or a negative
 * errno, as the kernel's own syscall layer does: the syscall adapter is the only place
 * where -1/errno becomes -errno. The struct is extended by appending: `size` says how much
 * of it the implementation knows, and bytes past what the suite knows must be zero (the
 * perf_event_attr and libbpf opts rule), so old plugins keep working and new ones are
 * refused rather than misread.
 *
 * The data the seam carries (pecs/abi.h, sample.h, profiler_stream.h, host_facts.h) is not
 * the suite's: it lives in //abi, which the reference engine and the vectors share.
 */
#ifndef PECS_IMPL_H
#define PECS_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/abi.h"
#include "pecs/host_facts.h"
#include "pecs/profiler_stream.h"
#include "pecs/sample.h"
#include "pecs/task_event.h"

struct pecs_impl {
	size_t size;                 /* sizeof(struct pecs_impl) as the implementation built it */
	const char *name;
	const char *const *features; /* NULL-terminated names from docs/features.txt */

	int (*setup)(void **ctx);    /* fresh state for one case */
	void (*teardown)(void *ctx);

	int (*open)(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags);
	int (*close)(void *ctx, int fd);
	ssize_t (*read)(void *ctx, int fd, void *buf, size_t count);
	int (*ioctl)(void *ctx, int fd, unsigned long request, unsigned long arg);
	/* *addr is the mapping made; with MAP_FIXED or MAP_FIXED_NOREPLACE in flags it is
	 * also where the caller asks for it, as mmap(2)'s addr (otherwise it is not read). */
	int (*mmap)(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		    void **addr);
	int (*munmap)(void *ctx, void *addr, size_t length);
	/* Returns the revents bits (>= 0) or -errno. */
	int (*poll)(void *ctx, int fd, short events, int timeout_ms);

	/* Optional entries: NULL when absent. */
	int (*host_facts)(void *ctx, struct pecs_host_facts *facts);
	ssize_t (*write)(void *ctx, int fd, const void *buf, size_t count);
	/* feature engine.inject: hand one decoded sample to event fd's encoder; -EBADF when
	 * fd is not an open event, -EINVAL when nr_ips is not 0 and ips is NULL (nothing
	 * written) */
	int (*inject_sample)(void *ctx, int fd, const struct pecs_sample *sample);
	/* feature profiler.replay: the stream fd's profiler session will serve. Called on a
	 * sampling event before it first runs (opened disabled, not enabled yet); once the
	 * event has a profiler (its own live one starts when it first runs) -EBUSY, and on a
	 * counting event an error. */
	int (*set_profiler)(void *ctx, int fd, const struct pecs_profiler_stream *stream);
	/* features tracepoint.syscalls and prctl.perf_events: the calling thread did what te
	 * says (a system call, a new name, its events switched off or on). An implementation
	 * that sees the caller's system calls itself (the kernel) has nothing to do; one in
	 * the caller's process counts and samples its syscalls:* tracepoints and writes
	 * PERF_RECORD_COMM from it. 0, or -EINVAL for a te it cannot read. */
	int (*task_event)(void *ctx, const struct pecs_task_event *te);
	/* feature fasync: fcntl(2) on an event fd, for the commands its asynchronous
	 * notification reads: F_GETFL, F_SETFL (O_ASYNC), F_GETOWN, F_SETOWN, F_GETOWN_EX and
	 * F_SETOWN_EX (arg points at a struct f_owner_ex), F_GETSIG, F_SETSIG. Returns what
	 * fcntl returns, or -errno; F_GETOWN of a process group's -pgrp would read as an
	 * errno, so callers ask F_GETOWN_EX for that. sig_fd is the number the program knows
	 * the event by, the si_fd of the signals an F_SETFL that sets O_ASYNC asks for: fd
	 * itself, unless a host such as the interposer hands out numbers of its own. */
	int (*fcntl)(void *ctx, int fd, int cmd, unsigned long arg, int sig_fd);
};

#define PECS_IMPL_SIZE_V1 (offsetof(struct pecs_impl, set_profiler) + sizeof(void *))

/* True when impl's size covers `field` and the entry is set. */
#define PECS_IMPL_HAS(impl, field)                                                  \
	((impl)->size >= offsetof(struct pecs_impl, field) + sizeof((impl)->field) && \
	 (impl)->field != NULL)

/* Checks size and trailing bytes; 0 or -EINVAL with a reason in msg. */
int pecs_impl_check(const struct pecs_impl *impl, char *msg, size_t msglen);

/* Each adapter library defines this; the runners link exactly one adapter. */
const struct pecs_impl *pecs_adapter(void);
/* Optional (weak): an adapter running foreign code (a plugin) defines it to return 1, and
 * the standalone runner then isolates each case in a child unless told --no-isolate. */
int pecs_adapter_isolates(void) __attribute__((weak));

#endif /* PECS_IMPL_H */
