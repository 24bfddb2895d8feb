/* Facts about a task that Linux reads from its own structures (at an overflow, at a
 * read) and the engine has to look up through /proc and the cgroup filesystem. */
#ifndef REF_HOST_H
#define REF_HOST_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>

/* What the lookups keep between samples. Owned by an engine and used under its lock:
 * the caches are one engine's, not the process's. Zero-initialise with
 * REF_HOST_CACHE_INIT. */
struct ref_host_cache {
	/* cgroup_id.c: the controller's hierarchy (-EAGAIN: not looked up yet) and the id
	 * of the last cgroup path found. */
	int cgroup_hier;
	char cgroup_path[4096];
	uint64_t cgroup_id;
	/* page_size.c: the mapping last looked up (end 0: none). */
	pid_t page_task;
	uint64_t page_start, page_end, page_size;
};
#define REF_HOST_CACHE_INIT { .cgroup_hier = -EAGAIN }

/* PERF_SAMPLE_CGROUP: the id of the task's cgroup in the hierarchy the perf_event
 * controller is on (the kernfs node id, which is the directory's inode number on 64-bit
 * hosts; 1 for a root). 0, or -ENOENT when the kernel has no perf_event controller or
 * the cgroup cannot be found, or another negative errno from /proc. */
int ref_host_cgroup_id(struct ref_host_cache *c, pid_t task, uint64_t *id);

/* PERF_SAMPLE_CODE_PAGE_SIZE: the size of the page mapping addr in the task's address
 * space, 0 when no page is present there (perf_get_page_size()). The huge page size
 * for hugetlb mappings and for a mapping wholly backed by PMD-sized transparent huge
 * pages; a partly huge mapping reports its base page size. */
uint64_t ref_host_page_size(struct ref_host_cache *c, pid_t task, uint64_t addr);

/* Field (1-based, as proc(5) numbers them; 3 and up) of the stat line of task tid:
 * /proc/<pid>/task/<tid>/stat, or /proc/<tid>/stat when pid is 0. *state, when asked,
 * gets field 3. 0, or a negative errno (-EINVAL for a line it cannot read). Signed fields
 * (ppid of a task whose parent is gone, for one) come back as their two's complement. */
int ref_host_stat_field(pid_t pid, pid_t tid, int field, uint64_t *out, char *state);

/* The file at path, NUL-terminated, at most cap - 1 bytes of it: its length, or a
 * negative errno. */
ssize_t ref_host_read_file(const char *path, char *buf, size_t cap);

/* The task's comm (what an exec sets), at most len - 1 bytes of it. 0 or -errno. */
int ref_host_stat_comm(pid_t tid, char *comm, size_t len);

/* The runtime of task tid in ns (sum_exec_runtime, the first field of its schedstat):
 * /proc/<pid>/task/<tid>/schedstat, or /proc/<tid>/schedstat when pid is 0. The one clock
 * of another process's thread this process may read: thread CPU clocks stop at the
 * thread group. 0, or a negative errno (-EINVAL for a line it cannot read). */
int ref_host_schedstat_ns(pid_t pid, pid_t tid, uint64_t *ns);

/* A syscalls:sys_enter_* or sys_exit_* tracepoint, or raw_syscalls:sys_enter or
 * sys_exit, which fire for every call (tracefs.c). */
struct ref_syscall_tp {
	int any;        /* raw_syscalls: every call, nr -1 */
	int nr;         /* the call's number; -1 when this libc has no name for it */
	int exit;       /* sys_exit_*: the record carries ret, not args */
	uint32_t nargs; /* sys_enter_*: the arguments its record carries */
	uint16_t type;  /* the id, which records carry as common_type */
};
/* The syscall tracepoint with tracefs id `id`: 0; -ENOENT when tracefs has none with that
 * id; -EACCES when no tracefs could be read. */
int ref_host_syscall_tp(uint64_t id, struct ref_syscall_tp *tp);
/* The number of the call tracefs names `name` (getsid, newstat...), or -1. */
int ref_host_syscall_nr(const char *name);

#endif /* REF_HOST_H */
