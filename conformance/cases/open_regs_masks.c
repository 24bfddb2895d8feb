/* Register masks at open, in x86-64's numbering (arch/x86/include/uapi/asm/perf_regs.h):
 * perf_copy_attr() passes sample_regs_user and sample_regs_intr to perf_reg_validate(),
 * which refuses an empty mask, the segment registers a 64-bit task does not have (DS, ES,
 * FS, GS: bits 12-15) and bits from PERF_REG_X86_64_MAX (24) up to the XMM range.
 * Measured here. Other architectures number their registers differently: ENV_SKIP. */
#include "pecs/case.h"

#define REG_CS (1ull << 10)
#define REG_DS (1ull << 12)
#define REG_GS (1ull << 15)
#define REG_PAST_MAX (1ull << 24)
#define REGS_AX_TO_SP 0x3ffull /* AX .. SP, IP, FLAGS: the general registers below CS */

/* A user-only CPU_CLOCK sampler with sample_type st, which anyone may open. */
static void sampler(struct pecs_t *t, struct pecs_attr *attr, uint64_t st)
{
	pecs_attr_sampling(t, attr, PECS_SW_CPU_CLOCK, 1000000, PECS_SAMPLE_IP | st);
}

PECS_CASE("Required.Open.RegsUser.InvalidRegistersEinval", "", "OPEN-REGS-USER-MASK-X86")
{
	static const uint64_t bad[] = {0, REG_DS, REG_GS, REG_PAST_MAX, REG_CS | REG_DS};
	struct pecs_attr attr;

#ifndef __x86_64__
	PECS_ENV_SKIP(t, "the masks are x86-64 register numbers");
#endif
	sampler(t, &attr, PECS_SAMPLE_REGS_USER);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r;

		attr.sample_regs_user = bad[i];
		r = pecs_open(t, &attr, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, r, EINVAL, "sample_regs_user 0x%llx", (unsigned long long)bad[i]);
	}
}

PECS_CASE("Required.Open.RegsUser.GeneralRegistersOk", "sampling", "OPEN-REGS-USER-MASK-X86")
{
	static const uint64_t ok[] = {REG_CS, REGS_AX_TO_SP, REGS_AX_TO_SP | REG_CS};
	struct pecs_attr attr;

#ifndef __x86_64__
	PECS_ENV_SKIP(t, "the masks are x86-64 register numbers");
#endif
	sampler(t, &attr, PECS_SAMPLE_REGS_USER);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int r;

		attr.sample_regs_user = ok[i];
		r = pecs_open(t, &attr, 0, -1, -1, 0);
		PECS_CHECK_OK(t, r, "sample_regs_user 0x%llx", (unsigned long long)ok[i]);
	}
}

/* The same validation for the interrupt registers: an empty mask is EINVAL, a general
 * register opens. */
PECS_CASE("Required.Open.RegsIntr.EmptyMaskEinvalGeneralRegisterOk", "sampling",
	  "OPEN-REGS-INTR-LATE,OPEN-REGS-USER-MASK-X86")
{
	struct pecs_attr attr;

#ifndef __x86_64__
	PECS_ENV_SKIP(t, "the masks are x86-64 register numbers");
#endif
	sampler(t, &attr, PECS_SAMPLE_REGS_INTR);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
	attr.sample_regs_intr = 2; /* BX */
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}
