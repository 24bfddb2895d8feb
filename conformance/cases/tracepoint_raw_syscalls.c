#define _GNU_SOURCE
/* raw_syscalls:sys_enter and sys_exit (PERF_TYPE_TRACEPOINT, config their tracefs ids)
 * fire for every system call of the thread (trace_sys_enter() and trace_sys_exit() from
 * the syscall entry and exit work). Their SAMPLE_RAW is struct trace_event_raw_sys_enter
 * (the trace_entry header, long id at 8, unsigned long args[6] at 16: 64 bytes) or
 * _sys_exit (long id, long ret: 24 bytes), padded so that with its u32 size it fills whole
 * u64s, as tracefs's format files say. The record is made in the kernel's context
 * (perf_fetch_caller_regs), so an exclude_kernel event sees none of it, and the events
 * need a caller who may see the kernel (perf_event_paranoid 1, or CAP_PERFMON). The
 * calls go through toolkit/task.h so that an implementation in this process is told of
 * them; the kernel sees them, and others (the ioctls around them), itself, so only the
 * samples of the call made are looked at. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/task.h"

#define CALLS 5

static uint64_t raw_tp_id(struct pecs_t *t, const char *event)
{
	uint32_t nargs = 0;
	uint64_t id = 0;
	int err = pecs_tracefs_event("raw_syscalls", event, &id, &nargs);

	if (err == -EACCES)
		PECS_ENV_SKIP(t, "no readable tracefs (/sys/kernel/tracing): the raw_syscalls:* "
			      "tracepoint ids are not known to this process");
	if (err)
		PECS_ENV_SKIP(t, "tracefs has no raw_syscalls:%s (%s)", event, pecs_retname(err));
	return id;
}

/* The samples of call nr in r, each checked against the format: common_type the id,
 * common_pid this thread, the long id, then args (enter) or ret (exit), zero pad. */
static int check_raw(struct pecs_t *t, struct pecs_ring *r, uint64_t id, int exit, long nr,
		     const uint64_t args[6], int64_t ret)
{
	const uint32_t want_size = exit ? 28 : 68; /* 24 or 64, + 4 of pad */
	const struct pecs_record_header *rec;
	uint8_t raw[68];
	uint32_t size;
	uint16_t type;
	int32_t pid;
	int64_t got_nr, got_ret;
	int n = 0, rc;

	while ((rc = pecs_ring_next(r, &rec)) > 0) {
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_EQ(t, rec->size, sizeof(*rec) + 8 + 4 + want_size);
		memcpy(&size, (const uint8_t *)(rec + 1) + 8, 4);
		PECS_CHECK_EQ(t, size, want_size);
		memcpy(raw, (const uint8_t *)(rec + 1) + 8 + 4, want_size);
		memcpy(&got_nr, raw + 8, 8);
		if (got_nr != nr)
			continue; /* another call of the thread's */
		memcpy(&type, raw, 2);
		memcpy(&pid, raw + 4, 4);
		PECS_CHECK_EQ(t, type, (uint16_t)id);
		PECS_CHECK_EQ(t, pid, pecs_gettid());
		if (exit) {
			memcpy(&got_ret, raw + 16, 8);
			PECS_CHECK_EQ(t, got_ret, ret);
		} else {
			PECS_CHECK(t, memcmp(raw + 16, args, 48) == 0,
				   "sys_enter sample %d: args[] are not the call's", n);
		}
		for (uint32_t i = exit ? 24 : 64; i < want_size; i++)
			PECS_CHECK(t, raw[i] == 0, "pad byte %u is %#x", i, raw[i]);
		n++;
	}
	PECS_CHECK_OK(t, rc);
	return n;
}

/* Both events, sampling every hit, enabled; exclude_kernel as asked. */
static void open_both(struct pecs_t *t, const uint64_t id[2], int exclude_kernel, int fd[2],
		      struct pecs_ring r[2])
{
	struct pecs_attr a;

	for (int i = 0; i < 2; i++) {
		pecs_attr_counting(t, &a, id[i]);
		a.type = PECS_TYPE_TRACEPOINT;
		a.sample_period = 1;
		a.sample_type = PECS_SAMPLE_TID | PECS_SAMPLE_RAW;
		if (!exclude_kernel)
			a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
		fd[i] = PECS_OPEN(t, &a, 0, -1, -1, 0);
		PECS_CHECK_OK(t, pecs_ring_map(t, fd[i], 8, PROT_READ | PROT_WRITE, &r[i]));
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	}
}

static void make_calls(struct pecs_t *t, const uint64_t args[6], long pgrp)
{
	for (int i = 0; i < CALLS; i++) {
		long got = pecs_task_syscall(t, SYS_getpgid, args);

		if (got == -ENOSYS)
			PECS_UNSUPPORTED(t, "the implementation has no task_event entry");
		PECS_CHECK_EQ(t, got, pgrp);
	}
}

PECS_CASE("Required.Record.Tracepoint.RawSyscallsSampleEveryCall",
	  "mmap,tracepoint.syscalls", "TP-RAW-SYSCALLS")
{
	uint64_t id[2] = {raw_tp_id(t, "sys_enter"), raw_tp_id(t, "sys_exit")};
	const uint64_t args[6] = {(uint64_t)getpid()};
	long pgrp = (long)getpgrp();
	struct pecs_ring r[2];
	int fd[2], n;

	PECS_NEEDS_PRIVILEGE(t);
	open_both(t, id, 0, fd, r);
	make_calls(t, args, pgrp);
	for (int i = 0; i < 2; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
	n = check_raw(t, &r[0], id[0], 0, SYS_getpgid, args, 0);
	PECS_CHECK(t, n == CALLS, "%d sys_enter samples of getpgid after %d calls", n, CALLS);
	n = check_raw(t, &r[1], id[1], 1, SYS_getpgid, args, pgrp);
	PECS_CHECK(t, n == CALLS, "%d sys_exit samples of getpgid after %d calls", n, CALLS);
}

/* exclude_kernel: the records are the kernel's, so none is counted or sampled. */
PECS_CASE("Required.Record.Tracepoint.RawSyscallsExcludeKernelSeesNone",
	  "mmap,tracepoint.syscalls", "TP-RAW-SYSCALLS-EXCLUDE-KERNEL")
{
	uint64_t id[2] = {raw_tp_id(t, "sys_enter"), raw_tp_id(t, "sys_exit")};
	const uint64_t args[6] = {(uint64_t)getpid()};
	const struct pecs_record_header *rec;
	struct pecs_ring r[2];
	uint64_t count;
	int fd[2];

	open_both(t, id, 1, fd, r);
	make_calls(t, args, (long)getpgrp());
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
		PECS_CHECK_OK(t, pecs_event_value(t, fd[i], &count));
		PECS_CHECK(t, count == 0, "raw_syscalls:%s with exclude_kernel counted %llu",
			   i ? "sys_exit" : "sys_enter", (unsigned long long)count);
		PECS_CHECK(t, pecs_ring_next(&r[i], &rec) == 0,
			   "raw_syscalls:%s with exclude_kernel wrote a record",
			   i ? "sys_exit" : "sys_enter");
	}
}
