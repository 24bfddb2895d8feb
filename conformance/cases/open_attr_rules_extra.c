/* Attr rules that only bite in combination: the callchain depth is checked only with
 * SAMPLE_CALLCHAIN, and sigtrap (with remove_on_exec) needs a task. Sources:
 * kernel/events/core.c perf_event_open and perf_event_alloc; measured here. */
#include <string.h>

#include "pecs/case.h"

PECS_CASE("Required.Open.Callchain.DepthIgnoredWithoutCallchain", "sampling",
	  "OPEN-MAX-STACK-NO-CALLCHAIN")
{
	struct pecs_attr attr;

	pecs_attr_sampling(t, &attr, PECS_SW_CPU_CLOCK, 1000000, PECS_SAMPLE_IP);
	attr.sample_max_stack = (uint16_t)(pecs_host(t)->max_stack + 1);
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	attr.sample_max_stack = 0xffff;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
}

PECS_CASE("Required.Open.Flags.SigtrapCpuWideEinval", "", "OPEN-SIGTRAP-CPU-WIDE-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.flags |= PECS_ATTR_SIGTRAP | PECS_ATTR_REMOVE_ON_EXEC;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, -1, 0, -1, 0), EINVAL);
}

/* MODIFY_ATTRIBUTES copies the new attr with perf_copy_attr before the event is asked:
 * the copy's own errors (EFAULT, E2BIG with the size written back, EINVAL for reserved
 * fields) come first, on any software event. */
PECS_CASE("Required.Ioctl.ModifyAttributes.AttrCopiedAndCheckedFirst", "counting",
	  "IOC-MODIFY-ATTR-COPY-FIRST")
{
	static const uint64_t cfgs[] = {PECS_SW_TASK_CLOCK, PECS_SW_PAGE_FAULTS, PECS_SW_DUMMY};
	static union {
		struct pecs_attr attr;
		unsigned char bytes[8192];
	} big;
	uint32_t known = pecs_host(t)->attr_size;
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		int fd, r;

		pecs_attr_counting(t, &attr, cfgs[i]);
		fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
		PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, 0), EFAULT);
		memset(&big, 0, sizeof(big));
		big.attr = attr;
		big.attr.size = (uint32_t)pecs_host(t)->page_size + 1;
		r = pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)&big);
		PECS_CHECK_ERR(t, r, E2BIG, "config %llu, size page + 1",
			       (unsigned long long)cfgs[i]);
		PECS_CHECK_EQ(t, big.attr.size, known);
		attr.reserved_2 = 1;
		r = pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)&attr);
		PECS_CHECK_ERR(t, r, EINVAL, "config %llu, __reserved_2 set",
			       (unsigned long long)cfgs[i]);
	}
}
