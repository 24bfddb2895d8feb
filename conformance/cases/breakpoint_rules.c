/* What the breakpoint PMU takes and refuses at open, on x86-64 (hw_breakpoint_event_init
 * and register_perf_hw_breakpoint in kernel/events/hw_breakpoint.c, arch_build_bp_info
 * and hw_breakpoint_arch_parse in arch/x86/kernel/hw_breakpoint.c). Each row is one
 * open and its answer, the same as root and as uid 65534: every address here is the
 * case's own user-space memory, and every event excludes the kernel. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "pecs/toolkit/breakpoint.h"

/* UAPI perf_branch_sample_type: user branches, any kind */
#define BRANCH_USER (1ull << 0)
#define BRANCH_ANY (1ull << 3)

/* A 16-byte aligned pair of words: room for every length and misalignment below. */
static volatile uint64_t words[2] __attribute__((aligned(16)));

struct bp_row {
	struct pecs_row head;
	uint32_t bp_type;
	uint64_t offset; /* from &words[0] */
	uint64_t len;
	int err;         /* the errno expected */
};

static const struct bp_row bp_rows[] = {
	/* x86 has no read-only data breakpoint: R alone falls to the default EINVAL. */
	{{"Required.Breakpoint.Rules.ReadOnlyEinval", "", "BP-OPEN-TYPE-EINVAL"}, PECS_BP_R, 0, 8, EINVAL},
	/* An execute breakpoint takes bp_len sizeof(long) and no other. */
	{{"Required.Breakpoint.Rules.Execute1Einval", "", "BP-OPEN-EXEC-LEN"}, PECS_BP_X, 0, 1, EINVAL},
	{{"Required.Breakpoint.Rules.Execute4Einval", "", "BP-OPEN-EXEC-LEN"}, PECS_BP_X, 0, 4, EINVAL},
	/* Mixed and unknown types: HW_BREAKPOINT_INVALID (R|W|X) is refused when the slot is
	 * reserved, the others by the arch's type switch. */
	{{"Required.Breakpoint.Rules.WriteExecuteEinval", "", "BP-OPEN-TYPE-EINVAL"}, PECS_BP_W | PECS_BP_X, 0, 8, EINVAL},
	{{"Required.Breakpoint.Rules.ReadExecuteEinval", "", "BP-OPEN-TYPE-EINVAL"}, PECS_BP_R | PECS_BP_X, 0, 8, EINVAL},
	{{"Required.Breakpoint.Rules.InvalidTypeEinval", "", "BP-OPEN-TYPE-EINVAL"}, PECS_BP_RW | PECS_BP_X, 0, 8, EINVAL},
	{{"Required.Breakpoint.Rules.UnknownTypeBitEinval", "", "BP-OPEN-TYPE-EINVAL"}, 8, 0, 8, EINVAL},
	/* Lengths that are no power of two, and zero (its end wraps below its start). */
	{{"Required.Breakpoint.Rules.Length0Einval", "", "BP-OPEN-LEN-EINVAL"}, PECS_BP_W, 0, 0, EINVAL},
	{{"Required.Breakpoint.Rules.Length3Einval", "", "BP-OPEN-LEN-EINVAL"}, PECS_BP_W, 0, 3, EINVAL},
	{{"Required.Breakpoint.Rules.Length6Einval", "", "BP-OPEN-LEN-EINVAL"}, PECS_BP_W, 0, 6, EINVAL},
	{{"Required.Breakpoint.Rules.Length12Einval", "", "BP-OPEN-LEN-EINVAL"}, PECS_BP_W, 0, 12, EINVAL},
	/* bp_addr must be a multiple of bp_len. */
	{{"Required.Breakpoint.Rules.Write2OddEinval", "", "BP-OPEN-ALIGN-EINVAL"}, PECS_BP_W, 1, 2, EINVAL},
	{{"Required.Breakpoint.Rules.Write4Offset2Einval", "", "BP-OPEN-ALIGN-EINVAL"}, PECS_BP_W, 2, 4, EINVAL},
	{{"Required.Breakpoint.Rules.Write8Offset4Einval", "", "BP-OPEN-ALIGN-EINVAL"}, PECS_BP_W, 4, 8, EINVAL},
	{{"Required.Breakpoint.Rules.Range16MisalignedEinval", "", "BP-OPEN-ALIGN-EINVAL"}, PECS_BP_W, 8, 16, EINVAL},
};

static void bp_case(struct pecs_t *t, const struct bp_row *r)
{
	struct pecs_attr a;
	int ret;

	PECS_BP_REQUIRE(t);
	pecs_bp_attr(t, &a, r->bp_type, (const volatile char *)words + r->offset, r->len);
	ret = pecs_open(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, ret, r->err, "bp_type %u at offset %llu, bp_len %llu", r->bp_type,
		       (unsigned long long)r->offset, (unsigned long long)r->len);
}

PECS_CASE_TABLE(bp_rows, bp_case);

/* What opens: write and read-or-write data breakpoints of each length x86 has, aligned,
 * and of one byte at any offset (no alignment to keep); an execute breakpoint of
 * sizeof(long) at any address. Each is closed before the next, so slots never run out. */
PECS_CASE("Required.Breakpoint.Rules.EveryValidBreakpointOpens", "",
	  "BP-OPEN-DATA-LENGTHS,BP-OPEN-EXEC-LEN")
{
	static const struct {
		uint32_t bp_type;
		uint64_t offset, len;
	} ok[] = {
		{PECS_BP_W, 0, 1},  {PECS_BP_W, 0, 2},  {PECS_BP_W, 0, 4},  {PECS_BP_W, 0, 8},
		{PECS_BP_RW, 0, 1}, {PECS_BP_RW, 0, 2}, {PECS_BP_RW, 0, 4}, {PECS_BP_RW, 0, 8},
		{PECS_BP_W, 7, 1},  {PECS_BP_RW, 3, 1}, {PECS_BP_X, 0, 8},  {PECS_BP_X, 3, 8},
	};
	struct pecs_attr a;
	int fd;

	PECS_BP_REQUIRE(t);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		pecs_bp_attr(t, &a, ok[i].bp_type, (const volatile char *)words + ok[i].offset,
			     ok[i].len);
		fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
		PECS_CHECK_OK(t, pecs_close(t, fd));
	}
}

/* A power-of-two length past 8 is an AMD range breakpoint (an address mask): without the
 * breakpoint extension (cpuinfo's bpext) it is EOPNOTSUPP once the rules above hold,
 * with it the event opens. */
PECS_CASE("Required.Breakpoint.Rules.Range16NeedsBpext", "", "BP-OPEN-RANGE-BPEXT")
{
	struct pecs_attr a;
	int ret;

	PECS_BP_REQUIRE(t);
	pecs_bp_attr(t, &a, PECS_BP_W, words, 16);
	ret = pecs_open(t, &a, 0, -1, -1, 0);
	if (pecs_bp_has_bpext())
		PECS_CHECK(t, ret >= 0, "bp_len 16 with bpext: %s", pecs_retname(ret));
	else
		PECS_CHECK_ERR(t, ret, EOPNOTSUPP, "bp_len 16 without bpext in /proc/cpuinfo");
}

/* A range that wraps past the top of the address space is EINVAL before anything else
 * looks at the address. */
PECS_CASE("Required.Breakpoint.Rules.WrappingRangeEinval", "", "BP-OPEN-LEN-EINVAL")
{
	struct pecs_attr a;

	PECS_BP_REQUIRE(t);
	pecs_bp_attr(t, &a, PECS_BP_W, words, 8);
	a.config1 = ~3ull;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL, "bp_addr ~3, bp_len 8");
}

/* Branch stacks are never a breakpoint's (hw_breakpoint_event_init). */
PECS_CASE("Required.Breakpoint.Rules.BranchStackEopnotsupp", "", "BP-OPEN-BRANCH-EOPNOTSUPP")
{
	struct pecs_attr a;

	PECS_BP_REQUIRE(t);
	pecs_bp_attr(t, &a, PECS_BP_W, words, 8);
	a.sample_type = PECS_SAMPLE_BRANCH_STACK;
	a.branch_sample_type = BRANCH_USER | BRANCH_ANY;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EOPNOTSUPP);
}

/* An address in the kernel's half: the start of the kernel text mapping, which no
 * breakpoint rule of x86 (the CPU entry area, the per-cpu data) forbids outright. */
#define KERNEL_ADDR 0xffffffff80000000ull

/* A breakpoint in kernel space that excludes the kernel can never fire: EINVAL, for
 * every caller (hw_breakpoint_parse). */
PECS_CASE("Required.Breakpoint.Rules.KernelAddressExcludingKernelEinval", "",
	  "BP-OPEN-KERNEL-ADDR")
{
	struct pecs_attr a;

	PECS_BP_REQUIRE(t);
	pecs_bp_attr(t, &a, PECS_BP_W, words, 8);
	a.config1 = KERNEL_ADDR;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL, "bp_addr %#llx", KERNEL_ADDR);
}

/* Counting the kernel at a kernel address. Anyone unprivileged is stopped by
 * perf_event_paranoid first (EACCES at 2 and above, perf_allow_kernel), and below that by
 * the breakpoint PMU, which keeps kernel addresses for CAP_SYS_ADMIN (EPERM,
 * hw_breakpoint_parse). Root opens it on 6.1 and 6.12.118 (measured in the VM, as 6.12's
 * source reads); 6.18.44 here answers root EPERM too (measured, with CAP_SYS_ADMIN
 * effective in the initial user namespace; what changed it is not pinned), so root may
 * get either. */
PECS_CASE("Required.Breakpoint.Rules.KernelAddressNeedsAdmin", "policy", "BP-OPEN-KERNEL-ADDR")
{
	const struct pecs_host_facts *h = pecs_host(t);
	struct pecs_attr a;
	int ret;

	PECS_BP_REQUIRE(t);
	pecs_bp_attr(t, &a, PECS_BP_W, words, 8);
	a.config1 = KERNEL_ADDR;
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	if (h->privileged && geteuid() != 0)
		PECS_ENV_SKIP(t, "privileged but not root: whether CAP_SYS_ADMIN is held decides");
	if (!h->privileged)
		pecs_checks_policy_refusal(t);
	ret = pecs_open(t, &a, 0, -1, -1, 0);
	if (h->privileged)
		PECS_CHECK(t, ret >= 0 || ret == -EPERM, "root, bp_addr %#llx: %s", KERNEL_ADDR,
			   pecs_retname(ret));
	else
		PECS_CHECK_ERR(t, ret, h->paranoid >= 2 ? EACCES : EPERM,
			       "uid %d, perf_event_paranoid %d", (int)geteuid(), h->paranoid);
}

/* x86 has four debug registers for a task, shared by data and execute breakpoints: the
 * fifth breakpoint on the thread is ENOSPC (__reserve_bp_slot), whether or not the
 * others are enabled, and closing one frees its register. */
PECS_CASE("Required.Breakpoint.Rules.FourSlotsThenEnospc", "", "BP-OPEN-SLOTS-ENOSPC")
{
	struct pecs_attr a;
	int fd[4];

	PECS_BP_REQUIRE(t);
	for (int i = 0; i < 4; i++) {
		pecs_bp_attr(t, &a, i == 3 ? PECS_BP_X : PECS_BP_W,
			     (const volatile char *)words + 2 * i, i == 3 ? 8 : 2);
		fd[i] = PECS_BP_OPEN(t, &a, 0, -1, -1);
	}
	pecs_bp_attr(t, &a, PECS_BP_RW, &words[1], 8);
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), ENOSPC, "a fifth breakpoint");
	PECS_CHECK_OK(t, pecs_close(t, fd[1]));
	PECS_BP_OPEN(t, &a, 0, -1, -1);
}
