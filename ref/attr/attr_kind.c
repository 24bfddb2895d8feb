#include <errno.h>

#include "ref/attr/attr.h"

/* x86 PERF_REG_EXTENDED_MASK: the XMM registers only some hardware PMUs sample. */
#define X86_REGS_EXTENDED (~0ull << 32)

static int software_kind(uint64_t config, int cpu_wide, int user_only, enum ref_kind *kind)
{
	switch (config) {
	case PECS_SW_CPU_CLOCK:
		*kind = REF_KIND_CPU_CLOCK;
		return 0;
	case PECS_SW_TASK_CLOCK:
		*kind = REF_KIND_TASK_CLOCK;
		return 0;
	case PECS_SW_DUMMY:
	case PECS_SW_BPF_OUTPUT:
	/* x86 kernels never raise these two: zero is the honest count. */
	case PECS_SW_ALIGNMENT_FAULTS:
	case PECS_SW_EMULATION_FAULTS:
		*kind = REF_KIND_ZERO;
		return 0;
	case PECS_SW_CGROUP_SWITCHES:
		/* The scheduler raises it with kernel registers, so an event that excludes
		 * the kernel never sees one (measured: 0). With the kernel counted there is
		 * no honest source in user space: a task event is refused here, a cpu-wide
		 * one after the permission check as Linux's PMU takes it (event_cpu_wide.c). */
		if (!cpu_wide && !user_only)
			return -ENOENT;
		*kind = REF_KIND_ZERO;
		return 0;
	default:
		break;
	}
	/* Linux's software PMU takes every config below PERF_COUNT_SW_MAX on a CPU too;
	 * the cpu-wide ones ref has no source for are refused after the checks Linux makes
	 * past the PMU (ref_event_cpu_wide_check()). */
	if (config >= PECS_SW_MAX)
		return -ENOENT;
	switch (config) {
	case PECS_SW_PAGE_FAULTS:
		*kind = REF_KIND_PAGE_FAULTS;
		break;
	case PECS_SW_PAGE_FAULTS_MIN:
		*kind = REF_KIND_PAGE_FAULTS_MIN;
		break;
	case PECS_SW_PAGE_FAULTS_MAJ:
		*kind = REF_KIND_PAGE_FAULTS_MAJ;
		break;
	case PECS_SW_CONTEXT_SWITCHES:
		*kind = REF_KIND_CONTEXT_SWITCHES;
		break;
	default:
		*kind = REF_KIND_CPU_MIGRATIONS;
		break;
	}
	return 0;
}

int ref_attr_kind(const struct pecs_attr *a, int cpu_wide, enum ref_kind *kind,
		  struct ref_syscall_tp *tp, const struct ref_policy *pol)
{
	int err;

	switch (a->type) {
	case PECS_TYPE_SOFTWARE:
		err = software_kind(a->config, cpu_wide,
				    (a->flags & PECS_ATTR_EXCLUDE_KERNEL) != 0, kind);
		break;
	/* Linux's tracepoint PMU refuses an id it does not know with EINVAL. The engine
	 * has the syscalls:* tracepoints, by the host's tracefs ids; an id it cannot find
	 * there (another subsystem's, or tracefs unreadable) is one it does not know. */
	case PECS_TYPE_TRACEPOINT:
		if (a->sample_type & PECS_SAMPLE_BRANCH_STACK)
			return -EOPNOTSUPP;
		if (ref_host_syscall_tp(a->config, tp))
			return -EINVAL;
		*kind = REF_KIND_SYSCALL_TP;
		err = 0;
		break;
	case PECS_TYPE_BREAKPOINT:
		return ref_attr_breakpoint(a, pol);
	default:
		/* HARDWARE, HW_CACHE and RAW without a PMU, and any dynamic type. */
		return -ENOENT;
	}
	if (err)
		return err;
	if (a->sample_type & PECS_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	if ((a->sample_regs_user & X86_REGS_EXTENDED) || (a->sample_regs_intr & X86_REGS_EXTENDED))
		return -EOPNOTSUPP;
	return 0;
}
