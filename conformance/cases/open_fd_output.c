/* PERF_FLAG_FD_OUTPUT: the new event writes into group_fd's ring from the start, as if
 * PERF_EVENT_IOC_SET_OUTPUT had been issued (perf_event_open calls
 * perf_event_set_output). The group fd must therefore have a ring. Measured on Linux
 * 6.18. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

#define PERIOD_NS 100000ull
#define ST (PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_TID)

static void sampler(struct pecs_t *t, struct pecs_attr *a)
{
	pecs_attr_sampling(t, a, PECS_SW_TASK_CLOCK, PERIOD_NS, ST);
}

PECS_CASE("Required.Open.GroupFd.FdOutputUnmappedTargetEinval", "", "OPEN-GROUP-FD-OUTPUT")
{
	struct pecs_attr a;
	int target;

	sampler(t, &a);
	target = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, target, PECS_FLAG_FD_OUTPUT), EINVAL);
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, target,
				    PECS_FLAG_FD_OUTPUT | PECS_FLAG_FD_NO_GROUP), EINVAL);
}

PECS_CASE("Required.Open.GroupFd.FdOutputWritesIntoGroupFdRing",
	  "mmap,sampling", "OPEN-GROUP-FD-OUTPUT")
{
	static struct pecs_ring r;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_attr a;
	uint64_t id;
	int target, source, n = 0, ret;
	void *m;

	sampler(t, &a);
	target = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, target, 8, PROT_READ | PROT_WRITE, &r));
	/* NO_GROUP: the source runs on its own, with the target left disabled */
	source = PECS_OPEN(t, &a, 0, -1, target, PECS_FLAG_FD_OUTPUT | PECS_FLAG_FD_NO_GROUP);
	PECS_CHECK_OK(t, pecs_event_id(t, source, &id));
	/* it writes into the target's ring, so it cannot map one of its own; up to Linux
	 * 6.12 the same size maps the target's ring (Required.Mmap.Redirected.MappingItIsEbusy),
	 * and the mapping stays: its munmap would detach the source from that ring */
	if (pecs_linux_before(t, 6, 13)) {
		PECS_CHECK_OK(t, pecs_mmap(t, source, r.map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
					   0, &m));
	} else {
		PECS_CHECK_ERR(t, pecs_mmap(t, source, r.map_len, PROT_READ | PROT_WRITE,
					    MAP_SHARED, 0, &m), EBUSY);
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, source, PECS_IOC_ENABLE, 0));
	pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 3, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, source, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		/* a LOST record (the reader fell behind) has no sample to check: skipped;
		 * the count of samples below still has to be reached */
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, ST, 0, &s));
		PECS_CHECK(t, s.identifier == id, "identifier %llu in the target's ring, expected "
			   "the source's %llu", (unsigned long long)s.identifier,
			   (unsigned long long)id);
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n >= 3, "%d samples of the source reached the target's ring", n);
}
