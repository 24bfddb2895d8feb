/* The data area of the ring under live samples (kernel/events/ring_buffer.c, measured
 * here): 8-byte granularity, the writable mode's flow control and LOST records, the
 * read-only mode's overwriting, and records that run across the end of the area. */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS PECS_SAMPLER_PERIOD_NS /* the samplers' */

PECS_CASE("Required.Ring.Head.MultipleOfEight", "mmap,sampling", "RING-HEAD-ALIGN8")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = st), ret, n = 0;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 4, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	/* 20 periods of the event's own clock, looking at data_head after each; then on
	 * until a record came, on a budget: Debian's 6.1 under TCG on a loaded host was seen
	 * to write none in 20 periods of its task clock (its hrtimer late), and a head never
	 * moved shows nothing of its alignment. */
	struct pecs_budget b;

	pecs_budget_start(&b, 5000);
	for (int i = 0; i < 20 || (pecs_ring_head(&r) == 0 && pecs_budget_left(&b)); i++) {
		PECS_CHECK_OK(t, pecs_burn_event(t, fd, PERIOD_NS, 1000));
		PECS_CHECK(t, pecs_ring_head(&r) % 8 == 0, "data_head %llu",
			   (unsigned long long)pecs_ring_head(&r));
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	if (pecs_ring_head(&r) == 0)
		PECS_ENV_SKIP(t, "no record in 5 s of this thread's CPU and wall time at a "
			      "%llu ns period: the host samples too slowly", PERIOD_NS);
	while ((ret = pecs_ring_next(&r, &rec)) > 0)
		n++;
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n > 0, "no records");
	/* The walk ended exactly on data_head. */
	PECS_CHECK_EQ(t, r.tail, pecs_ring_head(&r));
}

/* Fill a 1+1-page writable ring without consuming, then overrun it by ~30 periods.
 * Returns the fixed record size through *rec_size; ends the case with ENV_SKIP (the
 * event disabled) when the ring did not fill within the budget: a kernel under emulation on a loaded
 * host was seen to sample far less often than its clock advanced (Debian's 6.1 under
 * TCG: no loss to read after the budget), which says nothing about the ABI. */
#define FILL_BUDGET_MS 5000
static int fill_writable(struct pecs_t *t, int fd, struct pecs_ring *r, uint64_t st,
			 uint64_t rf, size_t *rec_size)
{
	uint64_t full;
	struct pecs_budget b;
	int ret;

	*rec_size = pecs_sample_size(st, rf, 1, 0);
	if ((ret = pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, r)) < 0 ||
	    (ret = pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0)) < 0)
		return ret;
	/* Full: no room for one more record below data_size - 8. */
	full = r->data_size - 8 - *rec_size + 8;
	pecs_budget_start(&b, FILL_BUDGET_MS);
	while (pecs_ring_head(r) < full &&
	       pecs_budget_left(&b))
		pecs_burn_user(PERIOD_NS * 10);
	if (pecs_ring_head(r) < full) {
		pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0);
		PECS_ENV_SKIP(t, "the 1-page ring did not fill in %u ms of this thread's CPU and "
			      "wall time (data_head %llu of %llu): the host samples too slowly",
			      FILL_BUDGET_MS, (unsigned long long)pecs_ring_head(r),
			      (unsigned long long)r->data_size);
	}
	/* ~30 periods that find no room, on the event's own clock */
	if ((ret = pecs_burn_event(t, fd, 30 * PERIOD_NS, 2000)) < 0)
		return ret;
	return pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0);
}

PECS_CASE("Required.Ring.Writable.FillsToDataSizeMinus8ThenLost",
	  "mmap,sampling", "RING-WRITABLE-FILL,RING-LOST-RECORD")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	size_t size;
	uint64_t id, lost_id, lost, head;
	int fd = PECS_SAMPLER(t, .sample_type = st), n = 0, ret;

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, fill_writable(t, fd, &r, st, 0, &size));
	head = pecs_ring_head(&r);
	PECS_CHECK(t, head <= r.data_size - 8, "data_head %llu past data_size - 8 (%llu)",
		   (unsigned long long)head, (unsigned long long)(r.data_size - 8));
	PECS_CHECK(t, head + size > r.data_size - 8, "data_head %llu: the ring never filled",
		   (unsigned long long)head);
	PECS_CHECK_EQ(t, head % size, 0);
	/* Everything written is intact; consuming it lets the writer report the loss. */
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK_EQ(t, (uint64_t)n * size, head);
	pecs_ring_consume(&r);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK(t, pecs_ring_wait(&r, 0, 2, 1000) >= 2, "no records after consuming");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_LOST);
	PECS_CHECK_EQ(t, rec->size, 24);
	PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
	PECS_CHECK_EQ(t, lost_id, id);
	PECS_CHECK(t, lost >= 1, "LOST reports %llu after ~30 dropped periods",
		   (unsigned long long)lost);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
}

PECS_CASE("Required.Ring.Writable.LostRecordMatchesReadLost",
	  "mmap,sampling,read.lost", "RING-LOST-EQ-READ")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const uint64_t rf = PECS_FORMAT_ID | PECS_FORMAT_LOST;
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	size_t size;
	uint64_t v[3], lost_id, lost; /* value, id, lost */
	int fd = PECS_SAMPLER(t, .sample_type = st, .read_format = rf), ret;

	PECS_CHECK_OK(t, fill_writable(t, fd, &r, st, rf, &size));
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK(t, v[2] > 0, "read() reports no loss after overrunning the ring");
	while ((ret = pecs_ring_next(&r, &rec)) > 0)
		;
	PECS_CHECK_OK(t, ret);
	pecs_ring_consume(&r);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK(t, pecs_ring_wait(&r, 0, 1, 1000) >= 1, "no records after consuming");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_LOST);
	PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
	PECS_CHECK_EQ(t, lost_id, v[1]);
	PECS_CHECK_EQ(t, lost, v[2]);
}

PECS_CASE("Required.Ring.Overwrite.HeadRunsPastTailIgnored",
	  "mmap.overwrite,sampling", "RING-OVERWRITE")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	struct pecs_ring r;
	struct pecs_budget b;
	int fd = PECS_SAMPLER(t, .sample_type = st);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_budget_start(&b, 2000);
	while (pecs_ring_head(&r) <= 2 * r.data_size &&
	       pecs_budget_left(&b))
		pecs_burn_user(PERIOD_NS * 10);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, pecs_ring_head(&r) > 2 * r.data_size,
		   "data_head %llu never passed twice data_size %llu",
		   (unsigned long long)pecs_ring_head(&r), (unsigned long long)r.data_size);
	PECS_CHECK_EQ(t, pecs_ring_tail_published(&r), 0);
	PECS_CHECK_EQ(t, pecs_ring_head(&r) % 8, 0);
}

/* A 1+1-page ring drained as it fills wraps several times; every record, including the
 * ones cut by the end of the area, must parse as the sample it is. The sample size
 * (40 bytes) does not divide the area, so some records do straddle the end.
 * A reader that falls behind (a loaded host, ptrace, an emulator) lets the ring fill, and
 * the writer then owes it a LOST record: that is the ABI too, so a LOST record is
 * accepted when it is well formed, names this event and reports at least one loss. At
 * least one SAMPLE must still come through whole. */
PECS_CASE("Required.Ring.Wrap.RecordsAcrossTheEndParse", "mmap,sampling", "RING-WRAP")
{
	const uint64_t st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			    PECS_SAMPLE_TIME;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_ring r;
	uint64_t id, last_time = 0, lost_id, lost, lost_total = 0;
	struct pecs_budget b;
	int fd = PECS_SAMPLER(t, .sample_type = st), wrapped = 0, samples = 0, ret;

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_budget_start(&b, 3000);
	while ((r.tail < 3 * r.data_size || wrapped < 2) &&
	       pecs_budget_left(&b)) {
		pecs_burn_user(PERIOD_NS * 10);
		while ((ret = pecs_ring_next(&r, &rec)) > 0) {
			wrapped += r.last_wrapped;
			if (rec->type == PECS_RECORD_LOST) {
				PECS_CHECK_EQ(t, rec->size, 24);
				PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
				PECS_CHECK_EQ(t, lost_id, id);
				PECS_CHECK(t, lost >= 1, "a LOST record at offset %llu reports 0",
					   (unsigned long long)r.last_offset);
				lost_total += lost;
				continue;
			}
			PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
			PECS_CHECK_EQ(t, rec->size, pecs_sample_size(st, 0, 1, 0));
			PECS_CHECK_OK(t, pecs_parse_sample(rec, st, 0, &s));
			PECS_CHECK_EQ(t, s.identifier, id);
			PECS_CHECK_EQ(t, s.pid, getpid());
			PECS_CHECK_EQ(t, s.tid, pecs_gettid());
			PECS_CHECK(t, s.time >= last_time, "time went back at offset %llu",
				   (unsigned long long)r.last_offset);
			last_time = s.time;
			samples++;
		}
		PECS_CHECK_OK(t, ret);
		pecs_ring_consume(&r);
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, wrapped >= 2, "%d records crossed the end in %llu bytes", wrapped,
		   (unsigned long long)r.tail);
	PECS_CHECK(t, samples > 0, "no SAMPLE in %llu bytes, only LOST records (%llu lost)",
		   (unsigned long long)r.tail, (unsigned long long)lost_total);
}

/* A metadata-only mapping has no data area: samples go nowhere and are not counted
 * as lost either. */
PECS_CASE("Required.Ring.MetadataOnly.NoDataNoLoss", "mmap,sampling,read.lost", "RING-ONE-PAGE")
{
	struct pecs_ring r;
	uint64_t v[3]; /* value, id, lost */
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP,
			      .read_format = PECS_FORMAT_ID | PECS_FORMAT_LOST);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 0, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(20 * PERIOD_NS);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, r.meta->data_size, 0);
	PECS_CHECK_EQ(t, pecs_ring_head(&r), 0);
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK(t, v[0] > 0, "the event did not run");
	PECS_CHECK_EQ(t, v[2], 0);
}

/* write_backward: the kernel writes each record below the previous one, so data_head
 * counts down from 0 and the newest record starts at data_head; reading forward from
 * there walks the records newest first, ending at the old head. */
PECS_CASE("Recommended.Ring.Backward.HeadCountsDownFromZero",
	  "mmap.overwrite,sampling", "RING-BACKWARD")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const uint64_t size = pecs_sample_size(st, 0, 1, 0);
	struct pecs_ring r;
	struct pecs_budget b;
	int64_t head;
	uint64_t off;
	int fd = PECS_SAMPLER(t, .sample_type = st, .attr_flags = PECS_ATTR_WRITE_BACKWARD), n = 0;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 4, PROT_READ, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	/* A few records, far from filling the area, so none is overwritten. */
	pecs_budget_start(&b, 2000);
	while ((int64_t)pecs_ring_head(&r) > -(int64_t)(4 * size) &&
	       pecs_budget_left(&b))
		pecs_burn_user(PERIOD_NS);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	head = (int64_t)pecs_ring_head(&r);
	PECS_CHECK(t, head < 0, "data_head %lld did not count down", (long long)head);
	PECS_CHECK(t, -head < (int64_t)r.data_size, "data_head %lld wrapped the area",
		   (long long)head);
	PECS_CHECK_EQ(t, head % 8, 0);
	PECS_CHECK_EQ(t, pecs_ring_tail_published(&r), 0);
	for (off = (uint64_t)head; off != 0; n++) {
		const struct pecs_record_header *rec =
			(const void *)(r.data + (off & (r.data_size - 1)));

		PECS_CHECK(t, rec->type == PECS_RECORD_SAMPLE && rec->size == size,
			   "record %d at %lld: type %u size %u", n, (long long)off, rec->type,
			   rec->size);
		off += rec->size;
	}
	PECS_CHECK_EQ(t, (uint64_t)n * size, (uint64_t)-head);
}

/* The mapping keeps the event alive: after close(fd) it still runs and writes. */
PECS_CASE("Required.Ring.Close.MappedEventKeepsWriting", "mmap,sampling", "RING-CLOSE-MAPPED")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	struct pecs_ring r;
	struct pecs_budget b;
	uint64_t head;
	int fd = PECS_SAMPLER(t, .sample_type = st);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 4, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK(t, pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 1, 1000) >= 1, "no sample");
	PECS_CHECK_EQ(t, pecs_close(t, fd), 0);
	head = pecs_ring_head(&r);
	pecs_budget_start(&b, 1000);
	while (pecs_ring_head(&r) == head &&
	       pecs_budget_left(&b))
		pecs_burn_user(PERIOD_NS * 5);
	PECS_CHECK(t, pecs_ring_head(&r) > head, "no record after close(): data_head stays %llu",
		   (unsigned long long)head);
}
