/* Samples the profiler itself drops, on a full buffer of its own (before any reach the
 * ring), are the event's losses as Linux reports a full ring's: PERF_FORMAT_LOST in
 * read(2) counts them at once, and a PERF_RECORD_LOST {id, n} comes before the next
 * record that is written. A replay stream with buffer_samples smaller than its sample
 * count makes the drops happen on purpose, the same ones on every run. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"

#define SAMPLES 6
#define KEPT 2

/* Markup blocks: pid koid, tid koid, one frame. */
static size_t markup(char *text, size_t cap)
{
	size_t n = 0;

	for (int i = 0; i < SAMPLES; i++)
		n += (size_t)snprintf(text + n, cap - n, "1001\n1002\n{{{bt:0:0x%x:pc}}}\n",
				      0x500000 + 0x10 * i);
	return n;
}

/* Walks the ring: the ips of the samples in order, and the LOST records' counts. */
static void walk(struct pecs_t *t, struct pecs_ring *r, uint64_t id, uint64_t *ips, int *nr_ips,
		 uint64_t *losts, int *nr_losts)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	int ret;

	*nr_ips = *nr_losts = 0;
	while ((ret = pecs_ring_next(r, &rec)) > 0) {
		uint64_t lid, n;

		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK_OK(t, pecs_parse_lost(rec, &lid, &n), "a malformed LOST");
			PECS_CHECK_EQ(t, lid, id, "the LOST record's id");
			if (*nr_losts < 4)
				losts[(*nr_losts)++] = n;
			ips[(*nr_ips < 8) ? (*nr_ips)++ : 7] = 0; /* where it came */
			continue;
		}
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_OK(t, pecs_parse_sample(rec, PECS_SAMPLE_IP, 0, &s));
		ips[(*nr_ips < 8) ? (*nr_ips)++ : 7] = s.ip;
	}
	PECS_CHECK_OK(t, ret, "a malformed ring");
}

PECS_CASE("Required.Profiler.Drops.FullBufferIsLost",
	  "profiler.replay,profiler.drops,mmap,read.lost", "PROF-REPLAY-DROPS,GLUE-LOST")
{
	static const struct pecs_koid_map_entry map[] = {{1001, 42}, {1002, 43}};
	static char text[SAMPLES * 64];
	struct pecs_profiler_stream st = {.size = sizeof(st)};
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t id, v[2], ips[8], losts[4];
	int fd, nr_ips, nr_losts;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	a.read_format = PECS_FORMAT_LOST;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 4, PROT_READ | PROT_WRITE, &r));
	st.format = PECS_STREAM_MARKUP;
	st.data = (const uint8_t *)text;
	st.len = markup(text, sizeof(text));
	st.koids = map;
	st.nr_koids = 2;
	st.buffer_samples = KEPT;
	PECS_CHECK_OK(t, pecs_set_profiler(t, fd, &st));

	/* First run: the first KEPT samples, nothing to carry a LOST record yet. */
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[1], SAMPLES - KEPT, "LOST after one replay of %d samples into a "
		      "buffer of %d", SAMPLES, KEPT);
	walk(t, &r, id, ips, &nr_ips, losts, &nr_losts);
	PECS_CHECK(t, nr_ips == KEPT && nr_losts == 0 && ips[0] == 0x500000 && ips[1] == 0x500010,
		   "first run: %d records, %d LOST; the first samples at %llx, %llx", nr_ips,
		   nr_losts, (unsigned long long)ips[0], (unsigned long long)ips[1]);

	/* Second run (the stream replays from its start): the earlier drops' LOST record
	 * comes first, before the next sample written. */
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v[1], 2 * (SAMPLES - KEPT), "LOST after two replays");
	walk(t, &r, id, ips, &nr_ips, losts, &nr_losts);
	PECS_CHECK(t, nr_ips == KEPT + 1 && nr_losts == 1 && ips[0] == 0 &&
		   losts[0] == SAMPLES - KEPT && ips[1] == 0x500000 && ips[2] == 0x500010,
		   "second run: %d records, %d LOST (first %llu), first record's ip %llx",
		   nr_ips, nr_losts, (unsigned long long)(nr_losts ? losts[0] : 0),
		   (unsigned long long)ips[0]);
}
