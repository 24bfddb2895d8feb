/* PERF_EVENT_IOC_PERIOD: a new sample_period through a u64 pointer, for sampling events. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"

#define PERIOD_NS PECS_SAMPLER_PERIOD_NS /* the samplers' */

/* One IOC_PERIOD call and its answer. */
struct period_row {
	struct pecs_row head;
	int sampling;    /* the event samples (else it counts) */
	int null_arg;    /* pass a NULL pointer instead of &period */
	uint64_t period;
	int err;         /* the errno expected, 0 for success */
};

static const struct period_row period_rows[] = {
	{{"Required.Ioctl.Period.CountingEventEinval", "counting", "IOC-PERIOD-EINVAL-COUNTING"},
	 0, 0, PERIOD_NS, EINVAL},
	{{"Required.Ioctl.Period.ZeroEinval", "counting", "IOC-PERIOD-EINVAL-ZERO"},
	 1, 0, 0, EINVAL},
	{{"Required.Ioctl.Period.Bit63Einval", "counting", "IOC-PERIOD-EINVAL-BIT63"},
	 1, 0, (1ull << 63) | PERIOD_NS, EINVAL},
	{{"Required.Ioctl.Period.NullPointerEfault", "counting", "IOC-PERIOD-EFAULT"},
	 1, 1, 0, EFAULT},
	{{"Required.Ioctl.Period.SamplingEventAccepts", "counting", "IOC-PERIOD-OK"},
	 1, 0, 2 * PERIOD_NS, 0},
};

static void period_case(struct pecs_t *t, const struct period_row *r)
{
	struct pecs_attr a;
	uint64_t p = r->period;
	int fd;

	if (r->sampling) {
		fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);
	} else {
		pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
		fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	}
	int ret = pecs_ioctl(t, fd, PECS_IOC_PERIOD, r->null_arg ? 0 : (unsigned long)&p);
	if (r->err)
		PECS_CHECK_ERR(t, ret, r->err, "PERIOD %#llx", (unsigned long long)r->period);
	else
		PECS_CHECK_EQ(t, ret, 0, "PERIOD %#llx", (unsigned long long)r->period);
}

PECS_CASE_TABLE(period_rows, period_case);

/* The new period governs when samples are taken: with 10x the open-time period, the
 * samples the event wrote are at most one per new period of its own count. A timer that
 * fires late (a loaded host, an emulated guest) drops the periods it missed and fires
 * the next one early, so two samples may lie closer than a period: only the number of
 * samples over the time counted is bounded whatever the schedule, and the old period
 * would give ten times as many. */
PECS_CASE("Required.Ioctl.Period.NewPeriodSpacesSamples", "mmap,sampling", "IOC-PERIOD-EFFECT")
{
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	uint64_t p = 10 * PERIOD_NS, count = 0, lost = 0, id;
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_TID), n = 0, ret;

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)&p), 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK(t, pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 5, 1000) >= 5, "fewer than 5 samples");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_OK(t, pecs_event_value(t, fd, &count));
	/* A LOST record (a reader that fell behind) stands for samples the event took. */
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type == PECS_RECORD_SAMPLE)
			n++;
		else if (rec->type == PECS_RECORD_LOST)
			PECS_CHECK_OK(t, pecs_ring_lost_ok(rec, &id, 1, &lost));
	}
	PECS_CHECK_OK(t, ret);
	/* One more than whole periods: the count read after DISABLE may end mid-period. */
	PECS_CHECK(t, n + lost <= count / p + 1, "%d samples + %llu lost in %llu ns counted at "
		   "a period of %llu ns (at most %llu)", n, (unsigned long long)lost,
		   (unsigned long long)count, (unsigned long long)p,
		   (unsigned long long)(count / p + 1));
}

/* Linux quirk (measured, and perf_event_alloc/perf_swevent_hrtimer in core.c): a clock
 * event's PERF_SAMPLE_PERIOD is the period it was opened with (hw.last_period, which
 * IOC_PERIOD does not update), although the timer runs at the new period. */
PECS_CASE("Required.Ioctl.Period.ClockSampleFieldKeepsOpenPeriod",
	  "mmap,sampling", "IOC-PERIOD-CLOCK-FIELD")
{
	const uint64_t st = PECS_SAMPLE_TID | PECS_SAMPLE_PERIOD;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_ring r;
	uint64_t p = 3 * PERIOD_NS;
	int fd = PECS_SAMPLER(t, .sample_type = st), n = 0, ret;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)&p), 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK(t, pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 4, 1000) >= 4, "fewer than 4 samples");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	/* Only SAMPLE records carry the field; a LOST one among them is skipped, and the
	 * wait above counted SAMPLE records only. */
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, st, 0, &s));
		PECS_CHECK_EQ(t, s.period, PERIOD_NS);
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n >= 4, "only %d samples", n);
}
