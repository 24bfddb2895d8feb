#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ref/attr/attr.h"
#include "ref/policy/policy.h"
#include "ref/uaccess/uaccess.h"

#define BRANCH_USER (1ull << 0)
#define BRANCH_KERNEL (1ull << 1)
#define BRANCH_HV (1ull << 2)
#define BRANCH_PLM_ALL (BRANCH_USER | BRANCH_KERNEL | BRANCH_HV)
#define BRANCH_MAX (1ull << 20)

/* x86-64 perf_reg_validate(): DS, ES, FS, GS cannot be sampled, 24..31 are holes. */
#define X86_REGS_NOSUPPORT ((1ull << 12) | (1ull << 13) | (1ull << 14) | (1ull << 15))
#define X86_REGS_RESERVED (0xffull << 24)

static int regs_validate(uint64_t mask)
{
	if (!mask || (mask & (X86_REGS_NOSUPPORT | X86_REGS_RESERVED)))
		return -EINVAL;
	return 0;
}

/* uattr is the caller's address, which may be NULL or wild: only uaccess may touch it.
 * Its bytes are found by integer arithmetic, as `&uattr->size` or `uattr + n` on such a
 * pointer is undefined behaviour in C (and UBSan says so), not a -EFAULT. */
static void *user_at(const struct pecs_attr *uattr, size_t off)
{
	return (void *)((uintptr_t)uattr + off);
}

static int size_error(struct pecs_attr *uattr)
{
	uint32_t latest = PECS_ATTR_SIZE_LATEST;

	/* perf_copy_attr() ignores a fault here: E2BIG either way. */
	(void)ref_uaccess_copy_to_user(user_at(uattr, offsetof(struct pecs_attr, size)), &latest,
				       sizeof(latest));
	return -E2BIG;
}

/* branch_sample_type: its privilege bits default from the exclude_* flags, and asking
 * for kernel or hypervisor branches needs what a kernel-visible event needs. */
static int branch_validate(struct pecs_attr *out, const struct ref_policy *pol)
{
	uint64_t mask = out->branch_sample_type;

	if (mask & ~(BRANCH_MAX - 1))
		return -EINVAL;
	if (!(mask & ~BRANCH_PLM_ALL))
		return -EINVAL;
	if (!(mask & BRANCH_PLM_ALL)) {
		if (!(out->flags & PECS_ATTR_EXCLUDE_KERNEL))
			mask |= BRANCH_KERNEL;
		if (!(out->flags & PECS_ATTR_EXCLUDE_USER))
			mask |= BRANCH_USER;
		if (!(out->flags & PECS_ATTR_EXCLUDE_HV))
			mask |= BRANCH_HV;
		out->branch_sample_type = mask;
	}
	if (mask & (BRANCH_KERNEL | BRANCH_HV))
		return ref_policy_allow_kernel(pol);
	return 0;
}

int ref_attr_copy(struct pecs_attr *uattr, struct pecs_attr *out, const struct ref_limits *lim,
		  const struct ref_policy *pol)
{
	uint32_t size;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	ret = ref_uaccess_copy_from_user(&size, user_at(uattr, offsetof(struct pecs_attr, size)),
					 sizeof(size));
	if (ret)
		return ret;
	if (!size)
		size = PECS_ATTR_SIZE_VER0;
	if (size < PECS_ATTR_SIZE_VER0 || size > (uint64_t)lim->page_size)
		return size_error(uattr);
	/* copy_struct_from_user(): a newer caller's tail must be zero. */
	if (size > sizeof(*out)) {
		ret = ref_uaccess_check_zeroed_user(user_at(uattr, sizeof(*out)),
						    size - sizeof(*out));
		if (ret < 0)
			return ret;
		if (!ret)
			return size_error(uattr);
	}
	ret = ref_uaccess_copy_from_user(out, uattr, size < sizeof(*out) ? size : sizeof(*out));
	if (ret)
		return ret;
	out->size = size;

	if ((out->flags & PECS_ATTR_RESERVED_MASK) || out->reserved_2 ||
	    (out->aux_action & PECS_AUX_ACTION_RESERVED_MASK))
		return -EINVAL;
	if (out->sample_type & ~(PECS_SAMPLE_MAX - 1))
		return -EINVAL;
	if (out->read_format & ~(PECS_FORMAT_MAX - 1))
		return -EINVAL;

	if (out->sample_type & PECS_SAMPLE_BRANCH_STACK) {
		ret = branch_validate(out, pol);
		if (ret)
			return ret;
	}

	if (out->sample_type & PECS_SAMPLE_REGS_USER) {
		ret = regs_validate(out->sample_regs_user);
		if (ret)
			return ret;
	}

	if (out->sample_type & PECS_SAMPLE_STACK_USER) {
		/* The size is a u32 but a record's size is a u16. */
		if (out->sample_stack_user >= 0xffff || (out->sample_stack_user & 7))
			return -EINVAL;
	}

	if (!out->sample_max_stack)
		out->sample_max_stack = (uint16_t)lim->max_stack;

	/* Linux keeps this error pending: the checks below win over it. */
	if (out->sample_type & PECS_SAMPLE_REGS_INTR)
		ret = regs_validate(out->sample_regs_intr);

	if ((out->sample_type & PECS_SAMPLE_WEIGHT) && (out->sample_type & PECS_SAMPLE_WEIGHT_STRUCT))
		return -EINVAL;
	if (!(out->flags & PECS_ATTR_INHERIT) && (out->flags & PECS_ATTR_INHERIT_THREAD))
		return -EINVAL;
	if ((out->flags & PECS_ATTR_REMOVE_ON_EXEC) && (out->flags & PECS_ATTR_ENABLE_ON_EXEC))
		return -EINVAL;
	if ((out->flags & PECS_ATTR_SIGTRAP) && !(out->flags & PECS_ATTR_REMOVE_ON_EXEC))
		return -EINVAL;
	return ret;
}
