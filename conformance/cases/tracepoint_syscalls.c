/* The syscalls:* tracepoints (PERF_TYPE_TRACEPOINT, config a tracefs id) and the COMM
 * record of prctl(PR_SET_NAME): what Linux raises from its syscall entry and exit
 * (perf_syscall_enter(), perf_syscall_exit()) and from __set_task_comm(). The calls are
 * made through toolkit/task.h, so that an implementation in this process is told of
 * them; the kernel sees them itself. Measured on Linux 6.18 as root; without a readable
 * tracefs the ids are unknown and the cases skip. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/task.h"

#define CALLS 7

static uint64_t tp_id(struct pecs_t *t, const char *event, uint32_t *nargs)
{
	uint32_t n = 0;
	uint64_t id = 0;
	int err = pecs_tracefs_syscall(event, &id, &n);

	if (err == -EACCES)
		PECS_ENV_SKIP(t, "no readable tracefs (/sys/kernel/tracing): the syscalls:* "
			      "tracepoint ids are not known to this process");
	if (err)
		PECS_ENV_SKIP(t, "tracefs has no syscalls:%s (%s)", event, pecs_retname(err));
	if (nargs)
		*nargs = n;
	return id;
}

static void tp_attr(struct pecs_t *t, struct pecs_attr *a, uint64_t id)
{
	pecs_attr_counting(t, a, id);
	a->type = PECS_TYPE_TRACEPOINT;
}

static long call(struct pecs_t *t, long nr, uint64_t arg)
{
	const uint64_t args[6] = {arg};
	long r = pecs_task_syscall(t, nr, args);

	if (r == -ENOSYS)
		PECS_UNSUPPORTED(t, "the implementation has no task_event entry");
	return r;
}

/* Each entry into and return from getppid counts once on the thread's enter and exit
 * events; another call (getpgid) counts on neither. */
PECS_CASE("Required.Open.Tracepoint.SyscallEnterCountsCalls", "counting,tracepoint.syscalls",
	  "TP-SYSCALL-COUNT")
{
	uint64_t enter = tp_id(t, "sys_enter_getppid", NULL);
	uint64_t exit = tp_id(t, "sys_exit_getppid", NULL);
	struct pecs_attr a;
	uint64_t v[2] = {~0ull, ~0ull};
	long ppid = (long)getppid(); /* before the events count */
	int fd[2];

	tp_attr(t, &a, enter);
	fd[0] = PECS_OPEN(t, &a, 0, -1, -1, 0);
	tp_attr(t, &a, exit);
	fd[1] = PECS_OPEN(t, &a, 0, -1, -1, 0);
	for (int i = 0; i < 2; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	for (int i = 0; i < CALLS; i++)
		PECS_CHECK_EQ(t, call(t, SYS_getppid, 0), ppid);
	call(t, SYS_getpgid, 0);
	for (int i = 0; i < 2; i++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
		PECS_CHECK_EQ(t, pecs_read(t, fd[i], &v[i], sizeof(v[i])), 8);
	}
	PECS_CHECK(t, v[0] == CALLS && v[1] == CALLS,
		   "sys_enter_getppid counted %llu, sys_exit_getppid %llu, after %d calls",
		   (unsigned long long)v[0], (unsigned long long)v[1], CALLS);
}

/* One sample per call with period 1, PERF_SAMPLE_RAW in struct syscall_trace_enter's
 * layout (common_type = the id, common_pid = the thread, __syscall_nr, then the
 * arguments the format lists) or syscall_trace_exit's (the return value at offset 16),
 * padded so that size and payload fill u64s. Bytes 2-3 (flags, preempt count) and the
 * hole at 12-15 are the kernel's business and not checked. */
static void check_raw(struct pecs_t *t, struct pecs_ring *r, uint64_t id, uint32_t nargs,
		      int exit, uint64_t want)
{
	uint32_t raw_size = ((16 + 8 * nargs + 4 + 7) & ~7u) - 4;
	const struct pecs_record_header *rec;
	uint8_t raw[128];
	uint64_t w[2], v;
	uint32_t size;
	int32_t pid, nr;
	uint16_t type;
	int n = 0, ret;

	while ((ret = pecs_ring_next(r, &rec)) > 0) {
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_EQ(t, rec->size, sizeof(*rec) + sizeof(w) + 4 + raw_size);
		memcpy(w, rec + 1, sizeof(w));
		PECS_CHECK_EQ(t, w[0], (uint64_t)pecs_gettid() << 32 | (uint32_t)getpid());
		PECS_CHECK_EQ(t, w[1], 1);
		memcpy(&size, (const uint8_t *)(rec + 1) + sizeof(w), 4);
		PECS_CHECK_EQ(t, size, raw_size);
		memcpy(raw, (const uint8_t *)(rec + 1) + sizeof(w) + 4, raw_size);
		memcpy(&type, raw, 2);
		memcpy(&pid, raw + 4, 4);
		memcpy(&nr, raw + 8, 4);
		memcpy(&v, raw + 16, 8);
		PECS_CHECK(t, type == (uint16_t)id, "%s sample %d: common_type %u, the id is %llu",
			   exit ? "exit" : "enter", n, type, (unsigned long long)id);
		PECS_CHECK_EQ(t, pid, pecs_gettid());
		PECS_CHECK_EQ(t, nr, SYS_getpgid);
		PECS_CHECK(t, v == want, "%s sample %d: %s %#llx, want %#llx",
			   exit ? "exit" : "enter", n, exit ? "ret" : "args[0]",
			   (unsigned long long)v, (unsigned long long)want);
		for (uint32_t i = 16 + 8 * nargs; i < raw_size; i++)
			PECS_CHECK(t, raw[i] == 0, "%s sample %d: pad byte %u is %#x",
				   exit ? "exit" : "enter", n, i, raw[i]);
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n == CALLS, "%d %s samples after %d calls", n, exit ? "exit" : "enter",
		   CALLS);
}

PECS_CASE("Required.Record.Tracepoint.SyscallSampleRawLayout", "mmap,tracepoint.syscalls",
	  "TP-SYSCALL-SAMPLE-RAW")
{
	uint32_t nargs = 0;
	uint64_t id[2] = {tp_id(t, "sys_enter_getpgid", &nargs),
			  tp_id(t, "sys_exit_getpgid", NULL)};
	struct pecs_attr a;
	struct pecs_ring r[2];
	long pid = (long)getpid(), pgrp = (long)getpgrp(); /* before the events count */
	int fd[2];

	PECS_CHECK(t, nargs == 1, "the getpgid entry format lists %u arguments, not 1", nargs);
	for (int i = 0; i < 2; i++) {
		tp_attr(t, &a, id[i]);
		a.sample_period = 1;
		a.sample_type = PECS_SAMPLE_TID | PECS_SAMPLE_PERIOD | PECS_SAMPLE_RAW;
		fd[i] = PECS_OPEN(t, &a, 0, -1, -1, 0);
		PECS_CHECK_OK(t, pecs_ring_map(t, fd[i], 8, PROT_READ | PROT_WRITE, &r[i]));
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_ENABLE, 0));
	}
	for (int i = 0; i < CALLS; i++)
		PECS_CHECK_EQ(t, call(t, SYS_getpgid, (uint64_t)pid), pgrp);
	call(t, SYS_getppid, 0);
	for (int i = 0; i < 2; i++)
		PECS_CHECK_OK(t, pecs_ioctl(t, fd[i], PECS_IOC_DISABLE, 0));
	check_raw(t, &r[0], id[0], 1, 0, (uint64_t)pid);
	check_raw(t, &r[1], id[1], 1, 1, (uint64_t)pgrp);
}

static char old_name[16];

static void restore_name(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, old_name, 0, 0, 0);
}

/* __set_task_comm() calls perf_event_comm(task, false): each new name goes to the events
 * with attr.comm that see the thread as PERF_RECORD_COMM without COMM_EXEC in misc, pid
 * and tid then the name cut to 15 bytes, NUL-terminated and padded to 8, and the
 * sample_id_all trailer. */
PECS_CASE("Required.Record.Comm.SetNameWritesComm", "mmap,tracepoint.syscalls",
	  "REC-COMM-SET-NAME")
{
	static const char *const names[] = {"pecs-comm", "pecs-comm-name-longer"};
	const struct pecs_record_header *rec;
	struct pecs_attr a;
	struct pecs_ring r;
	uint32_t w[2];
	uint64_t trailer;
	char name[16], want[16];
	int fd, n = 0, ret;

	PECS_SAFE_SYS(t, prctl(PR_GET_NAME, old_name, 0, 0, 0));
	pecs_defer(t, restore_name, NULL);
	pecs_attr_counting(t, &a, PECS_SW_DUMMY);
	a.flags |= PECS_ATTR_COMM | PECS_ATTR_SAMPLE_ID_ALL;
	a.sample_type = PECS_SAMPLE_TID;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	for (int i = 0; i < 2; i++) {
		ret = pecs_task_set_name(t, names[i]);
		if (ret == -ENOSYS)
			PECS_UNSUPPORTED(t, "the implementation has no task_event entry");
		PECS_CHECK_OK(t, ret);
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		PECS_CHECK(t, n < 2, "a record of type %u after the two COMM records", rec->type);
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_COMM);
		PECS_CHECK_EQ(t, rec->misc, 0);
		PECS_CHECK_EQ(t, rec->size, sizeof(*rec) + sizeof(w) + sizeof(name) + 8);
		memcpy(w, rec + 1, sizeof(w));
		PECS_CHECK_EQ(t, w[0], (uint32_t)getpid());
		PECS_CHECK_EQ(t, w[1], (uint32_t)pecs_gettid());
		memcpy(name, (const uint8_t *)(rec + 1) + sizeof(w), sizeof(name));
		memset(want, 0, sizeof(want));
		strncpy(want, names[n], 15);
		PECS_CHECK(t, memcmp(name, want, sizeof(name)) == 0,
			   "COMM %d names '%.16s', want '%s' zero-padded", n, name, want);
		memcpy(&trailer, (const uint8_t *)(rec + 1) + sizeof(w) + sizeof(name), 8);
		PECS_CHECK_EQ(t, trailer, (uint64_t)pecs_gettid() << 32 | (uint32_t)getpid());
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n == 2, "%d COMM records after two names", n);
}
