/* PERF_EVENT_IOC_SET_OUTPUT: send an event's records into another event's ring.
 * The rules come from perf_event_set_output() in kernel/events/core.c and were measured
 * here: the target must be mapped, on the same cpu (and task when per-task), and not the
 * event itself; an event that is mapped itself cannot be redirected; -1 detaches. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"

#define ST (PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_TID)

PECS_CASE("Required.Ioctl.SetOutput.NotAPerfFdEbadf", "ioctl.set_output", "IOC-SET-OUTPUT-EBADF")
{
	int a = PECS_SAMPLER(t, .sample_type = ST), gone = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_OK(t, pecs_close(t, gone));
	/* A number that was a perf fd a moment ago, and one no table reaches. */
	PECS_CHECK_ERR(t, pecs_ioctl(t, a, PECS_IOC_SET_OUTPUT, (unsigned long)gone), EBADF);
	PECS_CHECK_ERR(t, pecs_ioctl(t, a, PECS_IOC_SET_OUTPUT, 1000000ul), EBADF);
}

PECS_CASE("Required.Ioctl.SetOutput.UnmappedTargetEinval",
	  "ioctl.set_output", "IOC-SET-OUTPUT-EINVAL-UNMAPPED")
{
	int a = PECS_SAMPLER(t, .sample_type = ST), b = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_ERR(t, pecs_ioctl(t, b, PECS_IOC_SET_OUTPUT, (unsigned long)a), EINVAL);
}

PECS_CASE("Required.Ioctl.SetOutput.SelfEinval", "ioctl.set_output,mmap",
	  "IOC-SET-OUTPUT-EINVAL-SELF")
{
	struct pecs_ring r;
	int a = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_OK(t, pecs_ring_map(t, a, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_ioctl(t, a, PECS_IOC_SET_OUTPUT, (unsigned long)a), EINVAL);
}

PECS_CASE("Required.Ioctl.SetOutput.OtherCpuEinval",
	  "ioctl.set_output,mmap", "IOC-SET-OUTPUT-EINVAL-CPU")
{
	struct pecs_ring r;
	int a = PECS_SAMPLER(t, .sample_type = ST);
	int b = PECS_SAMPLER(t, .sample_type = ST, .flags = PECS_SAMPLER_ON_CPU, .cpu = 0);

	PECS_CHECK_OK(t, pecs_ring_map(t, a, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_ioctl(t, b, PECS_IOC_SET_OUTPUT, (unsigned long)a), EINVAL);
}

PECS_CASE("Required.Ioctl.SetOutput.MappedSourceEinval",
	  "ioctl.set_output,mmap", "IOC-SET-OUTPUT-EINVAL-MAPPED")
{
	struct pecs_ring ra, rb;
	int a = PECS_SAMPLER(t, .sample_type = ST), b = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_OK(t, pecs_ring_map(t, a, 1, PROT_READ | PROT_WRITE, &ra));
	PECS_CHECK_OK(t, pecs_ring_map(t, b, 1, PROT_READ | PROT_WRITE, &rb));
	PECS_CHECK_ERR(t, pecs_ioctl(t, b, PECS_IOC_SET_OUTPUT, (unsigned long)a), EINVAL);
}

/* Every sample in `r` carries IDENTIFIER == want; returns how many there were. */
static int samples_from(struct pecs_t *t, struct pecs_ring *r, uint64_t want)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	int n = 0, ret;

	while ((ret = pecs_ring_next(r, &rec)) > 0) {
		/* a LOST record (the reader fell behind) has no sample to check: skipped;
		 * the count of samples below still has to be reached */
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK(t, pecs_parse_sample(rec, ST, 0, &s) >= 0 && s.identifier == want,
			   "identifier %llu in the shared ring, expected %llu",
			   (unsigned long long)s.identifier, (unsigned long long)want);
		n++;
	}
	pecs_ring_consume(r);
	return ret < 0 ? ret : n;
}

PECS_CASE("Required.Ioctl.SetOutput.RedirectsSamples",
	  "ioctl.set_output,mmap,sampling", "IOC-SET-OUTPUT-REDIRECT")
{
	struct pecs_ring r;
	uint64_t id_b;
	int a = PECS_SAMPLER(t, .sample_type = ST), b = PECS_SAMPLER(t, .sample_type = ST), n;

	PECS_CHECK_OK(t, pecs_event_id(t, b, &id_b));
	PECS_CHECK_OK(t, pecs_ring_map(t, a, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, b, PECS_IOC_SET_OUTPUT, (unsigned long)a), 0);
	/* Only b runs: whatever reaches a's ring is b's. */
	PECS_CHECK_OK(t, pecs_ioctl(t, b, PECS_IOC_ENABLE, 0));
	n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 3, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, b, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, n >= 3, "%d samples of b reached a's ring", n);
	n = samples_from(t, &r, id_b);
	PECS_CHECK(t, n >= 3, "%d samples of b parsed", n);
}

PECS_CASE("Required.Ioctl.SetOutput.MinusOneDetaches",
	  "ioctl.set_output,mmap,sampling", "IOC-SET-OUTPUT-DETACH")
{
	struct pecs_ring ra, rb;
	uint64_t id_b, head;
	int a = PECS_SAMPLER(t, .sample_type = ST), b = PECS_SAMPLER(t, .sample_type = ST), n;

	PECS_CHECK_OK(t, pecs_event_id(t, b, &id_b));
	PECS_CHECK_OK(t, pecs_ring_map(t, a, 8, PROT_READ | PROT_WRITE, &ra));
	PECS_CHECK_EQ(t, pecs_ioctl(t, b, PECS_IOC_SET_OUTPUT, (unsigned long)a), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, b, PECS_IOC_SET_OUTPUT, (unsigned long)-1l), 0);
	/* Detached, b has no buffer of its own: it can be mapped again... */
	PECS_CHECK_OK(t, pecs_ring_map(t, b, 8, PROT_READ | PROT_WRITE, &rb));
	PECS_CHECK_OK(t, pecs_ioctl(t, b, PECS_IOC_ENABLE, 0));
	n = pecs_ring_wait(&rb, PECS_RECORD_SAMPLE, 3, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, b, PECS_IOC_DISABLE, 0));
	/* ...its samples land there, and a's ring saw nothing. */
	PECS_CHECK(t, n >= 3, "%d samples in b's own ring", n);
	PECS_CHECK(t, samples_from(t, &rb, id_b) >= 3, "b's own ring holds foreign samples");
	head = pecs_ring_head(&ra);
	PECS_CHECK_EQ(t, head, 0);
}

/* One ring is written one way only: a forward event cannot join a backward ring. */
PECS_CASE("Recommended.Ioctl.SetOutput.WriteBackwardMismatchEinval",
	  "ioctl.set_output,mmap", "IOC-SET-OUTPUT-EINVAL-BACKWARD")
{
	struct pecs_ring r;
	int back, fwd = PECS_SAMPLER(t, .sample_type = ST);

	back = PECS_SAMPLER(t, .sample_type = ST, .attr_flags = PECS_ATTR_WRITE_BACKWARD);
	PECS_CHECK_OK(t, pecs_ring_map(t, back, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_ioctl(t, fwd, PECS_IOC_SET_OUTPUT, (unsigned long)back), EINVAL);
}
