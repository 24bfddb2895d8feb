/* The sample words Linux reads from the sampled task at the overflow: its perf_event
 * cgroup's id (PERF_SAMPLE_CGROUP, perf_prepare_sample() via cgroup_id()) and the size of
 * the page under the ip (PERF_SAMPLE_CODE_PAGE_SIZE, perf_get_page_size()); and the times
 * a group member's PERF_SAMPLE_READ carries. The expected values come from /proc and the
 * cgroup filesystem, read by the suite itself. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support_host.h"
#include "support_ring.h"

#define PERIOD_NS 100000ull
#define SAMPLES 8

/* IP, TID, CGROUP, CODE_PAGE_SIZE: one u64 each after the header. */
#define TASK_ST (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CGROUP | PECS_SAMPLE_CODE_PAGE_SIZE)

PECS_CASE(sample_cgroup_page, "Required.Record.Sample.CgroupAndCodePageSizeOfTask",
	  "mmap,sampling", "REC-SAMPLE-CGROUP-ID,REC-SAMPLE-CODE-PAGE-SIZE")
{
	const struct pecs_record_header *rec;
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t cgroup, w[4];
	int fd, ret, n = 0;

	ret = pecs_host_cgroup_id(&cgroup);
	if (ret == -ENOENT)
		PECS_ENV_SKIP(t, "no perf_event cgroup controller, or no cgroup mount to name it");
	if (ret < 0)
		PECS_BROKEN(t, "cannot read this process's cgroup: %s", pecs_retname(ret));
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, TASK_ST);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	ret = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, SAMPLES, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, ret >= SAMPLES, "%d samples in a second of burning", ret);
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		uint64_t size, alt;

		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_EQ(t, rec->size, sizeof(*rec) + sizeof(w));
		memcpy(w, rec + 1, sizeof(w));
		PECS_CHECK_EQ(t, w[1], (uint64_t)pecs_gettid() << 32 | (uint32_t)getpid());
		PECS_CHECK(t, w[2] == cgroup, "sample %d: cgroup %llu, this process's is %llu", n,
			   (unsigned long long)w[2], (unsigned long long)cgroup);
		/* The ip was just executed, so its page is present. */
		pecs_host_page_size(w[0], &size, &alt);
		PECS_CHECK(t, size != 0, "sample %d: ip %llx is not in a present page", n,
			   (unsigned long long)w[0]);
		PECS_CHECK(t, w[3] == size || w[3] == alt,
			   "sample %d: code page size %llu at ip %llx, the mapping's is %llu", n,
			   (unsigned long long)w[3], (unsigned long long)w[0],
			   (unsigned long long)size);
		n++;
	}
	PECS_CHECK_OK(t, ret);
}

/* perf_output_read_group() writes the group's values under the sampling event's own
 * enabled and running times; read(2) of the group reports the leader's. A member enabled
 * long after its leader tells the two apart. */
PECS_CASE(sample_member_times, "Required.Record.Sample.GroupMemberReadOwnTimes",
	  "mmap,sampling,read.group", "REC-SAMPLE-READ-GROUP-MEMBER-TIMES")
{
	const uint64_t rf = PECS_FORMAT_GROUP | PECS_FORMAT_TOTAL_TIME_ENABLED |
			    PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID;
	const uint64_t st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_READ;
	const uint64_t lead_ns = 50 * 1000 * 1000ull;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t v[7], before, after, member_id;
	int leader, member, ret, n = 0;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = rf;
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	pecs_burn_cpu(lead_ns);
	PECS_CHECK_EQ(t, pecs_read(t, leader, v, sizeof(v)), 40);
	before = v[1];
	PECS_CHECK(t, before >= lead_ns, "the leader was enabled for only %llu ns",
		   (unsigned long long)before);
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS * 10, st);
	a.read_format = rf;
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, member, &member_id));
	PECS_CHECK_OK(t, pecs_ring_map(t, member, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_ENABLE, 0));
	ret = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 2, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, ret >= 2, "%d samples in a second of burning", ret);
	PECS_CHECK_EQ(t, pecs_read(t, leader, v, sizeof(v)), 56);
	after = v[1];
	/* The member was enabled only between the two reads of the leader. */
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_OK(t, pecs_parse_sample(rec, st, rf, &s));
		PECS_CHECK_EQ(t, s.identifier, member_id);
		PECS_CHECK_EQ(t, s.read.nr, 2);
		PECS_CHECK(t, s.read.time_enabled > 0 && s.read.time_enabled <= after - before,
			   "sample %d: time_enabled %llu, the member was enabled for at most %llu "
			   "(the leader for %llu)",
			   n, (unsigned long long)s.read.time_enabled,
			   (unsigned long long)(after - before), (unsigned long long)after);
		PECS_CHECK(t, s.read.time_running <= s.read.time_enabled,
			   "sample %d: time_running %llu > time_enabled %llu", n,
			   (unsigned long long)s.read.time_running,
			   (unsigned long long)s.read.time_enabled);
		n++;
	}
	PECS_CHECK_OK(t, ret);
}
