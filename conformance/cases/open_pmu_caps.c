/* Attr features that need a PMU capability no software event has: AUX pausing and AUX
 * output, branch stacks, and the extended (vector) registers. The software PMU refuses
 * them at open; which errno says "malformed" (EINVAL) and which says "well-formed but not
 * here" (EOPNOTSUPP) was measured on Linux 6.18 (perf_copy_attr, perf_event_alloc,
 * perf_try_init_event in kernel/events/core.c). Each case starts from a user-only clock
 * event that opens, so only the field under test can be the reason. */
#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/version.h"

#define AUX_START_PAUSED 1u
#define AUX_PAUSE 2u
#define AUX_RESUME 4u

/* perf_event_attr.branch_sample_type bits (UAPI perf_branch_sample_type) */
#define BRANCH_USER (1ull << 0)
#define BRANCH_KERNEL (1ull << 1)
#define BRANCH_HV (1ull << 2)
#define BRANCH_ANY (1ull << 3)
#define BRANCH_LAST_KNOWN (1ull << 19) /* PERF_SAMPLE_BRANCH_COUNTERS in 6.18 */

static int open_counter_with_aux(struct pecs_t *t, uint32_t aux_action, int aux_output)
{
	struct pecs_attr a;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.aux_action = aux_action;
	if (aux_output)
		a.flags |= PECS_ATTR_AUX_OUTPUT;
	return pecs_open(t, &a, 0, -1, -1, 0);
}

PECS_CASE("Required.Open.Aux.AuxOutputWithoutAuxPmuEopnotsupp", "", "OPEN-AUX-OUTPUT-EOPNOTSUPP")
{
	/* The baseline opens: the refusal below is aux_output's. */
	PECS_CHECK_OK(t, open_counter_with_aux(t, 0, 0));
	PECS_CHECK_ERR(t, open_counter_with_aux(t, 0, 1), EOPNOTSUPP);
}

/* start_paused asks the PMU to start its AUX area paused: a software PMU has none. */
PECS_CASE("Required.Open.Aux.StartPausedEopnotsupp", "", "OPEN-AUX-START-PAUSED-EOPNOTSUPP")
{
	/* Older kernels have no aux_action: its word is reserved there, and any bit in it
	 * is EINVAL (6.1.192's perf_copy_attr; 6.12.118's uapi header has aux_action). That
	 * much is checked; the behaviour itself does not exist there. */
	if (pecs_linux_before(t, 6, 12)) {
		PECS_CHECK_ERR(t, open_counter_with_aux(t, AUX_START_PAUSED, 0), EINVAL);
		PECS_ENV_SKIP(t, "aux_action does not exist before Linux 6.12 (this is %s)",
			      pecs_host(t)->kernel_release);
	}
	PECS_CHECK_ERR(t, open_counter_with_aux(t, AUX_START_PAUSED, 0), EOPNOTSUPP);
	/* with pause or resume as well, start_paused is still what is refused */
	PECS_CHECK_ERR(t, open_counter_with_aux(t, AUX_START_PAUSED | AUX_PAUSE, 0), EOPNOTSUPP);
	PECS_CHECK_ERR(t, open_counter_with_aux(t, AUX_START_PAUSED | AUX_RESUME, 0), EOPNOTSUPP);
}

/* pause and resume act on a group's AUX leader; an event with no such leader is
 * malformed, not merely unsupported. */
PECS_CASE("Required.Open.Aux.PauseResumeWithoutAuxLeaderEinval", "", "OPEN-AUX-PAUSE-EINVAL")
{
	static const uint32_t values[] = {AUX_PAUSE, AUX_RESUME, AUX_PAUSE | AUX_RESUME};

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int r = open_counter_with_aux(t, values[i], 0);

		PECS_CHECK_ERR(t, r, EINVAL, "aux_action %#x", values[i]);
	}
}

static int open_branch_sampler(struct pecs_t *t, uint64_t sample_type, uint64_t mask)
{
	struct pecs_attr a;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, sample_type);
	a.branch_sample_type = mask;
	return pecs_open(t, &a, 0, -1, -1, 0);
}

/* A mask must name at least one branch kind (privilege-level bits alone, or nothing, are
 * not a request) and no bit past the last kind the kernel knows. */
PECS_CASE("Required.Open.Branch.MalformedMaskEinval", "", "OPEN-BRANCH-MASK-EINVAL")
{
	static const uint64_t masks[] = {
		0, BRANCH_USER, BRANCH_KERNEL, BRANCH_HV, BRANCH_USER | BRANCH_KERNEL | BRANCH_HV,
		1ull << 20, (1ull << 20) | BRANCH_ANY | BRANCH_USER,
		(1ull << 63) | BRANCH_ANY | BRANCH_USER,
	};

	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		int r = open_branch_sampler(t, PECS_SAMPLE_IP | PECS_SAMPLE_BRANCH_STACK, masks[i]);

		PECS_CHECK_ERR(t, r, EINVAL, "branch_sample_type %#llx",
			       (unsigned long long)masks[i]);
	}
}

/* A well-formed user-only branch request: no software PMU records branches. The mask is
 * ignored without SAMPLE_BRANCH_STACK. */
PECS_CASE("Required.Open.Branch.SoftwarePmuEopnotsupp", "", "OPEN-BRANCH-EOPNOTSUPP")
{
	static const uint64_t masks[] = {
		BRANCH_ANY | BRANCH_USER,
		BRANCH_ANY, /* no privilege bits: exclude_kernel supplies "user" */
		BRANCH_LAST_KNOWN | BRANCH_ANY | BRANCH_USER,
	};

	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		int r = open_branch_sampler(t, PECS_SAMPLE_IP | PECS_SAMPLE_BRANCH_STACK, masks[i]);
		/* Bit 19 (BRANCH_COUNTERS) came in Linux 6.8; before it the bit is past
		 * PERF_SAMPLE_BRANCH_MAX, a malformed mask (6.1.192's perf_copy_attr). */
		int want = (masks[i] & BRANCH_LAST_KNOWN) && pecs_linux_before(t, 6, 8) ?
				   EINVAL : EOPNOTSUPP;

		PECS_CHECK_ERR(t, r, want, "branch_sample_type %#llx",
			       (unsigned long long)masks[i]);
	}
	PECS_CHECK_OK(t, open_branch_sampler(t, PECS_SAMPLE_IP, BRANCH_ANY | BRANCH_USER));
}

/* On x86-64, sample_regs bits 32..63 name the XMM registers, which only PMUs with the
 * extended-registers capability sample; the mask itself is valid, so EOPNOTSUPP. */
PECS_CASE("Required.Open.Regs.ExtendedRegistersEopnotsupp", "", "OPEN-REGS-EXTENDED-EOPNOTSUPP")
{
#if defined(__x86_64__)
	static const uint64_t masks[] = {1ull << 32, (1ull << 32) | 1, 1ull << 63};
	struct pecs_attr a;

	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000,
				   PECS_SAMPLE_IP | PECS_SAMPLE_REGS_USER);
		a.sample_regs_user = masks[i];
		int r = pecs_open(t, &a, 0, -1, -1, 0);

		PECS_CHECK_ERR(t, r, EOPNOTSUPP, "sample_regs_user %#llx",
			       (unsigned long long)masks[i]);
		pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000,
				   PECS_SAMPLE_IP | PECS_SAMPLE_REGS_INTR);
		a.sample_regs_intr = masks[i];
		r = pecs_open(t, &a, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, r, EOPNOTSUPP, "sample_regs_intr %#llx",
			       (unsigned long long)masks[i]);
	}
#else
	PECS_ENV_SKIP(t, "the register numbering checked here is x86-64's");
#endif
}
