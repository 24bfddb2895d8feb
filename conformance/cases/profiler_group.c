/* Profiler samples delivered to a group member are the member's: IDENTIFIER and ID carry
 * the member's own id (perf_output_sample writes event->id of the event that sampled;
 * measured on Linux 6.18 for live samples). A leader counts; only the member samples,
 * and a scripted profiler stream feeds it. The Starnix seed diverges here: it stamps
 * every member's samples with its leader's "format id". */
#include <string.h>
#include <sys/mman.h>

#include "pecs/vectors.h"
#include "pecs/toolkit/profiler.h"
#include "pecs/toolkit/ring.h"

#define KOIDS_MAX 64
#define ST (PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_ID)

static struct pecs_koid_map_entry koid_buf[KOIDS_MAX];

/* The event's id from read() with PERF_FORMAT_ID ({value, id}), which every
 * implementation with read() has, PERF_EVENT_IOC_ID or not. 0 or -errno. */
static int read_id(struct pecs_t *t, int fd, uint64_t *id)
{
	uint64_t v[2] = {0, 0};
	ssize_t n = pecs_read(t, fd, v, sizeof(v));

	*id = v[1];
	return n == (ssize_t)sizeof(v) ? 0 : n < 0 ? (int)n : -EIO;
}

/* An FXT vector whose stream decodes cleanly into samples that all apply here. */
static const struct pecs_vec_stream *pick_vector(void)
{
	for (size_t i = 0; i < pecs_vec_fxt_count; i++) {
		const struct pecs_vec_stream *v = &pecs_vec_fxt[i];

		if (v->nr_samples > 0 && !v->error_code && v->has_ring && v->ring_len > 0 &&
		    v->ring_len <= 2048 && v->nr_koids <= KOIDS_MAX)
			return v;
	}
	return NULL;
}

PECS_CASE("Required.Profiler.Group.MemberSamplesCarryMemberId",
	  "profiler.replay,mmap", "REC-SAMPLE-MEMBER-ID,GROUP-ID-OWN,PROF-REPLAY")
{
	static struct pecs_ring r;
	const struct pecs_vec_stream *v = pick_vector();
	const struct pecs_record_header *rec;
	struct pecs_profiler_stream st;
	struct pecs_parsed_sample s;
	struct pecs_attr a;
	uint64_t leader_id, member_id;
	int leader, member, n = 0, ret;

	PECS_CHECK(t, v != NULL, "no FXT vector with samples");
	pecs_stream_from_vector(&st, v, 0, koid_buf, KOIDS_MAX);

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = PECS_FORMAT_ID;
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, ST);
	a.read_format = PECS_FORMAT_ID;
	a.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, read_id(t, leader, &leader_id));
	PECS_CHECK_OK(t, read_id(t, member, &member_id));
	PECS_CHECK(t, leader_id != member_id, "leader and member share id %llu",
		   (unsigned long long)leader_id);
	PECS_CHECK_OK(t, pecs_ring_map(t, member, 4, PROT_READ | PROT_WRITE, &r));
	ret = pecs_set_profiler(t, member, &st);
	if (ret == -ENOSYS)
		PECS_UNSUPPORTED(t, "the implementation has no set_profiler entry");
	PECS_CHECK_OK(t, ret);
	/* Each event on its own, without PERF_IOC_FLAG_GROUP: the member runs while both
	 * are enabled, and its stream is drained by its DISABLE. */
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_DISABLE, 0));
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		/* a LOST record (the reader fell behind) has no sample to check: skipped;
		 * the count of samples below still has to be reached */
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, ST, 0, &s));
		PECS_CHECK(t, s.identifier == member_id && s.id == member_id,
			   "sample %d: IDENTIFIER %llu, ID %llu; the member's id is %llu, the "
			   "leader's %llu", n, (unsigned long long)s.identifier,
			   (unsigned long long)s.id, (unsigned long long)member_id,
			   (unsigned long long)leader_id);
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n > 0, "tcId %d: no sample reached the member's ring (%u expected)",
		   v->tc_id, v->nr_samples);
}
