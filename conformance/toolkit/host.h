/* What the host says a sample's task-dependent words must be, read from /proc and the
 * cgroup filesystem by the suite itself, never through the implementation. */
#ifndef PECS_TOOLKIT_HOST_H
#define PECS_TOOLKIT_HOST_H

#include <stdint.h>

/* The id of this process's cgroup on the hierarchy holding the perf_event controller:
 * the cgroup directory's inode number (kernfs ids are inode numbers on 64-bit hosts),
 * 1 for an unmounted root. 0, -ENOENT without a perf_event controller, or -errno. */
int pecs_host_cgroup_id(uint64_t *id);

/* The page size at addr in this process: 0 when unmapped or not present, the mapping's
 * KernelPageSize otherwise. *alt is a second size the kernel may report, the PMD size,
 * when part of the mapping is PMD-mapped (user space cannot tell which part), else the
 * same as *size. */
void pecs_host_page_size(uint64_t addr, uint64_t *size, uint64_t *alt);

/* The CPU time the host spent in interrupts and soft interrupts and lost to its
 * hypervisor (steal) since boot, summed over its CPUs (the first line of /proc/stat), in
 * ns; *granule_ns is how coarse each of those three figures is (a USER_HZ tick). A task
 * clock, read from the scheduler clock while the task is on a CPU, counts such time; the
 * task's runtime, and so its rusage, leaves it out. 0 or -errno. */
int pecs_host_uncharged_ns(uint64_t *ns, uint64_t *granule_ns);

#endif /* PECS_TOOLKIT_HOST_H */
