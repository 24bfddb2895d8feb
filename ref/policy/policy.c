#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pecs/opts.h"
#include "ref/policy/policy.h"

int ref_policy_copy(struct ref_policy *dst, const struct ref_policy *src)
{
	struct ref_policy p = { .size = sizeof(p) };
	int err = pecs_opts_load(&p, sizeof(p), src, PECS_OPTS_SIZE_TO(ref_policy, uid));

	if (!err)
		*dst = p;
	return err;
}

int ref_policy_capable(const struct ref_policy *p, int cap)
{
	return (p->caps & REF_CAP_MASK(cap)) != 0;
}

int ref_policy_perfmon(const struct ref_policy *p)
{
	return ref_policy_capable(p, REF_CAP_PERFMON) || ref_policy_capable(p, REF_CAP_SYS_ADMIN);
}

int ref_policy_allow_open(const struct ref_policy *p)
{
	if (p->paranoid > 2 && !ref_policy_capable(p, REF_CAP_SYS_ADMIN))
		return -EACCES;
	return (p->lsm_deny & REF_LSM_DENY_OPEN) ? -EACCES : 0;
}

int ref_policy_allow_kernel(const struct ref_policy *p)
{
	if (p->paranoid > 1 && !ref_policy_perfmon(p))
		return -EACCES;
	return (p->lsm_deny & REF_LSM_DENY_KERNEL) ? -EACCES : 0;
}

int ref_policy_allow_cpu(const struct ref_policy *p)
{
	if (p->paranoid > 0 && !ref_policy_perfmon(p))
		return -EACCES;
	return (p->lsm_deny & REF_LSM_DENY_CPU) ? -EACCES : 0;
}

/* Real, effective and saved uid of a task from /proc; -1 when unreadable. */
static int task_uids(pid_t tid, uid_t uids[3])
{
	char path[64], line[256];
	FILE *f;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b, c;

		if (sscanf(line, "Uid: %u %u %u", &a, &b, &c) == 3) {
			uids[0] = a;
			uids[1] = b;
			uids[2] = c;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

int ref_policy_allow_task(const struct ref_policy *p, pid_t tid, int same_process)
{
	uid_t uids[3];

	if (ref_policy_perfmon(p) || same_process)
		return 0;
	/* ptrace_may_access(PTRACE_MODE_READ_REALCREDS) for an unprivileged caller: every
	 * uid of the target must be the caller's. */
	if (tid < 0 || task_uids(tid, uids))
		return -EACCES;
	if (uids[0] != p->uid || uids[1] != p->uid || uids[2] != p->uid)
		return -EACCES;
	return 0;
}

int ref_policy_allow_query_bpf(const struct ref_policy *p)
{
	return ref_policy_perfmon(p) ? 0 : -EPERM;
}

int ref_policy_allow_mlock_over(const struct ref_policy *p)
{
	if (p->paranoid > -1 && !ref_policy_capable(p, REF_CAP_IPC_LOCK))
		return -EPERM;
	return 0;
}

int ref_policy_allow_read(const struct ref_policy *p)
{
	return (p->lsm_deny & REF_LSM_DENY_READ) ? -EACCES : 0;
}

int ref_policy_allow_write(const struct ref_policy *p)
{
	return (p->lsm_deny & REF_LSM_DENY_WRITE) ? -EACCES : 0;
}
