/* PERF_EVENT_IOC_PAUSE_OUTPUT: a paused ring takes no records; what would have been
 * written is counted as lost and reported by a LOST record once output resumes
 * (rb_toggle_paused() and perf_output_begin() in kernel/events, measured here). */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS PECS_SAMPLER_PERIOD_NS /* the samplers' */
#define ST (PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_TID)

PECS_CASE("Required.Ioctl.PauseOutput.NoBufferEinval", "ioctl.pause_output",
	  "IOC-PAUSE-EINVAL-NO-BUFFER")
{
	int fd = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 1), EINVAL);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0), EINVAL);
}

/* A metadata-only mapping has no data pages: there is nothing to pause. */
PECS_CASE("Required.Ioctl.PauseOutput.MetadataOnlyMapEinval",
	  "ioctl.pause_output,mmap", "IOC-PAUSE-EINVAL-NO-BUFFER")
{
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 0, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 1), EINVAL);
}

PECS_CASE("Required.Ioctl.PauseOutput.MappedAcceptsAnyArg",
	  "ioctl.pause_output,mmap", "IOC-PAUSE-OK")
{
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = ST);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0x100), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
}

/* Pause the running sampler for `periods` periods of its clock, resume, and set *rec to
 * the first record written after the pause. */
static void pause_once(struct pecs_t *t, int fd, struct pecs_ring *r, uint64_t periods,
		       const struct pecs_record_header **rec)
{
	uint64_t head;
	int ret;

	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 1));
	head = pecs_ring_head(r);
	/* the event keeps counting while its output is paused */
	PECS_CHECK_OK(t, pecs_burn_event(t, fd, periods * PERIOD_NS, 5000));
	PECS_CHECK(t, pecs_ring_head(r) == head, "data_head moved from %llu to %llu while paused",
		   (unsigned long long)head, (unsigned long long)pecs_ring_head(r));
	/* Skip what was written before the pause. */
	while ((ret = pecs_ring_next(r, rec)) > 0)
		;
	PECS_CHECK_OK(t, ret, "reading the records before the pause");
	pecs_ring_consume(r);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0));
	PECS_CHECK(t, pecs_ring_wait(r, 0, 2, 1000) >= 2, "no records after resuming");
	PECS_CHECK_EQ(t, pecs_ring_next(r, rec), 1, "the first record after resuming");
}

/* Pause a running sampler, run 40 periods, resume, and return the first record written
 * after the pause in *rec; *id is the event's id. A pause in which no tick came while the
 * thread ran in user space (a late timer drops the periods it missed, and an
 * exclude_kernel tick in the kernel is no sample) loses nothing, so no LOST is due: the
 * pause is then tried again, ten times longer, up to 4000 periods. */
static void pause_and_resume(struct pecs_t *t, int fd, struct pecs_ring *r, uint64_t *id,
			     const struct pecs_record_header **rec)
{
	const struct pecs_record_header *skip;
	uint64_t periods = 40;
	int n, ret;

	PECS_CHECK_OK(t, pecs_event_id(t, fd, id));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	n = pecs_ring_wait(r, PECS_RECORD_SAMPLE, 2, 1000);
	PECS_CHECK(t, n >= 2, "only %d samples before the pause", n);
	for (;;) {
		pause_once(t, fd, r, periods, rec);
		if ((*rec)->type != PECS_RECORD_SAMPLE || periods >= 4000)
			break;
		while ((ret = pecs_ring_next(r, &skip)) > 0)
			;
		PECS_CHECK_OK(t, ret, "reading the records after a pause that lost nothing");
		pecs_ring_consume(r);
		periods *= 10;
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
}

PECS_CASE("Required.Ioctl.PauseOutput.NothingWrittenThenLostRecord",
	  "ioctl.pause_output,mmap,sampling", "IOC-PAUSE-NO-WRITES,IOC-PAUSE-LOST-ON-RESUME")
{
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	uint64_t id, lost_id, lost;
	int fd = PECS_SAMPLER(t, .sample_type = ST);

	pause_and_resume(t, fd, &r, &id, &rec);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_LOST);
	PECS_CHECK_EQ(t, rec->misc, 0);
	PECS_CHECK_EQ(t, rec->size, 24);
	PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
	PECS_CHECK_EQ(t, lost_id, id);
	/* ~40 periods ran while paused, but a tick that lands in the kernel is no user
	 * sample, so only "some" is certain. */
	PECS_CHECK(t, lost >= 1, "LOST reports %llu samples", (unsigned long long)lost);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
}

PECS_CASE("Required.Ioctl.PauseOutput.LostMatchesReadLost",
	  "ioctl.pause_output,mmap,sampling,read.lost", "IOC-PAUSE-LOST-EQ-READ")
{
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	uint64_t id, lost_id, lost, v[3]; /* value, id, lost */
	int fd = PECS_SAMPLER(t, .sample_type = ST,
			      .read_format = PECS_FORMAT_ID | PECS_FORMAT_LOST);

	pause_and_resume(t, fd, &r, &id, &rec);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_LOST);
	PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[1], id);
	PECS_CHECK_EQ(t, v[2], lost);
}
