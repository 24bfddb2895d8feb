/* Profiler samples obey the event's sample_type like any other sample: each stream vector
 * is replayed under several sample_type subsets, and the records must carry exactly the
 * asked-for fields, in the kernel's order (perf_output_sample() in kernel/events/core.c:
 * IDENTIFIER, IP, TID, TIME, ID, STREAM_ID, PERIOD, CALLCHAIN), filled from the vector's
 * decoded samples (vectors/fxt, vectors/markup: pid, tid, time, ips) and the event (its
 * PERF_EVENT_IOC_ID, its period). The callchain is [PERF_CONTEXT_USER, ips...] with at
 * most 127 ips, as the vectors' ring bytes are.
 *
 * Also: every ENABLE starts a new profiler session, which serves the script again from
 * its first byte (PROF-REPLAY), so two ENABLE/DISABLE rounds leave the records twice.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pecs/vectors.h"
#include "pecs/toolkit/profiler.h"
#include "pecs/toolkit/ring.h"

#define RING_CAP 65536
#define KOIDS_MAX 64
#define VECTOR_MAX_STACK 127u
#define DEFAULT_PERIOD_NS 1000000ull

static uint8_t ring_buf[RING_CAP];
static uint8_t want_buf[RING_CAP];
static struct pecs_koid_map_entry koid_buf[KOIDS_MAX];
static char diff[256];

/* The records v's samples make under sample_type st for an event with this id and
 * period. Returns the byte count, or 0 when they would not fit cap. */
static size_t expected_records(const struct pecs_vec_stream *v, uint64_t st, uint64_t id,
			       uint64_t period, uint8_t *buf, size_t cap)
{
	size_t len = 0;

	for (uint32_t i = 0; i < v->nr_samples; i++) {
		const struct pecs_vec_stream_sample *s = &v->samples[i];
		uint32_t nr = s->nr_ips < VECTOR_MAX_STACK ? s->nr_ips : VECTOR_MAX_STACK;
		struct pecs_record_header h = {PECS_RECORD_SAMPLE, PECS_MISC_USER, 8};
		uint64_t w[8 + 2 + VECTOR_MAX_STACK];
		size_t n = 0;

		if (st & PECS_SAMPLE_IDENTIFIER)
			w[n++] = id;
		if (st & PECS_SAMPLE_IP)
			w[n++] = s->ips[0];
		if (st & PECS_SAMPLE_TID)
			w[n++] = (uint64_t)s->tid << 32 | s->pid;
		if (st & PECS_SAMPLE_TIME)
			w[n++] = s->time;
		if (st & PECS_SAMPLE_ID)
			w[n++] = id;
		if (st & PECS_SAMPLE_STREAM_ID)
			w[n++] = id;
		if (st & PECS_SAMPLE_PERIOD)
			w[n++] = period;
		if (st & PECS_SAMPLE_CALLCHAIN) {
			w[n++] = 1 + (uint64_t)nr;
			w[n++] = PECS_CONTEXT_USER;
			memcpy(&w[n], s->ips, nr * sizeof(uint64_t));
			n += nr;
		}
		h.size = (uint16_t)(8 + 8 * n);
		if (len + h.size > cap)
			return 0;
		memcpy(buf + len, &h, sizeof(h));
		memcpy(buf + len + sizeof(h), w, 8 * n);
		len += h.size;
	}
	return len;
}

PECS_CASE("Required.Profiler.Fields.SampleTypeSubsets",
	  "profiler.replay,mmap", "PROF-REPLAY,PROF-FIELDS-SAMPLE-TYPE,STREAM-KOID-MAP,FXT-INIT,FXT-BACKTRACE,"
	  "MARKUP-BLOCK")
{
	static const uint64_t subsets[] = {
		PECS_SAMPLE_IP,
		PECS_SAMPLE_TID,
		PECS_SAMPLE_TIME,
		PECS_SAMPLE_CALLCHAIN,
		PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID,
		PECS_SAMPLE_IP | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_PERIOD,
		PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |
			PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_PERIOD |
			PECS_SAMPLE_CALLCHAIN,
	};
	const struct {
		const struct pecs_vec_stream *vecs;
		size_t n;
	} sets[] = {{pecs_vec_fxt, pecs_vec_fxt_count}, {pecs_vec_markup, pecs_vec_markup_count}};
	size_t ran = 0;

	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sets[s].n; i++) {
			const struct pecs_vec_stream *v = &sets[s].vecs[i];

			if (v->nr_samples == 0 || !pecs_vector_fits_host(t, v))
				continue;
			for (size_t k = 0; k < sizeof(subsets) / sizeof(subsets[0]); k++) {
				struct pecs_replay r;
				struct pecs_replay_out out = {.ring = ring_buf, .cap = sizeof(ring_buf)};
				size_t want_len;
				int err;

				pecs_replay_from_vector(&r, v, -1, v->stream_len, koid_buf, KOIDS_MAX);
				r.sample_type = subsets[k];
				r.read_format = 0;
				if (!r.period)
					r.period = DEFAULT_PERIOD_NS;
				/* Sizing pass: the id is not known before the event exists. */
				want_len = expected_records(v, subsets[k], 0, r.period, want_buf,
							    sizeof(want_buf));
				if (want_len == 0)
					continue;
				r.expect_len = want_len;
				err = pecs_replay_run(t, &r, &out);
				if (err == -ENOSYS && strcmp(out.step, "set_profiler") == 0)
					PECS_UNSUPPORTED(t, "the implementation has no set_profiler entry");
				PECS_CHECK_OK(t, err, "tcId %d, sample_type %#llx: %s failed",
					      v->tc_id, (unsigned long long)subsets[k], out.step);
				if ((subsets[k] & (PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_ID |
						   PECS_SAMPLE_STREAM_ID)) && out.id == 0)
					PECS_BROKEN(t, "PERF_EVENT_IOC_ID gave no id to check ID fields with");
				want_len = expected_records(v, subsets[k], out.id, r.period, want_buf,
							    sizeof(want_buf));
				PECS_CHECK(t, out.head == want_len && memcmp(ring_buf, want_buf, want_len) == 0,
					   "tcId %d (%s), sample_type %#llx: ring holds %llu bytes, want %zu; %s",
					   v->tc_id, v->comment, (unsigned long long)subsets[k],
					   (unsigned long long)out.head, want_len,
					   pecs_replay_diff(ring_buf, out.head < sizeof(ring_buf) ? out.head
									: sizeof(ring_buf),
							    want_buf, want_len, diff, sizeof(diff)));
				ran++;
			}
		}
	}
	PECS_CHECK(t, ran > 0, "no vector with samples applies to this host");
}

/* Two ENABLE/DISABLE rounds on one event: the second session replays the script from
 * byte 0, so the ring holds the vector's records twice, back to back. */
PECS_CASE("Required.Profiler.Replay.EachEnableReplaysFromStart",
	  "profiler.replay,mmap", "PROF-REPLAY,PROF-DISABLE-DRAIN")
{
	static struct pecs_ring ring;
	const struct pecs_vec_stream *v = NULL;
	struct pecs_profiler_stream st;
	struct pecs_attr a;
	uint64_t head;
	int fd;

	/* The first FXT vector with several samples and no run-time fields. */
	for (size_t i = 0; i < pecs_vec_fxt_count && !v; i++)
		if (pecs_vec_fxt[i].nr_samples > 1 && pecs_vec_fxt[i].nr_dynamic == 0 &&
		    pecs_vec_fxt[i].has_ring && pecs_vec_fxt[i].ring_len <= 1024 &&
		    !pecs_vec_fxt[i].error_code && pecs_vector_fits_host(t, &pecs_vec_fxt[i]))
			v = &pecs_vec_fxt[i];
	PECS_CHECK(t, v != NULL, "no FXT vector with several samples");
	pecs_stream_from_vector(&st, v, 5, koid_buf, KOIDS_MAX);
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK,
			   v->sample_period ? v->sample_period : DEFAULT_PERIOD_NS, v->sample_type);
	a.read_format = v->read_format;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &ring));
	{
		int ret = pecs_set_profiler(t, fd, &st);

		if (ret == -ENOSYS)
			PECS_UNSUPPORTED(t, "the implementation has no set_profiler entry");
		PECS_CHECK_OK(t, ret);
	}
	for (int round = 1; round <= 2; round++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
		PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
		head = pecs_ring_head(&ring);
		PECS_CHECK(t, head == (uint64_t)round * v->ring_len,
			   "tcId %d: after round %d the ring holds %llu bytes, want %llu", v->tc_id,
			   round, (unsigned long long)head,
			   (unsigned long long)round * v->ring_len);
		PECS_CHECK_MEM(t, ring.data + (round - 1) * v->ring_len, v->ring, v->ring_len);
	}
}
