/* PERF_FORMAT_LOST counts the samples of that one event that found no room in its ring
 * (event->lost_samples, bumped in perf_output_begin), not the ring's total: with two
 * events writing into one paused ring, each read shows only its own losses. Measured on
 * Linux 6.18. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS 100000ull

struct value_lost {
	uint64_t value, lost;
};

PECS_CASE("Required.Read.Lost.CountsOnlyThisEventsLosses",
	  "read.lost,ioctl.set_output,ioctl.pause_output,mmap,sampling", "READ-LOST")
{
	static struct pecs_ring r;
	struct value_lost vs = {0, 0}, vt;
	struct pecs_attr a;
	int target, source;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, PECS_SAMPLE_IP);
	a.read_format = PECS_FORMAT_LOST;
	target = PECS_OPEN(t, &a, 0, -1, -1, 0);
	source = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, target, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, source, PECS_IOC_SET_OUTPUT, (unsigned long)target), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, target, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	/* only the source runs; every sample it takes meets the paused ring */
	PECS_CHECK_OK(t, pecs_ioctl(t, source, PECS_IOC_ENABLE, 0));
	for (int i = 0; i < 200 && vs.lost < 3; i++) {
		pecs_burn_user(PERIOD_NS * 5);
		PECS_CHECK_EQ(t, pecs_read(t, source, &vs, sizeof(vs)), sizeof(vs));
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, source, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_read(t, source, &vs, sizeof(vs)), sizeof(vs));
	PECS_CHECK_EQ(t, pecs_read(t, target, &vt, sizeof(vt)), sizeof(vt));
	PECS_CHECK(t, vs.lost >= 3, "the source lost %llu samples into a paused ring",
		   (unsigned long long)vs.lost);
	PECS_CHECK(t, vt.lost == 0, "the target, never enabled, reads lost %llu (the source's "
		   "%llu)", (unsigned long long)vt.lost, (unsigned long long)vs.lost);
	PECS_CHECK_EQ(t, pecs_ring_head(&r), 0);
}
