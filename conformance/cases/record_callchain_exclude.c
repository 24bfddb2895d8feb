/* attr.exclude_callchain_user on a user-only sampler: the user part of each sample's
 * stack is not walked (get_perf_callchain() with user false), and a sample taken in user
 * mode has no kernel part either (exclude_kernel), so its CALLCHAIN is empty: nr 0 and no
 * context marker. Without the flag the same samples carry [PERF_CONTEXT_USER, ip, ...]. */
#include <sys/mman.h>

#include "pecs/toolkit/event.h"
#include "pecs/toolkit/ring.h"

#define ST (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN)

/* Samples 30 ms of this thread's CPU at 1 ms; counts the samples and those whose
 * callchain is empty. */
static void sample_chains(struct pecs_t *t, int exclude_user, int *samples, int *empty)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .period_ns = 1000000, .sample_type = ST,
			      .attr_flags = exclude_user ? PECS_ATTR_EXCLUDE_CALLCHAIN_USER : 0);
	int ret;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 16, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, pecs_burn_event(t, fd, 60000000ull, 5000));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	*samples = *empty = 0;
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, ST, 0, &s));
		PECS_CHECK(t, s.size == rec->size, "a sample of %u bytes whose fields take %zu",
			   (unsigned)rec->size, s.size);
		(*samples)++;
		*empty += s.nr_ips == 0;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, *samples > 0, "no sample over 60 ms of CPU at 1 ms");
}

PECS_CASE("Required.Record.Callchain.ExcludeUserIsEmpty", "mmap,sampling",
	  "REC-CALLCHAIN-EXCLUDE-USER")
{
	int samples, empty;

	sample_chains(t, 1, &samples, &empty);
	PECS_CHECK(t, empty == samples, "exclude_callchain_user: %d of %d user-mode samples "
		   "carry a callchain, expected nr 0 in each", samples - empty, samples);
	sample_chains(t, 0, &samples, &empty);
	PECS_CHECK(t, empty == 0, "without exclude_callchain_user %d of %d samples have an "
		   "empty callchain", empty, samples);
}
