/* Permission rules of perf_event_open(2) and the calls on its fds: the paranoid level,
 * capabilities, task ownership and the LSM-style deny mask of struct ref_policy.
 * Each check returns 0 or the negative errno Linux gives for that refusal. */
#ifndef REF_POLICY_H
#define REF_POLICY_H

#include <sys/types.h>

#include "pecs/ref.h"

/* A copy of the caller's policy with unknown trailing fields refused. */
int ref_policy_copy(struct ref_policy *dst, const struct ref_policy *src);

int ref_policy_perfmon(const struct ref_policy *p);   /* CAP_PERFMON or CAP_SYS_ADMIN */
int ref_policy_capable(const struct ref_policy *p, int cap);

/* paranoid > 2 without CAP_SYS_ADMIN, then the open hook (perf_event_open entry). */
int ref_policy_allow_open(const struct ref_policy *p);
/* Kernel-side visibility: paranoid > 1 without perfmon (perf_allow_kernel). */
int ref_policy_allow_kernel(const struct ref_policy *p);
/* cpu-wide events: paranoid > 0 without perfmon (perf_allow_cpu). */
int ref_policy_allow_cpu(const struct ref_policy *p);
/* Another process's task: perfmon, or ptrace-like ownership (perf_check_permission).
 * proc_tid: the task as /proc names it (-1: unknown, refused unless privileged);
 * same_process: the target is a thread of the calling process. */
int ref_policy_allow_task(const struct ref_policy *p, pid_t proc_tid, int same_process);
/* QUERY_BPF: perfmon only, EPERM otherwise. */
int ref_policy_allow_query_bpf(const struct ref_policy *p);
/* mmap beyond the mlock allowance: CAP_IPC_LOCK or paranoid -1. */
int ref_policy_allow_mlock_over(const struct ref_policy *p);
/* read(2)/mmap(2) and ioctl(2) hooks (security_perf_event_read/write). */
int ref_policy_allow_read(const struct ref_policy *p);
int ref_policy_allow_write(const struct ref_policy *p);

#endif /* REF_POLICY_H */
