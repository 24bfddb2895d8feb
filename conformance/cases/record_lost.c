/* PERF_RECORD_LOST with sample_id_all: {u64 id; u64 lost} and then the sample_id
 * trailer, whose fields follow sample_type in the order of perf_event__output_id_sample()
 * (kernel/events/core.c): [pid,tid] [time] [id] [stream_id] [cpu,res] [identifier].
 * The loss is made with PAUSE_OUTPUT, so the record appears at a known point: just
 * before the first sample after resuming, and built from that sample's data (the same
 * perf_sample_data in perf_output_begin()), so its trailer repeats that sample's time
 * and cpu exactly. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS 100000ull
#define ST                                                                                \
	(PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |  \
	 PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_CPU)

/* The last sample before the pause, the LOST record, the first sample after. */
struct around {
	uint64_t time_before, time_after;
	uint32_t cpu_after;
	uint8_t lost[128];
	size_t lost_size;
};

/* A pause in which no tick came while the thread ran in user space (a late timer drops
 * the periods it missed; an exclude_kernel tick in the kernel is no sample) loses nothing
 * and writes no LOST: such a pause is made again, ten times longer, up to 4000 periods. */
static int make_loss(struct pecs_t *t, int fd, struct around *out)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_ring r;
	uint64_t periods;
	int ret, n;

	if ((ret = pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r)) < 0 ||
	    (ret = pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0)) < 0)
		return ret;
	n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 2, 1000);
	for (periods = 40;; periods *= 10) {
		if ((ret = pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 1)) < 0)
			return ret;
		if (n < 2)
			return -ETIMEDOUT;
		while ((ret = pecs_ring_next(&r, &rec)) > 0)
			if (rec->type == PECS_RECORD_SAMPLE &&
			    pecs_parse_sample(rec, ST, 0, &s) == 0)
				out->time_before = s.time;
		if (ret < 0)
			return ret;
		pecs_ring_consume(&r);
		if ((ret = pecs_burn_event(t, fd, periods * PERIOD_NS, 5000)) < 0)
			return ret;
		if ((ret = pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0)) < 0)
			return ret;
		n = pecs_ring_wait(&r, 0, 2, 1000);
		if (n < 2 || pecs_ring_next(&r, &rec) != 1)
			return -EBADMSG;
		if (rec->type != PECS_RECORD_SAMPLE || periods >= 4000)
			break;
		if (pecs_parse_sample(rec, ST, 0, &s) == 0)
			out->time_before = s.time;
	}
	if ((ret = pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0)) < 0)
		return ret;
	if (rec->type != PECS_RECORD_LOST || rec->size > sizeof(out->lost))
		return -EBADMSG;
	memcpy(out->lost, rec, rec->size);
	out->lost_size = rec->size;
	if (pecs_ring_next(&r, &rec) != 1 || rec->type != PECS_RECORD_SAMPLE ||
	    pecs_parse_sample(rec, ST, 0, &s) < 0)
		return -EBADMSG;
	out->time_after = s.time;
	out->cpu_after = s.cpu;
	return 0;
}

PECS_CASE("Required.Record.Lost.SampleIdAllTrailer",
	  "ioctl.pause_output,mmap,sampling", "REC-LOST-SAMPLE-ID-ALL")
{
	const struct pecs_host_facts *h = pecs_host(t);
	struct pecs_attr a;
	struct around ar = {0};
	uint64_t id, f[8];
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, ST);
	a.flags |= PECS_ATTR_SAMPLE_ID_ALL;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, make_loss(t, fd, &ar));
	/* header, id, lost, then six trailer words (IP is no sample_id field). */
	PECS_CHECK_EQ(t, ar.lost_size, 8 + 16 + 6 * 8);
	PECS_CHECK_EQ(t, ((const struct pecs_record_header *)ar.lost)->misc, 0);
	memcpy(f, ar.lost + 8, ar.lost_size - 8);
	PECS_CHECK_EQ(t, f[0], id);
	PECS_CHECK(t, f[1] > 0, "LOST counts nothing");
	PECS_CHECK_EQ(t, (uint32_t)f[2], getpid());
	PECS_CHECK_EQ(t, (uint32_t)(f[2] >> 32), pecs_gettid());
	PECS_CHECK(t, f[3] > ar.time_before, "LOST time %llu not after the pause (%llu)",
		   (unsigned long long)f[3], (unsigned long long)ar.time_before);
	PECS_CHECK_EQ(t, f[3], ar.time_after);
	PECS_CHECK_EQ(t, f[4], id);
	PECS_CHECK_EQ(t, f[5], id);
	PECS_CHECK(t, (uint32_t)f[6] < (uint32_t)h->ncpus && (f[6] >> 32) == 0,
		   "cpu word 0x%llx on %d cpus", (unsigned long long)f[6], h->ncpus);
	PECS_CHECK_EQ(t, (uint32_t)f[6], ar.cpu_after);
	PECS_CHECK_EQ(t, f[7], id);
}

/* Without sample_id_all the same record is the bare 24 bytes. */
PECS_CASE("Required.Record.Lost.BareWithoutSampleIdAll",
	  "ioctl.pause_output,mmap,sampling", "REC-LOST-BARE")
{
	struct pecs_attr a;
	struct around ar = {0};
	uint64_t id, f[2];
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, ST);
	a.flags &= ~PECS_ATTR_SAMPLE_ID_ALL;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, make_loss(t, fd, &ar));
	PECS_CHECK_EQ(t, ar.lost_size, 24);
	memcpy(f, ar.lost + 8, 16);
	PECS_CHECK_EQ(t, f[0], id);
	PECS_CHECK(t, f[1] > 0, "LOST counts nothing");
}
