/* Facts about a task that Linux reads from its own structures at an overflow and the
 * engine has to look up through /proc and the cgroup filesystem. */
#ifndef REF_HOST_H
#define REF_HOST_H

#include <stdint.h>
#include <sys/types.h>

/* PERF_SAMPLE_CGROUP: the id of the task's cgroup in the hierarchy the perf_event
 * controller is on (the kernfs node id, which is the directory's inode number on 64-bit
 * hosts; 1 for a root). 0, or -ENOENT when the kernel has no perf_event controller or
 * the cgroup cannot be found, or another negative errno from /proc. */
int ref_host_cgroup_id(pid_t task, uint64_t *id);

/* PERF_SAMPLE_CODE_PAGE_SIZE: the size of the page mapping addr in the task's address
 * space, 0 when no page is present there (perf_get_page_size()). The huge page size
 * for hugetlb mappings and for a mapping wholly backed by PMD-sized transparent huge
 * pages; a partly huge mapping reports its base page size. */
uint64_t ref_host_page_size(pid_t task, uint64_t addr);

#endif /* REF_HOST_H */
