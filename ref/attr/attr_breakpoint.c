#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ref/attr/attr.h"
#include "ref/policy/policy.h"

/* <linux/hw_breakpoint.h> */
#define BP_R 1u
#define BP_W 2u
#define BP_X 4u
#define BP_INVALID (BP_R | BP_W | BP_X)

/* x86-64's TASK_SIZE_MAX with 4-level page tables: the first address the breakpoint PMU
 * counts as the kernel's. */
#define TASK_SIZE_MAX ((1ull << 47) - 4096)

/* The AMD breakpoint extension, which makes a larger power-of-two length an address
 * mask (X86_FEATURE_BPEXT, "bpext" in /proc/cpuinfo's flags). */
static int host_has_bpext(void)
{
	static int known, has;
	char line[4096];
	FILE *f;

	if (known)
		return has;
	f = fopen("/proc/cpuinfo", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			has = strstr(line, " bpext") != NULL;
			break;
		}
	if (f)
		fclose(f);
	known = 1;
	return has;
}

/* arch_build_bp_info(): the type, then the length, of x86. *align gets the low address
 * bits that must be clear (hw_breakpoint_arch_parse), *span the bytes the kernel-space
 * check covers: the length of the debug register, which is 1 for an instruction and for
 * a masked range. */
static int x86_bp_info(const struct pecs_attr *a, uint64_t *align, uint64_t *span)
{
	uint64_t addr = a->config1, len = a->config2;

	if (addr + len - 1 < addr)
		return -EINVAL;
	switch (a->bp_type) {
	case BP_W:
	case BP_W | BP_R:
		break;
	case BP_X:
		/* an instruction breakpoint has no length of its own, only sizeof(long) */
		*align = 0;
		*span = 1;
		return len == sizeof(long) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
	switch (len) {
	case 1:
	case 2:
	case 4:
	case 8:
		*align = len - 1;
		*span = len;
		return 0;
	default:
		break;
	}
	if (len & (len - 1) || addr & (len - 1))
		return -EINVAL;
	if (!host_has_bpext())
		return -EOPNOTSUPP;
	*align = len - 1;
	*span = 1;
	return 0;
}

int ref_attr_breakpoint(const struct pecs_attr *a, const struct ref_policy *pol)
{
	uint64_t align = 0, span = 1;
	int err;

	/* hw_breakpoint_event_init(), then __reserve_bp_slot()'s basic checks */
	if (a->sample_type & PECS_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	if (a->bp_type == 0 || a->bp_type == BP_INVALID)
		return -EINVAL;
	err = x86_bp_info(a, &align, &span);
	if (err)
		return err;
	if (a->config1 & align)
		return -EINVAL;
	/* hw_breakpoint_parse(): a range reaching the kernel's half */
	if (a->config1 >= TASK_SIZE_MAX || a->config1 + span - 1 >= TASK_SIZE_MAX) {
		if (a->flags & PECS_ATTR_EXCLUDE_KERNEL)
			return -EINVAL;
		if (!ref_policy_capable(pol, REF_CAP_SYS_ADMIN))
			return -EPERM;
	}
	/* A valid breakpoint needs a debug register of the watched thread. User space sets
	 * them only with ptrace(PTRACE_POKEUSER), which Linux refuses within one thread group
	 * (EPERM, measured: ref-engine-notes.md), and the engine lives in the caller's
	 * process: no register is free for it, as when every slot is taken (ENOSPC,
	 * __reserve_bp_slot). */
	return -ENOSPC;
}
