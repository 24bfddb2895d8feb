/* PERF_EVENT_IOC_MODIFY_ATTRIBUTES on a breakpoint (perf_event_modify_attr and
 * perf_event_modify_breakpoint in kernel/events/core.c, modify_user_hw_breakpoint_check
 * in kernel/events/hw_breakpoint.c): the event is disabled, the new attr passes the open
 * rules, must equal the old one but for bp_addr, bp_type, bp_len, disabled and sig_data,
 * and then bp_addr, bp_type, bp_len and disabled are taken; the event is enabled again
 * unless its attr's disabled bit (the new one, or the old one when the call failed) says
 * otherwise. IOC_ENABLE never clears that bit. */
#include <errno.h>
#include <stdint.h>

#include "pecs/toolkit/breakpoint.h"
#include "pecs/toolkit/event.h"

#define ACCESSES 5

static volatile uint64_t words[2] __attribute__((aligned(16)));

static uint64_t value_of(struct pecs_t *t, int fd)
{
	uint64_t v = 0;

	PECS_CHECK_OK(t, pecs_event_value(t, fd, &v));
	return v;
}

static void write_both(int times)
{
	for (int n = 0; n < times; n++) {
		words[0] = n;
		words[1] = n;
	}
}

static int modify(struct pecs_t *t, int fd, struct pecs_attr *a)
{
	return pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)a);
}

/* The breakpoint watches the new address, and only it, from the call on. */
PECS_CASE("Required.Breakpoint.Modify.MovesTheBreakpoint", "counting", "BP-MODIFY-MOVE")
{
	struct pecs_attr a;
	int fd;

	PECS_BP_REQUIRE_FIRING(t, PECS_BP_W);
	pecs_bp_attr(t, &a, PECS_BP_W, &words[0], 8);
	a.flags &= ~PECS_ATTR_DISABLED;
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	write_both(ACCESSES);
	PECS_CHECK_EQ(t, value_of(t, fd), ACCESSES, "watching words[0]");
	a.config1 = (uint64_t)(uintptr_t)&words[1];
	PECS_CHECK_OK(t, modify(t, fd, &a), "moving it to words[1]");
	write_both(ACCESSES);
	words[0] = 0;
	PECS_CHECK_EQ(t, value_of(t, fd), 2 * ACCESSES, "after the move to words[1]");
	/* a narrower read-or-write breakpoint at the first word */
	a.config1 = (uint64_t)(uintptr_t)&words[0];
	a.bp_type = PECS_BP_RW;
	a.config2 = 4;
	PECS_CHECK_OK(t, modify(t, fd, &a), "RW, 4 bytes at words[0]");
	write_both(ACCESSES);
	(void)words[0];
	*((volatile uint32_t *)&words[0] + 1) = 0;
	PECS_CHECK_EQ(t, value_of(t, fd), 3 * ACCESSES + 1,
		      "after the change to RW at words[0]: %d writes and a read in range",
		      ACCESSES);
}

/* The new attr's disabled bit is taken: 0 enables an event opened disabled, without
 * IOC_ENABLE, and 1 disables one that was enabled. */
PECS_CASE("Required.Breakpoint.Modify.TakesTheDisabledBit", "counting", "BP-MODIFY-DISABLED")
{
	struct pecs_attr a;
	int fd;

	PECS_BP_REQUIRE_FIRING(t, PECS_BP_W);
	pecs_bp_attr(t, &a, PECS_BP_W, &words[0], 8);
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	write_both(ACCESSES);
	PECS_CHECK_EQ(t, value_of(t, fd), 0, "opened disabled");
	a.flags &= ~PECS_ATTR_DISABLED;
	PECS_CHECK_OK(t, modify(t, fd, &a), "the same attr with disabled 0");
	write_both(ACCESSES);
	PECS_CHECK_EQ(t, value_of(t, fd), ACCESSES, "after a modify with disabled 0");
	a.flags |= PECS_ATTR_DISABLED;
	PECS_CHECK_OK(t, modify(t, fd, &a), "the same attr with disabled 1");
	write_both(ACCESSES);
	PECS_CHECK_EQ(t, value_of(t, fd), ACCESSES, "after a modify with disabled 1");
}

/* What the call refuses, and what a refusal leaves: a field other than the five changed
 * is EINVAL, as is an address the open rules refuse, and another type; the breakpoint
 * keeps its address, and (opened disabled, then IOC_ENABLE'd) ends disabled. */
PECS_CASE("Required.Breakpoint.Modify.RefusesOtherChanges", "counting", "BP-MODIFY-EINVAL")
{
	struct pecs_attr a, b;
	int fd;

	PECS_BP_REQUIRE_FIRING(t, PECS_BP_W);
	pecs_bp_attr(t, &a, PECS_BP_W, &words[0], 8);
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	b = a;
	b.flags |= PECS_ATTR_EXCLUDE_IDLE;
	PECS_CHECK_ERR(t, modify(t, fd, &b), EINVAL, "exclude_idle set");
	b = a;
	b.sample_period = 1;
	PECS_CHECK_ERR(t, modify(t, fd, &b), EINVAL, "sample_period 1");
	b = a;
	b.config1 += 4;
	PECS_CHECK_ERR(t, modify(t, fd, &b), EINVAL, "an 8-byte breakpoint at words[0] + 4");
	b = a;
	b.bp_type = PECS_BP_R;
	PECS_CHECK_ERR(t, modify(t, fd, &b), EINVAL, "bp_type R");
	b = a;
	b.type = PECS_TYPE_SOFTWARE;
	PECS_CHECK_ERR(t, modify(t, fd, &b), EINVAL, "another type");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	write_both(ACCESSES);
	PECS_CHECK_EQ(t, value_of(t, fd), ACCESSES, "re-enabled, still at words[0]");
	b = a;
	b.config2 = 3;
	PECS_CHECK_ERR(t, modify(t, fd, &b), EINVAL, "bp_len 3");
	write_both(ACCESSES);
	PECS_CHECK_EQ(t, value_of(t, fd), ACCESSES,
		      "after a refused modify of an event opened disabled");
}
